package broker

// OffsetFetch: v0-9
//
// v8+ asks for several groups at once; null topics (v2+) means every
// committed offset of the group. RequireStable (v7+) is accepted: without
// transactions every committed offset is stable. The v9 member id and
// epoch (KIP-848 groups) are ignored.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.OffsetFetch, 0, 9, handleOffsetFetch) }

func handleOffsetFetch(b *Broker, r *request) {
	r.respond(b.groups.OffsetFetch(r.kreq.(*kmsg.OffsetFetchRequest)))
}
