package broker

// DeleteGroups: v0-3
//
// Only Empty groups (classic, or consumer and share groups without
// members) are deleted (NON_EMPTY_GROUP otherwise); unknown ones get
// GROUP_ID_NOT_FOUND. A share group's delete also removes its
// share-partition state (shares.go).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.DeleteGroups, 0, 3, handleDeleteGroups) }

func handleDeleteGroups(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DeleteGroupsRequest)
	// DELETE on each group, else GROUP_AUTHORIZATION_FAILED for it.
	sub := *req
	sub.Groups = nil
	answered := map[string]int16{}
	for _, g := range req.Groups {
		switch {
		case b.authz.acl != nil && !b.authorizeGroup(r, kmsg.ACLOperationDelete, g):
			answered[g] = kerr.GroupAuthorizationFailed.Code
		case b.shares != nil && b.shares.coord.HasGroup(g):
			answered[g] = b.deleteShareGroup(g)
		default:
			sub.Groups = append(sub.Groups, g)
		}
	}
	resp := b.groups.DeleteGroups(&sub)
	for g, code := range answered {
		dg := kmsg.NewDeleteGroupsResponseGroup()
		dg.Group, dg.ErrorCode = g, code
		resp.Groups = append(resp.Groups, dg)
	}
	r.respond(resp)
}
