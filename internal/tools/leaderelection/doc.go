// Package leaderelection is `silkworm leader-election`, Kafka's
// kafka-leader-election.sh (tools/LeaderElectionCommand.java): it sends
// ElectLeaders for one partition (--topic and --partition), the partitions
// of a JSON file (--path-to-json-file, {"partitions": [{"topic": "t",
// "partition": 0}]}) or every partition (--all-topic-partitions), with
// --election-type PREFERRED or UNCLEAN, and prints Kafka's lines:
//
//	Successfully completed leader election (PREFERRED) for partitions t-0, t-1
//	Valid replica already elected for partitions t-2
//	Error completing leader election (PREFERRED) for partition: t-3: org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: ...
//
// A failed partition makes the command fail with "N replica(s) could not
// be elected". Partitions are listed sorted by topic and partition (Kafka
// prints a hash set's order).
//
// Run is the only command-line entry point; Elect and WriteResults are the
// parts tests use. Nothing here keeps state between calls.
//
// The types here are plain values: safe for concurrent reads, not for
// concurrent changes.
package leaderelection
