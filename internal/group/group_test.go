package group

import (
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// memLog is an in-memory __consumer_offsets partition.
type memLog struct {
	mu      sync.Mutex
	batches [][]byte
	fail    error // returned by Append when set
}

func (l *memLog) Append(batch []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return l.fail
	}
	l.batches = append(l.batches, append([]byte(nil), batch...))
	return nil
}

func (l *memLog) Replay(fn func([]byte) error) error {
	l.mu.Lock()
	bs := append([][]byte(nil), l.batches...)
	l.mu.Unlock()
	for _, b := range bs {
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

func (l *memLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.batches)
}

// memHost gives every partition of __consumer_offsets a memLog and knows
// topic "t" with 6 partitions.
type memHost struct {
	mu     sync.Mutex
	logs   map[int32]*memLog
	topics *TopicImage
}

func newMemHost() *memHost {
	return &memHost{logs: map[int32]*memLog{}, topics: NewTopicImage(1, []*TopicMeta{{Name: "t", ID: [16]byte{0x74}, Partitions: 6}})}
}

func (h *memHost) Topics() *TopicImage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.topics
}

// setTopics replaces the topics with a new image version.
func (h *memHost) setTopics(ts ...*TopicMeta) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.topics = NewTopicImage(h.topics.Version+1, ts)
}

func (h *memHost) OffsetsLog(p int32) (Log, error) { return h.log(p), nil }

func (h *memHost) log(p int32) *memLog {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.logs[p] == nil {
		h.logs[p] = &memLog{}
	}
	return h.logs[p]
}

func (h *memHost) PartitionExists(topic string, p int32) bool {
	t := h.Topics().ByName[topic]
	return t != nil && p >= 0 && p < t.Partitions
}

func testConfig() Config {
	c := DefaultConfig()
	c.InitialRebalanceDelay = 0
	c.MinSessionTimeout = 10 * time.Millisecond
	c.NumPartitions = 4
	return c
}

func newTestCoordinator(t *testing.T, cfg Config, h *memHost) *Coordinator {
	t.Helper()
	c, err := New(cfg, h, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func consumerMeta(topics ...string) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Topics = topics
	return m.AppendTo(nil)
}

type joinOpts struct {
	memberID string
	instance *string
	session  int32
	rebal    int32
	protos   []string
	version  int16
}

func joinReq(group string, o joinOpts) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = o.version
	if req.Version == 0 {
		req.Version = 9
	}
	req.Group = group
	req.MemberID = o.memberID
	req.InstanceID = o.instance
	req.SessionTimeoutMillis = o.session
	if req.SessionTimeoutMillis == 0 {
		req.SessionTimeoutMillis = 30000
	}
	req.RebalanceTimeoutMillis = o.rebal
	if req.RebalanceTimeoutMillis == 0 {
		req.RebalanceTimeoutMillis = 30000
	}
	req.ProtocolType = "consumer"
	if o.protos == nil {
		o.protos = []string{"range"}
	}
	for _, p := range o.protos {
		rp := kmsg.NewJoinGroupRequestProtocol()
		rp.Name = p
		rp.Metadata = consumerMeta("t")
		req.Protocols = append(req.Protocols, rp)
	}
	return req
}

// join sends a JoinGroup and returns the channel its answer arrives on.
func join(c *Coordinator, group string, o joinOpts) chan *kmsg.JoinGroupResponse {
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	c.JoinGroup(joinReq(group, o), "client", "/127.0.0.1", func(r *kmsg.JoinGroupResponse) { ch <- r })
	return ch
}

func sync_(c *Coordinator, group, member string, gen int32, assign map[string][]byte) chan *kmsg.SyncGroupResponse {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group, req.MemberID, req.Generation = group, member, gen
	for id, a := range assign {
		ra := kmsg.NewSyncGroupRequestGroupAssignment()
		ra.MemberID, ra.MemberAssignment = id, a
		req.GroupAssignment = append(req.GroupAssignment, ra)
	}
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	c.SyncGroup(req, func(r *kmsg.SyncGroupResponse) { ch <- r })
	return ch
}

func await[T any](t *testing.T, what string, ch chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func pending[T any](ch chan T) bool {
	select {
	case v := <-ch:
		ch <- v
		return false
	default:
		return true
	}
}

// joinNew does the v4+ two-step join of a new member and returns the
// channel of the second JoinGroup.
func joinNew(t *testing.T, c *Coordinator, group string, o joinOpts) (string, chan *kmsg.JoinGroupResponse) {
	t.Helper()
	r := await(t, "member id", join(c, group, o))
	if r.ErrorCode != kerr.MemberIDRequired.Code || r.MemberID == "" {
		t.Fatalf("first join: error %d member %q, want MEMBER_ID_REQUIRED", r.ErrorCode, r.MemberID)
	}
	o.memberID = r.MemberID
	return r.MemberID, join(c, group, o)
}

func commit(c *Coordinator, group, member string, gen int32, offsets map[int32]int64, meta string) *kmsg.OffsetCommitResponse {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 9
	req.Group, req.MemberID, req.Generation = group, member, gen
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "t"
	for p, o := range offsets {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata = p, o, &meta
		rp.LeaderEpoch = 7
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return c.OffsetCommit(req)
}

func fetch(c *Coordinator, group string) map[int32]kmsg.OffsetFetchResponseGroupTopicPartition {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 9
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	req.Groups = append(req.Groups, rg) // null topics: everything
	resp := c.OffsetFetch(req)
	out := map[int32]kmsg.OffsetFetchResponseGroupTopicPartition{}
	for _, g := range resp.Groups {
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				out[p.Partition] = p
			}
		}
	}
	return out
}

func TestPartitionForMatchesKafka(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want int32
	}{
		{"a", 97 % 50},
		{"abc", 96354 % 50},
		{"polygenelubricants", 0}, // hashCode is Integer.MIN_VALUE; Kafka's abs gives 0
		{"", 0},
	} {
		if got := PartitionFor(tc.id, 50); got != tc.want {
			t.Errorf("PartitionFor(%q) = %d, want %d", tc.id, got, tc.want)
		}
	}
}

func TestJoinSyncCommitAndReload(t *testing.T) {
	h := newMemHost()
	c := newTestCoordinator(t, testConfig(), h)

	id1, j1 := joinNew(t, c, "g", joinOpts{})
	r1 := await(t, "join 1", j1)
	if r1.ErrorCode != 0 || r1.Generation != 1 || r1.LeaderID != id1 || len(r1.Members) != 1 || *r1.Protocol != "range" {
		t.Fatalf("first member: %+v", r1)
	}
	s1 := await(t, "sync 1", sync_(c, "g", id1, 1, map[string][]byte{id1: []byte("all")}))
	if s1.ErrorCode != 0 || string(s1.MemberAssignment) != "all" {
		t.Fatalf("sync: %+v", s1)
	}

	// A second member forces a rebalance; the first learns it by heartbeat.
	id2, j2 := joinNew(t, c, "g", joinOpts{})
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	hb.Group, hb.MemberID, hb.Generation = "g", id1, 1
	if code := c.Heartbeat(hb).ErrorCode; code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat during rebalance: %d", code)
	}
	if !pending(j2) {
		t.Fatal("the new member was answered before the old one rejoined")
	}
	j1 = join(c, "g", joinOpts{memberID: id1})
	r1, r2 := await(t, "rejoin 1", j1), await(t, "join 2", j2)
	if r1.Generation != 2 || r2.Generation != 2 || r1.LeaderID != id1 || len(r1.Members) != 2 || len(r2.Members) != 0 {
		t.Fatalf("generation 2: leader %+v follower %+v", r1, r2)
	}
	s2 := sync_(c, "g", id2, 2, nil)
	if !pending(s2) {
		t.Fatal("follower's sync answered before the leader's")
	}
	await(t, "leader sync", sync_(c, "g", id1, 2, map[string][]byte{id1: []byte("a"), id2: []byte("b")}))
	if r := await(t, "follower sync", s2); r.ErrorCode != 0 || string(r.MemberAssignment) != "b" {
		t.Fatalf("follower sync: %+v", r)
	}

	resp := commit(c, "g", id2, 2, map[int32]int64{0: 10, 1: 20}, "meta")
	for _, p := range resp.Topics[0].Partitions {
		if p.ErrorCode != 0 {
			t.Fatalf("commit partition %d: %d", p.Partition, p.ErrorCode)
		}
	}
	got := fetch(c, "g")
	if got[0].Offset != 10 || got[1].Offset != 20 || *got[1].Metadata != "meta" || got[1].LeaderEpoch != 7 {
		t.Fatalf("fetched %+v", got)
	}

	// A new coordinator over the same logs knows offsets and generation.
	c.Close()
	c2 := newTestCoordinator(t, testConfig(), h)
	got = fetch(c2, "g")
	if len(got) != 2 || got[0].Offset != 10 || got[1].Offset != 20 || *got[0].Metadata != "meta" {
		t.Fatalf("after reload: %+v", got)
	}
	d := describe(c2, "g")
	if d.State != "Stable" || len(d.Members) != 2 {
		t.Fatalf("reloaded group: %+v", d)
	}
	hb.MemberID, hb.Generation = id1, 2
	if code := c2.Heartbeat(hb).ErrorCode; code != 0 {
		t.Fatalf("heartbeat of a reloaded member: %d", code)
	}
}

func describe(c *Coordinator, group string) kmsg.DescribeGroupsResponseGroup {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = []string{group}
	return c.DescribeGroups(req).Groups[0]
}

func TestBadInput(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSessionTimeout = time.Minute
	cfg.MaxSize = 1
	cfg.OffsetMetadataMaxBytes = 8
	c := newTestCoordinator(t, cfg, newMemHost())

	if r := await(t, "join", join(c, "", joinOpts{})); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Errorf("empty group id: %d", r.ErrorCode)
	}
	if r := await(t, "join", join(c, "g", joinOpts{session: 2 * 60000})); r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Errorf("session timeout too long: %d", r.ErrorCode)
	}
	if r := await(t, "join", join(c, "g", joinOpts{session: 1})); r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Errorf("session timeout too short: %d", r.ErrorCode)
	}
	if r := await(t, "join", join(c, "g", joinOpts{memberID: "nobody"})); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Errorf("unknown member in unknown group: %d", r.ErrorCode)
	}
	id, j := joinNew(t, c, "g", joinOpts{})
	await(t, "join", j)
	await(t, "sync", sync_(c, "g", id, 1, nil))
	if r := await(t, "join", join(c, "g", joinOpts{memberID: "nobody"})); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Errorf("unknown member: %d", r.ErrorCode)
	}
	if r := await(t, "join", join(c, "g", joinOpts{version: 3})); r.ErrorCode != kerr.GroupMaxSizeReached.Code {
		t.Errorf("group.max.size: %d", r.ErrorCode)
	}
	req := joinReq("g", joinOpts{version: 3})
	req.ProtocolType = "connect"
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	c.JoinGroup(req, "c", "h", func(r *kmsg.JoinGroupResponse) { ch <- r })
	if r := await(t, "join", ch); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Errorf("protocol type mismatch: %d", r.ErrorCode)
	}
	if r := await(t, "sync", sync_(c, "g", id, 7, nil)); r.ErrorCode != kerr.IllegalGeneration.Code {
		t.Errorf("stale generation sync: %d", r.ErrorCode)
	}
	if r := await(t, "sync", sync_(c, "g", "nobody", 1, nil)); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Errorf("unknown member sync: %d", r.ErrorCode)
	}
	codes := func(r *kmsg.OffsetCommitResponse) map[int32]int16 {
		out := map[int32]int16{}
		for _, p := range r.Topics[0].Partitions {
			out[p.Partition] = p.ErrorCode
		}
		return out
	}
	if got := codes(commit(c, "g", id, 0, map[int32]int64{0: 1}, "")); got[0] != kerr.IllegalGeneration.Code {
		t.Errorf("stale generation commit: %v", got)
	}
	if got := codes(commit(c, "g", "nobody", 1, map[int32]int64{0: 1}, "")); got[0] != kerr.UnknownMemberID.Code {
		t.Errorf("unknown member commit: %v", got)
	}
	if got := codes(commit(c, "g", "", -1, map[int32]int64{0: 1}, "")); got[0] != kerr.UnknownMemberID.Code {
		t.Errorf("simple commit to an active group: %v", got)
	}
	if got := codes(commit(c, "other", "", 3, map[int32]int64{0: 1}, "")); got[0] != kerr.IllegalGeneration.Code {
		t.Errorf("generation commit to an unknown group: %v", got)
	}
	got := codes(commit(c, "g", id, 1, map[int32]int64{0: 1, 1: 2, 99: 3}, ""))
	if got[0] != 0 || got[1] != 0 || got[99] != kerr.UnknownTopicOrPartition.Code {
		t.Errorf("commit with an unknown partition: %v", got)
	}
	got = codes(commit(c, "g", id, 1, map[int32]int64{2: 1}, "123456789"))
	if got[2] != kerr.OffsetMetadataTooLarge.Code {
		t.Errorf("oversized metadata: %v", got)
	}
	if f := fetch(c, "g"); len(f) != 2 || f[0].Offset != 1 || f[1].Offset != 2 {
		t.Errorf("only the good offsets are committed: %+v", f)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "g", id, 0
	if code := c.Heartbeat(hb).ErrorCode; code != kerr.IllegalGeneration.Code {
		t.Errorf("stale heartbeat: %d", code)
	}
}

func TestSimpleCommitAndFailedAppend(t *testing.T) {
	h := newMemHost()
	c := newTestCoordinator(t, testConfig(), h)
	r := commit(c, "standalone", "", -1, map[int32]int64{3: 42}, "x")
	if r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("simple commit: %d", r.Topics[0].Partitions[0].ErrorCode)
	}
	h.log(c.PartitionFor("standalone")).mu.Lock()
	h.log(c.PartitionFor("standalone")).fail = errors.New("disk gone")
	h.log(c.PartitionFor("standalone")).mu.Unlock()
	r = commit(c, "standalone", "", -1, map[int32]int64{3: 43}, "x")
	if r.Topics[0].Partitions[0].ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("commit with a failing log: %d", r.Topics[0].Partitions[0].ErrorCode)
	}
	if f := fetch(c, "standalone"); f[3].Offset != 42 {
		t.Fatalf("an unacknowledged commit is visible: %+v", f)
	}
}

func TestRebalanceTimeoutRemovesMembersThatDoNotRejoin(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	o := joinOpts{rebal: 50, session: 30000}
	id1, j1 := joinNew(t, c, "g", o)
	await(t, "join 1", j1)
	await(t, "sync 1", sync_(c, "g", id1, 1, nil))
	// Member 2 joins; member 1 never rejoins and is dropped after the
	// rebalance timeout, so member 2 gets a generation alone.
	id2, j2 := joinNew(t, c, "g", o)
	r := await(t, "join 2", j2)
	if r.ErrorCode != 0 || r.LeaderID != id2 || len(r.Members) != 1 || r.Generation != 2 {
		t.Fatalf("join after the rebalance timeout: %+v", r)
	}
	if r := await(t, "stale join", join(c, "g", joinOpts{memberID: id1})); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("removed member rejoining: %d", r.ErrorCode)
	}
}

func TestSessionExpiryAndLeave(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	id1, j1 := joinNew(t, c, "g", joinOpts{session: 30000})
	id2, j2 := joinNew(t, c, "g", joinOpts{session: 30, rebal: 30000})
	// Member 1 was answered alone (generation 1) before member 2 joined.
	r1 := await(t, "join 1", j1)
	if r1.Generation == 1 {
		j1 = join(c, "g", joinOpts{memberID: id1, session: 30000})
		r1 = await(t, "rejoin 1", j1)
	}
	await(t, "join 2", j2)
	await(t, "sync leader", sync_(c, "g", r1.LeaderID, r1.Generation, nil))
	// Member 2 never heartbeats: its session expires and the group
	// rebalances to member 1 alone.
	var r *kmsg.JoinGroupResponse
	deadline := time.Now().Add(20 * time.Second)
	for {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Group, hb.MemberID, hb.Generation = "g", id1, r1.Generation
		if c.Heartbeat(hb).ErrorCode == kerr.RebalanceInProgress.Code {
			r = await(t, "rejoin", join(c, "g", joinOpts{memberID: id1, session: 30000}))
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("member 2's session never expired")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(r.Members) != 1 || r.Members[0].MemberID != id1 {
		t.Fatalf("after expiry: %+v", r)
	}
	_ = id2
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version = 5
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = id1
	unknown := kmsg.NewLeaveGroupRequestMember()
	unknown.MemberID = "nobody"
	leave.Group, leave.Members = "g", []kmsg.LeaveGroupRequestMember{m, unknown}
	resp := c.LeaveGroup(leave)
	if resp.ErrorCode != 0 || resp.Members[0].ErrorCode != 0 || resp.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("leave: %+v", resp)
	}
	if d := describe(c, "g"); d.State != "Empty" {
		t.Fatalf("after the last member left: %s", d.State)
	}
}

func TestStaticMemberReplacementFencesOldID(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	inst := "instance-1"
	r := await(t, "join", join(c, "g", joinOpts{instance: &inst}))
	if r.ErrorCode != 0 {
		t.Fatalf("static join: %d", r.ErrorCode)
	}
	await(t, "sync", sync_(c, "g", r.MemberID, r.Generation, map[string][]byte{r.MemberID: []byte("x")}))
	// The same instance restarts: new member id, same generation, no
	// rebalance; the old id is fenced.
	r2 := await(t, "rejoin", join(c, "g", joinOpts{instance: &inst}))
	if r2.ErrorCode != 0 || r2.MemberID == r.MemberID || r2.Generation != r.Generation {
		t.Fatalf("static rejoin: %+v", r2)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.InstanceID, hb.Generation = "g", r.MemberID, &inst, r.Generation
	if code := c.Heartbeat(hb).ErrorCode; code != kerr.FencedInstanceID.Code {
		t.Fatalf("old static member heartbeat: %d", code)
	}
	if d := describe(c, "g"); d.State != "Stable" || len(d.Members) != 1 || string(d.Members[0].MemberAssignment) != "x" {
		t.Fatalf("after static rejoin: %+v", d)
	}
}

func TestDeleteGroupsAndOffsetDelete(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	id, j := joinNew(t, c, "g", joinOpts{})
	await(t, "join", j)
	await(t, "sync", sync_(c, "g", id, 1, nil))
	commit(c, "g", id, 1, map[int32]int64{0: 5}, "")
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"g", "missing"}
	resp := c.DeleteGroups(del)
	if resp.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code || resp.Groups[1].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("delete groups: %+v", resp.Groups)
	}
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = "g"
	rt := kmsg.NewOffsetDeleteRequestTopic()
	rt.Topic = "t"
	rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
	od.Topics = append(od.Topics, rt)
	if r := c.OffsetDelete(od); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != kerr.GroupSubscribedToTopic.Code {
		t.Fatalf("offset delete while subscribed: %+v", r)
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group, leave.MemberID = "g", id
	c.LeaveGroup(leave)
	if r := c.OffsetDelete(od); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("offset delete of an Empty group: %+v", r)
	}
	if f := fetch(c, "g"); len(f) != 0 {
		t.Fatalf("deleted offset still fetched: %+v", f)
	}
	if resp := c.DeleteGroups(del); resp.Groups[0].ErrorCode != 0 {
		t.Fatalf("delete Empty group: %d", resp.Groups[0].ErrorCode)
	}
	lg := kmsg.NewPtrListGroupsRequest()
	if r := c.ListGroups(lg); len(r.Groups) != 0 {
		t.Fatalf("deleted group listed: %+v", r.Groups)
	}
}

// retentionConfig is a test config with an hour of offset retention and a
// clock that only advance moves.
func retentionConfig() (Config, func(time.Duration)) {
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	cfg := testConfig()
	cfg.OffsetsRetention = time.Hour
	cfg.Clock = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	return cfg, func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
}

func TestOffsetsExpireForEmptyGroups(t *testing.T) {
	cfg, advance := retentionConfig()
	h := newMemHost()
	c := newTestCoordinator(t, cfg, h)
	commit(c, "old", "", -1, map[int32]int64{0: 1}, "")
	advance(30 * time.Minute)
	commit(c, "new", "", -1, map[int32]int64{0: 2}, "")
	advance(40 * time.Minute)
	c.expireOffsets()
	if f := fetch(c, "old"); len(f) != 0 {
		t.Fatalf("expired offsets still there: %+v", f)
	}
	if f := fetch(c, "new"); f[0].Offset != 2 {
		t.Fatalf("young offsets expired: %+v", f)
	}
	// The expiry is durable: tombstones were written.
	c.Close()
	c2 := newTestCoordinator(t, cfg, h)
	if f := fetch(c2, "old"); len(f) != 0 {
		t.Fatalf("expired offsets came back after reload: %+v", f)
	}
	if d := describe(c2, "old"); d.State != "Dead" {
		t.Fatalf("expired group: %s", d.State)
	}
}

func TestCooperativeRejoinKeepsMemberID(t *testing.T) {
	c := newTestCoordinator(t, testConfig(), newMemHost())
	o := joinOpts{protos: []string{"cooperative-sticky", "range"}}
	id, j := joinNew(t, c, "g", o)
	r := await(t, "join", j)
	if *r.Protocol != "cooperative-sticky" {
		t.Fatalf("protocol %q", *r.Protocol)
	}
	await(t, "sync", sync_(c, "g", id, r.Generation, nil))
	// A follower-free leader rejoin with the same id triggers a new
	// generation that keeps the id.
	o.memberID = id
	r2 := await(t, "rejoin", join(c, "g", o))
	if r2.ErrorCode != 0 || r2.MemberID != id || r2.Generation != r.Generation+1 {
		t.Fatalf("rejoin: %+v", r2)
	}
	// A member preferring range joins: the vote is 1-1 and both support
	// both; the leader's preference breaks the tie.
	_, j2 := joinNew(t, c, "g", joinOpts{protos: []string{"range", "cooperative-sticky"}})
	await(t, "leader rejoin", join(c, "g", o))
	if r := await(t, "join 2", j2); *r.Protocol != "cooperative-sticky" {
		t.Fatalf("vote: %q", *r.Protocol)
	}
	if r := await(t, "join", join(c, "g", joinOpts{memberID: id, protos: []string{"roundrobin"}})); r.ErrorCode != kerr.InconsistentGroupProtocol.Code {
		t.Fatalf("protocol nobody else supports: %d", r.ErrorCode)
	}
}

func TestInitialRebalanceDelayWaitsForMoreMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.InitialRebalanceDelay = 3 * time.Second
		c, err := New(cfg, newMemHost(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		o := joinOpts{version: 3, rebal: 60000}
		j1 := join(c, "g", o)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if !pending(j1) {
			t.Fatal("first member answered before group.initial.rebalance.delay.ms")
		}
		j2 := join(c, "g", o)
		time.Sleep(2 * time.Second) // the delay ran out, but a member joined during it
		synctest.Wait()
		if !pending(j1) || !pending(j2) {
			t.Fatal("the delay was not extended for the member that joined during it")
		}
		time.Sleep(3 * time.Second)
		synctest.Wait()
		r1, r2 := <-j1, <-j2
		if r1.Generation != 1 || r2.Generation != 1 || len(r1.Members)+len(r2.Members) != 2 {
			t.Fatalf("first generation: %+v %+v", r1, r2)
		}
	})
}

// TestOffsetCommitRetentionTime: an OffsetCommit v2-4 with a retention
// time gives its offsets their own expiry, kept in the record (value
// version 1) across a reload, as Kafka 4's coordinator does; -1 leaves
// offsets.retention.minutes in charge.
func TestOffsetCommitRetentionTime(t *testing.T) {
	cfg, advance := retentionConfig()
	h := newMemHost()
	c := newTestCoordinator(t, cfg, h)
	commitRetained := func(group string, version int16, retention time.Duration) {
		t.Helper()
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.Generation = version, group, -1
		req.RetentionTimeMillis = int64(retention / time.Millisecond)
		if retention < 0 {
			req.RetentionTimeMillis = -1
		}
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = 5
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		if r := c.OffsetCommit(req); r.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("commit %s: %+v", group, r)
		}
	}
	commitRetained("short", 4, 10*time.Minute)
	commitRetained("default", 4, -1)
	commitRetained("long", 2, 2*time.Hour)
	kept := func(c *Coordinator, groups ...string) []string {
		var out []string
		for _, g := range groups {
			if len(fetch(c, g)) > 0 {
				out = append(out, g)
			}
		}
		return out
	}
	advance(11 * time.Minute)
	c.expireOffsets()
	if got := kept(c, "short", "default", "long"); !slices.Equal(got, []string{"default", "long"}) {
		t.Fatalf("after 11 minutes: %v kept, want default and long", got)
	}
	advance(50 * time.Minute)
	c.expireOffsets()
	if got := kept(c, "default", "long"); !slices.Equal(got, []string{"long"}) {
		t.Fatalf("after 61 minutes: %v kept, want long (its own 2 h retention)", got)
	}
	c.Close()
	c = newTestCoordinator(t, cfg, h)
	if got := kept(c, "long"); len(got) != 1 {
		t.Fatal("an offset with its own retention lost it across a reload")
	}
	advance(60 * time.Minute)
	c.expireOffsets()
	if got := kept(c, "long"); len(got) != 0 {
		t.Fatal("an offset outlived its own retention after a reload")
	}
}

// TestOffsetsOfUnsubscribedTopicsExpire: in a Stable classic consumer
// group and in a KIP-848 group with members, an offset of a topic no
// member subscribes to expires once its retention has passed since its
// commit, while the subscribed topic's offset stays and the group lives
// on (Kafka's cleanupExpiredOffsets with the groups'
// offsetExpirationCondition and isSubscribedToTopic).
func TestOffsetsOfUnsubscribedTopicsExpire(t *testing.T) {
	cfg, advance := retentionConfig()
	h := newMemHost()
	h.setTopics(&TopicMeta{Name: "t", ID: topicT, Partitions: 6}, &TopicMeta{Name: "old", ID: [16]byte{0x6f}, Partitions: 1})
	c := newTestCoordinator(t, cfg, h)
	commitTo := func(group, member string, gen int32, topic string) {
		t.Helper()
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version = 9
		req.Group, req.MemberID, req.Generation = group, member, gen
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = topic
		rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}
		req.Topics = append(req.Topics, rt)
		if code := c.OffsetCommit(req).Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("commit %s to %s: %v", topic, group, kerr.ErrorForCode(code))
		}
	}
	committedTopics := func(group string) []string {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = 9
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = group
		req.Groups = append(req.Groups, rg)
		var out []string
		for _, rt := range c.OffsetFetch(req).Groups[0].Topics {
			out = append(out, rt.Topic)
		}
		slices.Sort(out)
		return out
	}
	id, j := joinNew(t, c, "classic", joinOpts{})
	r := await(t, "join", j)
	await(t, "sync", sync_(c, "classic", id, r.Generation, nil))
	commitTo("classic", id, r.Generation, "t")
	commitTo("classic", id, r.Generation, "old")
	a := &client{id: "a"}
	a.beat(t, c, "cg")
	commitTo("cg", "a", a.epoch, "t")
	commitTo("cg", "a", a.epoch, "old")

	advance(30 * time.Minute)
	c.expireOffsets()
	for _, g := range []string{"classic", "cg"} {
		if got := committedTopics(g); !slices.Equal(got, []string{"old", "t"}) {
			t.Fatalf("%s before the retention passed: %v committed", g, got)
		}
	}
	advance(time.Hour)
	c.expireOffsets()
	for _, g := range []string{"classic", "cg"} {
		if got := committedTopics(g); !slices.Equal(got, []string{"t"}) {
			t.Errorf("%s after the retention: %v committed, want only the subscribed t", g, got)
		}
	}
	if d := describe(c, "classic"); d.State != "Stable" {
		t.Errorf("classic group: %s, want Stable", d.State)
	}
	if d := cgDescribe(t, c, "cg"); len(d.Members) != 1 {
		t.Errorf("consumer group lost its member: %+v", d)
	}
}
