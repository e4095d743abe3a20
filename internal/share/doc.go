// Package share implements share groups (KIP-932, Kafka 4.2's queues):
// membership and assignment (Coordinator, on the broker that coordinates
// the group), the share-partition state machine (Partition, on the
// leader of each consumed topic-partition; Manager loads, persists and
// expires them), and the share coordinator's durable state (StateStore,
// on the leader of each __share_group_state partition).
//
// A share-partition tracks the share-partition start offset (SPSO): every
// record below it is done (acknowledged or archived). Records from the
// SPSO to the end of the in-flight window each have a state (AVAILABLE,
// ACQUIRED, ACKNOWLEDGED, ARCHIVED) and a delivery count. ShareFetch
// acquires available records for a member under a lock that expires
// after share.record.lock.duration.ms; acknowledgements ACCEPT, RELEASE,
// REJECT, RENEW (and GAP) move them on; a record released at
// group.share.delivery.count.limit deliveries is archived.
//
// Durability, as Kafka: the share-partition leader writes the state
// (SPSO, state epoch, leader epoch, and the in-flight records with state
// and delivery count; acquired records as AVAILABLE) to the share
// coordinator, which appends it to __share_group_state under the key
// group:topicId:partition and answers once it is committed. The broker
// acknowledges to the client only after that. A new leader reads the
// state back and writes it under its leader epoch, fencing the old one;
// records that were acquired when the old leader died are delivered
// again, with their delivery count.
//
// On-disk format (deviation: not Kafka's byte format, the same content):
// every record in __share_group_state is a full snapshot (Kafka's
// ShareSnapshot; no ShareUpdate deltas), key = int16 type 0, int16-length
// group id, 16-byte topic id, int32 partition; value = int16 version 0,
// int32 state epoch, int32 leader epoch, int64 start offset, int32 count,
// then per batch int64 first offset, int64 last offset, int8 state,
// int16 delivery count. A null value deletes the state. The topic is
// compacted.
//
// Deviations: membership is kept in memory on the coordinator (a moved
// coordinator makes members rejoin); the assignor is not sticky; records
// are acquired one by one, not by whole batches.
package share
