// Package reassign is `silkworm reassign-partitions`, Kafka's
// kafka-reassign-partitions.sh (ReassignPartitionsCommand): it proposes,
// starts, follows, cancels and lists partition reassignments (KIP-455) over
// the Kafka protocol, and sets and clears the replication throttles of a
// reassignment the way Kafka's tool does.
//
// # Actions
//
//   - --generate reads a topics-to-move JSON file ({"version":1,"topics":
//     [{"topic":"foo"}]}) and a broker list, and prints the current
//     assignment and a proposal made by Kafka's replica placement
//     ([AssignReplicas], rack-aware unless --disable-rack-aware).
//   - --execute reads a reassignment JSON file (version 1, partitions with
//     topic, partition, replicas and optional log_dirs), prints the current
//     assignment for rollback, sets the throttles (--throttle,
//     --replica-alter-log-dirs-throttle) and sends AlterPartitionReassignments.
//   - --verify prints each partition's progress and, once nothing is moving,
//     removes every throttle (unless --preserve-throttles).
//   - --cancel cancels the reassignments of the file's partitions that are
//     in progress, then removes the throttles.
//   - --list prints the reassignments in progress.
//
// # Throttles
//
// As Kafka's tool does, --throttle sets the broker configs
// leader.replication.throttled.rate and follower.replication.throttled.rate
// on every broker that is a source or a destination of a move, and the
// topic configs leader.replication.throttled.replicas (partition:broker for
// each source replica) and follower.replication.throttled.replicas (each
// destination replica that is not also a source), all with
// IncrementalAlterConfigs. --verify deletes the broker configs on every
// broker of the cluster and the topic configs on every topic of the file.
//
// The output formats ([FormatReassignmentJSON], [FormatStatus],
// [FormatList], ...) and the error texts are Kafka's. Nothing here keeps
// global state; every function is safe for concurrent use.
package reassign
