// Package offsets is `silkworm get-offsets` (Kafka's kafka-get-offsets.sh,
// GetOffsetShell: prints topic:partition:offset per line) and `silkworm
// delete-records` (Kafka's kafka-delete-records.sh: deletes records before
// the offsets of a JSON file and prints each partition's new low
// watermark).
package offsets
