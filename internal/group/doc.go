// Package group is the group coordinator: Kafka's classic consumer group
// protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), KIP-848 consumer
// groups (ConsumerGroupHeartbeat, ConsumerGroupDescribe; consumer.go,
// assignor.go, consumer_store.go), committed offsets (OffsetCommit,
// OffsetFetch, OffsetDelete) and group administration (DescribeGroups,
// ListGroups, DeleteGroups). It imports no network code; the broker's
// handlers call it with decoded kmsg requests and it answers with kmsg
// responses, directly or later through a callback.
//
// # Classic and consumer groups
//
// A group id is either a classic group or a consumer group (group.cg set).
// An empty classic group becomes a consumer group on the first
// consumer-protocol join, and an empty consumer group becomes a classic
// group on the first JoinGroup; offsets stay either way. Groups with
// members migrate online as group.consumer.migration.policy allows
// (migration.go): a consumer-protocol member upgrades a Stable classic
// group of "consumer" protocol type, whose members stay as classic members
// of the consumer group; the last consumer-protocol member leaving
// downgrades it. When the policy forbids the upgrade the member gets
// GROUP_ID_NOT_FOUND ("Group g is not a consumer group."), as in Kafka; a
// JoinGroup of another protocol type to a consumer group gets
// INCONSISTENT_GROUP_PROTOCOL. Consumer groups reconcile without stopping
// anyone: see consumer.go for the epochs and the revocation-before-
// assignment state machine, assignor.go for the uniform and range
// assignors.
//
// # Groups and locks
//
// Each group has its own mutex; one group's rebalance never waits for
// another's. Coordinator.mu guards only the map of groups and the loaded
// __consumer_offsets partitions. Lock order: Coordinator.mu, then group.mu.
// Code holding a group's mu never takes Coordinator.mu. Callbacks that
// answer parked JoinGroup and SyncGroup requests are collected while the
// group's mu is held and run after it is released (group.unlock).
//
// Timers (time.AfterFunc) drive session timeouts (one per member, reset by
// every heartbeat, commit and join/sync), the rebalance timeout and
// group.initial.rebalance.delay.ms. Each timer carries a sequence number
// and does nothing if the group moved on since it was armed.
//
// States follow Kafka: Empty -> PreparingRebalance (a member joins) ->
// CompletingRebalance (every member rejoined, or the rebalance timeout
// removed those that did not; the leader gets all members' metadata) ->
// Stable (the leader's SyncGroup distributed the assignment). A join,
// leave or session expiry in CompletingRebalance or Stable goes back to
// PreparingRebalance; the last member leaving goes to Empty. Dead is a
// deleted group (DeleteGroups, offset expiry).
//
// # Storage: __consumer_offsets
//
// A group lives in partition abs(javaStringHashCode(groupID)) % N of the
// compacted topic __consumer_offsets, in Kafka's own record format (kmsg
// OffsetCommitKey/Value and GroupMetadataKey/Value):
//
//   - key version 0/1: OffsetCommitKey (group, topic, partition); value
//     OffsetCommitValue version 3 (offset, leader epoch, metadata, commit
//     timestamp). A null value (tombstone) deletes the offset.
//   - key version 2: GroupMetadataKey (group); value GroupMetadataValue
//     version 3 (protocol type, generation, protocol, leader, members with
//     their subscription and assignment). A tombstone deletes the group.
//
// Every OffsetCommit request is one batch (atomic) and is acknowledged only
// after the append returns. Group metadata is written when a generation
// completes (the leader's SyncGroup, with the assignment) and when a group
// becomes Empty. LoadPartition replays a partition from its LogStartOffset
// to its end, later records replacing earlier ones, so that a restarted
// broker knows every group's offsets and last generation. Members loaded
// this way must heartbeat within their session timeout or are removed.
// Leadership changes load and unload partitions in the background
// (OnElection, OnResignation), in order, on one goroutine that Close stops:
// a replay in progress ends at its next batch, so no load reads a log that
// is closing.
//
// Consumer groups are stored as Kafka stores them, one compacted record
// per group epoch, member subscription, target assignment and current
// member assignment, in Silkworm's own documented encoding under key
// versions 1003-1008 (consumer_store.go).
//
// Offsets expire as in Kafka's cleanupExpiredOffsets: offsets of topics the
// group does not subscribe to (every topic, for a group without members),
// after offsets.retention.minutes counted from when an Empty classic
// consumer group became Empty, else from the commit (a Stable classic
// consumer group, a KIP-848 group, a group that only commits), or at the
// expire time an OffsetCommit v2-4 gave them with its retention time (value
// version 1, as Kafka 4 writes it); never while a transaction holds one.
// Tombstones are written, and an empty group left with no offsets is
// removed.
package group
