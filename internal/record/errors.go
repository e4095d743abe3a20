package record

import "errors"

// Sentinel errors returned (wrapped, with a message naming the problem) by
// Validate, Records and Decompress. Test them with errors.Is. The Kafka error
// code each maps to at the handler boundary is given beside it.
var (
	// ErrCorruptMessage means the bytes do not form a well-structured batch:
	// truncated or trailing bytes, bad lengths, a CRC mismatch, malformed
	// records or a corrupt compressed stream. Kafka: CORRUPT_MESSAGE (2).
	// (Apache Kafka itself answers INVALID_RECORD for a malformed record
	// inside an intact batch; CORRUPT_MESSAGE is retriable for clients,
	// which suits a CRC mismatch best.)
	ErrCorruptMessage = errors.New("corrupt message")

	// ErrInvalidRecord means the batch is well formed but breaks a rule a
	// broker enforces on what producers send: no records, offset deltas not
	// consecutive, a control batch or LogAppendTime from a client, a null key
	// on a compacted topic. Kafka: INVALID_RECORD (87).
	ErrInvalidRecord = errors.New("invalid record")

	// ErrUnsupportedCompression means the attributes name a codec other than
	// none, gzip, snappy, lz4 or zstd. Kafka: UNSUPPORTED_COMPRESSION_TYPE (76).
	ErrUnsupportedCompression = errors.New("unsupported compression type")

	// ErrUnsupportedVersion means the magic byte is not 2. Kafka:
	// UNSUPPORTED_FOR_MESSAGE_FORMAT (43), or CORRUPT_MESSAGE (2) for a magic
	// that never existed.
	ErrUnsupportedVersion = errors.New("unsupported record batch version")

	// ErrTooLarge means the records decompress to more than the caller's
	// limit (a decompression bomb, or simply too much data). Kafka:
	// MESSAGE_TOO_LARGE (10).
	ErrTooLarge = errors.New("uncompressed records too large")
)
