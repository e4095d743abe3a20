package group

// KIP-848 consumer groups: ConsumerGroupHeartbeat and ConsumerGroupDescribe.
//
// A consumer group has a group epoch, bumped whenever a member joins or
// leaves, a subscription changes or the subscribed topics' metadata
// changes (partitions added, a topic created that a regex matches); and an
// assignment epoch, the group epoch its target assignment was computed at.
// A heartbeat that finds the group epoch ahead recomputes the target with
// the server-side assignor. Each member then reconciles towards its target
// (reconcileLocked, Kafka's CurrentAssignmentBuilder): it is first told to
// revoke the partitions it must give up (UNREVOKED_PARTITIONS, still at its
// old epoch), and a partition is given to its new owner only once the
// previous owner no longer reports it (UNRELEASED_PARTITIONS meanwhile).
// Nobody stops: members keep the partitions they keep.
//
// Everything runs under the group's mu; records are written to
// __consumer_offsets before the heartbeat is answered (consumer_store.go).

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// memberState is a consumer group member's reconciliation state, named as
// Kafka's MemberState.
type memberState int8

const (
	memberStable memberState = iota
	memberUnrevoked
	memberUnreleased
)

func (s memberState) String() string {
	switch s {
	case memberUnrevoked:
		return "UNREVOKED_PARTITIONS"
	case memberUnreleased:
		return "UNRELEASED_PARTITIONS"
	}
	return "STABLE"
}

// Epochs the protocol reserves.
const (
	leaveEpoch       = -1 // a member leaves
	staticLeaveEpoch = -2 // a static member leaves for now, keeping its partitions
)

// cmember is one member of a consumer group. Guarded by its group's mu.
type cmember struct {
	id               string
	instanceID       *string
	rack             *string
	clientID         string
	clientHost       string
	rebalanceTimeout time.Duration
	topicNames       []string // SubscribedTopicNames, sorted
	regex            *string  // SubscribedTopicRegex
	serverAssignor   *string

	state         memberState
	epoch         int32
	prevEpoch     int32
	assigned      assignment // partitions it owns (reported in responses)
	pendingRevoke assignment // partitions it must give up
	// assignedAt is the member epoch at which each partition of assigned
	// and pendingRevoke was given to it (KIP-1251 assignment epochs): a
	// commit with an older epoch is accepted for partitions it already
	// had then.
	assignedAt map[tpKey]int32

	// classic is set for a member that uses the classic protocol
	// (JoinGroup/SyncGroup/Heartbeat) in a consumer group (migration.go).
	classic *classicMember

	hbTimer     *time.Timer
	hbSeq       uint64
	revokeTimer *time.Timer // rebalance timeout while UNREVOKED_PARTITIONS
	revokeSeq   uint64
}

// owner is who currently holds a partition of a consumer group, assigned
// or pending revocation (Kafka's current partition epoch).
type owner struct {
	member string
	epoch  int32
}

// consumerGroup is the KIP-848 state of a group (group.cg). Guarded by the
// group's mu.
type consumerGroup struct {
	epoch           int32
	assignmentEpoch int32
	members         map[string]*cmember
	static          map[string]string     // instance id -> member id
	target          map[string]assignment // member id -> target assignment
	owners          map[tpKey]owner

	// metaSig describes the subscribed topics' metadata the group epoch
	// last accounted for; metaVersion is the TopicImage version it was
	// checked at (-1: check on the next heartbeat).
	metaSig     string
	metaVersion int64

	// regexTopics caches each regex's matching topics at regexVersion.
	regexTopics  map[string][]string
	regexVersion int64
}

func newConsumerGroup() *consumerGroup {
	return &consumerGroup{
		members: map[string]*cmember{}, static: map[string]string{},
		target: map[string]assignment{}, owners: map[tpKey]owner{},
		metaVersion: -1, regexVersion: -1,
	}
}

// stateString is the group's state as ConsumerGroupDescribe and
// ListGroups name it (Kafka's ConsumerGroupState).
func (cg *consumerGroup) stateString() string {
	switch {
	case len(cg.members) == 0:
		return "Empty"
	case cg.epoch != cg.assignmentEpoch:
		return "Assigning"
	}
	for _, m := range cg.members {
		if m.epoch != cg.assignmentEpoch || m.state != memberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

// preferredAssignor is the assignor the most members asked for (Kafka's
// computePreferredServerAssignor), else the configured default.
func (c *Coordinator) preferredAssignor(cg *consumerGroup) string {
	votes := map[string]int{}
	for _, m := range cg.members {
		if m.serverAssignor != nil {
			votes[*m.serverAssignor]++
		}
	}
	best, n := "", 0
	for _, name := range slices.Sorted(maps.Keys(votes)) {
		if votes[name] > n {
			best, n = name, votes[name]
		}
	}
	if best == "" && len(c.cfg.Consumer.Assignors) > 0 {
		best = c.cfg.Consumer.Assignors[0]
	}
	return best
}

// hbError is a ConsumerGroupHeartbeat failure with Kafka's message.
type hbError struct {
	code int16
	msg  string
}

func hbFail(code int16, format string, args ...any) *hbError {
	return &hbError{code, fmt.Sprintf(format, args...)}
}

func hbResponse(req *kmsg.ConsumerGroupHeartbeatRequest, e *hbError) *kmsg.ConsumerGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	resp.ErrorCode = e.code
	if e.msg != "" {
		m := e.msg
		resp.ErrorMessage = &m
	}
	return resp
}

// newConsumerMemberID is a member id as Kafka generates one for v0
// clients: a random UUID in URL-safe base64.
func newConsumerMemberID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// compileRegex compiles a SubscribedTopicRegex as Kafka's RE2/J does, as
// a match of the whole topic name.
func compileRegex(re string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + re + `)$`)
}

// validateHeartbeat is Kafka's request check (throwIfConsumerGroupHeartbeatRequestIsInvalid).
func (c *Coordinator) validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest) *hbError {
	blank := func(s *string) bool { return s != nil && strings.TrimSpace(*s) == "" }
	if strings.TrimSpace(req.Group) == "" {
		return hbFail(kerr.InvalidRequest.Code, "GroupId can't be empty.")
	}
	if blank(req.InstanceID) {
		return hbFail(kerr.InvalidRequest.Code, "InstanceId can't be empty.")
	}
	if blank(req.RackID) {
		return hbFail(kerr.InvalidRequest.Code, "RackId can't be empty.")
	}
	if req.Version >= 1 || req.MemberEpoch > 0 || req.MemberEpoch == leaveEpoch {
		if strings.TrimSpace(req.MemberID) == "" {
			return hbFail(kerr.InvalidRequest.Code, "MemberId can't be empty.")
		}
	}
	switch {
	case req.MemberEpoch > 0 || req.MemberEpoch == leaveEpoch:
	case req.MemberEpoch == 0:
		if req.RebalanceTimeoutMillis == -1 {
			return hbFail(kerr.InvalidRequest.Code, "RebalanceTimeoutMs must be provided in first request.")
		}
		if req.Topics == nil || len(req.Topics) > 0 {
			return hbFail(kerr.InvalidRequest.Code, "TopicPartitions must be empty when (re-)joining.")
		}
		if req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil {
			return hbFail(kerr.InvalidRequest.Code, "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
		}
	case req.MemberEpoch == staticLeaveEpoch:
		if req.InstanceID == nil {
			return hbFail(kerr.InvalidRequest.Code, "InstanceId can't be null.")
		}
	default:
		return hbFail(kerr.InvalidRequest.Code, "MemberEpoch is invalid.")
	}
	// Names and a regex may come together (librdkafka sends an empty
	// regex with its names): the member subscribes to their union, and
	// an empty regex is none, as Kafka's GroupMetadataManager has it.
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" {
		if _, err := compileRegex(*req.SubscribedTopicRegex); err != nil {
			return hbFail(kerr.InvalidRegularExpression.Code, "SubscribedTopicRegex `%s` is not a valid regular expression: %v.", *req.SubscribedTopicRegex, err)
		}
	}
	if req.ServerAssignor != nil && !slices.Contains(c.cfg.Consumer.Assignors, *req.ServerAssignor) {
		return hbFail(kerr.UnsupportedAssignor.Code, "ServerAssignor %s is not supported. Supported assignors: %s.", *req.ServerAssignor, strings.Join(c.cfg.Consumer.Assignors, ", "))
	}
	return nil
}

// ConsumerGroupHeartbeat handles ConsumerGroupHeartbeat v0-1 (KIP-848):
// a member joins (epoch 0), heartbeats with its epoch and owned
// partitions, or leaves (-1; -2 for a static member that will come back).
// clientID and clientHost describe the connection.
func (c *Coordinator) ConsumerGroupHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, clientID, clientHost string) *kmsg.ConsumerGroupHeartbeatResponse {
	if !c.cfg.Consumer.Enabled {
		return hbResponse(req, hbFail(kerr.UnsupportedVersion.Code, ""))
	}
	if e := c.validateHeartbeat(req); e != nil {
		return hbResponse(req, e)
	}
	if req.MemberID == "" && req.MemberEpoch == 0 {
		// v0: the coordinator names a joining member.
		req.MemberID = newConsumerMemberID()
	}
	g, code := c.group(req.Group, req.MemberEpoch == 0)
	if code != 0 {
		return hbResponse(req, hbFail(code, ""))
	}
	if g == nil {
		return hbResponse(req, hbFail(kerr.GroupIDNotFound.Code, "Group %s not found.", req.Group))
	}
	g.mu.Lock()
	defer g.unlock()
	resp, e := g.consumerHeartbeatLocked(req, clientID, clientHost)
	if e != nil {
		return hbResponse(req, e)
	}
	return resp
}

// asConsumerGroupLocked returns the group's consumer state, turning an
// empty classic group into a consumer group when create is set (Kafka
// converts an empty classic group on the first consumer-protocol join).
func (g *group) asConsumerGroupLocked(create bool) (*consumerGroup, *hbError) {
	if g.state == Dead {
		return nil, hbFail(kerr.CoordinatorNotAvailable.Code, "")
	}
	if g.cg != nil {
		return g.cg, nil
	}
	if !create {
		if g.classicEmptyLocked() && len(g.offsets) == 0 && g.generation == 0 {
			return nil, hbFail(kerr.GroupIDNotFound.Code, "Group %s not found.", g.id)
		}
		return nil, hbFail(kerr.GroupIDNotFound.Code, "Group %s is not a consumer group.", g.id)
	}
	if !g.classicEmptyLocked() {
		// Online upgrade (migration.go) when the policy and the group
		// allow it; otherwise refused as Kafka refuses it.
		if g.upgradeLocked() {
			return g.cg, nil
		}
		return nil, hbFail(kerr.GroupIDNotFound.Code, "Group %s is not a consumer group.", g.id)
	}
	g.cg = newConsumerGroup()
	if g.generation > 0 || g.protocolType != "" {
		// The classic group's metadata goes; its offsets stay.
		g.pendingRecs = append(g.pendingRecs, record.Record{Key: groupRecordKey(g.id)})
	}
	g.protocolType, g.protocol, g.leader, g.generation = "", "", "", 0
	g.transitionLocked(Empty)
	return g.cg, nil
}

// classicEmptyLocked reports whether a classic group has no member and
// no member id handed out.
func (g *group) classicEmptyLocked() bool {
	return g.cg == nil && len(g.members) == 0 && len(g.pending) == 0
}

func (g *group) consumerHeartbeatLocked(req *kmsg.ConsumerGroupHeartbeatRequest, clientID, clientHost string) (*kmsg.ConsumerGroupHeartbeatResponse, *hbError) {
	cg, e := g.asConsumerGroupLocked(req.MemberEpoch == 0)
	if e != nil {
		return nil, e
	}
	defer g.flushLocked()
	if req.MemberEpoch == leaveEpoch || req.MemberEpoch == staticLeaveEpoch {
		return g.consumerLeaveLocked(cg, req)
	}
	cfg := g.c.cfg.Consumer
	if len(cg.members) >= cfg.MaxSize && cg.members[req.MemberID] == nil &&
		(req.InstanceID == nil || cg.static[*req.InstanceID] == "") {
		return nil, hbFail(kerr.GroupMaxSizeReached.Code, "The consumer group has reached its maximum capacity of %d members.", cfg.MaxSize)
	}
	owned := ownedFromRequest(req.Topics)
	joining := req.MemberEpoch == 0
	var m *cmember
	if req.InstanceID == nil {
		m = cg.members[req.MemberID]
		if m == nil {
			if !joining {
				return nil, hbFail(kerr.UnknownMemberID.Code, "Member %s is not a member of group %s.", req.MemberID, g.id)
			}
			m = &cmember{id: req.MemberID, assigned: assignment{}, pendingRevoke: assignment{}}
			cg.members[m.id] = m
		} else if e := checkMemberEpoch(m, req.MemberEpoch, owned); e != nil {
			return nil, e
		}
	} else {
		inst := *req.InstanceID
		old := cg.members[cg.static[inst]]
		switch {
		case joining && old == nil:
			if cg.members[req.MemberID] != nil {
				m = cg.members[req.MemberID]
				if e := checkMemberEpoch(m, 0, owned); e != nil {
					return nil, e
				}
			} else {
				m = &cmember{id: req.MemberID, instanceID: req.InstanceID, assigned: assignment{}, pendingRevoke: assignment{}}
				cg.members[m.id] = m
			}
			cg.static[inst] = m.id
		case joining && old.id == req.MemberID:
			m = old
			if m.epoch == staticLeaveEpoch {
				// Back under the same member id: it rejoins at epoch 0 with
				// the partitions it kept.
				m.epoch, m.prevEpoch = 0, 0
			}
		case joining:
			if old.epoch != staticLeaveEpoch {
				return nil, hbFail(kerr.UnreleasedInstanceID.Code,
					"Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.",
					req.MemberID, inst, old.id)
			}
			m = g.replaceStaticLocked848(cg, old, req.MemberID)
		case old == nil:
			return nil, hbFail(kerr.UnknownMemberID.Code, "Instance id %s is unknown.", inst)
		case old.id != req.MemberID:
			return nil, hbFail(kerr.FencedInstanceID.Code,
				"Static member %s with instance id %s is fenced by existing member %s.", req.MemberID, inst, old.id)
		default:
			m = old
			if e := checkMemberEpoch(m, req.MemberEpoch, owned); e != nil {
				return nil, e
			}
		}
	}

	// 1. Update the member; a subscription change bumps the group epoch.
	before := *m
	m.classic = nil // a classic member that now speaks the consumer protocol
	if req.InstanceID != nil {
		m.instanceID = req.InstanceID
	}
	if req.RackID != nil {
		m.rack = req.RackID
	}
	if req.RebalanceTimeoutMillis != -1 {
		m.rebalanceTimeout = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	if req.ServerAssignor != nil {
		m.serverAssignor = req.ServerAssignor
	}
	bump := false
	if req.SubscribedTopicNames != nil {
		names := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(names)
		names = slices.Compact(names)
		if !slices.Equal(names, m.topicNames) {
			bump = true
		}
		m.topicNames = names
	}
	if req.SubscribedTopicRegex != nil {
		var re *string // an empty regex drops the member's regex
		if *req.SubscribedTopicRegex != "" {
			re = new(string)
			*re = *req.SubscribedTopicRegex
		}
		if (m.regex == nil) != (re == nil) || re != nil && *m.regex != *re {
			bump = true
		}
		m.regex = re
	}
	m.clientID, m.clientHost = clientID, clientHost
	if !sameMemberMetadata(&before, m) {
		g.recordMemberLocked(m)
	}

	// 2. Metadata of the subscribed topics; a change bumps the epoch.
	im := g.c.host.Topics()
	if bump || cg.metaVersion != im.Version {
		sig := g.subscriptionSignatureLocked(cg, im)
		if sig != cg.metaSig {
			cg.metaSig, bump = sig, true
		}
		cg.metaVersion = im.Version
	}
	if bump {
		cg.epoch++
		g.recordGroupEpochLocked()
	}

	// 3. A new target assignment when the group epoch moved on.
	if cg.epoch > cg.assignmentEpoch {
		g.computeTargetLocked(cg, im)
	}

	// 4. Reconcile the member towards its target.
	prevAssigned := m.assigned.clone()
	g.reconcileLocked(cg, m, owned)

	g.resetConsumerSessionLocked(cg, m)

	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	id := m.id
	resp.MemberID = &id
	resp.MemberEpoch = m.epoch
	resp.HeartbeatIntervalMillis = int32(g.c.cfg.Consumer.HeartbeatInterval / time.Millisecond)
	full := joining || (req.RebalanceTimeoutMillis != -1 && (req.SubscribedTopicNames != nil || req.SubscribedTopicRegex != nil) && req.Topics != nil)
	if full || !prevAssigned.equal(m.assigned) {
		a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
		for _, t := range m.assigned.sortedTopics() {
			rt := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
			rt.TopicID = t
			rt.Partitions = slices.Clone(m.assigned[t])
			a.Topics = append(a.Topics, rt)
		}
		resp.Assignment = &a
	}
	return resp, nil
}

// sameMemberMetadata reports whether what is persisted of a member's
// subscription and identity is unchanged.
func sameMemberMetadata(a, b *cmember) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.instanceID, b.instanceID) && eq(a.rack, b.rack) && eq(a.regex, b.regex) &&
		eq(a.serverAssignor, b.serverAssignor) && a.clientID == b.clientID && a.clientHost == b.clientHost &&
		a.rebalanceTimeout == b.rebalanceTimeout && slices.Equal(a.topicNames, b.topicNames)
}

func ownedFromRequest(ts []kmsg.ConsumerGroupHeartbeatRequestTopic) assignment {
	if ts == nil {
		return nil
	}
	out := assignment{}
	for _, t := range ts {
		for _, p := range t.Partitions {
			out.add(t.TopicID, p)
		}
	}
	return out
}

// checkMemberEpoch is Kafka's fencing rule: an epoch ahead of the
// member's is fenced; one behind is accepted only if it is the previous
// epoch and the member owns no more than it is assigned (the response
// carrying the new epoch may have been lost). Epoch 0 is a rejoin.
func checkMemberEpoch(m *cmember, received int32, owned assignment) *hbError {
	if received == 0 {
		// A fenced member rejoins under its member id (KAFKA-19233).
		return nil
	}
	if received > m.epoch {
		return hbFail(kerr.FencedMemberEpoch.Code, "The consumer group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", received, m.epoch)
	}
	if received < m.epoch {
		if received != m.prevEpoch || owned == nil || !isSubset(owned, m.assigned) {
			return hbFail(kerr.FencedMemberEpoch.Code, "The consumer group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", received, m.epoch)
		}
	}
	return nil
}

func isSubset(a, b assignment) bool {
	for t, ps := range a {
		for _, p := range ps {
			if !b.has(t, p) {
				return false
			}
		}
	}
	return true
}

// replaceStaticLocked848 gives a static member that left with epoch -2 a
// new member id: the new member keeps the old one's assignment and target
// (KIP-345 semantics in KIP-848) and starts at epoch 0.
func (g *group) replaceStaticLocked848(cg *consumerGroup, old *cmember, newID string) *cmember {
	g.stopConsumerTimersLocked(old)
	m := &cmember{
		id: newID, instanceID: old.instanceID, rack: old.rack, clientID: old.clientID, clientHost: old.clientHost,
		rebalanceTimeout: old.rebalanceTimeout, topicNames: old.topicNames, regex: old.regex, serverAssignor: old.serverAssignor,
		state: old.state, assigned: old.assigned, pendingRevoke: old.pendingRevoke,
		assignedAt: map[tpKey]int32{},
	}
	for k := range old.assignedAt {
		m.assignedAt[k] = 0 // epoch 0: any epoch of the new member may commit
	}
	delete(cg.members, old.id)
	cg.members[newID] = m
	cg.static[*m.instanceID] = newID
	if t, ok := cg.target[old.id]; ok {
		delete(cg.target, old.id)
		cg.target[newID] = t
		g.recordTargetLocked(old.id, nil)
		g.recordTargetLocked(newID, t)
	}
	for k, o := range cg.owners {
		if o.member == old.id {
			cg.owners[k] = owner{newID, 0}
		}
	}
	g.recordMemberTombstonesLocked(old.id)
	g.recordMemberLocked(m)
	g.recordCurrentLocked(m)
	return m
}

// consumerLeaveLocked handles epoch -1 (leave) and -2 (static member
// leaving for now).
func (g *group) consumerLeaveLocked(cg *consumerGroup, req *kmsg.ConsumerGroupHeartbeatRequest) (*kmsg.ConsumerGroupHeartbeatResponse, *hbError) {
	var m *cmember
	if req.InstanceID == nil {
		m = cg.members[req.MemberID]
		if m == nil {
			return nil, hbFail(kerr.UnknownMemberID.Code, "Member %s is not a member of group %s.", req.MemberID, g.id)
		}
	} else {
		m = cg.members[cg.static[*req.InstanceID]]
		if m == nil {
			return nil, hbFail(kerr.UnknownMemberID.Code, "Instance id %s is unknown.", *req.InstanceID)
		}
		if m.id != req.MemberID {
			return nil, hbFail(kerr.FencedInstanceID.Code,
				"Static member %s with instance id %s is fenced by existing member %s.", req.MemberID, *req.InstanceID, m.id)
		}
	}
	resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
	id := m.id
	resp.MemberID = &id
	resp.MemberEpoch = req.MemberEpoch
	if req.MemberEpoch == staticLeaveEpoch {
		// The member keeps its partitions until it comes back under a
		// new member id or its session expires.
		m.prevEpoch, m.epoch = m.epoch, staticLeaveEpoch
		g.recordCurrentLocked(m)
		g.stopRevokeTimerLocked(m)
		g.resetConsumerSessionLocked(cg, m)
		return resp, nil
	}
	g.c.logger.Debug("consumer group member left", "group", g.id, "member", m.id)
	g.removeConsumerMemberLocked(cg, m)
	return resp, nil
}

// removeConsumerMemberLocked removes a member (leave, session expiry,
// rebalance timeout) and bumps the group epoch so that its partitions go
// to the others.
func (g *group) removeConsumerMemberLocked(cg *consumerGroup, m *cmember) {
	g.stopConsumerTimersLocked(m)
	delete(cg.members, m.id)
	if m.instanceID != nil && cg.static[*m.instanceID] == m.id {
		delete(cg.static, *m.instanceID)
	}
	delete(cg.target, m.id)
	for k, o := range cg.owners {
		if o.member == m.id {
			delete(cg.owners, k)
		}
	}
	g.recordMemberTombstonesLocked(m.id)
	cg.epoch++
	cg.metaVersion = -1 // the subscription may have shrunk
	g.recordGroupEpochLocked()
	g.stateTime = g.c.clock()
	if m.classic == nil {
		g.maybeDowngradeLocked()
	}
}

func (g *group) stopConsumerTimersLocked(m *cmember) {
	if m.hbTimer != nil {
		m.hbTimer.Stop()
	}
	m.hbSeq++
	g.stopRevokeTimerLocked(m)
}

func (g *group) stopRevokeTimerLocked(m *cmember) {
	if m.revokeTimer != nil {
		m.revokeTimer.Stop()
		m.revokeTimer = nil
	}
	m.revokeSeq++
}

// resetConsumerSessionLocked (re)arms m's session timer
// (group.consumer.session.timeout.ms).
func (g *group) resetConsumerSessionLocked(cg *consumerGroup, m *cmember) {
	if m.hbTimer != nil {
		m.hbTimer.Stop()
	}
	m.hbSeq++
	seq := m.hbSeq
	session := g.c.cfg.Consumer.SessionTimeout
	if m.classic != nil {
		session = m.classic.sessionTimeout
	}
	m.hbTimer = time.AfterFunc(session, func() {
		g.mu.Lock()
		defer g.unlock()
		if g.cg != cg || cg.members[m.id] != m || m.hbSeq != seq {
			return
		}
		g.c.logger.Debug("consumer group member session expired", "group", g.id, "member", m.id)
		g.removeConsumerMemberLocked(cg, m)
		g.flushLocked()
	})
}

// armRevokeTimerLocked fences m if it has not revoked its partitions
// within its rebalance timeout.
func (g *group) armRevokeTimerLocked(cg *consumerGroup, m *cmember) {
	g.stopRevokeTimerLocked(m)
	seq := m.revokeSeq
	d := m.rebalanceTimeout
	if d <= 0 {
		d = g.c.cfg.Consumer.SessionTimeout
	}
	m.revokeTimer = time.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.unlock()
		if g.cg != cg || cg.members[m.id] != m || m.revokeSeq != seq || m.state != memberUnrevoked {
			return
		}
		g.c.logger.Info("consumer group member did not revoke its partitions within its rebalance timeout", "group", g.id, "member", m.id)
		g.removeConsumerMemberLocked(cg, m)
		g.flushLocked()
	})
}

// memberTopicsLocked returns the names of the existing topics m
// subscribes to, by name or regex.
func (g *group) memberTopicsLocked(cg *consumerGroup, m *cmember, im *TopicImage) map[string]bool {
	out := map[string]bool{}
	for _, t := range m.topicNames {
		if im.ByName[t] != nil {
			out[t] = true
		}
	}
	if m.regex != nil {
		for _, t := range g.regexTopicsLocked(cg, *m.regex, im) {
			out[t] = true
		}
	}
	return out
}

// regexTopicsLocked resolves a regex against the names of all topics of
// im, internal ones included, as Kafka's coordinator does
// (GroupMetadataManager.refreshRegularExpressions); leaving internal topics
// out is a rule of the Java client for its own patterns, not of the
// broker. Results are cached per image.
func (g *group) regexTopicsLocked(cg *consumerGroup, re string, im *TopicImage) []string {
	if cg.regexVersion != im.Version {
		cg.regexTopics, cg.regexVersion = map[string][]string{}, im.Version
	}
	if ts, ok := cg.regexTopics[re]; ok {
		return ts
	}
	var ts []string
	if rx, err := compileRegex(re); err == nil {
		for name := range im.ByName {
			if rx.MatchString(name) {
				ts = append(ts, name)
			}
		}
	}
	slices.Sort(ts)
	cg.regexTopics[re] = ts
	return ts
}

// subscriptionSignatureLocked describes the metadata of every topic a
// member subscribes to (name, id, partitions, racks): when it changes, the
// group epoch is bumped.
func (g *group) subscriptionSignatureLocked(cg *consumerGroup, im *TopicImage) string {
	set := map[string]bool{}
	for _, m := range cg.members {
		maps.Copy(set, g.memberTopicsLocked(cg, m, im))
	}
	var sb strings.Builder
	for _, name := range slices.Sorted(maps.Keys(set)) {
		t := im.ByName[name]
		fmt.Fprintf(&sb, "%s:%x:%d:%v;", name, t.ID, t.Partitions, t.Racks)
	}
	return sb.String()
}

// computeTargetLocked runs the preferred assignor for the group epoch and
// records the target of every member whose target changed.
func (g *group) computeTargetLocked(cg *consumerGroup, im *TopicImage) {
	name := g.c.preferredAssignor(cg)
	a := assignorByName(name)
	if a == nil {
		a = uniformAssignor{}
	}
	members := make([]assignMember, 0, len(cg.members))
	topics := map[string]*TopicMeta{}
	for _, m := range cg.members {
		am := assignMember{id: m.id, topics: g.memberTopicsLocked(cg, m, im), prev: cg.target[m.id]}
		if m.rack != nil {
			am.rack = *m.rack
		}
		for t := range am.topics {
			topics[t] = im.ByName[t]
		}
		members = append(members, am)
	}
	result := a.assign(members, topics)
	for id, t := range result {
		if !t.equal(cg.target[id]) {
			cg.target[id] = t
			g.recordTargetLocked(id, t)
		}
	}
	cg.assignmentEpoch = cg.epoch
	g.recordAssignmentEpochLocked()
}

// reconcileLocked moves m towards its target assignment: Kafka's
// CurrentAssignmentBuilder. owned is what the member reported owning (nil:
// not reported in this heartbeat).
func (g *group) reconcileLocked(cg *consumerGroup, m *cmember, owned assignment) {
	if m.epoch == staticLeaveEpoch {
		return
	}
	before := struct {
		state    memberState
		epoch    int32
		assigned assignment
		pending  assignment
	}{m.state, m.epoch, m.assigned, m.pendingRevoke}
	switch m.state {
	case memberStable:
		if m.epoch != cg.assignmentEpoch {
			g.nextAssignmentLocked(cg, m, m.epoch, owned)
		}
	case memberUnrevoked:
		if ownsAny(owned, m.pendingRevoke) {
			break
		}
		g.nextAssignmentLocked(cg, m, m.epoch, owned)
	case memberUnreleased:
		g.nextAssignmentLocked(cg, m, m.epoch, owned)
	}
	changed := before.state != m.state || before.epoch != m.epoch ||
		!before.assigned.equal(m.assigned) || !before.pending.equal(m.pendingRevoke)
	if !changed {
		return
	}
	// The member's partitions (assigned or being revoked) are its own at
	// its new epoch; those it let go are free for others.
	for k, o := range cg.owners {
		if o.member == m.id {
			delete(cg.owners, k)
		}
	}
	for _, a := range []assignment{m.assigned, m.pendingRevoke} {
		for t, ps := range a {
			for _, p := range ps {
				cg.owners[tpKey{t, p}] = owner{m.id, m.epoch}
			}
		}
	}
	g.recordCurrentLocked(m)
	switch {
	case m.state == memberUnrevoked && (before.state != memberUnrevoked || before.epoch != m.epoch || !before.pending.equal(m.pendingRevoke)):
		g.armRevokeTimerLocked(cg, m)
	case m.state != memberUnrevoked:
		g.stopRevokeTimerLocked(m)
	}
}

// ownsAny reports whether the member still owns one of the partitions of
// a; a member that did not report what it owns is assumed to own them.
func ownsAny(owned, a assignment) bool {
	if owned == nil {
		return len(a) > 0
	}
	for t, ps := range owned {
		for _, p := range ps {
			if a.has(t, p) {
				return true
			}
		}
	}
	return false
}

func (g *group) nextAssignmentLocked(cg *consumerGroup, m *cmember, epoch int32, owned assignment) {
	target := cg.target[m.id]
	keep, revoke, add := assignment{}, assignment{}, assignment{}
	unreleased := false
	topics := map[topicID]bool{}
	for t := range target {
		topics[t] = true
	}
	for t := range m.assigned {
		topics[t] = true
	}
	for t := range topics {
		for _, p := range m.assigned[t] {
			if target.has(t, p) {
				keep.add(t, p)
			} else {
				revoke.add(t, p)
			}
		}
		for _, p := range target[t] {
			if keep.has(t, p) {
				continue
			}
			if o, ok := cg.owners[tpKey{t, p}]; ok && o.member != m.id {
				unreleased = true
				continue
			}
			add.add(t, p)
		}
	}
	m.prevEpoch = m.epoch
	at := map[tpKey]int32{}
	defer func() {
		for _, a := range []assignment{m.assigned, m.pendingRevoke} {
			for t, ps := range a {
				for _, p := range ps {
					k := tpKey{t, p}
					if e, ok := m.assignedAt[k]; ok {
						at[k] = e
					} else {
						at[k] = m.epoch
					}
				}
			}
		}
		m.assignedAt = at
	}()
	switch {
	case len(revoke) > 0 && ownsAny(owned, revoke):
		m.state, m.epoch = memberUnrevoked, epoch
		m.assigned, m.pendingRevoke = keep, revoke
	case len(add) > 0:
		for t, ps := range add {
			for _, p := range ps {
				keep.add(t, p)
			}
		}
		m.state = memberStable
		if unreleased {
			m.state = memberUnreleased
		}
		m.epoch, m.assigned, m.pendingRevoke = cg.assignmentEpoch, keep, assignment{}
	case unreleased:
		m.state, m.epoch, m.assigned, m.pendingRevoke = memberUnreleased, cg.assignmentEpoch, keep, assignment{}
	default:
		m.state, m.epoch, m.assigned, m.pendingRevoke = memberStable, cg.assignmentEpoch, keep, assignment{}
	}
}

// ConsumerGroupDescribe handles ConsumerGroupDescribe v0-1. Classic
// groups and unknown ids are GROUP_ID_NOT_FOUND, as in Kafka.
func (c *Coordinator) ConsumerGroupDescribe(req *kmsg.ConsumerGroupDescribeRequest) *kmsg.ConsumerGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewConsumerGroupDescribeResponseGroup()
		dg.Group = id
		if req.IncludeAuthorizedOperations {
			dg.AuthorizedOperations = groupOperations
		}
		fail := func(code int16, format string, args ...any) {
			dg.ErrorCode = code
			if format != "" {
				msg := fmt.Sprintf(format, args...)
				dg.ErrorMessage = &msg
			}
		}
		g, code := c.group(id, false)
		switch {
		case code != 0:
			fail(code, "")
		case g == nil:
			fail(kerr.GroupIDNotFound.Code, "Group %s not found.", id)
		default:
			g.mu.Lock()
			switch {
			case g.state == Dead:
				fail(kerr.GroupIDNotFound.Code, "Group %s not found.", id)
			case g.cg == nil:
				fail(kerr.GroupIDNotFound.Code, "Group %s is not a consumer group.", id)
			default:
				c.describeConsumerLocked(g, &dg, req.Version)
			}
			g.unlock()
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (c *Coordinator) describeConsumerLocked(g *group, dg *kmsg.ConsumerGroupDescribeResponseGroup, version int16) {
	cg := g.cg
	im := c.host.Topics()
	dg.State = cg.stateString()
	dg.Epoch = cg.epoch
	dg.AssignmentEpoch = cg.assignmentEpoch
	dg.AssignorName = c.preferredAssignor(cg)
	describe := func(a assignment) kmsg.Assignment {
		var out kmsg.Assignment
		out.TopicPartitions = []kmsg.AssignmentTopicPartition{}
		for _, t := range a.sortedTopics() {
			tp := kmsg.AssignmentTopicPartition{TopicID: t, Partitions: slices.Clone(a[t])}
			if meta := im.ByID[t]; meta != nil {
				tp.Topic = meta.Name
			}
			out.TopicPartitions = append(out.TopicPartitions, tp)
		}
		return out
	}
	for _, id := range slices.Sorted(maps.Keys(cg.members)) {
		m := cg.members[id]
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID, dm.InstanceID, dm.RackID = m.id, m.instanceID, m.rack
		dm.MemberEpoch = m.epoch
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.SubscribedTopics = slices.Clone(m.topicNames)
		if dm.SubscribedTopics == nil {
			dm.SubscribedTopics = []string{}
		}
		dm.SubscribedTopicRegex = m.regex
		dm.Assignment = describe(m.assigned)
		dm.TargetAssignment = describe(cg.target[m.id])
		if version >= 1 {
			dm.MemberType = m.memberType()
		}
		dg.Members = append(dg.Members, dm)
	}
}

// consumerSubscribedLocked is the union of the topics the members of a
// consumer group subscribe to (OffsetDelete's GROUP_SUBSCRIBED_TO_TOPIC).
func (g *group) consumerSubscribedLocked() map[string]bool {
	im := g.c.host.Topics()
	out := map[string]bool{}
	for _, m := range g.cg.members {
		maps.Copy(out, g.memberTopicsLocked(g.cg, m, im))
		for _, t := range m.topicNames {
			out[t] = true
		}
	}
	return out
}

// checkConsumerCommitLocked is Kafka's ConsumerGroup.validateOffsetCommit:
// with epoch < 0 an empty group is accepted; otherwise the member must
// exist (UNKNOWN_MEMBER_ID) and its epoch must not be ahead of the
// member's (STALE_MEMBER_EPOCH). An older epoch is accepted per
// partition, for partitions the member has held since that epoch or
// before (KIP-1251, Kafka 4.3): the returned func gives each partition's
// code (nil: every partition is fine). Commits from consumer-protocol
// members need OffsetCommit v9+.
func (g *group) checkConsumerCommitLocked(memberID string, epoch int32, commitVersion int16) (int16, func(topic string, p int32) int16) {
	cg := g.cg
	if epoch < 0 && len(cg.members) == 0 {
		return 0, nil
	}
	m := cg.members[memberID]
	if m == nil {
		return kerr.UnknownMemberID.Code, nil
	}
	if m.classic != nil {
		if epoch != m.epoch {
			return kerr.IllegalGeneration.Code, nil
		}
		return 0, nil
	}
	if commitVersion >= 0 && commitVersion < 9 {
		return kerr.UnsupportedVersion.Code, nil
	}
	if epoch > m.epoch || epoch < 0 {
		return kerr.StaleMemberEpoch.Code, nil
	}
	if epoch == m.epoch {
		return 0, nil
	}
	im := g.c.host.Topics()
	return 0, func(topic string, p int32) int16 {
		t := im.ByName[topic]
		if t == nil {
			return kerr.StaleMemberEpoch.Code
		}
		if at, ok := m.assignedAt[tpKey{t.ID, p}]; ok && at <= epoch {
			return 0
		}
		return kerr.StaleMemberEpoch.Code
	}
}

// checkConsumerFetchLocked is Kafka's ConsumerGroup.validateOffsetFetch:
// no member id and a negative epoch (an admin) is accepted; otherwise the
// member must exist and send its current epoch.
func (g *group) checkConsumerFetchLocked(memberID *string, epoch int32) int16 {
	if memberID == nil && epoch < 0 {
		return 0
	}
	id := ""
	if memberID != nil {
		id = *memberID
	}
	m := g.cg.members[id]
	switch {
	case m == nil:
		return kerr.UnknownMemberID.Code
	case m.epoch != epoch:
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}
