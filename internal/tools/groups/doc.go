// Package groups is `silkworm consumer-groups`, Kafka's
// kafka-consumer-groups.sh: list, describe (offsets, --members, --state),
// delete and reset the offsets of consumer groups, over the Kafka protocol
// with franz-go's kadm.
//
// Output follows Kafka's ConsumerGroupCommand: tables whose first column
// widths grow with the longest value (at least 15), each table starting with
// an empty line, "-" for a missing value, and Kafka's messages for a group
// that does not exist, has no active members or is rebalancing. Where
// Kafka 3.9 glued rows together (the --reset-offsets table, the missing
// final newline after --describe) the Kafka 4.0 fix is followed. Kafka
// prints rows in hash-map order; here rows are sorted by topic and
// partition so that output is stable.
package groups
