package broker

// DeleteGroups: v0-2
//
// Only Empty groups are deleted (NON_EMPTY_GROUP otherwise); unknown ones
// get GROUP_ID_NOT_FOUND.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.DeleteGroups, 0, 2, handleDeleteGroups) }

func handleDeleteGroups(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DeleteGroupsRequest)
	if b.authz.acl == nil {
		r.respond(b.groups.DeleteGroups(req))
		return
	}
	// DELETE on each group, else GROUP_AUTHORIZATION_FAILED for it.
	sub := *req
	sub.Groups = nil
	denied := map[string]bool{}
	for _, g := range req.Groups {
		if b.authorizeGroup(r, kmsg.ACLOperationDelete, g) {
			sub.Groups = append(sub.Groups, g)
		} else {
			denied[g] = true
		}
	}
	resp := b.groups.DeleteGroups(&sub)
	for g := range denied {
		dg := kmsg.NewDeleteGroupsResponseGroup()
		dg.Group, dg.ErrorCode = g, kerr.GroupAuthorizationFailed.Code
		resp.Groups = append(resp.Groups, dg)
	}
	r.respond(resp)
}
