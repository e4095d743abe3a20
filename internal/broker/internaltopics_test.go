package broker

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// TestMetadataAutoCreatesInternalTopicsAsTheirCoordinators: a Metadata
// request that auto-creates __consumer_offsets, __transaction_state or
// __share_group_state (Burrow's sarama client asks for
// __consumer_offsets before any group exists) makes each with its
// coordinator's partitions and configs, as Kafka's
// AutoTopicCreationManager does, so that every group and transactional id
// then finds its coordinator; all three are internal.
func TestMetadataAutoCreatesInternalTopicsAsTheirCoordinators(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=5", "transaction.state.log.num.partitions=4",
		"share.coordinator.state.topic.num.partitions=3", "num.partitions=1")
	ctx := testCtx(t)
	want := map[string]int{offsetsTopic: 5, transactionStateTopic: 4, shareStateTopic: 3}
	md := func() *kmsg.MetadataResponse {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		req.AllowAutoTopicCreation = true
		for name := range want {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(name)
			req.Topics = append(req.Topics, rt)
		}
		return tb.request(ctx, req).(*kmsg.MetadataResponse)
	}
	md()
	for _, mt := range md().Topics {
		name := *mt.Topic
		if mt.ErrorCode != 0 || len(mt.Partitions) != want[name] || !mt.IsInternal {
			t.Errorf("%s: error %d, %d partitions, internal %v; want %d internal partitions", name, mt.ErrorCode, len(mt.Partitions), mt.IsInternal, want[name])
		}
		if got := tb.b.meta.Image().Topics[name].Configs["cleanup.policy"]; got != "compact" {
			t.Errorf("%s: cleanup.policy %q, want compact", name, got)
		}
	}
	// Every group finds its coordinator and commits (groups spread over
	// all five partitions).
	tb.createTopic(ctx, "t", 1, nil)
	for i := range 10 {
		g := fmt.Sprintf("g%d", i)
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey = g
		if resp := tb.request(ctx, fc).(*kmsg.FindCoordinatorResponse); resp.ErrorCode != 0 {
			t.Fatalf("FindCoordinator %s: %s", g, kerr.ErrorForCode(resp.ErrorCode))
		}
		var offs kadm.Offsets
		offs.Add(kadm.Offset{Topic: "t", Partition: 0, At: 1, LeaderEpoch: -1})
		if resp, err := tb.adm.CommitOffsets(ctx, g, offs); err != nil || resp.Error() != nil {
			t.Fatalf("commit for %s: %v %v", g, err, resp.Error())
		}
	}
}

// TestProduceToInternalTopicRefused: a client's produce to
// __consumer_offsets gets INVALID_TOPIC_EXCEPTION without a message, as
// Kafka's ReplicaManager answers, and appends nothing: the group
// coordinator's state stays its own.
func TestProduceToInternalTopicRefused(t *testing.T) {
	tb := newTestBroker(t, "offsets.topic.num.partitions=1")
	ctx := testCtx(t)
	tb.createTopic(ctx, "t", 1, nil)
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "t", Partition: 0, At: 3, LeaderEpoch: -1})
	if resp, err := tb.adm.CommitOffsets(ctx, "g", offs); err != nil || resp.Error() != nil {
		t.Fatalf("commit: %v %v", err, resp.Error())
	}
	_, p := tb.b.partition(offsetsTopic, 0)
	end := p.Log.LogEndOffset()
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = offsetsTopic, tb.b.meta.Image().Topics[offsetsTopic].ID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = record.BuildBatch(record.BuildOptions{FirstTimestamp: 1}, []record.Record{{Key: []byte("garbage"), Value: []byte("x")}})
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	sp := tb.request(ctx, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if sp.ErrorCode != kerr.InvalidTopicException.Code || sp.ErrorMessage != nil {
		t.Fatalf("produce to %s: code %d message %v, want INVALID_TOPIC_EXCEPTION without a message", offsetsTopic, sp.ErrorCode, sp.ErrorMessage)
	}
	if got := p.Log.LogEndOffset(); got != end {
		t.Fatalf("%s grew from %d to %d", offsetsTopic, end, got)
	}
}
