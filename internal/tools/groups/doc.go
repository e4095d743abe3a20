// Package groups is `silkworm consumer-groups`, Kafka's
// kafka-consumer-groups.sh: list, describe (offsets, --members, --state),
// delete groups, delete some of their committed offsets (--delete-offsets,
// OffsetDelete) and reset their offsets, over the Kafka protocol with
// franz-go's kadm.
//
// --reset-offsets --export prints the plan as Kafka's CSV instead of the
// table: topic,partition,offset lines when one --group is named,
// group,topic,partition,offset otherwise, then an empty line. --from-file
// reads either form back as the reset scenario; the offsets are clamped to
// [LogStartOffset, LogEndOffset] as Kafka does. A by-time reset
// (--to-datetime, --by-duration) that finds no record at or after the time
// falls back to the LogEndOffset with Kafka's "Warn: Partition ... is
// empty" line.
//
// Output follows Kafka's ConsumerGroupCommand: tables whose first column
// widths grow with the longest value (at least 15), each table starting with
// an empty line, "-" for a missing value, and Kafka's messages for a group
// that does not exist, has no active members or is rebalancing. Where
// Kafka 3.9 glued rows together (the --reset-offsets table, the missing
// final newline after --describe) the Kafka 4.0 fix is followed. Kafka
// prints rows in hash-map order; here rows are sorted by topic and
// partition so that output is stable.
//
// KIP-848 consumer groups are shown as Kafka 4's tool shows them: groups
// DescribeGroups v6 reports as not classic are described again with
// ConsumerGroupDescribe; ASSIGNMENT-STRATEGY is the server assignor;
// --state --verbose adds GROUP-EPOCH and TARGET-ASSIGNMENT-EPOCH ("-" for
// classic groups); --members --verbose of a consumer group prints
// CURRENT-EPOCH, CURRENT-ASSIGNMENT, TARGET-EPOCH and TARGET-ASSIGNMENT
// instead of ASSIGNMENT; --list --type prints each group's type (Classic,
// Consumer) and --type consumer filters on it.
package groups
