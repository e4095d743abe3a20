// Package sharegroups is `silkworm share-groups`, Kafka's
// kafka-share-groups.sh: list share groups (--list, with --state their
// states), describe them (--describe: the share-partition start offsets
// and lag, or --members, or --state; --verbose adds Kafka's extra
// columns), delete them (--delete), delete their offsets
// (--delete-offsets) and reset their start offsets (--reset-offsets with
// --to-earliest, --to-latest, --to-offset or --to-datetime, --dry-run by
// default, --execute to apply), over the Kafka protocol with franz-go's
// kadm (ListGroups with type "share", ShareGroupDescribe,
// DescribeShareGroupOffsets, AlterShareGroupOffsets,
// DeleteShareGroupOffsets, DeleteGroups).
//
// Output follows Kafka's ShareGroupCommand: tables whose first columns
// are at least 15 wide and grow with the longest value, each row starting
// with a newline, "-" for a value that is not known. Rows are sorted by
// topic and partition.
package sharegroups
