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

// TestFetchFromFollower: as Kafka's FetchParams.fetchOnlyFromLeader, a
// follower serves consumer fetches from v11 on (KIP-392) and the
// debugging consumer (replica id -2) up to its own high watermark, and
// refuses older consumer fetches with NOT_LEADER_OR_FOLLOWER.
func TestFetchFromFollower(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := tc.client(kgo.DefaultProduceTopic("ff"), kgo.RequiredAcks(kgo.AllISRAcks()))
	createClusterTopic(ctx, t, tc, kadm.NewClient(cl), "ff", 1, 3)
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	leader := tc.leaderOf("ff", 0)
	follower := int32(1)
	if follower == leader {
		follower = 2
	}
	fb := tc.brokers[follower-1]
	waitFor(t, "the follower's high watermark reaching 10", func() bool {
		ts := fb.topic("ff")
		return ts != nil && ts.partitions[0] != nil && ts.partitions[0].HighWatermark() == 10
	})
	id := fb.topic("ff").id
	fetch := func(version int16, replicaID int32) kmsg.FetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(version)
		req.ReplicaID, req.MaxBytes, req.SessionEpoch = replicaID, 1<<20, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = "ff", id
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = 0, 0, 1<<20, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		// A raw connection: kgo would send its own version, not ours.
		resp := dialRaw(t, fb.Addr()).roundTrip(req).(*kmsg.FetchResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("fetch v%d from follower %d: answer %+v", version, follower, resp)
		}
		return resp.Topics[0].Partitions[0]
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
