package broker

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDeleteRecordsReachesEveryReplica: DeleteRecords answers once the
// in-sync followers deleted too (Kafka's low watermark), and the deleted
// records do not come back when a follower becomes the leader.
func TestDeleteRecordsReachesEveryReplica(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := tc.client(kgo.DefaultProduceTopic("dr"), kgo.RequiredAcks(kgo.AllISRAcks()))
	createClusterTopic(ctx, t, tc, kadm.NewClient(cl), "dr", 1, 3)
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 30000
	req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "dr",
		Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 6}}}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || p.LowWatermark != 6 {
		t.Fatalf("DeleteRecords: code %v, low watermark %d; want 6", kerr.ErrorForCode(p.ErrorCode), p.LowWatermark)
	}
	// Answered at the low watermark: every replica has deleted already.
	for _, b := range tc.brokers {
		if ts := b.topic("dr"); ts == nil || ts.partitions[0].Log.LogStartOffset() != 6 {
			t.Fatalf("node %d: log start offset not 6 when DeleteRecords answered", b.nodeID)
		}
	}

	tc.kill(tc.leaderOf("dr", 0))
	cons := tc.client(kgo.ConsumeTopics("dr"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var first *kgo.Record
	for first == nil {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("nothing read after the leader's kill")
		}
		fs.EachRecord(func(r *kgo.Record) {
			if first == nil {
				first = r
			}
		})
	}
	if first.Offset != 6 {
		t.Fatalf("first record after failover at offset %d, want 6: deleted records came back", first.Offset)
	}
}
