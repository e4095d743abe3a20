package broker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// consumerGroupOverrides make KIP-848 groups heartbeat fast in tests.
var consumerGroupOverrides = []string{
	"group.initial.rebalance.delay.ms=0",
	"offsets.topic.num.partitions=5",
	"group.consumer.min.heartbeat.interval.ms=50",
	"group.consumer.heartbeat.interval.ms=100",
	"group.consumer.min.session.timeout.ms=1000",
	"group.consumer.session.timeout.ms=6000",
}

// counted collects what group consumers read, counting deliveries.
type counted struct {
	mu   sync.Mutex
	seen map[string]map[int32]map[int64]int
	errs []error
}

func (c *counted) add(r *kgo.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]map[int32]map[int64]int{}
	}
	if c.seen[r.Topic] == nil {
		c.seen[r.Topic] = map[int32]map[int64]int{}
	}
	if c.seen[r.Topic][r.Partition] == nil {
		c.seen[r.Topic][r.Partition] = map[int64]int{}
	}
	c.seen[r.Topic][r.Partition][r.Offset]++
}

// covers reports whether offsets [0, n) of every partition of topic were
// read.
func (c *counted) covers(topic string, partitions int32, n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p := int32(0); p < partitions; p++ {
		for o := int64(0); o < n; o++ {
			if c.seen[topic][p][o] == 0 {
				return false
			}
		}
	}
	return true
}

// duplicates counts records delivered more than once.
func (c *counted) duplicates() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := 0
	for _, ps := range c.seen {
		for _, os := range ps {
			for _, n := range os {
				d += n - 1
			}
		}
	}
	return d
}

// start848 starts a kgo consumer using the KIP-848 protocol.
func start848(t *testing.T, tb *testBroker, group string, col *counted, opts ...kgo.Opt) func() {
	t.Helper()
	opts = append([]kgo.Opt{
		kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup(group), kgo.ServerSideBalancer(),
		kgo.FetchMaxWait(100 * time.Millisecond), kgo.MetadataMinAge(10 * time.Millisecond),
		kgo.MetadataMaxAge(500 * time.Millisecond),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitInterval(200 * time.Millisecond),
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
	return stop
}

// describe848 describes a consumer group with ConsumerGroupDescribe.
func describe848(t *testing.T, tb *testBroker, group string) kmsg.ConsumerGroupDescribeResponseGroup {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	resp := tb.request(testCtx(t), req).(*kmsg.ConsumerGroupDescribeResponse)
	return resp.Groups[0]
}

// wait848 waits until the group is Stable with members owning the given
// numbers of partitions (sorted).
func wait848(t *testing.T, tb *testBroker, group string, want []int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("consumer group %s Stable with %v", group, want), func() bool {
		g := describe848(t, tb, group)
		if g.ErrorCode != 0 || g.State != "Stable" {
			return false
		}
		var counts []int
		for _, m := range g.Members {
			n := 0
			for _, tp := range m.Assignment.TopicPartitions {
				n += len(tp.Partitions)
			}
			counts = append(counts, n)
		}
		slices.Sort(counts)
		return slices.Equal(counts, want)
	})
}

func TestConsumerGroup848JoinLeaveWithRecordsFlowing(t *testing.T) {
	for _, bal := range []struct {
		name     string
		assignor string
		b        kgo.GroupBalancer
	}{
		{"range", "range", kgo.RangeBalancer()},
		{"uniform", "uniform", kgo.CooperativeStickyBalancer()},
	} {
		t.Run(bal.name, func(t *testing.T) {
			tb := newTestBroker(t, consumerGroupOverrides...)
			ctx := testCtx(t)
			topic, group := "cg848", "g848-"+bal.name
			tb.createTopic(ctx, topic, 6, nil)
			col := &counted{}
			var stops []func()
			for range 3 {
				stops = append(stops, start848(t, tb, group, col, kgo.ConsumeTopics(topic), kgo.Balancers(bal.b)))
			}
			wait848(t, tb, group, []int{2, 2, 2})
			if g := describe848(t, tb, group); g.AssignorName != bal.assignor {
				t.Fatalf("assignor %q, want %q", g.AssignorName, bal.assignor)
			}
			produceSeq(t, tb, topic, 6, 50)
			waitFor(t, "every record consumed", func() bool { return col.covers(topic, 6, 50) })

			// A member joins while records flow; then one leaves.
			stops = append(stops, start848(t, tb, group, col, kgo.ConsumeTopics(topic), kgo.Balancers(bal.b)))
			produceSeq(t, tb, topic, 6, 50)
			wait848(t, tb, group, []int{1, 1, 2, 2})
			waitFor(t, "every record consumed after a join", func() bool { return col.covers(topic, 6, 100) })
			stops[0]()
			produceSeq(t, tb, topic, 6, 50)
			wait848(t, tb, group, []int{2, 2, 2})
			waitFor(t, "every record consumed after a leave", func() bool { return col.covers(topic, 6, 150) })

			// Records are delivered at least once; a handover re-delivers at
			// most what was read but not yet committed.
			if d := col.duplicates(); d > 0 {
				t.Logf("%d records delivered twice across the handovers", d)
			}
			col.mu.Lock()
			defer col.mu.Unlock()
			if len(col.errs) > 0 {
				t.Fatalf("consumer errors: %v", col.errs)
			}
		})
	}
}

func TestConsumerGroup848Regex(t *testing.T) {
	tb := newTestBroker(t, consumerGroupOverrides...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "rx-a", 2, nil)
	tb.createTopic(ctx, "other", 2, nil)
	col := &counted{}
	start848(t, tb, "grx", col, kgo.ConsumeRegex(), kgo.ConsumeTopics("rx-.*"))
	wait848(t, tb, "grx", []int{2})
	// A topic created later that matches joins the subscription.
	tb.createTopic(ctx, "rx-b", 3, nil)
	wait848(t, tb, "grx", []int{5})
	g := describe848(t, tb, "grx")
	if g.Members[0].SubscribedTopicRegex == nil {
		t.Fatalf("member has no regex: %+v", g.Members[0])
	}
	for _, tp := range g.Members[0].Assignment.TopicPartitions {
		if tp.Topic == "other" {
			t.Fatalf("topic other assigned to a regex that does not match it")
		}
	}
	produceSeq(t, tb, "rx-b", 3, 10)
	waitFor(t, "records of the new topic consumed", func() bool { return col.covers("rx-b", 3, 10) })
}

func TestConsumerGroup848AdminAPIs(t *testing.T) {
	tb := newTestBroker(t, consumerGroupOverrides...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "adm", 2, nil)
	col := &counted{}
	stop := start848(t, tb, "g-new", col, kgo.ConsumeTopics("adm"))
	wait848(t, tb, "g-new", []int{2})
	// A classic group next to it.
	ccol := &consumed{}
	startGroupConsumer(t, tb, "g-classic", "adm", ccol)
	waitAssignment(t, tb, "g-classic", "adm", []int{2})

	lreq := kmsg.NewPtrListGroupsRequest()
	lreq.TypesFilter = []string{"consumer"}
	lresp := tb.request(ctx, lreq).(*kmsg.ListGroupsResponse)
	if len(lresp.Groups) != 1 || lresp.Groups[0].Group != "g-new" || lresp.Groups[0].GroupType != "consumer" || lresp.Groups[0].GroupState != "Stable" {
		t.Fatalf("ListGroups v5 types=consumer: %+v", lresp.Groups)
	}
	dreq := kmsg.NewPtrDescribeGroupsRequest()
	dreq.Groups = []string{"g-new"}
	dresp := tb.request(ctx, dreq).(*kmsg.DescribeGroupsResponse)
	if dresp.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("DescribeGroups v6 of a consumer group: %v", kerr.ErrorForCode(dresp.Groups[0].ErrorCode))
	}
	creq := kmsg.NewPtrConsumerGroupDescribeRequest()
	creq.Groups = []string{"g-classic"}
	cresp := tb.request(ctx, creq).(*kmsg.ConsumerGroupDescribeResponse)
	if cresp.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("ConsumerGroupDescribe of a classic group: %v", kerr.ErrorForCode(cresp.Groups[0].ErrorCode))
	}
	// Offsets committed by the 848 member are ordinary offsets.
	produceSeq(t, tb, "adm", 2, 5)
	waitFor(t, "records consumed", func() bool { return col.covers("adm", 2, 5) })
	stop()
	offs, err := tb.adm.FetchOffsets(ctx, "g-new")
	if err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		if o, ok := offs.Lookup("adm", p); !ok || o.At != 5 {
			t.Fatalf("committed offset of adm-%d: %+v", p, o)
		}
	}
	if _, err := tb.adm.DeleteGroup(ctx, "g-new"); err != nil {
		t.Fatalf("delete the empty consumer group: %v", err)
	}
}

func TestConsumerGroup848SurvivesRestart(t *testing.T) {
	tb := newTestBroker(t, consumerGroupOverrides...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "rs", 4, nil)
	col := &counted{}
	stop := start848(t, tb, "g-rs", col, kgo.ConsumeTopics("rs"))
	wait848(t, tb, "g-rs", []int{4})
	stop() // leaves: the group is Empty at its epoch
	before := describe848(t, tb, "g-rs")
	if before.State != "Empty" {
		t.Fatalf("state %s after the member left", before.State)
	}
	tb.restart()
	after := describe848(t, tb, "g-rs")
	if after.ErrorCode != 0 || after.Epoch != before.Epoch || after.State != "Empty" {
		t.Fatalf("after restart: %+v, before %+v", after, before)
	}
	// A new member continues from the group's epoch.
	start848(t, tb, "g-rs", col, kgo.ConsumeTopics("rs"))
	wait848(t, tb, "g-rs", []int{4})
	if g := describe848(t, tb, "g-rs"); g.Epoch <= before.Epoch {
		t.Fatalf("epoch %d after a new member joined, want above %d", g.Epoch, before.Epoch)
	}
}

// TestConsumerGroup848StaticMemberRestart: a static member (group.instance.id)
// that restarts within the session timeout comes back to the partitions
// it had, without a new group epoch (no rebalance).
func TestConsumerGroup848StaticMemberRestart(t *testing.T) {
	tb := newTestBroker(t, consumerGroupOverrides...)
	ctx := testCtx(t)
	tb.createTopic(ctx, "st", 4, nil)
	col := &counted{}
	start848(t, tb, "g-st", col, kgo.ConsumeTopics("st"), kgo.InstanceID("i-1"))
	stop := start848(t, tb, "g-st", col, kgo.ConsumeTopics("st"), kgo.InstanceID("i-2"))
	wait848(t, tb, "g-st", []int{2, 2})
	before := describe848(t, tb, "g-st")
	owned := func(g kmsg.ConsumerGroupDescribeResponseGroup, inst string) string {
		for _, m := range g.Members {
			if m.InstanceID != nil && *m.InstanceID == inst {
				return fmt.Sprint(m.Assignment.TopicPartitions)
			}
		}
		return ""
	}
	stop() // a static member leaves with epoch -2: it keeps its partitions
	mid := describe848(t, tb, "g-st")
	if mid.Epoch != before.Epoch || len(mid.Members) != 2 {
		t.Fatalf("after the static member left: epoch %d (was %d), %d members", mid.Epoch, before.Epoch, len(mid.Members))
	}
	start848(t, tb, "g-st", col, kgo.ConsumeTopics("st"), kgo.InstanceID("i-2"))
	waitFor(t, "the static member back", func() bool {
		g := describe848(t, tb, "g-st")
		for _, m := range g.Members {
			if m.InstanceID != nil && *m.InstanceID == "i-2" && m.MemberEpoch == g.Epoch && len(m.Assignment.TopicPartitions) > 0 {
				return true
			}
		}
		return false
	})
	after := describe848(t, tb, "g-st")
	if after.Epoch != before.Epoch || owned(after, "i-2") != owned(before, "i-2") {
		t.Fatalf("static member restart: epoch %d -> %d, partitions %s -> %s", before.Epoch, after.Epoch, owned(before, "i-2"), owned(after, "i-2"))
	}
}

// TestConsumerGroup848OnlineMigration: franz-go classic members
// (cooperative-sticky) form a group; a KIP-848 member joins and upgrades
// it, the classic members keep consuming through their protocol and hand
// partitions over; when the KIP-848 member leaves the group is classic
// again. No record is skipped.
func TestConsumerGroup848OnlineMigration(t *testing.T) {
	tb := newTestBroker(t, consumerGroupOverrides...)
	ctx := testCtx(t)
	topic, group := "mig", "g-mig"
	tb.createTopic(ctx, topic, 6, nil)
	col := &counted{}
	startClassic := func() func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.HeartbeatInterval(100*time.Millisecond),
			kgo.FetchMaxWait(100*time.Millisecond), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.AutoCommitInterval(200*time.Millisecond))
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
				fs.EachRecord(col.add)
			}
		}()
		stop := func() { cl.Close(); <-done }
		t.Cleanup(func() {
			select {
			case <-done:
			default:
				stop()
			}
		})
		return stop
	}
	startClassic()
	startClassic()
	waitAssignment(t, tb, group, topic, []int{3, 3})
	produceSeq(t, tb, topic, 6, 20)
	waitFor(t, "records consumed by the classic group", func() bool { return col.covers(topic, 6, 20) })

	stop := start848(t, tb, group, col, kgo.ConsumeTopics(topic))
	wait848(t, tb, group, []int{2, 2, 2})
	g := describe848(t, tb, group)
	classicMembers := 0
	for _, m := range g.Members {
		if m.MemberType == 0 {
			classicMembers++
		}
	}
	if classicMembers != 2 {
		t.Fatalf("upgraded group: %d classic members, want 2", classicMembers)
	}
	produceSeq(t, tb, topic, 6, 20)
	waitFor(t, "records consumed by the mixed group", func() bool { return col.covers(topic, 6, 40) })

	stop()
	waitAssignment(t, tb, group, topic, []int{3, 3})
	produceSeq(t, tb, topic, 6, 20)
	waitFor(t, "records consumed after the downgrade", func() bool { return col.covers(topic, 6, 60) })
	t.Logf("%d records delivered twice across the upgrade and the downgrade", col.duplicates())
}
