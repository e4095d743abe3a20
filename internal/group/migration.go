package group

// Online migration between the classic and the consumer protocol (KIP-848,
// group.consumer.migration.policy), as Kafka does it:
//
//   - Upgrade: a consumer-protocol member joining a Stable classic group
//     whose members all use the "consumer" protocol type turns it into a
//     consumer group (policy upgrade or bidirectional). The classic members
//     stay members: their generation becomes their member epoch, their
//     assignment their current and target assignment, the group epoch the
//     generation.
//   - Classic members of a consumer group keep speaking JoinGroup,
//     SyncGroup, Heartbeat and LeaveGroup; the coordinator runs them
//     through the same reconciliation as consumer-protocol members: a
//     JoinGroup carries the member's subscription and owned partitions,
//     SyncGroup hands out its current assignment (the leader's assignment
//     is ignored), and a Heartbeat answers REBALANCE_IN_PROGRESS while the
//     member's assignment differs from its target, so that it rejoins.
//   - Downgrade: when the last consumer-protocol member leaves a group
//     whose remaining members all use the classic protocol, the group
//     becomes a classic group again (policy downgrade or bidirectional) at
//     generation = group epoch, and a rebalance starts.
//
// A classic member joining a consumer group is served whatever the policy;
// the policy only governs the conversions.

import (
	"bytes"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// classicMember is what a consumer group keeps of a member using the
// classic protocol.
type classicMember struct {
	sessionTimeout time.Duration
	protocols      []protocol
}

func (c *Coordinator) upgradeAllowed() bool {
	p := c.cfg.Consumer.MigrationPolicy
	return p == "upgrade" || p == "bidirectional"
}

func (c *Coordinator) downgradeAllowed() bool {
	p := c.cfg.Consumer.MigrationPolicy
	return p == "downgrade" || p == "bidirectional"
}

// upgradeLocked turns a classic group with members into a consumer group
// (Kafka's ConsumerGroup.fromClassicGroup). It reports false, changing
// nothing, when the group cannot be upgraded.
func (g *group) upgradeLocked() bool {
	if !g.c.upgradeAllowed() || g.protocolType != "consumer" || g.state != Stable ||
		len(g.members) == 0 || len(g.members) >= g.c.cfg.Consumer.MaxSize || len(g.pending) > 0 {
		return false
	}
	im := g.c.host.Topics()
	cg := newConsumerGroup()
	for _, m := range g.members {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(m.metadataFor(g.protocol)); err != nil {
			return false
		}
		var asg kmsg.ConsumerMemberAssignment
		assigned := assignment{}
		if len(m.assignment) > 0 {
			if err := asg.ReadFrom(m.assignment); err != nil {
				return false
			}
			for _, t := range asg.Topics {
				tm := im.ByName[t.Topic]
				if tm == nil {
					continue
				}
				for _, p := range t.Partitions {
					assigned.add(tm.ID, p)
				}
			}
		}
		names := slices.Clone(meta.Topics)
		slices.Sort(names)
		cm := &cmember{
			id: m.id, instanceID: m.instanceID, rack: meta.Rack, clientID: m.clientID, clientHost: m.clientHost,
			rebalanceTimeout: m.rebalanceTimeout, topicNames: slices.Compact(names),
			state: memberStable, epoch: g.generation, prevEpoch: g.generation,
			assigned: assigned, pendingRevoke: assignment{}, assignedAt: map[tpKey]int32{},
			classic: &classicMember{sessionTimeout: m.sessionTimeout, protocols: m.protocols},
		}
		for t, ps := range assigned {
			for _, p := range ps {
				cm.assignedAt[tpKey{t, p}] = g.generation
				cg.owners[tpKey{t, p}] = owner{cm.id, cm.epoch}
			}
		}
		cg.members[cm.id] = cm
		if cm.instanceID != nil {
			cg.static[*cm.instanceID] = cm.id
		}
		cg.target[cm.id] = assigned.clone()
	}
	for _, m := range g.members {
		if m.hbTimer != nil {
			m.hbTimer.Stop()
		}
		m.hbSeq++
	}
	cg.epoch, cg.assignmentEpoch = g.generation, g.generation
	cg.metaSig, cg.metaVersion = "", -1
	g.c.logger.Info("upgraded classic group to consumer group", "group", g.id, "members", len(cg.members), "epoch", cg.epoch)
	g.members, g.static = map[string]*member{}, map[string]string{}
	g.protocolType, g.protocol, g.leader, g.generation = "", "", "", 0
	g.cg = cg
	g.transitionLocked(Empty)
	g.pendingRecs = append(g.pendingRecs, record.Record{Key: groupRecordKey(g.id)})
	g.sig(cg)
	g.recordGroupEpochLocked()
	g.recordAssignmentEpochLocked()
	for _, m := range cg.members {
		g.recordMemberLocked(m)
		g.recordTargetLocked(m.id, cg.target[m.id])
		g.recordCurrentLocked(m)
		g.resetConsumerSessionLocked(cg, m)
	}
	return true
}

// sig records the subscription metadata as it is now, so that the
// upgrade itself is not a metadata change.
func (g *group) sig(cg *consumerGroup) {
	im := g.c.host.Topics()
	cg.metaSig, cg.metaVersion = g.subscriptionSignatureLocked(cg, im), im.Version
}

// maybeDowngradeLocked turns a consumer group whose members all use the
// classic protocol back into a classic group, after a consumer-protocol
// member left. It reports whether it did.
func (g *group) maybeDowngradeLocked() bool {
	cg := g.cg
	if cg == nil || len(cg.members) == 0 || !g.c.downgradeAllowed() {
		return false
	}
	for _, m := range cg.members {
		if m.classic == nil {
			return false
		}
	}
	im := g.c.host.Topics()
	g.recordConsumerGroupTombstonesLocked()
	g.members, g.static = map[string]*member{}, map[string]string{}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range cg.members {
			if !yield(id) {
				return
			}
		}
	})
	for _, id := range ids {
		cm := cg.members[id]
		g.stopConsumerTimersLocked(cm)
		g.joinSeq++
		m := &member{
			id: cm.id, instanceID: cm.instanceID, clientID: cm.clientID, clientHost: cm.clientHost,
			rebalanceTimeout: cm.rebalanceTimeout, sessionTimeout: cm.classic.sessionTimeout,
			protocolType: "consumer", protocols: cm.classic.protocols, joinSeq: g.joinSeq,
			assignment: encodeClassicAssignment(cm.assigned, im),
		}
		g.members[m.id] = m
		if m.instanceID != nil {
			g.static[*m.instanceID] = m.id
		}
	}
	g.cg = nil
	g.protocolType = "consumer"
	g.generation = cg.epoch
	g.leader = g.oldestMemberLocked()
	g.protocol = g.selectProtocolLocked()
	g.transitionLocked(Stable)
	g.c.logger.Info("downgraded consumer group to classic group", "group", g.id, "members", len(g.members), "generation", g.generation)
	g.flushLocked()
	g.storeLocked()
	for _, m := range g.members {
		g.resetHeartbeatLocked(m)
	}
	// Everyone rejoins under the classic protocol.
	g.prepareRebalanceLocked()
	return true
}

// encodeClassicAssignment is a member's partitions as the consumer
// protocol's assignment bytes.
func encodeClassicAssignment(a assignment, im *TopicImage) []byte {
	var out kmsg.ConsumerMemberAssignment
	for _, t := range a.sortedTopics() {
		name := ""
		if tm := im.ByID[t]; tm != nil {
			name = tm.Name
		}
		if name == "" {
			continue
		}
		out.Topics = append(out.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: name, Partitions: slices.Clone(a[t])})
	}
	return out.AppendTo(nil)
}

// classicJoinToConsumerLocked is a JoinGroup to a consumer group (Kafka's
// classicGroupJoinToConsumerGroup): the member's subscription and owned
// partitions come from its consumer protocol metadata, it is reconciled
// like a consumer-protocol member and answered at once with its member
// epoch as generation, as a follower (its SyncGroup gets the assignment).
func (g *group) classicJoinToConsumerLocked(req *kmsg.JoinGroupRequest, clientID, clientHost string, respond func(*kmsg.JoinGroupResponse)) {
	cg := g.cg
	fail := func(code int16) {
		resp := joinError(code, req.MemberID)
		g.outbox = append(g.outbox, func() { respond(resp) })
	}
	if req.ProtocolType != "consumer" || len(req.Protocols) == 0 {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	protos := make([]protocol, 0, len(req.Protocols))
	for _, p := range req.Protocols {
		protos = append(protos, protocol{name: p.Name, metadata: bytes.Clone(p.Metadata)})
	}
	var meta kmsg.ConsumerMemberMetadata
	if err := meta.ReadFrom(protos[0].metadata); err != nil {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	memberID := req.MemberID
	var m *cmember
	switch {
	case memberID == "" && req.InstanceID != nil && cg.static[*req.InstanceID] != "":
		// A classic static member replaces the previous instance at once,
		// whatever protocol that one used (Kafka checks the release only
		// between consumer-protocol members).
		old := cg.members[cg.static[*req.InstanceID]]
		m = g.replaceStaticLocked848(cg, old, newMemberID(clientID))
	case memberID == "":
		if len(cg.members) >= g.c.cfg.Consumer.MaxSize {
			fail(kerr.GroupMaxSizeReached.Code)
			return
		}
		id := newMemberID(clientID)
		if req.GetVersion() >= 4 && req.InstanceID == nil {
			resp := joinError(kerr.MemberIDRequired.Code, id)
			g.outbox = append(g.outbox, func() { respond(resp) })
			return
		}
		m = &cmember{id: id, instanceID: req.InstanceID, assigned: assignment{}, pendingRevoke: assignment{}}
		cg.members[id] = m
		if req.InstanceID != nil {
			cg.static[*req.InstanceID] = id
		}
	default:
		m = cg.members[memberID]
		if m == nil {
			if req.GetVersion() >= 4 && req.InstanceID == nil && len(cg.members) < g.c.cfg.Consumer.MaxSize {
				// The id we handed out with MEMBER_ID_REQUIRED.
				m = &cmember{id: memberID, assigned: assignment{}, pendingRevoke: assignment{}}
				cg.members[memberID] = m
			} else {
				fail(kerr.UnknownMemberID.Code)
				return
			}
		} else if m.classic == nil {
			fail(kerr.UnknownMemberID.Code) // a consumer-protocol member
			return
		}
		if req.InstanceID != nil && cg.static[*req.InstanceID] != "" && cg.static[*req.InstanceID] != m.id {
			fail(kerr.FencedInstanceID.Code)
			return
		}
	}
	before := *m
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	m.classic = &classicMember{sessionTimeout: session, protocols: protos}
	m.clientID, m.clientHost = clientID, clientHost
	m.rebalanceTimeout = session
	if req.GetVersion() >= 1 {
		m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if meta.Rack != nil {
		m.rack = meta.Rack
	}
	names := slices.Clone(meta.Topics)
	slices.Sort(names)
	names = slices.Compact(names)
	bump := !slices.Equal(names, m.topicNames) || m.regex != nil
	m.topicNames, m.regex = names, nil
	if m.epoch == staticLeaveEpoch {
		m.epoch, m.prevEpoch = 0, 0
	}
	if !sameMemberMetadata(&before, m) || before.classic == nil {
		g.recordMemberLocked(m)
	}
	im := g.c.host.Topics()
	if bump || cg.metaVersion != im.Version {
		if sig := g.subscriptionSignatureLocked(cg, im); sig != cg.metaSig {
			cg.metaSig, bump = sig, true
		}
		cg.metaVersion = im.Version
	}
	if bump {
		cg.epoch++
		g.recordGroupEpochLocked()
	}
	if cg.epoch > cg.assignmentEpoch {
		g.computeTargetLocked(cg, im)
	}
	// What it owns: the cooperative protocol lists it; an eager member
	// revoked everything before rejoining.
	owned := assignment{}
	for _, op := range meta.OwnedPartitions {
		if tm := im.ByName[op.Topic]; tm != nil {
			for _, p := range op.Partitions {
				owned.add(tm.ID, p)
			}
		}
	}
	g.reconcileLocked(cg, m, owned)
	g.resetConsumerSessionLocked(cg, m)
	g.flushLocked()
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Generation = m.epoch
	pt, pn := "consumer", protos[0].name
	resp.ProtocolType, resp.Protocol = &pt, &pn
	resp.MemberID = m.id
	g.outbox = append(g.outbox, func() { respond(resp) })
}

// classicMemberLocked finds the classic member a SyncGroup, Heartbeat or
// OffsetCommit names in a consumer group.
func (g *group) classicMemberLocked(memberID string, instanceID *string, generation int32) (*cmember, int16) {
	cg := g.cg
	if instanceID != nil {
		if known := cg.static[*instanceID]; known != "" && known != memberID {
			return nil, kerr.FencedInstanceID.Code
		}
	}
	m := cg.members[memberID]
	if m == nil || m.classic == nil {
		return nil, kerr.UnknownMemberID.Code
	}
	if generation != m.epoch {
		return nil, kerr.IllegalGeneration.Code
	}
	return m, 0
}

// classicSyncToConsumerLocked answers a classic member's SyncGroup with its
// current assignment.
func (g *group) classicSyncToConsumerLocked(req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	m, code := g.classicMemberLocked(req.MemberID, req.InstanceID, req.Generation)
	if code != 0 {
		return syncError(code)
	}
	if req.ProtocolType != nil && *req.ProtocolType != "consumer" {
		return syncError(kerr.InconsistentGroupProtocol.Code)
	}
	g.resetConsumerSessionLocked(g.cg, m)
	resp := kmsg.NewPtrSyncGroupResponse()
	pt, pn := "consumer", m.classic.protocols[0].name
	if req.Protocol != nil {
		pn = *req.Protocol
	}
	resp.ProtocolType, resp.Protocol = &pt, &pn
	resp.MemberAssignment = encodeClassicAssignment(m.assigned, g.c.host.Topics())
	return resp
}

// classicHeartbeatToConsumerLocked keeps a classic member alive and tells
// it to rejoin while its assignment is not its target.
func (g *group) classicHeartbeatToConsumerLocked(req *kmsg.HeartbeatRequest) int16 {
	cg := g.cg
	m, code := g.classicMemberLocked(req.MemberID, req.InstanceID, req.Generation)
	if code != 0 {
		return code
	}
	g.resetConsumerSessionLocked(cg, m)
	im := g.c.host.Topics()
	if cg.metaVersion != im.Version {
		if sig := g.subscriptionSignatureLocked(cg, im); sig != cg.metaSig {
			cg.metaSig = sig
			cg.epoch++
			g.recordGroupEpochLocked()
		}
		cg.metaVersion = im.Version
	}
	if cg.epoch > cg.assignmentEpoch {
		g.computeTargetLocked(cg, im)
	}
	g.flushLocked()
	if m.epoch != cg.assignmentEpoch || m.state != memberStable || !m.assigned.equal(cg.target[m.id]) {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// classicLeaveFromConsumerLocked removes a classic member of a consumer
// group (LeaveGroup).
func (g *group) classicLeaveFromConsumerLocked(memberID string, instanceID *string) int16 {
	cg := g.cg
	if instanceID != nil {
		known := cg.static[*instanceID]
		if known == "" {
			return kerr.UnknownMemberID.Code
		}
		if memberID != "" && memberID != known {
			return kerr.FencedInstanceID.Code
		}
		memberID = known
	}
	m := cg.members[memberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	g.removeConsumerMemberLocked(cg, m)
	g.flushLocked()
	return 0
}

// describeClassicProtocol names the protocol of a classic member for
// ConsumerGroupDescribe (MemberType 0).
func (m *cmember) memberType() int8 {
	if m.classic != nil {
		return 0
	}
	return 1
}
