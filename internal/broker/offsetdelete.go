package broker

// OffsetDelete: v0
//
// GROUP_SUBSCRIBED_TO_TOPIC for topics an active consumer group's members
// subscribe to; NON_EMPTY_GROUP for an active group of another protocol.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.OffsetDelete, 0, 0, handleOffsetDelete) }

func handleOffsetDelete(b *Broker, r *request) {
	r.respond(b.groups.OffsetDelete(r.kreq.(*kmsg.OffsetDeleteRequest)))
}
