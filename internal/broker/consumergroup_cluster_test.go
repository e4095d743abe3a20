package broker

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/group"
)

// TestConsumerGroup848CoordinatorFailover kills the coordinator of a
// KIP-848 group in a three-node cluster: the new coordinator replays the
// group's records, so members keep their epochs and partitions (no member
// is fenced, no rebalance), and records keep flowing. This relies on
// group records being acknowledged only once the ISR has them
// (offsetsLog.Append): before that, about one run in fifteen lost the last
// records in the failover.
func TestConsumerGroup848CoordinatorFailover(t *testing.T) {
	tc := newTestCluster(t, 3, "offsets.topic.num.partitions=3", "group.initial.rebalance.delay.ms=0",
		"group.consumer.min.heartbeat.interval.ms=50", "group.consumer.heartbeat.interval.ms=100",
		"group.consumer.min.session.timeout.ms=1000", "group.consumer.session.timeout.ms=10000")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	admCl := tc.client()
	adm := kadm.NewClient(admCl)
	if res, err := adm.CreateTopic(ctx, 4, 3, nil, "cgf"); err != nil || res.Err != nil {
		t.Fatalf("create topic: %v %v", err, res.Err)
	}
	const grp = "g-failover"
	var mu sync.Mutex
	seen := map[[2]int64]bool{}
	for i := range 2 {
		cl := tc.client(kgo.ConsumerGroup(grp), kgo.ConsumeTopics("cgf"), kgo.ServerSideBalancer(),
			kgo.ClientID(fmt.Sprintf("m%d", i)), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchMaxWait(100*time.Millisecond), kgo.RetryTimeout(30*time.Second))
		go func() {
			for {
				fs := cl.PollFetches(context.Background())
				if fs.IsClientClosed() {
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[[2]int64{int64(r.Partition), r.Offset}] = true
					mu.Unlock()
				})
			}
		}()
	}
	var last string // what the last describe saw, for failure messages
	describe := func() (kmsg.ConsumerGroupDescribeResponseGroup, bool) {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		req.Groups = []string{grp}
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		defer rcancel()
		// Straight to the partition's leader: the client's cached
		// coordinator may be the node that was killed.
		coord := tc.leaderOf(offsetsTopic, group.PartitionFor(grp, 3))
		if coord < 0 {
			return kmsg.ConsumerGroupDescribeResponseGroup{}, false
		}
		kr, err := admCl.Broker(int(coord)).Request(rctx, req)
		if err != nil {
			last = fmt.Sprintf("node %d: %v", coord, err)
			return kmsg.ConsumerGroupDescribeResponseGroup{}, false
		}
		resp := kr.(*kmsg.ConsumerGroupDescribeResponse)
		if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			last = fmt.Sprintf("node %d: %+v", coord, resp.Groups)
			return kmsg.ConsumerGroupDescribeResponseGroup{}, false
		}
		g := resp.Groups[0]
		last = fmt.Sprintf("node %d: %s epoch %d/%d members %d", coord, g.State, g.Epoch, g.AssignmentEpoch, len(g.Members))
		for _, m := range g.Members {
			last += fmt.Sprintf(" [%s epoch %d %v target %v]", m.MemberID, m.MemberEpoch, m.Assignment.TopicPartitions, m.TargetAssignment.TopicPartitions)
		}
		return g, true
	}
	stable := func() bool {
		g, ok := describe()
		if !ok || g.State != "Stable" || len(g.Members) != 2 {
			return false
		}
		n := 0
		for _, m := range g.Members {
			for _, tp := range m.Assignment.TopicPartitions {
				n += len(tp.Partitions)
			}
		}
		return n == 4
	}
	waitFor(t, "the group Stable with 2 members", stable)
	before, _ := describe()

	prod := tc.client(kgo.DefaultProduceTopic("cgf"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(100), kgo.RetryTimeout(30*time.Second))
	produce := func(n int) {
		for i := 0; i < n; i++ {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
	}
	consumed := func(n int) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= n
	}
	produce(40)
	waitFor(t, "records consumed before the failover", func() bool { return consumed(40) })

	coord := tc.leaderOf(offsetsTopic, group.PartitionFor(grp, 3))
	tc.kill(coord)
	waitFor(t, "a new coordinator", func() bool {
		l := tc.leaderOf(offsetsTopic, group.PartitionFor(grp, 3))
		return l >= 0 && l != coord
	})
	waitFor(t, "the group described by the new coordinator", func() bool {
		ok := stable()
		if !ok && os.Getenv("CGDEBUG") != "" {
			t.Log(last)
		}
		return ok
	})
	after, _ := describe()
	if after.Epoch != before.Epoch || after.AssignmentEpoch != before.AssignmentEpoch {
		t.Fatalf("epochs after failover: %d/%d, before %d/%d", after.Epoch, after.AssignmentEpoch, before.Epoch, before.AssignmentEpoch)
	}
	want := map[string]string{}
	for _, m := range before.Members {
		want[m.MemberID] = fmt.Sprint(m.MemberEpoch, m.Assignment.TopicPartitions)
	}
	for _, m := range after.Members {
		if got := fmt.Sprint(m.MemberEpoch, m.Assignment.TopicPartitions); want[m.MemberID] != got {
			t.Fatalf("member %s after failover: %s, before %s", m.MemberID, got, want[m.MemberID])
		}
	}
	produce(40)
	waitFor(t, "records consumed after the failover", func() bool { return consumed(80) })
	// Back to three nodes, so that closing the cluster has a quorum for
	// its controlled shutdowns.
	tc.restart(coord)
}
