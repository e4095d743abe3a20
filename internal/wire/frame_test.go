package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// frameOf encodes req at its version as a frame body (no size prefix).
func frameOf(req kmsg.Request) []byte {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("wire-test"))
	return f.AppendRequest(nil, req, 7)[4:]
}

// sampleRequests are requests with fields set, so that strings, arrays,
// bytes and tagged fields are all on the wire; every version kmsg knows is
// tried for each, plus a default-valued request of every key.
func sampleRequests() []kmsg.Request {
	var reqs []kmsg.Request
	p := kmsg.NewPtrProduceRequest()
	p.TransactionID = kmsg.StringPtr("txn")
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "t"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = []byte("not really a batch")
	pt.Partitions = append(pt.Partitions, pp)
	p.Topics = append(p.Topics, pt)
	reqs = append(reqs, p)

	f := kmsg.NewPtrFetchRequest()
	f.Rack = "r1"
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = "t"
	ft.Partitions = append(ft.Partitions, kmsg.NewFetchRequestTopicPartition())
	f.Topics = append(f.Topics, ft)
	fg := kmsg.NewFetchRequestForgottenTopic()
	fg.Topic = "gone"
	fg.Partitions = []int32{1, 2}
	f.ForgottenTopics = append(f.ForgottenTopics, fg)
	reqs = append(reqs, f)

	m := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("t")
	m.Topics = append(m.Topics, mt)
	reqs = append(reqs, m)

	for key := int16(0); key <= kmsg.MaxKey; key++ {
		// ControlledShutdown v0 has a header without client id, which no
		// broker parses any more.
		if r := kmsg.RequestForKey(key); r != nil && key != kmsg.ControlledShutdown.Int16() {
			reqs = append(reqs, r)
		}
	}
	return reqs
}

func TestParseRequestAcceptsWellFormedBodies(t *testing.T) {
	for _, req := range sampleRequests() {
		for v := int16(0); v <= req.MaxVersion(); v++ {
			req.SetVersion(v)
			frame := frameOf(req)
			got := kmsg.RequestForKey(req.Key())
			h, err := ParseRequest(frame, got)
			if err != nil {
				t.Errorf("%s v%d: %v", kmsg.NameForKey(req.Key()), v, err)
				continue
			}
			if h.APIKey != req.Key() || h.APIVersion != v || h.CorrelationID != 7 || h.ClientID != "wire-test" {
				t.Errorf("%s v%d: header %+v", kmsg.NameForKey(req.Key()), v, h)
			}
		}
	}
}

// Bytes after a request's last field are ignored, as Kafka's generated
// readers ignore them: the request decodes as it would without them.
func TestParseRequestIgnoresTrailingBytes(t *testing.T) {
	for _, req := range sampleRequests() {
		for v := int16(0); v <= req.MaxVersion(); v++ {
			req.SetVersion(v)
			frame := append(frameOf(req), 0, 1, 2)
			got := kmsg.RequestForKey(req.Key())
			if _, err := ParseRequest(frame, got); err != nil {
				t.Errorf("%s v%d with trailing bytes: %v", kmsg.NameForKey(req.Key()), v, err)
				continue
			}
			if !bytes.Equal(got.AppendTo(nil), req.AppendTo(nil)) {
				t.Errorf("%s v%d with trailing bytes decoded differently", kmsg.NameForKey(req.Key()), v)
			}
		}
	}
}

// librdkafka (2.1 and later) asks for the metadata of all topics at v9+
// with a four-byte placeholder where the topic array's one-byte compact
// count belongs. Kafka reads it as no topic array (all topics), false,
// false and no tags, and ignores the three bytes left; so does Silkworm.
func TestParseRequestLibrdkafkaAllTopicsMetadata(t *testing.T) {
	for _, v := range []int16{9, 12, 13} {
		hdr := binary.BigEndian.AppendUint16(nil, uint16(kmsg.Metadata.Int16()))
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(v))
		hdr = binary.BigEndian.AppendUint32(hdr, 7)
		hdr = binary.BigEndian.AppendUint16(hdr, 7)
		hdr = append(hdr, "rdkafka"...)
		hdr = append(hdr, 0)       // header tags
		body := []byte{0, 0, 0, 0} // the placeholder of the topic count
		if v <= 10 {
			body = append(body, 1, 0, 0) // allow auto-creation, cluster and topic authorized operations
		} else {
			body = append(body, 1, 0) // allow auto-creation, topic authorized operations
		}
		body = append(body, 0) // tags
		req := kmsg.NewPtrMetadataRequest()
		h, err := ParseRequest(append(hdr, body...), req)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if h.ClientID != "rdkafka" || req.Topics != nil || req.AllowAutoTopicCreation || req.IncludeTopicAuthorizedOperations {
			t.Fatalf("v%d: client %q, topics %v, auto-create %v, authorized operations %v; want all topics, false, false",
				v, h.ClientID, req.Topics, req.AllowAutoTopicCreation, req.IncludeTopicAuthorizedOperations)
		}
	}
}

func TestParseRequestRefusesLengthsBelowMinusOne(t *testing.T) {
	// InitProducerID v0 (classic encoding): transactional_id is a
	// nullable string right after the header; −2 is not null, it is
	// malformed.
	hdr := kbin.AppendInt16(nil, kmsg.InitProducerID.Int16())
	hdr = kbin.AppendInt16(hdr, 0)
	hdr = kbin.AppendInt32(hdr, 7)
	hdr = kbin.AppendNullableString(hdr, kmsg.StringPtr("c"))

	body := kbin.AppendInt16(nil, -2)   // transactional_id
	body = kbin.AppendInt32(body, 1000) // transaction timeout
	if _, err := ParseRequest(append(append([]byte{}, hdr...), body...), kmsg.NewPtrInitProducerIDRequest()); !errors.Is(err, ErrMalformedBody) {
		t.Errorf("nullable string length -2: err %v, want ErrMalformedBody", err)
	}
	body[0], body[1] = 0xff, 0xff // -1: null, well formed
	if _, err := ParseRequest(append(append([]byte{}, hdr...), body...), kmsg.NewPtrInitProducerIDRequest()); err != nil {
		t.Errorf("nullable string length -1: %v", err)
	}

	// A client id of length −2 in the request header.
	bad := kbin.AppendInt16(nil, kmsg.Produce.Int16())
	bad = kbin.AppendInt16(bad, 3)
	bad = kbin.AppendInt32(bad, 7)
	bad = kbin.AppendInt16(bad, -2)
	if _, err := ParseRequest(append(bad, body...), kmsg.NewPtrProduceRequest()); !errors.Is(err, ErrMalformedHeader) {
		t.Errorf("client id length -2: err %v, want ErrMalformedHeader", err)
	}

	// A non-nullable string given as null: Metadata v1 topic names.
	mb := kbin.AppendArrayLen(nil, 1)
	mb = kbin.AppendInt16(mb, -1)
	mh := kbin.AppendInt16(nil, kmsg.Metadata.Int16())
	mh = kbin.AppendInt16(mh, 1)
	mh = kbin.AppendInt32(mh, 7)
	mh = kbin.AppendNullableString(mh, nil)
	if _, err := ParseRequest(append(mh, mb...), kmsg.NewPtrMetadataRequest()); err == nil {
		t.Errorf("null non-nullable topic name: parsed, want an error")
	}
}

// countingReader records the size of every read the frame reader makes
// on the connection.
type countingReader struct {
	r     io.Reader
	reads []int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.reads = append(c.reads, len(p))
	return n, err
}

// TestFrameReaderReadsFramesOfEverySize: small and large frames back to
// back come out whole and in order; a large frame's body is read from the
// connection straight into the caller's buffer (reads of at least the
// read buffer's size), not through the read buffer.
func TestFrameReaderReadsFramesOfEverySize(t *testing.T) {
	const bufSize = 4096
	sizes := []int{1, 100, bufSize - 1, bufSize, 3*bufSize + 17, 5, 64 << 10, 2}
	var stream []byte
	var want [][]byte
	for i, n := range sizes {
		body := bytes.Repeat([]byte{byte('a' + i)}, n)
		stream = binary.BigEndian.AppendUint32(stream, uint32(n))
		stream = append(stream, body...)
		want = append(want, body)
	}
	cr := &countingReader{r: bytes.NewReader(stream)}
	fr := NewFrameReader(cr, bufSize)
	for i, w := range want {
		n, err := fr.ReadSize(1 << 20)
		if err != nil {
			t.Fatalf("frame %d: size: %v", i, err)
		}
		if n != len(w) {
			t.Fatalf("frame %d: size %d, want %d", i, n, len(w))
		}
		body := make([]byte, n)
		if err := fr.ReadBody(body); err != nil {
			t.Fatalf("frame %d: body: %v", i, err)
		}
		if !bytes.Equal(body, w) {
			t.Fatalf("frame %d: body differs", i)
		}
	}
	if _, err := fr.ReadSize(1 << 20); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last frame: %v, want EOF", err)
	}
	direct := 0
	for _, n := range cr.reads {
		if n > bufSize {
			direct++
		}
	}
	if direct == 0 {
		t.Fatalf("no read went straight into a large frame's buffer (reads %v)", cr.reads)
	}
}

// TestFrameReaderRefusesBadSizes: a size of 0 or below and one above the
// maximum are refused before any body is read; a stream that ends inside
// a body is io.ErrUnexpectedEOF.
func TestFrameReaderRefusesBadSizes(t *testing.T) {
	for _, tc := range []struct {
		size int32
		want error
	}{{0, ErrInvalidFrame}, {-5, ErrInvalidFrame}, {1001, ErrFrameTooLarge}} {
		fr := NewFrameReader(bytes.NewReader(binary.BigEndian.AppendUint32(nil, uint32(tc.size))), 4096)
		if _, err := fr.ReadSize(1000); !errors.Is(err, tc.want) {
			t.Errorf("size %d: %v, want %v", tc.size, err, tc.want)
		}
	}
	for _, n := range []int{10, 10000} {
		stream := binary.BigEndian.AppendUint32(nil, uint32(n))
		stream = append(stream, make([]byte, n/2)...)
		fr := NewFrameReader(bytes.NewReader(stream), 4096)
		if _, err := fr.ReadSize(1 << 20); err != nil {
			t.Fatalf("size: %v", err)
		}
		if err := fr.ReadBody(make([]byte, n)); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%d-byte body cut in half: %v, want io.ErrUnexpectedEOF", n, err)
		}
	}
}
