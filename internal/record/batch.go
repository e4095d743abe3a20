package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Layout of a v2 record batch header (KIP-98). Offsets are byte positions from
// the start of the batch.
const (
	OffsetBaseOffset           = 0  // int64
	OffsetBatchLength          = 8  // int32, bytes after this field
	OffsetPartitionLeaderEpoch = 12 // int32
	OffsetMagic                = 16 // int8
	OffsetCRC                  = 17 // uint32, CRC-32C of [OffsetAttributes:]
	OffsetAttributes           = 21 // int16
	OffsetLastOffsetDelta      = 23 // int32
	OffsetFirstTimestamp       = 27 // int64
	OffsetMaxTimestamp         = 35 // int64
	OffsetProducerID           = 43 // int64
	OffsetProducerEpoch        = 51 // int16
	OffsetBaseSequence         = 53 // int32
	OffsetRecordCount          = 57 // int32

	// HeaderSize is the size of the v2 batch header; records follow it.
	HeaderSize = 61
	// LogOverhead is the part of the header not counted by BatchLength.
	LogOverhead = 12
	// MagicV2 is the only batch format Silkworm stores.
	MagicV2 = 2
)

// Attribute bits of a v2 batch.
const (
	AttrCompressionMask    = 0x07
	AttrTimestampLogAppend = 0x08
	AttrTransactional      = 0x10
	AttrControl            = 0x20
	AttrDeleteHorizon      = 0x40
)

// Compression codecs as stored in the low attribute bits.
type Compression int8

const (
	CompressionNone   Compression = 0
	CompressionGzip   Compression = 1
	CompressionSnappy Compression = 2
	CompressionLZ4    Compression = 3
	CompressionZstd   Compression = 4
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionSnappy:
		return "snappy"
	case CompressionLZ4:
		return "lz4"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("unknown(%d)", int8(c))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrShortBatch means the bytes end before the batch they announce.
var ErrShortBatch = errors.New("record batch is truncated")

// Header is the decoded fixed part of a v2 record batch. Decoding it reads
// 61 bytes and never touches the records.
type Header struct {
	BaseOffset           int64
	BatchLength          int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	FirstTimestamp       int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32
}

// ParseHeader decodes the header at the start of b. It checks only that b
// holds a whole header; use Validate for the rest.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, ErrShortBatch
	}
	return Header{
		BaseOffset:           int64(binary.BigEndian.Uint64(b[OffsetBaseOffset:])),
		BatchLength:          int32(binary.BigEndian.Uint32(b[OffsetBatchLength:])),
		PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(b[OffsetPartitionLeaderEpoch:])),
		Magic:                int8(b[OffsetMagic]),
		CRC:                  binary.BigEndian.Uint32(b[OffsetCRC:]),
		Attributes:           int16(binary.BigEndian.Uint16(b[OffsetAttributes:])),
		LastOffsetDelta:      int32(binary.BigEndian.Uint32(b[OffsetLastOffsetDelta:])),
		FirstTimestamp:       int64(binary.BigEndian.Uint64(b[OffsetFirstTimestamp:])),
		MaxTimestamp:         int64(binary.BigEndian.Uint64(b[OffsetMaxTimestamp:])),
		ProducerID:           int64(binary.BigEndian.Uint64(b[OffsetProducerID:])),
		ProducerEpoch:        int16(binary.BigEndian.Uint16(b[OffsetProducerEpoch:])),
		BaseSequence:         int32(binary.BigEndian.Uint32(b[OffsetBaseSequence:])),
		RecordCount:          int32(binary.BigEndian.Uint32(b[OffsetRecordCount:])),
	}, nil
}

// Size is the whole size of the batch in bytes, header included.
func (h *Header) Size() int64 { return int64(h.BatchLength) + LogOverhead }

// LastOffset is the offset of the last record the batch covers.
func (h *Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// Compression is the codec named by the attributes.
func (h *Header) Compression() Compression { return Compression(h.Attributes & AttrCompressionMask) }

// IsTransactional reports the transactional attribute bit.
func (h *Header) IsTransactional() bool { return h.Attributes&AttrTransactional != 0 }

// IsControl reports the control attribute bit.
func (h *Header) IsControl() bool { return h.Attributes&AttrControl != 0 }

// HasProducerID reports whether the batch was written by an idempotent producer.
func (h *Header) HasProducerID() bool { return h.ProducerID >= 0 }

// LastSequence is the sequence number of the last record, wrapping like Kafka.
func (h *Header) LastSequence() int32 {
	if h.BaseSequence < 0 {
		return -1
	}
	s := int64(h.BaseSequence) + int64(h.LastOffsetDelta)
	if s > 0x7fffffff {
		s -= 0x80000000
	}
	return int32(s)
}

// ComputeCRC returns the CRC-32C of a whole batch as Kafka defines it:
// from the attributes to the end.
func ComputeCRC(batch []byte) uint32 {
	return crc32.Checksum(batch[OffsetAttributes:], castagnoli)
}

// SetBaseOffset patches the base offset; the CRC does not cover it.
func SetBaseOffset(batch []byte, off int64) {
	binary.BigEndian.PutUint64(batch[OffsetBaseOffset:], uint64(off))
}

// SetPartitionLeaderEpoch patches the leader epoch; the CRC does not cover it.
func SetPartitionLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[OffsetPartitionLeaderEpoch:], uint32(epoch))
}
