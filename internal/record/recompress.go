package record

import (
	"encoding/binary"
	"fmt"
)

// Recompress returns batch with its records re-encoded with codec c, as a
// broker does when a topic's compression.type names a codec other than the
// producer's. The header is kept (offsets, timestamps, producer fields);
// attributes, batch length and CRC are rewritten. A batch already in codec
// c is returned unchanged. maxUncompressed caps the decompressed size.
// The batch must have passed Validate.
func Recompress(batch []byte, c Compression, maxUncompressed int) ([]byte, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return nil, err
	}
	if h.Compression() == c {
		return batch, nil
	}
	raw, err := Decompress(h.Compression(), batch[HeaderSize:], maxUncompressed)
	if err != nil {
		return nil, err
	}
	out := make([]byte, HeaderSize, HeaderSize+len(raw)/2+64)
	copy(out, batch[:HeaderSize])
	out, err = Compress(c, out, raw)
	if err != nil {
		return nil, err
	}
	if len(out)-LogOverhead > 0x7fffffff {
		return nil, fmt.Errorf("%w: recompressed batch too large", ErrTooLarge)
	}
	binary.BigEndian.PutUint32(out[OffsetBatchLength:], uint32(len(out)-LogOverhead))
	attrs := uint16(h.Attributes)&^AttrCompressionMask | uint16(c)
	binary.BigEndian.PutUint16(out[OffsetAttributes:], attrs)
	binary.BigEndian.PutUint32(out[OffsetCRC:], ComputeCRC(out))
	return out, nil
}

// ParseCompression maps a compression.type value to a codec: "producer"
// returns ok=false (keep the producer's codec).
func ParseCompression(name string) (c Compression, ok bool) {
	switch name {
	case "uncompressed", "none":
		return CompressionNone, true
	case "gzip":
		return CompressionGzip, true
	case "snappy":
		return CompressionSnappy, true
	case "lz4":
		return CompressionLZ4, true
	case "zstd":
		return CompressionZstd, true
	}
	return 0, false
}
