package group

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// State is a group's state, named as Kafka names it.
type State int8

// The states of a classic group.
const (
	Empty State = iota
	PreparingRebalance
	CompletingRebalance
	Stable
	Dead
)

func (s State) String() string {
	switch s {
	case Empty:
		return "Empty"
	case PreparingRebalance:
		return "PreparingRebalance"
	case CompletingRebalance:
		return "CompletingRebalance"
	case Stable:
		return "Stable"
	}
	return "Dead"
}

// protocol is one assignment protocol a member supports, with its metadata.
type protocol struct {
	name     string
	metadata []byte
}

// member is one member of a group. Guarded by its group's mu.
type member struct {
	id               string
	instanceID       *string
	clientID         string
	clientHost       string
	rebalanceTimeout time.Duration
	sessionTimeout   time.Duration
	protocolType     string
	protocols        []protocol
	assignment       []byte
	joinSeq          uint64 // order of joining; the oldest becomes leader

	joinCb func(*kmsg.JoinGroupResponse) // parked JoinGroup
	syncCb func(*kmsg.SyncGroupResponse) // parked SyncGroup

	hbTimer *time.Timer
	hbSeq   uint64
}

func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

func sameProtocols(a, b []protocol) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || !bytes.Equal(a[i].metadata, b[i].metadata) {
			return false
		}
	}
	return true
}

// offsetKey names a committed offset.
type offsetKey struct {
	topic     string
	partition int32
}

// committed is one committed offset.
type committed struct {
	offset      int64
	leaderEpoch int32
	metadata    string
	commitTime  time.Time
	// expire is when an OffsetCommit v2-4 with a retention time asked the
	// offset to expire (zero: offsets.retention.minutes applies).
	expire time.Time
}

// group is one consumer group. Safe for concurrent use through mu.
type group struct {
	c   *Coordinator
	id  string
	log Log // its __consumer_offsets partition

	dead atomic.Bool // state == Dead, readable without mu

	mu           sync.Mutex
	state        State
	stateTime    time.Time // when state last changed (CurrentStateTimestamp)
	protocolType string
	protocol     string
	generation   int32
	leader       string
	members      map[string]*member
	static       map[string]string      // group.instance.id -> member id
	pending      map[string]*time.Timer // member ids handed out with MEMBER_ID_REQUIRED
	offsets      map[offsetKey]committed
	// txnOffsets are TxnOffsetCommit offsets per producer id, written
	// but invisible until their transaction's marker (txn.go).
	txnOffsets map[int64]map[offsetKey]committed
	joinSeq    uint64

	rebalanceTimer *time.Timer
	rebalanceSeq   uint64
	initialDelay   bool // in the group.initial.rebalance.delay.ms window
	delayJoined    bool // a member joined during that window
	delayLeft      time.Duration

	outbox []func() // callbacks to run once mu is released

	// cg is set when the group is a KIP-848 consumer group (consumer.go);
	// the classic fields above are then unused.
	cg *consumerGroup
	// pendingRecs are consumer group records queued by the operation in
	// progress, written by flushLocked.
	pendingRecs []record.Record
}

func newGroup(c *Coordinator, id string, log Log) *group {
	return &group{
		c: c, id: id, log: log,
		state: Empty, stateTime: c.clock(),
		members: map[string]*member{},
		static:  map[string]string{},
		pending: map[string]*time.Timer{},
		offsets: map[offsetKey]committed{},
	}
}

// unlock releases mu and then runs the callbacks queued while it was held,
// so answering a parked request never happens under the group's lock.
func (g *group) unlock() {
	out := g.outbox
	g.outbox = nil
	g.mu.Unlock()
	for _, f := range out {
		f()
	}
}

func (g *group) transitionLocked(s State) {
	g.state = s
	g.stateTime = g.c.clock()
	if s == Dead {
		g.dead.Store(true)
	}
}

// shutdownLocked answers parked requests and stops timers (Close).
func (g *group) shutdownLocked() {
	g.rebalanceSeq++
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
	}
	for id, t := range g.pending {
		t.Stop()
		delete(g.pending, id)
	}
	for _, m := range g.members {
		if m.hbTimer != nil {
			m.hbTimer.Stop()
		}
		m.hbSeq++
		g.answerJoinLocked(m, joinError(kerr.NotCoordinator.Code, m.id))
		g.answerSyncLocked(m, syncError(kerr.NotCoordinator.Code))
	}
	if g.cg != nil {
		for _, m := range g.cg.members {
			g.stopConsumerTimersLocked(m)
		}
	}
}

func joinError(code int16, memberID string) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.ErrorCode = code
	resp.MemberID = memberID
	resp.Generation = -1
	return resp
}

func syncError(code int16) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.ErrorCode = code
	return resp
}

// answerJoinLocked queues the answer to m's parked JoinGroup, if any.
func (g *group) answerJoinLocked(m *member, resp *kmsg.JoinGroupResponse) {
	if cb := m.joinCb; cb != nil {
		m.joinCb = nil
		g.outbox = append(g.outbox, func() { cb(resp) })
	}
}

// answerSyncLocked queues the answer to m's parked SyncGroup, if any.
func (g *group) answerSyncLocked(m *member, resp *kmsg.SyncGroupResponse) {
	if cb := m.syncCb; cb != nil {
		m.syncCb = nil
		g.outbox = append(g.outbox, func() { cb(resp) })
	}
}

// JoinGroup handles a JoinGroup request (v0-9). respond is called exactly
// once, maybe later from a timer's goroutine when the rebalance completes.
// clientID and clientHost describe the connection, for DescribeGroups.
func (c *Coordinator) JoinGroup(req *kmsg.JoinGroupRequest, clientID, clientHost string, respond func(*kmsg.JoinGroupResponse)) {
	if req.Group == "" {
		respond(joinError(kerr.InvalidGroupID.Code, req.MemberID))
		return
	}
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	if session < c.cfg.MinSessionTimeout || session > c.cfg.MaxSessionTimeout {
		respond(joinError(kerr.InvalidSessionTimeout.Code, req.MemberID))
		return
	}
	g, code := c.group(req.Group, req.MemberID == "")
	if code != 0 {
		respond(joinError(code, req.MemberID))
		return
	}
	if g == nil {
		respond(joinError(kerr.UnknownMemberID.Code, req.MemberID))
		return
	}
	g.mu.Lock()
	g.joinLocked(req, clientID, clientHost, respond)
	g.unlock()
}

func (g *group) joinLocked(req *kmsg.JoinGroupRequest, clientID, clientHost string, respond func(*kmsg.JoinGroupResponse)) {
	fail := func(code int16) {
		resp := joinError(code, req.MemberID)
		g.outbox = append(g.outbox, func() { respond(resp) })
	}
	if g.state == Dead {
		fail(kerr.CoordinatorNotAvailable.Code)
		return
	}
	if g.cg != nil {
		if len(g.cg.members) > 0 {
			// A classic member of a consumer group (migration.go).
			g.classicJoinToConsumerLocked(req, clientID, clientHost, respond)
			return
		}
		// An empty consumer group becomes a classic group; its offsets
		// stay.
		g.recordConsumerGroupTombstonesLocked()
		g.cg = nil
		if code := g.flushLocked(); code != 0 {
			fail(kerr.CoordinatorNotAvailable.Code)
			return
		}
		g.transitionLocked(Empty)
	}
	protos := make([]protocol, 0, len(req.Protocols))
	for _, p := range req.Protocols {
		// Request bytes alias the connection's read buffer: copy what we keep.
		protos = append(protos, protocol{name: p.Name, metadata: bytes.Clone(p.Metadata)})
	}
	if !g.supportsLocked(req.ProtocolType, protos) {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	rebalance := session
	if req.GetVersion() >= 1 {
		rebalance = time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond
	}
	update := func(m *member) {
		m.clientID, m.clientHost = clientID, clientHost
		m.sessionTimeout, m.rebalanceTimeout = session, rebalance
		m.protocolType = req.ProtocolType
		m.protocols = protos
	}

	if req.MemberID == "" {
		if req.InstanceID != nil {
			if oldID, ok := g.static[*req.InstanceID]; ok && g.members[oldID] != nil {
				g.replaceStaticLocked(g.members[oldID], newMemberID(clientID), protos, update, respond)
				return
			}
		}
		if len(g.members) >= g.c.cfg.MaxSize {
			fail(kerr.GroupMaxSizeReached.Code)
			return
		}
		id := newMemberID(clientID)
		if req.GetVersion() >= 4 && req.InstanceID == nil {
			// KIP-394: the member must come back with the id we give it.
			g.addPendingLocked(id, session)
			resp := joinError(kerr.MemberIDRequired.Code, id)
			g.outbox = append(g.outbox, func() { respond(resp) })
			return
		}
		g.addMemberLocked(id, req.InstanceID, update, respond)
		return
	}

	if req.InstanceID != nil {
		if known, ok := g.static[*req.InstanceID]; ok && known != req.MemberID {
			fail(kerr.FencedInstanceID.Code)
			return
		}
	}
	if t, ok := g.pending[req.MemberID]; ok {
		t.Stop()
		delete(g.pending, req.MemberID)
		if len(g.members) >= g.c.cfg.MaxSize {
			fail(kerr.GroupMaxSizeReached.Code)
			return
		}
		g.addMemberLocked(req.MemberID, req.InstanceID, update, respond)
		return
	}
	m := g.members[req.MemberID]
	if m == nil {
		fail(kerr.UnknownMemberID.Code)
		return
	}
	switch g.state {
	case PreparingRebalance:
		g.parkJoinLocked(m, respond)
		update(m)
		g.resetHeartbeatLocked(m)
		g.tryCompleteJoinLocked()
	case CompletingRebalance, Stable:
		if sameProtocols(m.protocols, protos) && (g.state == CompletingRebalance || m.id != g.leader) {
			// Nothing changed: the member gets the current generation
			// again (a lost JoinGroup response, or a cooperative rejoin).
			update(m)
			g.resetHeartbeatLocked(m)
			resp := g.joinResponseLocked(m)
			g.outbox = append(g.outbox, func() { respond(resp) })
			return
		}
		update(m)
		g.parkJoinLocked(m, respond)
		g.resetHeartbeatLocked(m)
		g.prepareRebalanceLocked()
	default: // Empty: it has no members
		fail(kerr.UnknownMemberID.Code)
	}
}

// supportsLocked is Kafka's check that a joining member fits the group:
// an Empty group takes any non-empty protocol type and list; otherwise the
// type must match and one of the member's protocols must be supported by
// every current member.
func (g *group) supportsLocked(protocolType string, protos []protocol) bool {
	if len(g.members) == 0 {
		return protocolType != "" && len(protos) > 0
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range protos {
		all := true
		for _, m := range g.members {
			if !m.hasProtocol(p.name) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func (m *member) hasProtocol(name string) bool {
	for _, p := range m.protocols {
		if p.name == name {
			return true
		}
	}
	return false
}

// parkJoinLocked parks a JoinGroup until the rebalance completes. A
// member's earlier parked JoinGroup (sent on another connection) is
// answered with REBALANCE_IN_PROGRESS.
func (g *group) parkJoinLocked(m *member, respond func(*kmsg.JoinGroupResponse)) {
	g.answerJoinLocked(m, joinError(kerr.RebalanceInProgress.Code, m.id))
	m.joinCb = respond
}

func (g *group) addPendingLocked(id string, session time.Duration) {
	g.pending[id] = time.AfterFunc(session, func() {
		g.mu.Lock()
		defer g.unlock()
		if _, ok := g.pending[id]; !ok {
			return
		}
		delete(g.pending, id)
		if g.state == PreparingRebalance {
			g.tryCompleteJoinLocked()
		}
	})
}

func (g *group) addMemberLocked(id string, instanceID *string, update func(*member), respond func(*kmsg.JoinGroupResponse)) {
	g.joinSeq++
	m := &member{id: id, instanceID: instanceID, joinSeq: g.joinSeq}
	update(m)
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	g.members[id] = m
	if instanceID != nil {
		g.static[*instanceID] = id
	}
	if g.leader == "" {
		g.leader = id
	}
	m.joinCb = respond
	g.resetHeartbeatLocked(m)
	if g.initialDelay {
		g.delayJoined = true
	}
	switch g.state {
	case PreparingRebalance:
		g.tryCompleteJoinLocked()
	default:
		g.prepareRebalanceLocked()
	}
}

// replaceStaticLocked handles a static member (group.instance.id) that
// rejoins with no member id: it takes over the old member under a new id
// and the old id is fenced (KIP-345). A Stable group with unchanged
// protocols does not rebalance.
func (g *group) replaceStaticLocked(m *member, newID string, protos []protocol, update func(*member), respond func(*kmsg.JoinGroupResponse)) {
	g.answerJoinLocked(m, joinError(kerr.FencedInstanceID.Code, m.id))
	g.answerSyncLocked(m, syncError(kerr.FencedInstanceID.Code))
	oldID := m.id
	delete(g.members, oldID)
	m.id = newID
	g.members[newID] = m
	g.static[*m.instanceID] = newID
	if g.leader == oldID {
		g.leader = newID
	}
	unchanged := sameProtocols(m.protocols, protos)
	update(m)
	g.resetHeartbeatLocked(m)
	switch {
	case g.state == PreparingRebalance:
		m.joinCb = respond
		g.tryCompleteJoinLocked()
	case unchanged && (g.state == Stable || g.state == CompletingRebalance):
		resp := g.joinResponseLocked(m)
		resp.Members = nil // the leader does not assign again (Kafka's SkipAssignment)
		resp.SkipAssignment = m.id == g.leader
		g.outbox = append(g.outbox, func() { respond(resp) })
	default:
		m.joinCb = respond
		g.prepareRebalanceLocked()
	}
}

// prepareRebalanceLocked moves the group to PreparingRebalance: members
// must rejoin within the rebalance timeout (the first rebalance of an
// Empty group waits group.initial.rebalance.delay.ms for more members).
func (g *group) prepareRebalanceLocked() {
	if g.state == CompletingRebalance {
		for _, m := range g.members {
			m.assignment = nil
			g.answerSyncLocked(m, syncError(kerr.RebalanceInProgress.Code))
		}
	}
	delay := g.c.cfg.InitialRebalanceDelay
	initial := g.state == Empty && delay > 0
	g.transitionLocked(PreparingRebalance)
	timeout := g.maxRebalanceTimeoutLocked()
	if initial {
		g.initialDelay, g.delayJoined = true, false
		g.delayLeft = max(timeout-delay, 0)
		g.armRebalanceTimerLocked(delay)
		return
	}
	g.initialDelay = false
	g.armRebalanceTimerLocked(timeout)
	g.tryCompleteJoinLocked()
}

func (g *group) maxRebalanceTimeoutLocked() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

func (g *group) armRebalanceTimerLocked(d time.Duration) {
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
	}
	g.rebalanceSeq++
	seq := g.rebalanceSeq
	g.rebalanceTimer = time.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.unlock()
		if seq != g.rebalanceSeq || g.state != PreparingRebalance {
			return
		}
		if g.initialDelay && g.delayJoined && g.delayLeft > 0 {
			// More members arrived during the delay: wait again, within
			// the rebalance timeout.
			d := min(g.c.cfg.InitialRebalanceDelay, g.delayLeft)
			g.delayLeft -= d
			g.delayJoined = false
			g.armRebalanceTimerLocked(d)
			return
		}
		g.completeJoinLocked()
	})
}

func (g *group) stopRebalanceTimerLocked() {
	g.rebalanceSeq++
	if g.rebalanceTimer != nil {
		g.rebalanceTimer.Stop()
		g.rebalanceTimer = nil
	}
	g.initialDelay = false
}

// tryCompleteJoinLocked completes the join phase once every member has
// rejoined and no member id handed out is still expected.
func (g *group) tryCompleteJoinLocked() {
	if g.state != PreparingRebalance || g.initialDelay || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.joinCb == nil {
			return
		}
	}
	g.completeJoinLocked()
}

// completeJoinLocked ends the join phase: members that did not rejoin are
// removed, the generation advances, a protocol is chosen, and every
// parked JoinGroup is answered (the leader with all members' metadata).
func (g *group) completeJoinLocked() {
	g.stopRebalanceTimerLocked()
	for _, m := range g.members {
		if m.joinCb == nil {
			g.removeMemberLocked(m)
		}
	}
	g.generation++
	if len(g.members) == 0 {
		g.protocol, g.leader = "", ""
		g.transitionLocked(Empty)
		g.storeLocked()
		return
	}
	g.protocol = g.selectProtocolLocked()
	if g.members[g.leader] == nil {
		g.leader = g.oldestMemberLocked()
	}
	g.transitionLocked(CompletingRebalance)
	for _, m := range g.members {
		resp := g.joinResponseLocked(m)
		g.answerJoinLocked(m, resp)
		g.resetHeartbeatLocked(m)
	}
}

func (g *group) oldestMemberLocked() string {
	var best *member
	for _, m := range g.members {
		if best == nil || m.joinSeq < best.joinSeq {
			best = m
		}
	}
	if best == nil {
		return ""
	}
	return best.id
}

// selectProtocolLocked is Kafka's vote: among the protocols every member
// supports, each member votes for the first one in its own preference
// order; the most votes wins (ties go to the leader's preference).
func (g *group) selectProtocolLocked() string {
	candidates := map[string]bool{}
	first := true
	for _, m := range g.members {
		set := map[string]bool{}
		for _, p := range m.protocols {
			if first || candidates[p.name] {
				set[p.name] = true
			}
		}
		candidates, first = set, false
	}
	votes := map[string]int{}
	for _, m := range g.members {
		for _, p := range m.protocols {
			if candidates[p.name] {
				votes[p.name]++
				break
			}
		}
	}
	best, bestVotes := "", -1
	order := g.members[g.leader]
	if order == nil {
		order = g.members[g.oldestMemberLocked()]
	}
	for _, p := range order.protocols {
		if candidates[p.name] && votes[p.name] > bestVotes {
			best, bestVotes = p.name, votes[p.name]
		}
	}
	return best
}

// joinResponseLocked is the JoinGroup answer for m in the current
// generation; the leader also gets every member's metadata.
func (g *group) joinResponseLocked(m *member) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Generation = g.generation
	pt, pn := g.protocolType, g.protocol
	resp.ProtocolType, resp.Protocol = &pt, &pn
	resp.LeaderID = g.leader
	resp.MemberID = m.id
	if m.id == g.leader {
		for _, o := range g.members {
			rm := kmsg.NewJoinGroupResponseMember()
			rm.MemberID = o.id
			rm.InstanceID = o.instanceID
			rm.ProtocolMetadata = o.metadataFor(g.protocol)
			resp.Members = append(resp.Members, rm)
		}
	}
	return resp
}

// removeMemberLocked drops a member and answers its parked requests with
// UNKNOWN_MEMBER_ID. It does not change the group's state.
func (g *group) removeMemberLocked(m *member) {
	if m.hbTimer != nil {
		m.hbTimer.Stop()
	}
	m.hbSeq++
	g.answerJoinLocked(m, joinError(kerr.UnknownMemberID.Code, m.id))
	g.answerSyncLocked(m, syncError(kerr.UnknownMemberID.Code))
	delete(g.members, m.id)
	if m.instanceID != nil && g.static[*m.instanceID] == m.id {
		delete(g.static, *m.instanceID)
	}
	if g.leader == m.id {
		g.leader = g.oldestMemberLocked()
	}
}

// memberGoneLocked removes m (it left or its session expired) and starts
// the rebalance that hands its partitions to the others.
func (g *group) memberGoneLocked(m *member) {
	g.removeMemberLocked(m)
	switch g.state {
	case Stable, CompletingRebalance:
		g.prepareRebalanceLocked()
	case PreparingRebalance:
		g.tryCompleteJoinLocked()
	}
}

// resetHeartbeatLocked (re)arms m's session timer.
func (g *group) resetHeartbeatLocked(m *member) {
	if m.hbTimer != nil {
		m.hbTimer.Stop()
	}
	m.hbSeq++
	seq := m.hbSeq
	m.hbTimer = time.AfterFunc(m.sessionTimeout, func() {
		g.mu.Lock()
		defer g.unlock()
		if g.members[m.id] != m || m.hbSeq != seq {
			return
		}
		if m.joinCb != nil || m.syncCb != nil {
			// A member parked in JoinGroup or SyncGroup is alive; the
			// rebalance timeout bounds the wait.
			g.resetHeartbeatLocked(m)
			return
		}
		g.c.logger.Debug("member session expired", "group", g.id, "member", m.id)
		g.memberGoneLocked(m)
	})
}

// validateMemberLocked is Kafka's member check: the member must exist, and
// a static member's instance id must map to it.
func (g *group) validateMemberLocked(memberID string, instanceID *string) (*member, int16) {
	if instanceID != nil {
		if known, ok := g.static[*instanceID]; ok && known != memberID {
			return nil, kerr.FencedInstanceID.Code
		}
	}
	m := g.members[memberID]
	if m == nil {
		return nil, kerr.UnknownMemberID.Code
	}
	return m, 0
}

// SyncGroup handles a SyncGroup request (v0-5). The leader's assignment is
// stored and distributed; followers park until it arrives. respond is
// called exactly once, maybe later.
func (c *Coordinator) SyncGroup(req *kmsg.SyncGroupRequest, respond func(*kmsg.SyncGroupResponse)) {
	if req.Group == "" {
		respond(syncError(kerr.InvalidGroupID.Code))
		return
	}
	g, code := c.group(req.Group, false)
	if code != 0 {
		respond(syncError(code))
		return
	}
	if g == nil {
		respond(syncError(kerr.UnknownMemberID.Code))
		return
	}
	g.mu.Lock()
	g.syncLocked(req, respond)
	g.unlock()
}

func (g *group) syncLocked(req *kmsg.SyncGroupRequest, respond func(*kmsg.SyncGroupResponse)) {
	fail := func(code int16) {
		resp := syncError(code)
		g.outbox = append(g.outbox, func() { respond(resp) })
	}
	if g.state == Dead {
		fail(kerr.CoordinatorNotAvailable.Code)
		return
	}
	if g.cg != nil { // a classic member of a consumer group
		resp := g.classicSyncToConsumerLocked(req)
		g.outbox = append(g.outbox, func() { respond(resp) })
		return
	}
	m, code := g.validateMemberLocked(req.MemberID, req.InstanceID)
	if code != 0 {
		fail(code)
		return
	}
	if req.Generation != g.generation {
		fail(kerr.IllegalGeneration.Code)
		return
	}
	if (req.ProtocolType != nil && *req.ProtocolType != g.protocolType) ||
		(req.Protocol != nil && *req.Protocol != g.protocol) {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	switch g.state {
	case PreparingRebalance:
		fail(kerr.RebalanceInProgress.Code)
	case Stable:
		g.resetHeartbeatLocked(m)
		resp := g.syncResponseLocked(m)
		g.outbox = append(g.outbox, func() { respond(resp) })
	case CompletingRebalance:
		g.answerSyncLocked(m, syncError(kerr.RebalanceInProgress.Code))
		m.syncCb = respond
		g.resetHeartbeatLocked(m)
		if m.id != g.leader {
			return
		}
		assigned := map[string][]byte{}
		for _, a := range req.GroupAssignment {
			assigned[a.MemberID] = bytes.Clone(a.MemberAssignment) // aliases the request buffer
		}
		for _, o := range g.members {
			o.assignment = assigned[o.id]
		}
		if code := g.storeLocked(); code != 0 {
			for _, o := range g.members {
				o.assignment = nil
				g.answerSyncLocked(o, syncError(code))
			}
			g.prepareRebalanceLocked()
			return
		}
		g.transitionLocked(Stable)
		for _, o := range g.members {
			g.answerSyncLocked(o, g.syncResponseLocked(o))
		}
	default: // Empty
		fail(kerr.UnknownMemberID.Code)
	}
}

func (g *group) syncResponseLocked(m *member) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	pt, pn := g.protocolType, g.protocol
	resp.ProtocolType, resp.Protocol = &pt, &pn
	resp.MemberAssignment = m.assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	return resp
}

// Heartbeat handles a Heartbeat request (v0-4): it keeps the member's
// session alive and tells it (REBALANCE_IN_PROGRESS) to rejoin.
func (c *Coordinator) Heartbeat(req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	g, code := c.group(req.Group, false)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	if g == nil {
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp
	}
	g.mu.Lock()
	defer g.unlock()
	switch {
	case g.state == Dead:
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	case g.cg != nil:
		resp.ErrorCode = g.classicHeartbeatToConsumerLocked(req)
		return resp
	case g.state == Empty:
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp
	}
	m, code := g.validateMemberLocked(req.MemberID, req.InstanceID)
	if code != 0 {
		resp.ErrorCode = code
		return resp
	}
	if req.Generation != g.generation {
		resp.ErrorCode = kerr.IllegalGeneration.Code
		return resp
	}
	g.resetHeartbeatLocked(m)
	if g.state == PreparingRebalance {
		resp.ErrorCode = kerr.RebalanceInProgress.Code
	}
	return resp
}

// LeaveGroup handles a LeaveGroup request (v0-5; v3+ carries a batch of
// members, each answered on its own).
func (c *Coordinator) LeaveGroup(req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	batch := req.GetVersion() >= 3
	type leaving struct {
		memberID   string
		instanceID *string
	}
	var who []leaving
	if batch {
		for _, m := range req.Members {
			who = append(who, leaving{m.MemberID, m.InstanceID})
		}
	} else {
		who = append(who, leaving{memberID: req.MemberID})
	}
	fillAll := func(code int16) *kmsg.LeaveGroupResponse {
		if batch && code == kerr.UnknownMemberID.Code {
			// An unknown group fails each member, not the request.
			for _, l := range who {
				rm := kmsg.NewLeaveGroupResponseMember()
				rm.MemberID, rm.InstanceID, rm.ErrorCode = l.memberID, l.instanceID, code
				resp.Members = append(resp.Members, rm)
			}
			return resp
		}
		resp.ErrorCode = code
		return resp
	}
	if req.Group == "" {
		return fillAll(kerr.InvalidGroupID.Code)
	}
	g, code := c.group(req.Group, false)
	if code != 0 {
		return fillAll(code)
	}
	if g == nil {
		return fillAll(kerr.UnknownMemberID.Code)
	}
	g.mu.Lock()
	defer g.unlock()
	if g.state == Dead {
		return fillAll(kerr.CoordinatorNotAvailable.Code)
	}
	for _, l := range who {
		if g.cg != nil { // a classic member of a consumer group
			code := g.classicLeaveFromConsumerLocked(l.memberID, l.instanceID)
			if !batch {
				resp.ErrorCode = code
				continue
			}
			rm := kmsg.NewLeaveGroupResponseMember()
			rm.MemberID, rm.InstanceID, rm.ErrorCode = l.memberID, l.instanceID, code
			resp.Members = append(resp.Members, rm)
			continue
		}
		code := g.leaveLocked(l.memberID, l.instanceID)
		if !batch {
			resp.ErrorCode = code
			continue
		}
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = l.memberID, l.instanceID, code
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

func (g *group) leaveLocked(memberID string, instanceID *string) int16 {
	if instanceID != nil {
		known, ok := g.static[*instanceID]
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		if memberID != "" && memberID != known {
			return kerr.FencedInstanceID.Code
		}
		memberID = known
	}
	if t, ok := g.pending[memberID]; ok {
		t.Stop()
		delete(g.pending, memberID)
		g.tryCompleteJoinLocked()
		return 0
	}
	m := g.members[memberID]
	if m == nil {
		return kerr.UnknownMemberID.Code
	}
	g.memberGoneLocked(m)
	return 0
}
