package group

import (
	"fmt"
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

// DescribeGroups handles a DescribeGroups request (v0-6). A group not
// known, or one that is not a classic group (a KIP-848 consumer group), is
// reported as Dead with no error before v6 and as GROUP_ID_NOT_FOUND with
// Kafka's message from v6, as Kafka 4 does. Member metadata and
// assignments are given only for Stable groups.
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
		notFound := func(format string) {
			if req.Version >= 6 {
				dg.ErrorCode = kerr.GroupIDNotFound.Code
				msg := fmt.Sprintf(format, id)
				dg.ErrorMessage = &msg
			}
		}
		g, code := c.group(id, false)
		dg.ErrorCode = code
		if g == nil && code == 0 {
			notFound("Group %s not found.")
		}
		if g != nil {
			g.mu.Lock()
			if g.cg != nil || g.state == Dead {
				if g.state == Dead {
					notFound("Group %s not found.")
				} else {
					notFound("Group %s is not a classic group.")
				}
				g.unlock()
				resp.Groups = append(resp.Groups, dg)
				continue
			}
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

// ListGroups handles a ListGroups request (v0-5; v4 filters on states, v5
// on group types, both case-insensitively as Kafka parses them). A KIP-848
// group has type "consumer", protocol type "consumer" and Kafka's consumer
// group states (Empty, Assigning, Reconciling, Stable).
func (c *Coordinator) ListGroups(req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	want := map[string]bool{}
	for _, s := range req.StatesFilter {
		want[strings.ToLower(s)] = true
	}
	types := map[string]bool{}
	for _, t := range req.TypesFilter {
		types[strings.ToLower(t)] = true
	}
	for _, g := range c.snapshot() {
		g.mu.Lock()
		state, ptype, gtype := g.state.String(), g.protocolType, "classic"
		dead := g.state == Dead
		if g.cg != nil {
			state, ptype, gtype = g.cg.stateString(), "consumer", "consumer"
		}
		g.unlock()
		if dead || (len(want) > 0 && !want[strings.ToLower(state)]) || (len(types) > 0 && !types[gtype]) {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.id, ptype, state, gtype
		resp.Groups = append(resp.Groups, lg)
	}
	slices.SortFunc(resp.Groups, func(a, b kmsg.ListGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
	return resp
}

// DeleteGroups handles a DeleteGroups request (v0-3): only Empty groups
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
	switch {
	case g.state == Dead:
		g.unlock()
		return kerr.GroupIDNotFound.Code
	case g.cg != nil && len(g.cg.members) > 0:
		g.unlock()
		return kerr.NonEmptyGroup.Code
	case g.cg != nil, g.state == Empty:
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
	if g.cg != nil {
		if len(g.cg.members) > 0 {
			subscribed = g.consumerSubscribedLocked()
		}
	} else if g.state != Empty {
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
