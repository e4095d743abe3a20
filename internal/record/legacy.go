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
