package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFollowerLearnsHighWatermarkPromptly: with replica.fetch.wait.max.ms
// far longer than the test may run, an acks=all produce completes (the
// followers' parked fetches are answered when the data arrives, and their
// next fetches move the high watermark), and then every follower learns
// the new high watermark although no more data comes: the leader answers a
// parked follower fetch whose known high watermark (KIP-1166) is behind.
func TestFollowerLearnsHighWatermarkPromptly(t *testing.T) {
	tc := newTestCluster(t, 3,
		"replica.fetch.wait.max.ms=600000",
		"replica.socket.timeout.ms=600000",
		"replica.lag.time.max.ms=600000")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := tc.client(kgo.DefaultProduceTopic("hwnews"), kgo.RequiredAcks(kgo.AllISRAcks()))
	createClusterTopic(ctx, t, tc, kadm.NewClient(cl), "hwnews", 1, 3)
	for i := range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("acks=all produce %d: %v", i, err)
		}
		leader := tc.leaderOf("hwnews", 0)
		for _, b := range tc.brokers {
			if b.cfg.NodeID == leader {
				continue
			}
			waitFor(t, "a follower's high watermark reaching the acknowledged record", func() bool {
				ts := b.topic("hwnews")
				return ts != nil && ts.partitions[0] != nil && ts.partitions[0].HighWatermark() == int64(i+1)
			})
		}
	}
}

// TestParkedReplicaFetchAnsweredOnAppend: a replica fetch parked at the
// log end, with a max wait longer than the raw connection's read guard, is
// answered with the record when one is appended.
func TestParkedReplicaFetchAnsweredOnAppend(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := tc.client(kgo.DefaultProduceTopic("parked"), kgo.RequiredAcks(kgo.AllISRAcks()))
	createClusterTopic(ctx, t, tc, kadm.NewClient(cl), "parked", 1, 3)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("a")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	leader := tc.leaderOf("parked", 0)
	lb := tc.brokers[leader-1]
	follower := leader%3 + 1
	p := lb.topic("parked").partitions[0]
	waitFor(t, "the leader's high watermark at 1", func() bool { return p.HighWatermark() == 1 })

	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(18)
	req.ReplicaState.ID, req.ReplicaState.Epoch = follower, -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.SessionEpoch = 60_000, 1, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = "parked", lb.topic("parked").id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = 0, 1, 1<<20, -1, 0
	rp.HighWatermark = 1 // what the follower knows: current
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	rc := dialRaw(t, lb.Addr())
	corr := rc.send(req)
	// Parked before the append: the two real followers park at most two
	// fetches on the partition's log end.
	waitFor(t, "the replica fetch parked", func() bool {
		_, n := p.Waiting()
		return n == 3
	})
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("b")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(18)
	rc.readResponse(corr, resp)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("parked replica fetch: answer %+v", resp)
	}
	got := resp.Topics[0].Partitions[0]
	if got.ErrorCode != 0 || len(got.RecordBatches) == 0 {
		t.Fatalf("parked replica fetch after an append: code %d, %d record bytes; want the new record", got.ErrorCode, len(got.RecordBatches))
	}
}

// followerSessions returns the epochs of the privileged (follower) fetch
// sessions cached by b, and with drop set removes them all.
func followerSessions(b *Broker, drop bool) []int32 {
	var epochs []int32
	for _, sh := range b.fetchSessions().shards {
		sh.mu.Lock()
		for _, s := range sh.sessions {
			if !s.privileged {
				continue
			}
			s.mu.Lock()
			epochs = append(epochs, s.epoch)
			s.mu.Unlock()
			if drop {
				sh.removeLocked(s)
			}
		}
		sh.mu.Unlock()
	}
	return epochs
}

// TestFollowersFetchInSessions: followers fetch from a leader in
// incremental fetch sessions (KIP-227), whose epochs move on with every
// fetch, and when the leader loses the sessions (a restart, an eviction)
// they open new ones and replication goes on: acks=all produces still
// complete.
func TestFollowersFetchInSessions(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := tc.client(kgo.DefaultProduceTopic("sessions"), kgo.RequiredAcks(kgo.AllISRAcks()))
	createClusterTopic(ctx, t, tc, kadm.NewClient(cl), "sessions", 1, 3)
	lb := tc.brokers[tc.leaderOf("sessions", 0)-1]
	produce := func(n int) {
		for i := range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
				t.Fatalf("acks=all produce: %v", err)
			}
		}
	}
	produce(5)
	waitFor(t, "both followers in incremental sessions with the leader", func() bool {
		epochs := followerSessions(lb, false)
		return len(epochs) == 2 && epochs[0] > 1 && epochs[1] > 1
	})
	followerSessions(lb, true)
	produce(5)
	waitFor(t, "both followers in new sessions", func() bool { return len(followerSessions(lb, false)) == 2 })
}
