package share

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicMeta is what the assignor needs to know of a topic.
type TopicMeta struct {
	ID         [16]byte
	Partitions int32
}

// GroupHost is what the Coordinator asks the broker. Its methods are
// called with the Coordinator's lock held and must not call back.
type GroupHost interface {
	// Topic looks a topic up by name in the current metadata image.
	Topic(name string) (TopicMeta, bool)
	// Config is the share group settings of group: its GROUP config
	// overrides over the broker's group.share.* defaults.
	Config(group string) GroupConfig
}

// GroupConfig is a share group's membership settings.
type GroupConfig struct {
	SessionTimeout    time.Duration // share.session.timeout.ms
	HeartbeatInterval time.Duration // share.heartbeat.interval.ms
	MaxSize           int           // group.share.max.size
}

// Group states, as ListGroups and ShareGroupDescribe name them.
const (
	StateEmpty  = "Empty"
	StateStable = "Stable"
	StateDead   = "Dead"
)

// Coordinator keeps share group membership (KIP-932) on the broker that
// coordinates the group (the leader of the group's __consumer_offsets
// partition): member epochs, subscriptions, the assignment made by the
// simple assignor, and session timeouts. Membership lives in memory: a
// coordinator that moves loses it, and members rejoin when the new
// coordinator answers GROUP_ID_NOT_FOUND or UNKNOWN_MEMBER_ID.
//
// The broker's ShareGroupHeartbeat, ShareGroupDescribe and ListGroups
// handlers call it. Safe for concurrent use.
type Coordinator struct {
	host GroupHost

	mu     sync.Mutex
	groups map[string]*shareGroup
	closed bool
}

type shareGroup struct {
	id         string
	epoch      int32 // group epoch: bumped by every assignment change
	assignedAt int32 // epoch of the current assignment
	members    map[string]*member
	// topicsSeen is the id and partition count of every subscribed topic
	// when the assignment was computed, to notice new partitions and a
	// topic deleted and recreated under the same name between two
	// heartbeats (the assignment names topic ids).
	topicsSeen map[string]TopicMeta
	// consumed is every topic a member ever subscribed to (its state is
	// deleted with the group).
	consumed map[string]bool
}

func newShareGroup(id string) *shareGroup {
	return &shareGroup{id: id, members: map[string]*member{}, topicsSeen: map[string]TopicMeta{}, consumed: map[string]bool{}}
}

type member struct {
	id           string
	epoch        int32
	prevEpoch    int32
	clientID     string
	clientHost   string
	rack         *string
	subscribed   []string // sorted
	assignment   map[[16]byte][]int32
	sentEpoch    int32 // epoch of the last assignment sent
	lastSeen     time.Time
	expiry       *time.Timer
	assignedName map[string][]int32 // topic name -> partitions, for Describe
}

// NewCoordinator returns an empty coordinator.
func NewCoordinator(host GroupHost) *Coordinator {
	return &Coordinator{host: host, groups: map[string]*shareGroup{}}
}

// Close stops the session timers.
func (c *Coordinator) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, g := range c.groups {
		for _, m := range g.members {
			if m.expiry != nil {
				m.expiry.Stop()
			}
		}
	}
}

// HasGroup reports whether id is a share group here (the group id
// namespace is shared with consumer groups).
func (c *Coordinator) HasGroup(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.groups[id] != nil
}

// Heartbeat handles a ShareGroupHeartbeat whose group id, member id and
// epoch the handler has validated. clientID and clientHost describe the
// sender for ShareGroupDescribe.
func (c *Coordinator) Heartbeat(req *kmsg.ShareGroupHeartbeatRequest, clientID, clientHost string) *kmsg.ShareGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	cfg := c.host.Config(req.GroupID)
	resp.HeartbeatIntervalMillis = int32(cfg.HeartbeatInterval / time.Millisecond)
	g := c.groups[req.GroupID]
	if g == nil {
		if req.MemberEpoch != 0 {
			resp.ErrorCode = kerr.GroupIDNotFound.Code
			return resp
		}
		g = newShareGroup(req.GroupID)
		c.groups[req.GroupID] = g
	}
	m := g.members[req.MemberID]
	changed := false // the assignment must be recomputed: a new group epoch
	switch {
	case req.MemberEpoch == -1:
		if m == nil {
			resp.ErrorCode = kerr.UnknownMemberID.Code
			return resp
		}
		c.removeLocked(g, m)
		resp.MemberID = &req.MemberID
		resp.MemberEpoch = -1
		return resp
	case req.MemberEpoch == 0:
		if m == nil {
			if cfg.MaxSize > 0 && len(g.members) >= cfg.MaxSize {
				resp.ErrorCode = kerr.GroupMaxSizeReached.Code
				return resp
			}
			m = &member{id: req.MemberID, assignment: map[[16]byte][]int32{}}
			g.members[m.id] = m
			changed = true
		}
		m.sentEpoch = -1 // a joining member gets its assignment
	default:
		if m == nil {
			resp.ErrorCode = kerr.UnknownMemberID.Code
			return resp
		}
		if req.MemberEpoch != m.epoch && req.MemberEpoch != m.prevEpoch {
			resp.ErrorCode = kerr.FencedMemberEpoch.Code
			return resp
		}
	}
	m.clientID, m.clientHost = clientID, clientHost
	if req.RackID != nil {
		m.rack = req.RackID
	}
	if req.SubscribedTopicNames != nil {
		subs := slices.Clone(req.SubscribedTopicNames)
		slices.Sort(subs)
		subs = slices.Compact(subs)
		if !slices.Equal(subs, m.subscribed) {
			m.subscribed = subs
			changed = true
		}
		for _, t := range subs {
			g.consumed[t] = true
		}
	}
	c.touchLocked(g, m, cfg.SessionTimeout)
	if changed || g.metadataChangedLocked(c.host) {
		g.epoch++
	}
	if g.assignedAt != g.epoch {
		g.assignLocked(c.host)
	}
	if m.epoch != g.epoch {
		m.prevEpoch, m.epoch = m.epoch, g.epoch
	}
	resp.MemberID = &m.id
	resp.MemberEpoch = m.epoch
	if req.SubscribedTopicNames != nil || m.sentEpoch != m.epoch {
		a := &kmsg.ShareGroupHeartbeatResponseAssignment{}
		for _, tid := range sortedIDs(m.assignment) {
			tp := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			tp.TopicID, tp.Partitions = tid, slices.Clone(m.assignment[tid])
			a.TopicPartitions = append(a.TopicPartitions, tp)
		}
		resp.Assignment = a
		m.sentEpoch = m.epoch
	}
	return resp
}

// touchLocked restarts m's session timer.
func (c *Coordinator) touchLocked(g *shareGroup, m *member, timeout time.Duration) {
	m.lastSeen = time.Now()
	if m.expiry != nil {
		m.expiry.Stop()
	}
	if timeout <= 0 {
		return
	}
	m.expiry = time.AfterFunc(timeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed || c.groups[g.id] != g || g.members[m.id] != m || time.Since(m.lastSeen) < timeout {
			return
		}
		c.removeLocked(g, m)
	})
}

// removeLocked takes m out of g and reassigns its partitions.
func (c *Coordinator) removeLocked(g *shareGroup, m *member) {
	if m.expiry != nil {
		m.expiry.Stop()
	}
	delete(g.members, m.id)
	g.epoch++
	g.assignLocked(c.host)
}

// metadataChangedLocked reports whether a subscribed topic appeared,
// disappeared or changed its partition count since the last assignment.
func (g *shareGroup) metadataChangedLocked(host GroupHost) bool {
	seen := map[string]bool{}
	for _, m := range g.members {
		for _, t := range m.subscribed {
			if seen[t] {
				continue
			}
			seen[t] = true
			meta, ok := host.Topic(t)
			if !ok {
				meta = TopicMeta{Partitions: -1}
			}
			if prev, had := g.topicsSeen[t]; !had || prev.ID != meta.ID || prev.Partitions != meta.Partitions {
				return true
			}
		}
	}
	return len(seen) != len(g.topicsSeen)
}

// assignLocked is Kafka's simple share assignor without stickiness: for
// every subscribed topic with P partitions and S subscribers (sorted by
// member id), when S <= P partition i goes to subscriber i mod S, and
// when S > P subscriber j gets partition j mod P, so every partition has
// at least one member and members share partitions only when there are
// more members than partitions.
func (g *shareGroup) assignLocked(host GroupHost) {
	ids := make([]string, 0, len(g.members))
	for id := range g.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	subs := map[string][]string{}
	for _, id := range ids {
		m := g.members[id]
		m.assignment = map[[16]byte][]int32{}
		m.assignedName = map[string][]int32{}
		for _, t := range m.subscribed {
			subs[t] = append(subs[t], id)
		}
	}
	g.topicsSeen = map[string]TopicMeta{}
	for t, members := range subs {
		meta, ok := host.Topic(t)
		if !ok {
			g.topicsSeen[t] = TopicMeta{Partitions: -1}
			continue
		}
		g.topicsSeen[t] = meta
		give := func(id string, p int32) {
			m := g.members[id]
			m.assignment[meta.ID] = append(m.assignment[meta.ID], p)
			m.assignedName[t] = append(m.assignedName[t], p)
		}
		s, n := int32(len(members)), meta.Partitions
		if n == 0 {
			continue
		}
		if s <= n {
			for p := int32(0); p < n; p++ {
				give(members[p%s], p)
			}
		} else {
			for j := int32(0); j < s; j++ {
				give(members[j], j%n)
			}
		}
	}
	g.assignedAt = g.epoch
}

func sortedIDs(m map[[16]byte][]int32) [][16]byte {
	out := make([][16]byte, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b [16]byte) int { return slices.Compare(a[:], b[:]) })
	return out
}

func (g *shareGroup) stateLocked() string {
	if len(g.members) == 0 {
		return StateEmpty
	}
	return StateStable
}

// Describe answers one group of ShareGroupDescribe (authorization is the
// handler's). A group that is not a share group here is GROUP_ID_NOT_FOUND.
func (c *Coordinator) Describe(id string) kmsg.ShareGroupDescribeResponseGroup {
	out := kmsg.NewShareGroupDescribeResponseGroup()
	out.GroupID = id
	out.AuthorizedOperations = -2147483648
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[id]
	if g == nil {
		out.ErrorCode = kerr.GroupIDNotFound.Code
		msg := "Group " + id + " not found."
		out.ErrorMessage = &msg
		out.GroupState = StateDead
		return out
	}
	out.GroupState = g.stateLocked()
	out.GroupEpoch = g.epoch
	out.AssignmentEpoch = g.assignedAt
	out.Assignor = "simple"
	ids := make([]string, 0, len(g.members))
	for mid := range g.members {
		ids = append(ids, mid)
	}
	sort.Strings(ids)
	for _, mid := range ids {
		m := g.members[mid]
		dm := kmsg.NewShareGroupDescribeResponseGroupMember()
		dm.MemberID, dm.RackID, dm.MemberEpoch = m.id, m.rack, m.epoch
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.SubscribedTopicNames = slices.Clone(m.subscribed)
		for _, tid := range sortedIDs(m.assignment) {
			tp := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
			tp.TopicID, tp.Partitions = tid, slices.Clone(m.assignment[tid])
			for name := range m.assignedName {
				if meta, ok := c.host.Topic(name); ok && meta.ID == tid {
					tp.Topic = name
				}
			}
			dm.Assignment.TopicPartitions = append(dm.Assignment.TopicPartitions, tp)
		}
		out.Members = append(out.Members, dm)
	}
	return out
}

// ListedGroup is one share group for ListGroups.
type ListedGroup struct {
	GroupID string
	State   string // Empty or Stable
}

// ListGroups lists the share groups this coordinator holds, for
// ListGroups v5 (group type "share", protocol type "share").
func (c *Coordinator) ListGroups() []ListedGroup {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ListedGroup, 0, len(c.groups))
	for id, g := range c.groups {
		out = append(out, ListedGroup{GroupID: id, State: g.stateLocked()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupID < out[j].GroupID })
	return out
}

// Delete removes an empty share group (DeleteGroups): 0, or
// NON_EMPTY_GROUP, or GROUP_ID_NOT_FOUND.
func (c *Coordinator) Delete(id string) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[id]
	if g == nil {
		return kerr.GroupIDNotFound.Code
	}
	if len(g.members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	delete(c.groups, id)
	return 0
}

// AddConsumedTopics records topics as consumed by share group id, which
// it creates, empty, when it does not exist: AlterShareGroupOffsets on a
// group that never had members, which Kafka's coordinator creates
// (getOrMaybeCreateShareGroup) and whose topics it then lists as
// initialized, for DescribeShareGroupOffsets of all topics and for
// DeleteGroups.
func (c *Coordinator) AddConsumedTopics(id string, topics ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	g := c.groups[id]
	if g == nil {
		g = newShareGroup(id)
		c.groups[id] = g
	}
	for _, t := range topics {
		g.consumed[t] = true
	}
}

// ConsumedTopics is every topic the group's members subscribed to while
// this broker coordinated it (DeleteGroups deletes their state).
func (c *Coordinator) ConsumedTopics(id string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[id]
	if g == nil {
		return nil
	}
	out := make([]string, 0, len(g.consumed))
	for t := range g.consumed {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
