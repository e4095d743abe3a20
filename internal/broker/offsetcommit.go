package broker

// OffsetCommit: v0-9
//
// One batch per request in __consumer_offsets, acknowledged after the
// append. Generation -1 commits without membership (Empty groups only).
// Deviation: the v2-4 RetentionTimeMillis is ignored (Kafka ignores it too
// since 2.1 for groups it manages); offsets.retention.minutes applies.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.OffsetCommit, 0, 9, handleOffsetCommit) }

func handleOffsetCommit(b *Broker, r *request) {
	r.respond(b.groups.OffsetCommit(r.kreq.(*kmsg.OffsetCommitRequest)))
}
