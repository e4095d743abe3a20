package broker

// ListGroups: v0-4
//
// v4 filters on group states.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(kmsg.ListGroups, 0, 4, handleListGroups) }

func handleListGroups(b *Broker, r *request) {
	resp := b.groups.ListGroups(r.kreq.(*kmsg.ListGroupsRequest))
	// DESCRIBE on the cluster lists every group; otherwise only the groups
	// the principal may describe.
	if b.authz.acl != nil && !b.authorizeCluster(r, kmsg.ACLOperationDescribe) {
		kept := resp.Groups[:0]
		for _, g := range resp.Groups {
			if b.authorizeGroup(r, kmsg.ACLOperationDescribe, g.Group) {
				kept = append(kept, g)
			}
		}
		resp.Groups = kept
	}
	r.respond(resp)
}
