package broker

// ListGroups: v0-5
//
// v4 filters on group states, v5 on group types (classic, consumer,
// share) and answers each group's type. Both filters ignore case, as
// Kafka's. Share groups (internal/share) are listed with protocol type
// "share", as Kafka lists them.

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(kmsg.ListGroups, 0, 5, handleListGroups) }

func handleListGroups(b *Broker, r *request) {
	req := r.kreq.(*kmsg.ListGroupsRequest)
	resp := b.groups.ListGroups(req)
	resp.Groups = append(resp.Groups, b.listedShareGroups(req)...)
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

// listedShareGroups lists the share groups this broker coordinates that
// pass the request's state (v4+) and type (v5+) filters.
func (b *Broker) listedShareGroups(req *kmsg.ListGroupsRequest) []kmsg.ListGroupsResponseGroup {
	if b.shares == nil {
		return nil
	}
	matches := func(filter []string, v string) bool {
		if len(filter) == 0 {
			return true
		}
		for _, f := range filter {
			if strings.EqualFold(f, v) {
				return true
			}
		}
		return false
	}
	var out []kmsg.ListGroupsResponseGroup
	for _, g := range b.shares.coord.ListGroups() {
		if !matches(req.StatesFilter, g.State) || !matches(req.TypesFilter, "share") {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.GroupID, "share", g.State, "share"
		out = append(out, lg)
	}
	return out
}
