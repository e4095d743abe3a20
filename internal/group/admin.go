package group

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func sortFetched(ts []fetchedTopic) {
	slices.SortFunc(ts, func(a, b fetchedTopic) int { return strings.Compare(a.topic, b.topic) })
	for _, t := range ts {
		slices.SortFunc(t.partitions, func(a, b fetchedPartition) int { return int(a.partition - b.partition) })
	}
}

// groupOperations is what DescribeGroups reports as authorized without an
// authorizer: READ, DELETE and DESCRIBE (Kafka's AclOperation bits).
const groupOperations = 1<<3 | 1<<6 | 1<<8

// DescribeGroups handles a DescribeGroups request (v0-5). A group not
// known is reported as Dead with no error, as Kafka does. Member metadata
// and assignments are given only for Stable groups.
func (c *Coordinator) DescribeGroups(req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group = id
		dg.State = Dead.String()
		dg.AuthorizedOperations = -2147483648
		if req.IncludeAuthorizedOperations {
			dg.AuthorizedOperations = groupOperations
		}
		g, code := c.group(id, false)
		dg.ErrorCode = code
		if g != nil {
			g.mu.Lock()
			dg.State = g.state.String()
			if g.state != Dead {
				dg.ProtocolType = g.protocolType
				if g.state == Stable {
					dg.Protocol = g.protocol
				}
				for _, m := range g.members {
					dm := kmsg.NewDescribeGroupsResponseGroupMember()
					dm.MemberID, dm.InstanceID = m.id, m.instanceID
					dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
					dm.ProtocolMetadata, dm.MemberAssignment = []byte{}, []byte{}
					if g.state == Stable {
						if md := m.metadataFor(g.protocol); md != nil {
							dm.ProtocolMetadata = md
						}
						if m.assignment != nil {
							dm.MemberAssignment = m.assignment
						}
					}
					dg.Members = append(dg.Members, dm)
				}
				slices.SortFunc(dg.Members, func(a, b kmsg.DescribeGroupsResponseGroupMember) int {
					return strings.Compare(a.MemberID, b.MemberID)
				})
			}
			g.unlock()
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

// ListGroups handles a ListGroups request (v0-4; v4 filters on states,
// case-insensitively as Kafka parses them).
func (c *Coordinator) ListGroups(req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	want := map[string]bool{}
	for _, s := range req.StatesFilter {
		want[strings.ToLower(s)] = true
	}
	for _, g := range c.snapshot() {
		g.mu.Lock()
		state, ptype := g.state, g.protocolType
		g.unlock()
		if state == Dead || (len(want) > 0 && !want[strings.ToLower(state.String())]) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState = g.id, ptype, state.String()
		resp.Groups = append(resp.Groups, lg)
	}
	slices.SortFunc(resp.Groups, func(a, b kmsg.ListGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
	return resp
}

// DeleteGroups handles a DeleteGroups request (v0-2): only Empty groups
// are deleted (NON_EMPTY_GROUP otherwise); their offsets and metadata are
// tombstoned.
func (c *Coordinator) DeleteGroups(req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewDeleteGroupsResponseGroup()
		dg.Group = id
		dg.ErrorCode = c.deleteGroup(id)
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (c *Coordinator) deleteGroup(id string) int16 {
	g, code := c.group(id, false)
	if code != 0 {
		return code
	}
	if g == nil {
		return kerr.GroupIDNotFound.Code
	}
	g.mu.Lock()
	switch g.state {
	case Dead:
		g.unlock()
		return kerr.GroupIDNotFound.Code
	case Empty:
	default:
		g.unlock()
		return kerr.NonEmptyGroup.Code
	}
	keys := make([]offsetKey, 0, len(g.offsets))
	for k := range g.offsets {
		keys = append(keys, k)
	}
	if err := g.tombstoneLocked(keys, true); err != nil {
		g.unlock()
		c.logger.Error("delete group", "group", id, "err", err)
		return kerr.CoordinatorNotAvailable.Code
	}
	for pid, t := range g.pending {
		t.Stop()
		delete(g.pending, pid)
	}
	g.transitionLocked(Dead)
	g.unlock()
	c.forget(g)
	return 0
}

// OffsetDelete handles an OffsetDelete request (v0). Offsets of topics a
// member of an active consumer group subscribes to are kept
// (GROUP_SUBSCRIBED_TO_TOPIC); a non-empty group of another protocol type
// refuses (NON_EMPTY_GROUP).
func (c *Coordinator) OffsetDelete(req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	g, code := c.group(req.Group, false)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	if g == nil {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	}
	g.mu.Lock()
	defer g.unlock()
	if g.state == Dead {
		resp.ErrorCode = kerr.GroupIDNotFound.Code
		return resp
	}
	var subscribed map[string]bool
	if g.state != Empty {
		if g.protocolType != "consumer" {
			resp.ErrorCode = kerr.NonEmptyGroup.Code
			return resp
		}
		subscribed = g.subscribedTopicsLocked()
	}
	var keys []offsetKey
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetDeleteResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetDeleteResponseTopicPartition()
			sp.Partition = rp.Partition
			switch {
			case !c.host.PartitionExists(rt.Topic, rp.Partition):
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case subscribed[rt.Topic]:
				sp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			default:
				k := offsetKey{rt.Topic, rp.Partition}
				if _, ok := g.offsets[k]; ok {
					keys = append(keys, k)
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if err := g.tombstoneLocked(keys, false); err != nil {
		c.logger.Error("delete offsets", "group", g.id, "err", err)
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		resp.Topics = nil
	}
	return resp
}

// subscribedTopicsLocked is the union of the topics the members' consumer
// protocol metadata subscribes to (undecodable metadata subscribes to
// nothing, as in Kafka).
func (g *group) subscribedTopicsLocked() map[string]bool {
	out := map[string]bool{}
	for _, m := range g.members {
		md := m.metadataFor(g.protocol)
		if md == nil && len(m.protocols) > 0 {
			md = m.protocols[0].metadata
		}
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(md); err != nil {
			continue
		}
		for _, t := range meta.Topics {
			out[t] = true
		}
	}
	return out
}
