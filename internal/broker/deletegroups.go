package broker

// DeleteGroups: v0-2
//
// Only Empty groups are deleted (NON_EMPTY_GROUP otherwise); unknown ones
// get GROUP_ID_NOT_FOUND.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.DeleteGroups, 0, 2, handleDeleteGroups) }

func handleDeleteGroups(b *Broker, r *request) {
	r.respond(b.groups.DeleteGroups(r.kreq.(*kmsg.DeleteGroupsRequest)))
}
