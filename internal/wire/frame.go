package wire

import (
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

// ParseRequest decodes the header and the body of a request whose kind
// and version are known to be supported. flexible says whether the header
// carries tagged fields (header v2). The body must be consumed exactly:
// trailing bytes are an error.
func ParseRequest(frame []byte, req kmsg.Request) (RequestHeader, error) {
	h, err := ParseHeaderPrefix(frame)
	if err != nil {
		return h, err
	}
	r := kbin.Reader{Src: frame[8:]}
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
	if err := req.ReadFrom(r.Src); err != nil {
		return h, fmt.Errorf("decode %s v%d body: %w", kmsg.NameForKey(h.APIKey), h.APIVersion, err)
	}
	return h, nil
}
