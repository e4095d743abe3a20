package broker

// DeleteAcls: v0-3
//
// Removes every binding each filter matches and returns them per filter.
// Needs ALTER on the cluster; SECURITY_DISABLED without an authorizer; an
// invalid filter is INVALID_REQUEST for that filter only.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/security/acl"
)

func init() { register(kmsg.DeleteACLs, 0, 3, handleDeleteAcls) }

func handleDeleteAcls(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DeleteACLsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	resp.Results = make([]kmsg.DeleteACLsResponseResult, len(req.Filters))
	fail := func(i int, code int16, msg string) {
		resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = code, &msg
	}
	denied, deniedMsg := b.aclAccess(r, kmsg.ACLOperationAlter)
	im := b.meta.Image()
	var remove []acl.Binding
	removing := map[acl.Binding]bool{}
	for i, rf := range req.Filters {
		resp.Results[i] = kmsg.NewDeleteACLsResponseResult()
		if denied != 0 {
			fail(i, denied, deniedMsg)
			continue
		}
		f := acl.Filter{
			ResourceType: rf.ResourceType, ResourceName: rf.ResourceName, PatternType: rf.ResourcePatternType,
			Principal: rf.Principal, Host: rf.Host, Operation: rf.Operation, Permission: rf.PermissionType,
		}
		if r.hdr.APIVersion == 0 {
			f.PatternType = kmsg.ACLResourcePatternTypeLiteral
		}
		if err := acl.ValidateFilter(f); err != nil {
			fail(i, kerr.InvalidRequest.Code, err.Error())
			continue
		}
		for _, bd := range im.ACLs {
			if !f.Matches(bd) {
				continue
			}
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = bd.ResourceType, bd.ResourceName, bd.PatternType
			m.Principal, m.Host, m.Operation, m.PermissionType = bd.Principal, bd.Host, bd.Operation, bd.Permission
			resp.Results[i].MatchingACLs = append(resp.Results[i].MatchingACLs, m)
			if !removing[bd] {
				removing[bd] = true
				remove = append(remove, bd)
			}
		}
	}
	if len(remove) > 0 {
		if err := b.meta.DeleteACLs(remove); err != nil {
			for i := range resp.Results {
				if resp.Results[i].ErrorCode == 0 {
					fail(i, clusterErrorCode(err), err.Error())
					resp.Results[i].MatchingACLs = nil
				}
			}
		}
	}
	r.respond(resp)
}
