// Package record owns the Kafka v2 record batch format (KIP-98, magic 2): the
// fixed header layout, validation of batches produced by clients, the
// LogAppendTime rewrite, the compression codecs and, for the few slow paths
// that need it, decoding of individual records.
//
// # Batch layout
//
// A batch is stored on disk and sent on the wire exactly as below (all
// integers big-endian). The CRC-32C (Castagnoli) covers everything from
// Attributes to the end of the batch, so BaseOffset and PartitionLeaderEpoch
// can be patched by the broker without recomputing it.
//
//	BaseOffset           int64
//	BatchLength          int32   bytes after this field (batch size - 12)
//	PartitionLeaderEpoch int32
//	Magic                int8    always 2
//	CRC                  uint32
//	Attributes           int16   bits 0-2 codec, 3 LogAppendTime, 4 transactional,
//	                             5 control, 6 delete horizon
//	LastOffsetDelta      int32
//	FirstTimestamp       int64
//	MaxTimestamp         int64
//	ProducerID           int64
//	ProducerEpoch        int16
//	BaseSequence         int32
//	RecordCount          int32
//	Records              RecordCount records, compressed as one stream when
//	                     the codec is not none
//
// Each record is a zigzag varint length followed by that many bytes:
//
//	Attributes     int8 (unused, 0)
//	TimestampDelta varlong, from FirstTimestamp
//	OffsetDelta    varint, from BaseOffset
//	KeyLength      varint, -1 for a null key
//	Key            bytes
//	ValueLength    varint, -1 for a null value
//	Value          bytes
//	HeaderCount    varint
//	Headers        HeaderCount x (KeyLength varint, Key, ValueLength varint
//	               (-1 for null), Value)
//
// # Who calls what
//
// The produce path calls Validate once per batch, from the request handler
// goroutine, then patches the base offset and leader epoch with SetBaseOffset
// and SetPartitionLeaderEpoch (and SetLogAppendTime when the topic uses
// LogAppendTime) and appends the bytes unchanged. Validate never decodes
// records into objects; for an uncompressed batch it allocates nothing. Records
// decodes a batch into values for slow paths (timestamp lookups inside a batch,
// dump-log, compaction). BuildBatch builds valid batches for tests and
// benchmarks in other packages.
//
// All functions are safe for concurrent use; none keeps a reference to its
// input after returning.
package record
