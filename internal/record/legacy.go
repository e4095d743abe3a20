package record

// Legacy message formats (magic 0 and 1), which clients before Kafka 0.11
// write and read. Silkworm stores only v2 batches: produced message sets
// are converted up (legacyup.go) and fetches of old versions are answered
// by converting down (legacydown.go).
//
// A message set is a sequence of log entries, each
//
//	Offset      int64
//	MessageSize int32   bytes after this field
//	CRC         uint32  CRC-32 (IEEE) of [Magic:]
//	Magic       int8    0 or 1
//	Attributes  int8    bits 0-2 codec (none, gzip, snappy, lz4),
//	                    bit 3 LogAppendTime (magic 1 only)
//	Timestamp   int64   magic 1 only
//	Key         int32 length (-1 null) + bytes
//	Value       int32 length (-1 null) + bytes
//
// A compressed entry is a wrapper whose value is the compressed message set
// of its inner messages. With magic 0 the inner offsets are absolute; with
// magic 1 they are relative (0..n-1) and the wrapper carries the absolute
// offset of the last inner message.

import (
	"encoding/binary"
	"math/bits"
)

// Magic values of the legacy formats.
const (
	MagicV0 = 0
	MagicV1 = 1
)

// Layout of a legacy log entry. Offsets are byte positions from the start
// of the entry.
const (
	LegacyOffsetOffset     = 0  // int64
	LegacyOffsetSize       = 8  // int32, bytes after this field
	LegacyOffsetCRC        = 12 // uint32, CRC-32 (IEEE) of [LegacyOffsetMagic:]
	LegacyOffsetMagic      = 16 // int8
	LegacyOffsetAttributes = 17 // int8
	LegacyOffsetTimestamp  = 18 // int64, magic 1 only

	// LegacyHeaderSizeV0 and LegacyHeaderSizeV1 are the bytes of an entry
	// before its key length.
	LegacyHeaderSizeV0 = 18
	LegacyHeaderSizeV1 = 26
	// LegacyMinSizeV0 and LegacyMinSizeV1 are the smallest entries (null
	// key and value).
	LegacyMinSizeV0 = LegacyHeaderSizeV0 + 8
	LegacyMinSizeV1 = LegacyHeaderSizeV1 + 8

	// LegacyAttrCompressionMask and LegacyAttrLogAppendTime are the
	// attribute bits of a legacy message.
	LegacyAttrCompressionMask = 0x07
	LegacyAttrLogAppendTime   = 0x08
)

// xxh32 is xxHash32 with seed 0: the lz4 frame header checksum, which
// legacy magic 0 sets compute over the frame magic too (legacyup.go,
// legacydown.go). pierrec/lz4 keeps its implementation internal.
func xxh32(b []byte) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	n := len(b)
	var h uint32
	if n >= 16 {
		p1v, p2v := p1, p2 // variables: the seeds wrap around
		v1, v2, v3, v4 := p1v+p2v, p2v, uint32(0), 0-p1v
		for ; len(b) >= 16; b = b[16:] {
			v1 = bits.RotateLeft32(v1+binary.LittleEndian.Uint32(b[0:])*p2, 13) * p1
			v2 = bits.RotateLeft32(v2+binary.LittleEndian.Uint32(b[4:])*p2, 13) * p1
			v3 = bits.RotateLeft32(v3+binary.LittleEndian.Uint32(b[8:])*p2, 13) * p1
			v4 = bits.RotateLeft32(v4+binary.LittleEndian.Uint32(b[12:])*p2, 13) * p1
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += uint32(n)
	for ; len(b) >= 4; b = b[4:] {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
