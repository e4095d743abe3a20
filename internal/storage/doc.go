// Package storage is Silkworm's log storage engine: Kafka's on-disk log
// layout, segments with sparse offset and time indexes, crash recovery,
// retention, idempotent-producer state and leader epochs. It knows nothing
// of the network or of replication; the partition layer drives it.
//
// # Who calls what
//
// A Manager (Kafka's LogManager) owns every partition Log in the log dirs.
// The broker opens it once (OpenManager), creates logs with GetOrCreate,
// and closes it at shutdown. Request handlers call Log.Append (produce,
// replica fetch) and Log.Read (fetch) from any goroutine; appends are
// serialised by the log's mutex, reads take no lock (only a small mutex
// around the read hint, read.go: a Read that continues where the previous
// one stopped, as a consumer that is behind does, skips the index lookup
// and one batch header read). The Manager's own
// goroutines run retention, time-based flushes and recovery-point
// checkpoints. All file I/O goes through the FS interface (OSFS in
// production, ErrorFS in failure tests).
//
// # Errors
//
// Any write or fsync failure takes the log offline: that call and every
// later Append or Read returns ErrLogOffline (wrapping the cause) and the
// log dir gets no clean-shutdown marker, so the next open recovers it.
// Nothing is retried.
//
// # On-disk format (Kafka's)
//
//	<logdir>/meta.properties                    version=1, node.id, cluster.id, directory.id
//	<logdir>/recovery-point-offset-checkpoint   "0\n<n>\n" then "topic partition offset" lines
//	<logdir>/log-start-offset-checkpoint        same format
//	<logdir>/.kafka_cleanshutdown               present only after a clean Close
//	<logdir>/<topic>-<partition>/
//	    00000000000000000000.log        raw v2 record batches, back to back
//	    00000000000000000000.index      8-byte entries: int32 relative offset, int32 position
//	    00000000000000000000.timeindex  12-byte entries: int64 timestamp, int32 relative offset
//	    00000000000000001234.snapshot   producer state at offset 1234 (see below)
//	    leader-epoch-checkpoint         "0\n<n>\n" then "epoch startOffset" lines
//	    partition.metadata              "version: 0\ntopic_id: <base64url uuid>\n"
//
// File names are the 20-digit base offset of the segment. Batches are
// stored exactly as given, with only the base offset and partition leader
// epoch patched (both outside the CRC). All integers are big-endian.
//
// The offset index gets an entry (last offset of the batch, position of the
// batch) whenever more than index.interval.bytes were appended since the
// previous entry; the time index gets (largest timestamp so far, its
// offset) at the same moment when the timestamp grew. Index files hold
// exactly their entries (never preallocated): an active segment keeps its
// newest entries (up to 512) in memory and writes them out when they are
// that many, on roll and on close. A segment
// rolls before an append when it would exceed segment.bytes, when the
// incoming batch's timestamp is segment.ms (minus jitter) past the
// segment's first batch (wall clock since creation if it has none), when
// an index is full, or when the relative offset would overflow int32.
//
// Checkpoints and metadata are written atomically: a .tmp file, fsync,
// rename, fsync of the directory.
//
// # Producer snapshots
//
// When a segment rolls and when a log closes, the idempotent-producer state
// (per producer id: epoch and its last five batches' sequence and offset
// ranges) is written to <offset>.snapshot, offset being the log end offset
// it reflects. Format:
//
//	magic "SWPS" | uint16 version=1 | uint32 CRC-32C of the rest | uint32 count |
//	count × { int64 producerID | int16 epoch | int64 lastTimestamp | uint8 n |
//	          n × { int32 firstSeq | int32 lastSeq | int64 firstOffset |
//	                int64 lastOffset | int64 maxTimestamp } }
//
// At open the newest snapshot at or below the log end is loaded (bad ones
// are deleted) and the batch headers after it are replayed; without a
// snapshot the whole log's headers are replayed. A producer we hold no state
// for must start at sequence 0 (ErrOutOfOrderSequence otherwise; we never
// return UnknownProducerId), as must a new epoch; producer state is not
// expired by time or by retention.
//
// # Recovery
//
// Without the clean-shutdown marker, every segment from the one holding the
// recovery point onward is re-validated batch by batch (length within the
// file, magic 2, CRC-32C, offsets increasing); the first bad batch and
// everything after it are truncated (later segments deleted), the indexes
// of those segments rebuilt, leader epochs truncated to the new log end and
// producer state rebuilt. Earlier segments are trusted; their indexes are
// checked for sanity and rebuilt when missing or not sane. After a clean
// shutdown, only the active segment's stats are read at open (the last
// entry of each index, one binary search, the batch headers after the last
// time-index entry); inactive segments are only listed and stat'ed, their
// stats (next offset, largest timestamp) load on first need, and an index
// found insane by a lookup is rebuilt from the log then. A .log that
// cannot be opened or read is an error naming the file.
//
// # Open files and memory
//
// Stored data costs neither descriptors nor heap while it is not read
// (cache.go). An active segment holds one descriptor, its .log; index
// files are opened only to be read or written. An inactive segment's .log
// opens on first read and joins the Manager's file cache, bounded by
// ManagerConfig.MaxOpenSegmentFiles (CLOCK eviction; a handle in use is
// never closed: every ReadAt, WriteAt and sendfile holds a reference, and
// an evicted handle reopens on its next use). Index entries on disk are
// loaded whole on the first lookup that needs them and held in the
// Manager's index cache, bounded by ManagerConfig.IndexCacheBytes.
//
// # Log compaction
//
// Logs whose Config.Compact is set (cleanup.policy=compact) are cleaned
// by the Manager's cleaner threads (log.cleaner.threads, cleaner.go), or
// on demand by Manager.Clean. A thread picks the log with the highest
// dirty ratio (bytes of segments at or past the cleaner checkpoint over
// the bytes of the cleanable log) at or above min.cleanable.dirty.ratio,
// or one whose oldest dirty segment began more than max.compaction.lag.ms
// ago, or one whose kept tombstones' delete horizon has passed; with none
// it sleeps log.cleaner.backoff.ms. The cleanable part ends before the
// active segment, before the first segment reaching past the high
// watermark and before the first dirty segment holding a record newer
// than min.compaction.lag.ms.
//
// A pass hashes every key of the dirty part to the offset of its latest
// record (two 64-bit seeded hashes, bounded by log.cleaner.dedupe.buffer.size
// at 24 bytes a key; what does not fit stays dirty), then rewrites the log
// from its first segment to the end of that map in groups of segments that
// fit one segment. A record is kept when the map holds no later offset for
// its key; records without a key are dropped (as Kafka does). A tombstone
// is kept at first and its batch gets Kafka's delete horizon (KIP-534:
// attribute bit 0x40, FirstTimestamp = now + delete.retention.ms, record
// timestamp deltas rebased); a later pass after that horizon drops it.
// Batches whose records all survive are copied as they are; others are
// re-encoded with their codec, base offset, last offset delta, leader
// epoch, producer fields and attributes, so offsets keep their values
// (with gaps). A producer's last batch is kept as an empty batch when all
// its records go; control batches are kept. The cleaner checkpoint then
// moves to the end of the map.
//
// Swap protocol: the new segment and its indexes are written and fsynced
// as <base>.{index,timeindex,log}.cleaned, renamed to .swap (the .log
// last: its .swap is the commit point) and the dir fsynced. Then, under
// the log's lock, only if the group's segments are still in the log: the
// old segments' files become .deleted (removed after
// file.delete.delay.ms, so readers holding them finish), the .log.swap
// and then the index swaps take their final names. At open, .cleaned
// files are removed; for each <base>.log.swap every segment whose base
// lies in [base, last offset of the swap] is removed and the swap files
// are renamed into place; index .swap files without their .log.swap are
// removed (the index is rebuilt). Old segments of the group past the
// swap's last offset survive such a crash (stale values a later pass
// removes again), so nothing is lost.
//
//	<logdir>/cleaner-offset-checkpoint   "0\n<n>\n" then "topic partition firstDirtyOffset" lines
//
// # Deletion
//
// Segments leaving the log (retention, DeleteRecords, truncation) are
// renamed to *.deleted and removed file.delete.delay.ms later, so readers
// holding the File of a ReadResult can finish (it reopens under the new
// name if it was evicted). A deleted partition's
// directory is renamed to <topic>-<partition>.<uuidhex>-delete and removed
// in the background; leftovers of both are removed at the next open.
package storage
