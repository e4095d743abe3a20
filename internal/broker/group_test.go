package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupOverrides make rebalances start at once in tests.
var groupOverrides = []string{
	"group.initial.rebalance.delay.ms=0",
	"offsets.topic.num.partitions=5",
}

// consumed collects what a set of group consumers read.
type consumed struct {
	mu   sync.Mutex
	seen map[int32]map[int64]bool
	errs []error
}

func (c *consumed) add(r *kgo.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[int32]map[int64]bool{}
	}
	if c.seen[r.Partition] == nil {
		c.seen[r.Partition] = map[int64]bool{}
	}
	c.seen[r.Partition][r.Offset] = true
}

// covers reports whether offsets [0, n) of every partition were read.
func (c *consumed) covers(partitions int32, n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p := int32(0); p < partitions; p++ {
		for o := int64(0); o < n; o++ {
			if !c.seen[p][o] {
				return false
			}
		}
	}
	return true
}

// startGroupConsumer starts a kgo group consumer polling into col until
// it is closed (by the returned function or the test's end).
func startGroupConsumer(t *testing.T, tb *testBroker, group, topic string, col *consumed, opts ...kgo.Opt) (*kgo.Client, func()) {
	t.Helper()
	opts = append([]kgo.Opt{
		kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.FetchMaxWait(100 * time.Millisecond), kgo.MetadataMinAge(10 * time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			fs.EachError(func(_ string, _ int32, err error) {
				col.mu.Lock()
				col.errs = append(col.errs, err)
				col.mu.Unlock()
			})
			fs.EachRecord(col.add)
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cl.Close()
			<-done
		})
	}
	t.Cleanup(stop)
	return cl, stop
}

// assignmentCounts describes the group and returns its state and how many
// partitions of topic each member holds, sorted.
func assignmentCounts(t *testing.T, tb *testBroker, group, topic string) (string, []int) {
	t.Helper()
	dg, err := tb.adm.DescribeGroups(testCtx(t), group)
	if err != nil {
		return "", nil
	}
	g := dg[group]
	var counts []int
	for _, m := range g.Members {
		n := 0
		if a, ok := m.Assigned.AsConsumer(); ok {
			for _, at := range a.Topics {
				if at.Topic == topic {
					n += len(at.Partitions)
				}
			}
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	return g.State, counts
}

func waitAssignment(t *testing.T, tb *testBroker, group, topic string, want []int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("group %s Stable with assignment %v", group, want), func() bool {
		state, counts := assignmentCounts(t, tb, group, topic)
		return state == "Stable" && slices.Equal(counts, want)
	})
}

func produceSeq(t *testing.T, tb *testBroker, topic string, partitions int32, perPartition int) {
	t.Helper()
	var recs []*kgo.Record
	for p := int32(0); p < partitions; p++ {
		for i := 0; i < perPartition; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i)})
		}
	}
	if err := tb.cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

func TestGroupBalancesAndHandsOverPartitions(t *testing.T) {
	for _, bal := range []struct {
		name string
		b    kgo.GroupBalancer
	}{
		{"range", kgo.RangeBalancer()},
		{"cooperative-sticky", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(bal.name, func(t *testing.T) {
			tb := newTestBroker(t, groupOverrides...)
			ctx := testCtx(t)
			topic, group := "bal", "g-"+bal.name
			tb.createTopic(ctx, topic, 6, nil)
			col := &consumed{}
			var stops []func()
			for i := 0; i < 3; i++ {
				_, stop := startGroupConsumer(t, tb, group, topic, col, kgo.Balancers(bal.b))
				stops = append(stops, stop)
			}
			waitAssignment(t, tb, group, topic, []int{2, 2, 2})

			produceSeq(t, tb, topic, 6, 50)
			waitFor(t, "every record consumed", func() bool { return col.covers(6, 50) })

			// One consumer leaves: its partitions move to the others and
			// nothing produced afterwards is skipped.
			stops[0]()
			waitAssignment(t, tb, group, topic, []int{3, 3})
			produceSeq(t, tb, topic, 6, 50)
			waitFor(t, "every record consumed after the handover", func() bool { return col.covers(6, 100) })
			col.mu.Lock()
			defer col.mu.Unlock()
			if len(col.errs) > 0 {
				t.Fatalf("consumer errors: %v", col.errs)
			}
		})
	}
}

func TestGroupSeventhConsumerIsIdle(t *testing.T) {
	tb := newTestBroker(t, groupOverrides...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "six", 6, nil)
	col := &consumed{}
	for i := 0; i < 6; i++ {
		startGroupConsumer(t, tb, "g6", "six", col)
	}
	waitAssignment(t, tb, "g6", "six", []int{1, 1, 1, 1, 1, 1})
	startGroupConsumer(t, tb, "g6", "six", col)
	waitAssignment(t, tb, "g6", "six", []int{0, 1, 1, 1, 1, 1, 1})
}

// commitAt consumes topic with a group until every partition has reached
// offset n, then commits offset n on each and closes the consumer.
func commitAt(t *testing.T, tb *testBroker, group, topic string, partitions int32, n int64) {
	t.Helper()
	ctx := testCtx(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	last := map[int32]*kgo.Record{}
	for len(last) < int(partitions) {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset == n-1 {
				last[r.Partition] = r
			}
		})
	}
	var recs []*kgo.Record
	for _, r := range last {
		recs = append(recs, r)
	}
	if err := cl.CommitRecords(ctx, recs...); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// firstOffsets starts a consumer that must resume from commits and
// returns the first offset it reads of each partition.
func firstOffsets(t *testing.T, tb *testBroker, group, topic string, partitions int32) map[int32]int64 {
	t.Helper()
	ctx := testCtx(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NoResetOffset().AtCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	first := map[int32]int64{}
	for len(first) < int(partitions) {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("poll: %v", err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if _, ok := first[r.Partition]; !ok {
				first[r.Partition] = r.Offset
			}
		})
	}
	return first
}

func TestGroupOffsetsSurviveRestartAndCrash(t *testing.T) {
	tb := newTestBroker(t, groupOverrides...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "dur", 3, nil)
	produceSeq(t, tb, "dur", 3, 20)
	commitAt(t, tb, "dur-g", "dur", 3, 7)

	tb.restart()
	if got := firstOffsets(t, tb, "dur-g", "dur", 3); !maps3(got, 7) {
		t.Fatalf("after a clean restart the group resumed at %v, want 7 everywhere", got)
	}

	// Crash: copy the data while the broker runs (what a kill -9 leaves
	// behind: no clean shutdown marker, checkpoints behind the logs) and
	// start a second broker on the copy.
	commitAt(t, tb, "dur-g", "dur", 3, 12)
	crashDir := t.TempDir()
	if err := os.CopyFS(crashDir, os.DirFS(tb.dir)); err != nil {
		t.Fatalf("copy data dir: %v", err)
	}
	tb.stop()
	crashed := &testBroker{t: t, dir: crashDir, extra: tb.extra}
	crashed.start()
	t.Cleanup(crashed.stop)
	if got := firstOffsets(t, crashed, "dur-g", "dur", 3); !maps3(got, 12) {
		t.Fatalf("after a crash the group resumed at %v, want 12 everywhere", got)
	}
	offs, err := crashed.adm.FetchOffsets(ctx, "dur-g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("dur", 1); !ok || o.At != 12 {
		t.Fatalf("fetched offset after crash: %+v", o)
	}
}

func maps3(m map[int32]int64, want int64) bool {
	for p := int32(0); p < 3; p++ {
		if o, ok := m[p]; !ok || o != want {
			return false
		}
	}
	return true
}

func TestGroupAutoOffsetReset(t *testing.T) {
	tb := newTestBroker(t, groupOverrides...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "reset", 1, nil)
	tb.produce(ctx, "reset", 0, 10)

	earliest := &consumed{}
	startGroupConsumer(t, tb, "earliest", "reset", earliest, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	waitFor(t, "earliest reads from the log start", func() bool { return earliest.covers(1, 10) })

	latest := &consumed{}
	startGroupConsumer(t, tb, "latest", "reset", latest, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
	waitAssignment(t, tb, "latest", "reset", []int{1})
	// The consumer may still be listing the end offset; produce until it
	// reads something, then check it never saw the old records.
	waitFor(t, "latest reads new records", func() bool {
		tb.produce(ctx, "reset", 0, 1)
		latest.mu.Lock()
		defer latest.mu.Unlock()
		return len(latest.seen[0]) > 0
	})
	latest.mu.Lock()
	for o := range latest.seen[0] {
		if o < 10 {
			t.Errorf("latest read old offset %d", o)
		}
	}
	latest.mu.Unlock()

	// "none": no committed offset is an error, not a silent reset.
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup("none"), kgo.ConsumeTopics("reset"),
		kgo.ConsumeResetOffset(kgo.NoResetOffset().AtCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("no error for a group without commits")
		}
		if err := fs.Err0(); err != nil {
			break
		}
		if fs.NumRecords() > 0 {
			t.Fatal("records read without a committed offset")
		}
	}
}

// joinRaw sends a JoinGroup v9 through the raw client.
func joinRaw(t *testing.T, tb *testBroker, group, member string, session int32) *kmsg.JoinGroupResponse {
	t.Helper()
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID = group, member
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = session, 10000
	req.ProtocolType = "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name = "range"
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{"bad"}
	p.Metadata = meta.AppendTo(nil)
	req.Protocols = append(req.Protocols, p)
	return tb.request(testCtx(t), req).(*kmsg.JoinGroupResponse)
}

func TestGroupBadInput(t *testing.T) {
	tb := newTestBroker(t, append(groupOverrides, "offset.metadata.max.bytes=16")...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "bad", 2, nil)

	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorKeys = []string{"bg", "other"}
	fc := tb.request(ctx, find).(*kmsg.FindCoordinatorResponse)
	if len(fc.Coordinators) != 2 || fc.Coordinators[0].ErrorCode != 0 || fc.Coordinators[0].NodeID != tb.b.nodeID {
		t.Fatalf("find coordinator: %+v", fc)
	}
	find.CoordinatorType = 1
	if fc := tb.request(ctx, find).(*kmsg.FindCoordinatorResponse); fc.Coordinators[0].ErrorCode != 0 || fc.Coordinators[0].NodeID != tb.b.nodeID {
		t.Fatalf("transaction coordinator: %+v", fc)
	}

	if r := joinRaw(t, tb, "", "", 30000); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Errorf("empty group id: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := joinRaw(t, tb, "bg", "", 1000); r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Errorf("session timeout below group.min.session.timeout.ms: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := joinRaw(t, tb, "bg", "", 3600000); r.ErrorCode != kerr.InvalidSessionTimeout.Code {
		t.Errorf("session timeout above group.max.session.timeout.ms: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	r := joinRaw(t, tb, "bg", "", 30000)
	if r.ErrorCode != kerr.MemberIDRequired.Code {
		t.Fatalf("new member: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	r = joinRaw(t, tb, "bg", r.MemberID, 30000)
	if r.ErrorCode != 0 || r.Generation != 1 {
		t.Fatalf("join: %+v", r)
	}
	member, gen := r.MemberID, r.Generation
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "bg", member, gen
	if s := tb.request(ctx, sync).(*kmsg.SyncGroupResponse); s.ErrorCode != 0 {
		t.Fatalf("sync: %v", kerr.ErrorForCode(s.ErrorCode))
	}
	if r := joinRaw(t, tb, "bg", "stranger", 30000); r.ErrorCode != kerr.UnknownMemberID.Code {
		t.Errorf("unknown member: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "bg", member, gen+5
	if h := tb.request(ctx, hb).(*kmsg.HeartbeatResponse); h.ErrorCode != kerr.IllegalGeneration.Code {
		t.Errorf("stale generation heartbeat: %v", kerr.ErrorForCode(h.ErrorCode))
	}

	commit := func(member string, gen int32, partition int32, meta string) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.MemberID, req.Generation = "bg", member, gen
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "bad"
		rt.TopicID = tb.b.topic("bad").id // v10 names topics by id
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata = partition, 3, &meta
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return tb.request(ctx, req).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	for _, c := range []struct {
		what      string
		member    string
		gen, part int32
		meta      string
		want      int16
	}{
		{"stale generation", member, gen - 1, 0, "", kerr.IllegalGeneration.Code},
		{"unknown member", "stranger", gen, 0, "", kerr.UnknownMemberID.Code},
		{"unknown partition", member, gen, 9, "", kerr.UnknownTopicOrPartition.Code},
		{"oversized metadata", member, gen, 0, "0123456789abcdefXYZ", kerr.OffsetMetadataTooLarge.Code},
		{"good commit", member, gen, 1, "ok", 0},
	} {
		if got := commit(c.member, c.gen, c.part, c.meta); got != c.want {
			t.Errorf("commit with %s: %v, want %v", c.what, kerr.ErrorForCode(got), kerr.ErrorForCode(c.want))
		}
	}
	offs, err := tb.adm.FetchOffsets(ctx, "bg")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("bad", 1); !ok || o.At != 3 || o.Metadata != "ok" {
		t.Errorf("committed offset: %+v", o)
	}
	if _, ok := offs.Lookup("bad", 0); ok {
		t.Errorf("a refused commit was stored")
	}
	// Nothing else was disturbed: the member is still in generation 1.
	hb.Generation = gen
	if h := tb.request(ctx, hb).(*kmsg.HeartbeatResponse); h.ErrorCode != 0 {
		t.Errorf("heartbeat after bad input: %v", kerr.ErrorForCode(h.ErrorCode))
	}

	// Admin: a group with a member cannot be deleted; listing filters.
	dr, err := tb.adm.DeleteGroups(ctx, "bg", "nope")
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(dr["bg"].Err, kerr.NonEmptyGroup) || !errors.Is(dr["nope"].Err, kerr.GroupIDNotFound) {
		t.Errorf("delete groups: %+v", dr)
	}
	lg, err := tb.adm.ListGroups(ctx, "Stable")
	if err != nil || len(lg) != 1 || lg["bg"].State != "Stable" {
		t.Errorf("list Stable groups: %+v %v", lg, err)
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group = "bg"
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = member
	leave.Members = append(leave.Members, lm)
	if l := tb.request(ctx, leave).(*kmsg.LeaveGroupResponse); l.ErrorCode != 0 || l.Members[0].ErrorCode != 0 {
		t.Fatalf("leave: %+v", l)
	}
	dr, err = tb.adm.DeleteGroups(ctx, "bg")
	if err != nil || dr["bg"].Err != nil {
		t.Fatalf("delete Empty group: %+v %v", dr, err)
	}
	if offs, err := tb.adm.FetchOffsets(ctx, "bg"); err != nil || len(offs) != 0 {
		t.Fatalf("offsets of a deleted group: %+v %v", offs, err)
	}
}

// benchGroupBroker starts a broker for the group benchmarks; testBroker
// needs a *testing.T, so this one is built by hand.
func benchGroupBroker(b *testing.B) *testBroker {
	t := &testing.T{}
	tb := &testBroker{t: t, dir: b.TempDir(), extra: groupOverrides}
	tb.start()
	b.Cleanup(tb.stop)
	if _, err := tb.adm.CreateTopic(context.Background(), 6, 1, nil, "bench"); err != nil {
		b.Fatal(err)
	}
	return tb
}

// assignTracker counts the partitions each consumer holds, from the
// client's own callbacks.
type assignTracker struct {
	mu    sync.Mutex
	owned map[int]int
}

func (a *assignTracker) opts(i int) []kgo.Opt {
	add := func(d int) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			a.mu.Lock()
			a.owned[i] += d * len(m["bench"])
			a.mu.Unlock()
		}
	}
	return []kgo.Opt{kgo.OnPartitionsAssigned(add(1)), kgo.OnPartitionsRevoked(add(-1)), kgo.OnPartitionsLost(add(-1))}
}

func (a *assignTracker) is(want map[int]int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, n := range want {
		if a.owned[i] != n {
			return false
		}
	}
	return true
}

// BenchmarkGroupRebalance measures, from the clients' callbacks, how long
// 3 consumers take to be assigned 2 partitions each from a cold start
// (join), and how long the 2 others take to own 3 each after one closes
// (leave; members learn of the rebalance by heartbeat, 3s by default in
// franz-go and Kafka's clients, set to 100ms here).
//
//	go test -run XXX -bench GroupRebalance -benchtime 10x ./internal/broker
func BenchmarkGroupRebalance(b *testing.B) {
	for _, bal := range []struct {
		name string
		b    kgo.GroupBalancer
	}{{"range", kgo.RangeBalancer()}, {"cooperative-sticky", kgo.CooperativeStickyBalancer()}} {
		b.Run(bal.name, func(b *testing.B) {
			tb := benchGroupBroker(b)
			var join, leave time.Duration
			for i := 0; i < b.N; i++ {
				group := fmt.Sprintf("rb-%d", i)
				tr := &assignTracker{owned: map[int]int{}}
				var cls []*kgo.Client
				start := time.Now()
				for m := 0; m < 3; m++ {
					cl, err := kgo.NewClient(append(tr.opts(m), kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup(group),
						kgo.ConsumeTopics("bench"), kgo.Balancers(bal.b), kgo.HeartbeatInterval(100*time.Millisecond))...)
					if err != nil {
						b.Fatal(err)
					}
					cls = append(cls, cl)
					go func() {
						for !cl.PollFetches(context.Background()).IsClientClosed() {
						}
					}()
				}
				for !tr.is(map[int]int{0: 2, 1: 2, 2: 2}) {
					time.Sleep(time.Millisecond)
				}
				join += time.Since(start)
				start = time.Now()
				cls[0].Close()
				for !tr.is(map[int]int{1: 3, 2: 3}) {
					time.Sleep(time.Millisecond)
				}
				leave += time.Since(start)
				cls[1].Close()
				cls[2].Close()
			}
			b.ReportMetric(float64(join.Milliseconds())/float64(b.N), "join-ms")
			b.ReportMetric(float64(leave.Milliseconds())/float64(b.N), "leave-ms")
		})
	}
}

// BenchmarkGroupOffsetCommit measures synchronous commits from one member
// of a group, one after the other.
//
//	go test -run XXX -bench GroupOffsetCommit -benchtime 5s ./internal/broker
func BenchmarkGroupOffsetCommit(b *testing.B) {
	tb := benchGroupBroker(b)
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup("commits"), kgo.ConsumeTopics("bench"),
		kgo.DisableAutoCommit())
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	go func() {
		for !cl.PollFetches(ctx).IsClientClosed() {
		}
	}()
	for {
		if _, gen := cl.GroupMetadata(); gen > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var failed error
		cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{"bench": {0: {Epoch: -1, Offset: int64(i)}}},
			func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
				failed = err
			})
		if failed != nil {
			b.Fatal(failed)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// A parked JoinGroup must not hold an io goroutine: with one io thread the
// broker keeps serving other connections while a join waits.
func TestGroupParkedJoinDoesNotBlockHandlers(t *testing.T) {
	tb := newTestBroker(t, append(groupOverrides, "num.io.threads=1")...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "bad", 1, nil)
	r := joinRaw(t, tb, "park", "", 30000)
	r = joinRaw(t, tb, "park", r.MemberID, 30000)
	leader, gen := r.MemberID, r.Generation
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = "park", leader, gen
	tb.request(ctx, sync)

	other, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	first := joinRaw(t, tb, "park", "", 30000)
	parked := make(chan *kmsg.JoinGroupResponse, 1)
	go func() {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID = "park", first.MemberID
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 30000
		req.ProtocolType = "consumer"
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		req.Protocols = append(req.Protocols, p)
		resp, err := other.Broker(int(tb.b.nodeID)).Request(context.Background(), req)
		if err != nil {
			parked <- nil
			return
		}
		parked <- resp.(*kmsg.JoinGroupResponse)
	}()
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = "park", leader, gen
	waitFor(t, "the leader to see the rebalance", func() bool {
		return tb.request(ctx, hb).(*kmsg.HeartbeatResponse).ErrorCode == kerr.RebalanceInProgress.Code
	})
	if _, err := tb.adm.ListTopics(ctx); err != nil {
		t.Fatalf("broker stopped serving while a join was parked: %v", err)
	}
	select {
	case <-parked:
		t.Fatal("the join was answered before the leader rejoined")
	default:
	}
	r = joinRaw(t, tb, "park", leader, 30000)
	p := <-parked
	if r.ErrorCode != 0 || p == nil || p.ErrorCode != 0 || p.Generation != r.Generation || len(r.Members) != 2 {
		t.Fatalf("rejoin: leader %+v, parked member %+v", r, p)
	}
}

// TestDeletedTopicLosesCommittedOffsets: deleting a topic removes every
// group's committed offsets for it, as Kafka's coordinator tombstones them
// when the topic leaves the metadata image. A topic recreated under the
// same name then starts with no committed offset, not one that may lie
// past its new end (sarama's TestFuncTxnProduceAndCommitOffset, which
// recreates its topic each run). Other topics' offsets stay, and the
// removal survives a restart (tombstones in __consumer_offsets).
func TestDeletedTopicLosesCommittedOffsets(t *testing.T) {
	tb := newTestBroker(t, groupOverrides...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, topic := range []string{"gone", "kept"} {
		if _, err := tb.adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	offs := kadm.Offsets{}
	for _, topic := range []string{"gone", "kept"} {
		for p := int32(0); p < 2; p++ {
			offs.Add(kadm.Offset{Topic: topic, Partition: p, At: 42, LeaderEpoch: -1})
		}
	}
	if err := tb.adm.CommitAllOffsets(ctx, "g", offs); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if _, err := tb.adm.DeleteTopics(ctx, "gone"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	committed := func() kadm.OffsetResponses {
		t.Helper()
		got, err := tb.adm.FetchOffsets(ctx, "g")
		if err != nil {
			t.Fatalf("fetch offsets: %v", err)
		}
		return got
	}
	for {
		if _, ok := committed()["gone"]; !ok {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("offsets of the deleted topic still committed: %v", committed())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := tb.adm.CreateTopic(ctx, 2, 1, nil, "gone"); err != nil {
		t.Fatalf("recreate: %v", err)
	}
	check := func(when string) {
		t.Helper()
		got := committed()
		if o, ok := got.Lookup("gone", 0); ok {
			t.Fatalf("%s: recreated topic has committed offset %d", when, o.At)
		}
		for p := int32(0); p < 2; p++ {
			if o, ok := got.Lookup("kept", p); !ok || o.At != 42 {
				t.Fatalf("%s: kept-%d committed %+v (present %v), want 42", when, p, o, ok)
			}
		}
	}
	check("after recreate")
	tb.stop()
	tb.start()
	check("after restart")
}

// TestDeletedInternalTopicsStartAfresh: Kafka lets an admin delete
// __consumer_offsets and __transaction_state (its controller has no
// internal-topic guard), and its coordinators let go of the deleted
// partitions; the next FindCoordinator creates the topics again and
// groups and transactions work on the new, empty logs. Silkworm's
// coordinators kept the deleted logs and failed every write with "log
// closed" until a restart (found by TestRandomRequestsKeepClusterServing).
func TestDeletedInternalTopicsStartAfresh(t *testing.T) {
	tb := newTestBroker(t, groupOverrides...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "data", 1, nil)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "data", Partition: 0, At: 0, LeaderEpoch: -1})
	txn := func(id string) {
		t.Helper()
		produceTxn(ctx, t, tb.txnProducer(id), "data", true, id)
	}
	if err := tb.adm.CommitAllOffsets(ctx, "g", offs); err != nil {
		t.Fatalf("commit: %v", err)
	}
	txn("tx-before")

	resp, err := tb.adm.DeleteTopics(ctx, offsetsTopic, transactionStateTopic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("delete the internal topics: %v", err)
	}

	// The group's offsets went with the topic; a commit and a fetch work.
	if err := tb.adm.CommitAllOffsets(ctx, "g2", offs); err != nil {
		t.Fatalf("commit after the deletion: %v", err)
	}
	got, err := tb.adm.FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatalf("fetch offsets after the deletion: %v", err)
	}
	if _, ok := got.Lookup("data", 0); ok {
		t.Errorf("group g still has an offset for data-0 after __consumer_offsets was deleted: %v", got)
	}
	txn("tx-after")
	txn("tx-before") // a transactional id known only to the deleted log
	tb.consumeAll(ctx, "data", true, 3)
}
