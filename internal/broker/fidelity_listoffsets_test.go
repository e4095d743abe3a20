package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// TestFidelityListOffsetsMaxTimestampNamesTheRecord: since Kafka 3.8
// (KAFKA-16310) ListOffsets with MAX_TIMESTAMP (-3) answers the offset of
// the first record holding the largest timestamp, not the last offset of
// its batch, with that batch's leader epoch.
func TestFidelityListOffsetsMaxTimestampNamesTheRecord(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "maxts", 1, nil)

	now := time.Now().UnixMilli()
	batch := func(deltas ...int64) []byte {
		var recs []record.Record
		for _, d := range deltas {
			recs = append(recs, record.Record{TimestampDelta: d, Value: []byte("v")})
		}
		return record.BuildBatch(record.BuildOptions{FirstTimestamp: now}, recs)
	}
	// Offsets 0-2, then 3-7 where offsets 4 and 6 share the largest
	// timestamp, then 8-9 with smaller ones.
	for _, b := range [][]byte{batch(0, 5, 10), batch(0, 50, 10, 50, 20), batch(30, 40)} {
		if sp := produceRaw(t, tb, 9, "maxts", b); sp.ErrorCode != 0 {
			t.Fatalf("produce: code %d", sp.ErrorCode)
		}
	}

	for _, isolation := range []int8{0, 1} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version, req.ReplicaID, req.IsolationLevel = 7, -1, isolation
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "maxts"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.CurrentLeaderEpoch = -3, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		c := dialRaw(t, tb.b.Addr())
		resp := c.roundTrip(req).(*kmsg.ListOffsetsResponse)
		sp := resp.Topics[0].Partitions[0]
		if sp.ErrorCode != 0 || sp.Offset != 4 || sp.Timestamp != now+50 || sp.LeaderEpoch != 0 {
			t.Fatalf("isolation %d: code %d, offset %d, timestamp %d, epoch %d; want offset 4 (the first record with the max), timestamp %d, epoch 0",
				isolation, sp.ErrorCode, sp.Offset, sp.Timestamp, sp.LeaderEpoch, now+50)
		}
	}
}

// TestListOffsetsReplicaIDs: as Kafka's ReplicaManager.fetchOffset, a
// ListOffsets with a replica id other than -1 is answered, not refused:
// up to the log end, the isolation level ignored. kafka-python's consumer
// sends replica id 0 and retried NOT_LEADER_OR_FOLLOWER for ever. A
// consumer (-1) reading committed stops at the last stable offset.
func TestListOffsetsReplicaIDs(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "rid", 1, nil)
	txn, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.TransactionalID("rid-txn"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "rid", Value: []byte("open")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// The transaction stays open: last stable offset 0, log end 3.
	latest := func(version int16, replica int32, isolation int8) kmsg.ListOffsetsResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version, req.ReplicaID, req.IsolationLevel = version, replica, isolation
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "rid"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.CurrentLeaderEpoch, rp.MaxNumOffsets = -1, -1, 1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return dialRaw(t, tb.b.Addr()).roundTrip(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	}
	for _, c := range []struct {
		replica   int32
		isolation int8
		want      int64
	}{{0, 1, 3}, {0, 0, 3}, {-2, 1, 3}, {-1, 1, 0}, {-1, 0, 3}} {
		if sp := latest(11, c.replica, c.isolation); sp.ErrorCode != 0 || sp.Offset != c.want {
			t.Errorf("replica id %d, isolation %d: code %d, offset %d; want %d", c.replica, c.isolation, sp.ErrorCode, sp.Offset, c.want)
		}
	}
	if sp := latest(0, 0, 0); sp.ErrorCode != 0 || len(sp.OldStyleOffsets) != 1 || sp.OldStyleOffsets[0] != 3 {
		t.Errorf("v0 with replica id 0: code %d, offsets %v; want [3]", sp.ErrorCode, sp.OldStyleOffsets)
	}
}
