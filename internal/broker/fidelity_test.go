package broker

// Tests of details where Silkworm must answer as Apache Kafka does, each
// named after the API and the behaviour it pins down.

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// notRequestedOps is Kafka's authorized-operations value when they were
// not asked for.
const notRequestedOps = -2147483648

func TestFidelityMetadataUnknownTopicIDIsEchoed(t *testing.T) {
	tb := newTestBroker(t)
	c := dialRaw(t, tb.b.Addr())
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	id := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	rt := kmsg.NewMetadataRequestTopic()
	rt.TopicID = id
	req.Topics = append(req.Topics, rt)
	resp := c.roundTrip(req).(*kmsg.MetadataResponse)
	if len(resp.Topics) != 1 {
		t.Fatalf("%d topics, want 1", len(resp.Topics))
	}
	got := resp.Topics[0]
	if got.ErrorCode != kerr.UnknownTopicID.Code || got.TopicID != id || got.Topic != nil {
		t.Fatalf("unknown id: code %d, id %x, name %v; want UNKNOWN_TOPIC_ID with the id echoed and a null name",
			got.ErrorCode, got.TopicID, got.Topic)
	}
}

func TestFidelityMetadataDuplicateTopicsAnsweredOnce(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "dup", 2, nil)
	c := dialRaw(t, tb.b.Addr())
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	for _, name := range []string{"dup", "missing", "dup", "missing"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		req.Topics = append(req.Topics, rt)
	}
	id := tb.b.meta.Image().Topics["dup"].ID
	for range 2 {
		rt := kmsg.NewMetadataRequestTopic()
		rt.TopicID = id
		req.Topics = append(req.Topics, rt)
	}
	resp := c.roundTrip(req).(*kmsg.MetadataResponse)
	var names []string
	for _, rt := range resp.Topics {
		names = append(names, *rt.Topic)
	}
	// "dup" by name and by id are two lookups, as in Kafka; each repeat
	// of the same one is answered once.
	want := []string{"dup", "missing", "dup"}
	if len(names) != len(want) {
		t.Fatalf("topics %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("topics %v, want %v", names, want)
		}
	}
}

func TestFidelityMetadataAuthorizedOperations(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "ops", 1, nil)
	c := dialRaw(t, tb.b.Addr())
	ask := func(version int16, topicOps, clusterOps bool) *kmsg.MetadataResponse {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = version
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("ops")
		req.Topics = append(req.Topics, rt)
		req.IncludeTopicAuthorizedOperations = topicOps
		req.IncludeClusterAuthorizedOperations = clusterOps
		return c.roundTrip(req).(*kmsg.MetadataResponse)
	}
	resp := ask(8, false, false)
	if got := resp.Topics[0].AuthorizedOperations; got != notRequestedOps {
		t.Fatalf("topic ops not requested: %d, want %d", got, notRequestedOps)
	}
	if resp.AuthorizedOperations != notRequestedOps {
		t.Fatalf("cluster ops not requested: %d, want %d", resp.AuthorizedOperations, notRequestedOps)
	}
	// No authorizer: every operation the resource supports.
	resp = ask(8, true, true)
	wantTopic := int32(1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11)
	wantCluster := int32(1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12)
	if got := resp.Topics[0].AuthorizedOperations; got != wantTopic {
		t.Fatalf("topic ops: %b, want %b", got, wantTopic)
	}
	if resp.AuthorizedOperations != wantCluster {
		t.Fatalf("cluster ops: %b, want %b", resp.AuthorizedOperations, wantCluster)
	}
	// v11+ has no cluster operations in Metadata (DescribeCluster has them).
	resp = ask(12, true, false)
	if got := resp.Topics[0].AuthorizedOperations; got != wantTopic {
		t.Fatalf("v12 topic ops: %b, want %b", got, wantTopic)
	}
}

func TestFidelityProduceErrorBaseOffset(t *testing.T) {
	tb := newTestBroker(t)
	c := dialRaw(t, tb.b.Addr())
	resp := c.roundTrip(produceRequest(1, "no-such-topic", 0, oneBatch())).(*kmsg.ProduceResponse)
	sp := resp.Topics[0].Partitions[0]
	if sp.ErrorCode != kerr.UnknownTopicOrPartition.Code || sp.BaseOffset != -1 || sp.LogStartOffset != -1 || sp.LogAppendTime != -1 {
		t.Fatalf("code %d base %d log start %d append time %d; want UNKNOWN_TOPIC_OR_PARTITION and -1s",
			sp.ErrorCode, sp.BaseOffset, sp.LogStartOffset, sp.LogAppendTime)
	}
}

// oneBatch returns one valid v2 record batch of one record.
func oneBatch() []byte {
	return record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().UnixMilli()},
		[]record.Record{{Value: []byte("v")}})
}

func TestFidelityListOffsetsDuplicatePartitions(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "lo", 2, nil)
	tb.produce(ctx, "lo", 0, 3)
	tb.produce(ctx, "lo", 1, 2)
	c := dialRaw(t, tb.b.Addr())
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 8
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "lo"
	for _, p := range []int32{0, 1, 0} {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp := c.roundTrip(req).(*kmsg.ListOffsetsResponse)
	ps := resp.Topics[0].Partitions
	if len(ps) != 3 {
		t.Fatalf("%d partition answers, want 3 (one per entry)", len(ps))
	}
	for _, i := range []int{0, 2} {
		if ps[i].Partition != 0 || ps[i].ErrorCode != kerr.InvalidRequest.Code || ps[i].Offset != -1 || ps[i].LeaderEpoch != -1 {
			t.Fatalf("entry %d: partition %d code %d offset %d epoch %d; want partition 0 INVALID_REQUEST, -1, -1",
				i, ps[i].Partition, ps[i].ErrorCode, ps[i].Offset, ps[i].LeaderEpoch)
		}
	}
	if ps[1].Partition != 1 || ps[1].ErrorCode != 0 || ps[1].Offset != 2 || ps[1].LeaderEpoch < 0 {
		t.Fatalf("partition 1: code %d offset %d epoch %d; want offset 2 with its epoch", ps[1].ErrorCode, ps[1].Offset, ps[1].LeaderEpoch)
	}
}

func TestFidelityListOffsetsNotFoundHasNoEpoch(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "lo", 1, nil)
	tb.produce(ctx, "lo", 0, 2)
	c := dialRaw(t, tb.b.Addr())
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 8
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "lo"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = 0
	rp.Timestamp = time.Now().Add(24 * time.Hour).UnixMilli() // after every record
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.roundTrip(req).(*kmsg.ListOffsetsResponse)
	sp := resp.Topics[0].Partitions[0]
	if sp.ErrorCode != 0 || sp.Offset != -1 || sp.Timestamp != -1 || sp.LeaderEpoch != -1 {
		t.Fatalf("code %d offset %d timestamp %d epoch %d; want no error and -1 for all three",
			sp.ErrorCode, sp.Offset, sp.Timestamp, sp.LeaderEpoch)
	}
}

// TestFidelityCluster checks, on a 3-broker cluster, the answers that name
// other brokers: Produce v10+ and Fetch v16+ point a client at the current
// leader (KIP-951), and DescribeCluster lists only live brokers.
func TestFidelityCluster(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createClusterTopic(ctx, t, tc, kadm.NewClient(tc.client()), "solo", 1, 1)
	leader := tc.leaderOf("solo", 0)
	other := leader%3 + 1
	c := dialRaw(t, tc.brokers[other-1].Addr())

	produce := func(version int16) *kmsg.ProduceResponse {
		req := produceRequest(1, "solo", 0, oneBatch())
		req.Version = version
		return c.roundTrip(req).(*kmsg.ProduceResponse)
	}
	resp := produce(11)
	sp := resp.Topics[0].Partitions[0]
	if sp.ErrorCode != kerr.NotLeaderForPartition.Code || sp.BaseOffset != -1 {
		t.Fatalf("produce to a non-replica: code %d base %d, want NOT_LEADER_OR_FOLLOWER, -1", sp.ErrorCode, sp.BaseOffset)
	}
	if sp.CurrentLeader.LeaderID != leader || sp.CurrentLeader.LeaderEpoch < 0 {
		t.Fatalf("current leader %+v, want node %d with its epoch", sp.CurrentLeader, leader)
	}
	if len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != leader || resp.Brokers[0].Port <= 0 {
		t.Fatalf("brokers %+v, want the endpoint of node %d", resp.Brokers, leader)
	}
	if resp := produce(9); resp.Topics[0].Partitions[0].CurrentLeader.LeaderID != -1 || len(resp.Brokers) != 0 {
		t.Fatalf("v9 has no current leader: %+v %+v", resp.Topics[0].Partitions[0].CurrentLeader, resp.Brokers)
	}

	fetch := func(version int16) *kmsg.FetchResponse {
		req := kmsg.NewPtrFetchRequest()
		req.Version = version
		req.ReplicaID = -1
		req.ReplicaState.ID = -1
		req.MaxBytes, req.MinBytes = 1<<20, 1
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "solo"
		rt.TopicID = tc.brokers[leader-1].meta.Image().Topics["solo"].ID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return c.roundTrip(req).(*kmsg.FetchResponse)
	}
	fr := fetch(16)
	fp := fr.Topics[0].Partitions[0]
	if fp.ErrorCode != kerr.NotLeaderForPartition.Code || fp.CurrentLeader.LeaderID != leader || fp.CurrentLeader.LeaderEpoch < 0 {
		t.Fatalf("fetch v16 from a non-replica: code %d current leader %+v; want NOT_LEADER_OR_FOLLOWER naming node %d",
			fp.ErrorCode, fp.CurrentLeader, leader)
	}
	if len(fr.Brokers) != 1 || fr.Brokers[0].NodeID != leader || fr.Brokers[0].Port <= 0 {
		t.Fatalf("fetch v16 node endpoints %+v, want node %d", fr.Brokers, leader)
	}
	fr = fetch(15)
	if fp := fr.Topics[0].Partitions[0]; fp.ErrorCode != kerr.NotLeaderForPartition.Code || fp.CurrentLeader.LeaderID != -1 || len(fr.Brokers) != 0 {
		t.Fatalf("fetch v15: code %d current leader %+v brokers %+v; want NOT_LEADER_OR_FOLLOWER only", fp.ErrorCode, fp.CurrentLeader, fr.Brokers)
	}

	// A stopped broker stays registered, fenced; DescribeCluster leaves it out.
	victim := other%3 + 1
	if victim == leader {
		victim = victim%3 + 1
	}
	tc.kill(victim)
	live := tc.brokers[other-1]
	waitFor(t, "the stopped broker is fenced or gone", func() bool {
		br := live.meta.Image().BrokerByID(victim)
		return br == nil || br.Fenced
	})
	dreq := kmsg.NewPtrDescribeClusterRequest()
	dreq.Version = 1
	dreq.EndpointType = 1
	dc := c.roundTrip(dreq).(*kmsg.DescribeClusterResponse)
	if len(dc.Brokers) != 2 {
		t.Fatalf("DescribeCluster lists %d brokers, want the 2 live ones", len(dc.Brokers))
	}
	for _, br := range dc.Brokers {
		if br.NodeID == victim {
			t.Fatalf("DescribeCluster lists stopped broker %d", victim)
		}
	}
}

func TestFidelityFindCoordinatorErrorHasNoNode(t *testing.T) {
	tb := newTestBroker(t)
	c := dialRaw(t, tb.b.Addr())
	for _, version := range []int16{3, 4} {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version = version
		req.CoordinatorType = 7 // no such type
		req.CoordinatorKey = "k"
		req.CoordinatorKeys = []string{"k"}
		resp := c.roundTrip(req).(*kmsg.FindCoordinatorResponse)
		code, node, host, port := resp.ErrorCode, resp.NodeID, resp.Host, resp.Port
		if version >= 4 {
			if len(resp.Coordinators) != 1 {
				t.Fatalf("v%d: %d coordinators, want 1", version, len(resp.Coordinators))
			}
			co := resp.Coordinators[0]
			code, node, host, port = co.ErrorCode, co.NodeID, co.Host, co.Port
		}
		if code != kerr.InvalidRequest.Code || node != -1 || host != "" || port != -1 {
			t.Fatalf("v%d: code %d node %d host %q port %d; want INVALID_REQUEST, -1, \"\", -1", version, code, node, host, port)
		}
	}
}
