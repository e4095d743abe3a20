package broker

// ListGroups: v0-4
//
// v4 filters on group states.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.ListGroups, 0, 4, handleListGroups) }

func handleListGroups(b *Broker, r *request) {
	r.respond(b.groups.ListGroups(r.kreq.(*kmsg.ListGroupsRequest)))
}
