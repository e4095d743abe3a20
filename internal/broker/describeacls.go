package broker

// DescribeAcls: v0-3
//
// Lists the bindings of the metadata image a filter matches, grouped by
// resource pattern. Needs DESCRIBE on the cluster; SECURITY_DISABLED
// without an authorizer; an invalid filter is INVALID_REQUEST.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/security/acl"
)

func init() { register(kmsg.DescribeACLs, 0, 3, handleDescribeAcls) }

func handleDescribeAcls(b *Broker, r *request) {
	req := r.kreq.(*kmsg.DescribeACLsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	fail := func(code int16, msg string) {
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		r.respond(resp)
	}
	if code, msg := b.aclAccess(r, kmsg.ACLOperationDescribe); code != 0 {
		fail(code, msg)
		return
	}
	f := acl.Filter{
		ResourceType: req.ResourceType, ResourceName: req.ResourceName, PatternType: req.ResourcePatternType,
		Principal: req.Principal, Host: req.Host, Operation: req.Operation, Permission: req.PermissionType,
	}
	if r.hdr.APIVersion == 0 {
		f.PatternType = kmsg.ACLResourcePatternTypeLiteral
	}
	if err := acl.ValidateFilter(f); err != nil {
		fail(kerr.InvalidRequest.Code, err.Error())
		return
	}
	type pattern struct {
		rt   kmsg.ACLResourceType
		name string
		pt   kmsg.ACLResourcePatternType
	}
	index := map[pattern]int{}
	for _, bd := range b.meta.Image().ACLs {
		if !f.Matches(bd) {
			continue
		}
		k := pattern{bd.ResourceType, bd.ResourceName, bd.PatternType}
		i, ok := index[k]
		if !ok {
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName, res.ResourcePatternType = k.rt, k.name, k.pt
			resp.Resources = append(resp.Resources, res)
			i = len(resp.Resources) - 1
			index[k] = i
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host, a.Operation, a.PermissionType = bd.Principal, bd.Host, bd.Operation, bd.Permission
		resp.Resources[i].ACLs = append(resp.Resources[i].ACLs, a)
	}
	r.respond(resp)
}
