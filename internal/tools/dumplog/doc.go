// Package dumplog is `silkworm dump-log`, Kafka's kafka-dump-log.sh: it decodes
// the files of a partition directory (.log segments, .index offset indexes and
// .timeindex time indexes) and prints them in Kafka's format, so that the
// output of the two tools can be compared line by line.
//
// It reads the files directly and never talks to a broker. Batches are
// decoded with package record; nothing else of the broker is imported.
//
// # File formats read
//
// A .log file is a sequence of v2 record batches (see package record). A
// .index file is a sequence of 8-byte entries (int32 offset relative to the
// segment's base offset, int32 file position in the .log); a .timeindex file a
// sequence of 12-byte entries (int64 timestamp, int32 relative offset). The
// base offset is the file name. A sparse, preallocated index ends at the
// first all-zero entry after the first one, as in Kafka.
//
// Output follows Kafka 3.9's DumpLogSegments: "Dumping <file>", then one line
// per batch ("baseOffset: ... position: ... compresscodec: ... isvalid: ...")
// and with --deep-iteration one line per record prefixed by "| ". Errors found
// while checking indexes against the log go to stderr after all files.
package dumplog
