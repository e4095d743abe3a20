package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchFromFollower: as Kafka's FetchParams.fetchOnlyFromLeader, a
// follower serves consumer fetches from v11 on (KIP-392) and the
// debugging consumer (replica id -2) up to its own high watermark, and
// refuses older consumer fetches with NOT_LEADER_OR_FOLLOWER.
func TestFetchFromFollower(t *testing.T) {
	tc := newTestCluster(t, 3)
	_, follower := produceTenToReplicatedTopic(t, tc, "ff")
	fb := tc.brokers[follower-1]
	waitFor(t, "the follower's high watermark reaching 10", func() bool {
		ts := fb.topic("ff")
		return ts != nil && ts.partitions[0] != nil && ts.partitions[0].HighWatermark() == 10
	})
	id := fb.topic("ff").id
	fetch := func(version int16, replicaID int32) kmsg.FetchResponseTopicPartition {
		t.Helper()
		return fetchPartitionZero(t, fb.Addr(), "ff", id, version, replicaID, "")
	}
	for _, c := range []struct {
		version int16
		replica int32
	}{{11, -1}, {16, -1}, {4, -2}} {
		p := fetch(c.version, c.replica)
		if p.ErrorCode != 0 || p.HighWatermark != 10 || len(p.RecordBatches) == 0 {
			t.Errorf("v%d replica id %d on a follower: code %v, high watermark %d, %d record bytes; want its records up to 10",
				c.version, c.replica, kerr.ErrorForCode(p.ErrorCode), p.HighWatermark, len(p.RecordBatches))
		}
	}
	if p := fetch(10, -1); p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Errorf("v10 consumer fetch on a follower: code %v, want NOT_LEADER_OR_FOLLOWER", kerr.ErrorForCode(p.ErrorCode))
	}
}

// produceTenToReplicatedTopic creates topic with one partition on all
// three nodes of tc, writes ten records with acks=all, and returns the
// partition's leader and one of its followers.
func produceTenToReplicatedTopic(t *testing.T, tc *testCluster, topic string) (leader, follower int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := tc.client(kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	createClusterTopic(ctx, t, tc, kadm.NewClient(cl), topic, 1, 3)
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	leader = tc.leaderOf(topic, 0)
	follower = 1
	if follower == leader {
		follower = 2
	}
	return leader, follower
}

// fetchPartitionZero fetches partition 0 of topic from offset 0 on a raw
// connection to addr (kgo would send its own version, not ours) and
// returns its answer.
func fetchPartitionZero(t *testing.T, addr, topic string, id [16]byte, version int16, replicaID int32, rack string) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	req.ReplicaID, req.MaxBytes, req.SessionEpoch, req.Rack = replicaID, 1<<20, -1, rack
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = 0, 0, 1<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := dialRaw(t, addr).roundTrip(req).(*kmsg.FetchResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch v%d of %s from %s (replica id %d, rack %q): answer %+v", version, topic, addr, replicaID, rack, resp)
	}
	return resp.Topics[0].Partitions[0]
}

// fetchWriteHook counts the Fetch requests a client sends to each node.
type fetchWriteHook struct {
	mu    sync.Mutex
	nodes map[int32]int
}

func (h *fetchWriteHook) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key != kmsg.Fetch.Int16() || err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nodes[meta.NodeID]++
}

func (h *fetchWriteHook) count(node int32) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nodes[node]
}

// TestRackAwareReplicaSelector: with Kafka's RackAwareReplicaSelector, a
// leader answers a consumer's fetch naming the rack of an in-sync
// follower with that follower as preferred read replica and no records,
// and a franz-go consumer with that rack then reads the partition from the
// follower (KIP-392, as sarama's TestConsumerFetchFollowerFailover and
// librdkafka's 0101 set it up). A fetch from the leader's own rack or an
// unknown one is served by the leader.
func TestRackAwareReplicaSelector(t *testing.T) {
	tc := newTestCluster(t, 3, "broker.rack=r{cport}",
		"replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	leader, follower := produceTenToReplicatedTopic(t, tc, "rack")
	rackOf := func(node int32) string { return fmt.Sprintf("r%d", tc.cports[node-1]) }
	lb := tc.brokers[leader-1]
	waitFor(t, "the follower caught up and in sync", func() bool {
		p := lb.topic("rack").partitions[0]
		return len(p.InSyncFollowersHolding(10, time.Now())) == 2
	})
	id := lb.topic("rack").id
	fetch := func(rack string) kmsg.FetchResponseTopicPartition {
		t.Helper()
		return fetchPartitionZero(t, lb.Addr(), "rack", id, 12, -1, rack)
	}
	p := fetch(rackOf(follower))
	if p.ErrorCode != 0 || p.PreferredReadReplica != follower || len(p.RecordBatches) != 0 || p.HighWatermark != 10 {
		t.Errorf("rack of follower %d: code %v, preferred replica %d, %d record bytes, high watermark %d; want the follower, no records, 10",
			follower, kerr.ErrorForCode(p.ErrorCode), p.PreferredReadReplica, len(p.RecordBatches), p.HighWatermark)
	}
	for _, rack := range []string{rackOf(leader), "elsewhere", ""} {
		if p := fetch(rack); p.ErrorCode != 0 || p.PreferredReadReplica != -1 || len(p.RecordBatches) == 0 {
			t.Errorf("rack %q: code %v, preferred replica %d, %d record bytes; want the leader's records",
				rack, kerr.ErrorForCode(p.ErrorCode), p.PreferredReadReplica, len(p.RecordBatches))
		}
	}

	hook := &fetchWriteHook{nodes: map[int32]int{}}
	consumer := tc.client(kgo.ConsumeTopics("rack"), kgo.Rack(rackOf(follower)), kgo.WithHooks(hook),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < 10 {
		fs := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 10 records: %v", got, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Logf("fetch error: %v", err) })
		got += fs.NumRecords()
	}
	if hook.count(follower) == 0 {
		t.Errorf("the consumer in follower %d's rack never fetched from it (fetches by node: %v)", follower, hook.nodes)
	}
}
