package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrFrameTooLarge is returned when a frame announces more bytes than
// socket.request.max.bytes allows. Nothing of that size is allocated.
var ErrFrameTooLarge = errors.New("frame larger than socket.request.max.bytes")

// ErrInvalidFrame is returned for a frame size that cannot be valid.
var ErrInvalidFrame = errors.New("invalid frame size")

// ReadFrame reads one size-prefixed frame from r into buf (grown when too
// small) and returns the body. The size is checked against max before any
// allocation.
func ReadFrame(r io.Reader, buf []byte, max int32) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n <= 0 {
		return nil, fmt.Errorf("%w: %d", ErrInvalidFrame, n)
	}
	if n > max {
		return nil, fmt.Errorf("%w: %d > %d", ErrFrameTooLarge, n, max)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// FrameReader reads size-prefixed frames from a connection: sizes and
// small frames through a read buffer, the body of a frame at least as
// large as that buffer straight from the connection into the caller's
// buffer, so the bytes of a large produce request are copied once, from
// the socket to their final place. It is used by one goroutine.
type FrameReader struct {
	br *bufio.Reader
	r  io.Reader
}

// NewFrameReader reads frames from r with a read buffer of size bytes.
func NewFrameReader(r io.Reader, size int) *FrameReader {
	return &FrameReader{br: bufio.NewReaderSize(r, size), r: r}
}

// ReadSize reads the size prefix of the next frame and checks it against
// max before the caller allocates anything: ErrInvalidFrame for a size
// of 0 or below, ErrFrameTooLarge above max.
func (f *FrameReader) ReadSize(max int32) (int, error) {
	var sz [4]byte
	if _, err := io.ReadFull(f.br, sz[:]); err != nil {
		return 0, err
	}
	n := int32(binary.BigEndian.Uint32(sz[:]))
	if n <= 0 {
		return 0, fmt.Errorf("%w: %d", ErrInvalidFrame, n)
	}
	if n > max {
		return 0, fmt.Errorf("%w: %d > %d", ErrFrameTooLarge, n, max)
	}
	return int(n), nil
}

// ReadBody fills body, whose length is the size ReadSize returned, with
// the frame's bytes. An end of stream before the last byte is
// io.ErrUnexpectedEOF.
func (f *FrameReader) ReadBody(body []byte) error {
	var err error
	if len(body) < f.br.Size() {
		_, err = io.ReadFull(f.br, body)
	} else {
		// What is buffered already, then the rest from the connection.
		n := 0
		if k := f.br.Buffered(); k > 0 {
			n, _ = f.br.Read(body[:min(k, len(body))])
		}
		_, err = io.ReadFull(f.r, body[n:])
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// RequestHeader is the decoded request header (v1 or v2).
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	ClientID      string
}

// ErrMalformedHeader means the request header could not be decoded.
var ErrMalformedHeader = errors.New("malformed request header")

// ParseHeaderPrefix decodes the fixed part of a request header: api key,
// version and correlation id. It is enough to answer an unknown API or
// version.
func ParseHeaderPrefix(frame []byte) (RequestHeader, error) {
	if len(frame) < 8 {
		return RequestHeader{}, fmt.Errorf("%w: %d bytes", ErrMalformedHeader, len(frame))
	}
	return RequestHeader{
		APIKey:        int16(binary.BigEndian.Uint16(frame[0:])),
		APIVersion:    int16(binary.BigEndian.Uint16(frame[2:])),
		CorrelationID: int32(binary.BigEndian.Uint32(frame[4:])),
	}, nil
}

// ErrMalformedBody means a request body does not follow its schema in a way
// the decoder alone would let through: a length below −1 (or a null where
// the field is not nullable).
var ErrMalformedBody = errors.New("malformed request body")

// ParseRequest decodes the header and the body of a request whose kind
// and version are known to be supported. flexible says whether the header
// carries tagged fields (header v2). A string or array length below −1 and
// a null in a field that is not nullable are ErrMalformedBody, and the
// caller closes the connection, as Kafka's parser fails on them.
//
// Bytes after the last field are ignored, as Kafka's generated readers
// ignore them: librdkafka since 2.1 sends a Metadata v9+ request for all
// topics with a four-byte placeholder for the topic array's one-byte
// count, which Kafka reads as a null array followed by false, false and no
// tags, leaving three bytes unread (librdkafka issue 5049).
//
// kmsg's decoder reads any negative length as null, so a non-flexible
// body is checked again after decoding: it must re-encode to its own
// first bytes (the classic encoding has one canonical form for what kmsg
// keeps). A flexible body's lengths are unsigned varints, never below −1.
func ParseRequest(frame []byte, req kmsg.Request) (RequestHeader, error) {
	h, err := ParseHeaderPrefix(frame)
	if err != nil {
		return h, err
	}
	r := kbin.Reader{Src: frame[8:]}
	if l := int16(r.Int16()); r.Ok() && l < -1 {
		return h, fmt.Errorf("%w: client id length %d", ErrMalformedHeader, l)
	}
	r = kbin.Reader{Src: frame[8:]}
	if cid := r.NullableString(); cid != nil {
		h.ClientID = *cid
	}
	req.SetVersion(h.APIVersion)
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
	}
	if !r.Ok() {
		return h, fmt.Errorf("%w: client id or tagged fields overrun the frame", ErrMalformedHeader)
	}
	body := r.Src
	if err := req.ReadFrom(body); err != nil {
		return h, fmt.Errorf("decode %s v%d body: %w", kmsg.NameForKey(h.APIKey), h.APIVersion, err)
	}
	if err := checkConsumed(req, body); err != nil {
		return h, fmt.Errorf("decode %s v%d body: %w", kmsg.NameForKey(h.APIKey), h.APIVersion, err)
	}
	return h, nil
}

// checkConsumed reports ErrMalformedBody when body, which decoded into
// req, has a length kmsg tolerated but Kafka refuses (see ParseRequest).
//
// Deviation: of a non-flexible Produce (v3-8) only the transactional id's
// length is checked, because re-encoding would copy every produced byte
// once more on the hot path.
func checkConsumed(req kmsg.Request, body []byte) error {
	if req.IsFlexible() {
		return nil
	}
	if req.Key() == kmsg.Produce.Int16() {
		if req.GetVersion() >= 3 && len(body) >= 2 && int16(binary.BigEndian.Uint16(body)) < -1 {
			return fmt.Errorf("%w: transactional id length %d", ErrMalformedBody, int16(binary.BigEndian.Uint16(body)))
		}
		return nil
	}
	enc := req.AppendTo(make([]byte, 0, len(body)))
	if len(enc) > len(body) {
		return fmt.Errorf("%w: %d bytes, %d needed", ErrMalformedBody, len(body), len(enc))
	}
	for i := range enc {
		if enc[i] != body[i] {
			return fmt.Errorf("%w: invalid length or null at byte %d", ErrMalformedBody, i)
		}
	}
	return nil
}
