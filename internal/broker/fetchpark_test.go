package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestParkedFetchAnsweredAtMinBytes: a consumer's fetch of two partitions
// that waits for five batches' bytes, with a max wait far past the raw
// connection's read guard, is not answered while four batches are there
// and is answered once the fifth arrives, although no partition alone
// holds five batches: min.bytes counts the whole request.
func TestParkedFetchAnsweredAtMinBytes(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "minb", 2, nil)
	size := len(oneBatch())

	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.ReplicaID = -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.SessionEpoch = 60_000, int32(5*size), 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "minb"
	for p := range int32(2) {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = p, 1<<20, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	fc := dialRaw(t, tb.b.Addr())
	corr := fc.send(req)
	ts := tb.b.topic("minb")
	waitFor(t, "the fetch parked on both partitions", func() bool {
		hw0, _ := ts.partitions[0].Waiting()
		hw1, _ := ts.partitions[1].Waiting()
		return hw0 == 1 && hw1 == 1
	})

	pc := dialRaw(t, tb.b.Addr())
	for i, p := range []int32{0, 1, 0, 1, 0} {
		resp := pc.roundTrip(produceRequest(1, "minb", p, oneBatch())).(*kmsg.ProduceResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("produce %d to partition %d: error %d", i, p, code)
		}
	}
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(12)
	fc.readResponse(corr, resp)
	got := map[int32]int{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("partition %d: error %d", rp.Partition, rp.ErrorCode)
			}
			got[rp.Partition] += len(rp.RecordBatches)
		}
	}
	if got[0] != 3*size || got[1] != 2*size {
		t.Fatalf("answered with %d and %d record bytes; want %d and %d (all five batches, min.bytes %d)",
			got[0], got[1], 3*size, 2*size, 5*size)
	}
}

// TestAnswersInRequestOrderWithInlineWrites: produce answers that the
// reader writes itself (no earlier answer waiting) and those queued behind
// a parked fetch or a metadata request leave in request order, pipelined
// on one connection.
func TestAnswersInRequestOrderWithInlineWrites(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "order", 1, nil)
	c := dialRaw(t, tb.b.Addr())
	type sent struct {
		corr int32
		resp kmsg.Response
	}
	var pending []sent
	send := func(req kmsg.Request) {
		pending = append(pending, sent{c.send(req), req.ResponseKind()})
	}
	for range 3 {
		fetch := kmsg.NewPtrFetchRequest()
		fetch.SetVersion(12)
		fetch.ReplicaID = -1
		fetch.MaxWaitMillis, fetch.MinBytes, fetch.MaxBytes, fetch.SessionEpoch = 200, 1<<20, 1<<20, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = "order"
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = 1<<20, -1, -1
		rt.Partitions = append(rt.Partitions, rp)
		fetch.Topics = append(fetch.Topics, rt)
		send(fetch)
		for range 3 {
			send(produceRequest(1, "order", 0, oneBatch()))
		}
		md := kmsg.NewPtrMetadataRequest()
		md.SetVersion(9)
		send(md)
		send(produceRequest(-1, "order", 0, oneBatch()))
	}
	produced := 0
	for _, s := range pending {
		c.readResponse(s.corr, s.resp)
		if pr, ok := s.resp.(*kmsg.ProduceResponse); ok {
			if code := pr.Topics[0].Partitions[0].ErrorCode; code != 0 {
				t.Fatalf("produce: error %d", code)
			}
			produced++
		}
	}
	if end := tb.b.topic("order").partitions[0].Log.LogEndOffset(); end != int64(produced) {
		t.Fatalf("log end %d after %d produce answers", end, produced)
	}
}

// TestFetchOfOlderSegmentAnsweredAtOnce: a consumer fetch that waits for
// far more bytes than one segment holds, with a max wait far past the raw
// connection's read guard, is answered at once with the batches of its
// segment when the high watermark lies on a later segment, as Kafka's
// DelayedFetch completes "fetching older segments". A consumer catching up
// over small segments (kafka-go's TestReaderReadCompactedMessage, a
// compacted topic with segment.bytes=200) would otherwise wait out max
// wait for every batch.
func TestFetchOfOlderSegmentAnsweredAtOnce(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	segment := "14" // the smallest: every batch gets a segment of its own
	tb.createTopic(ctx, "older", 1, map[string]*string{"segment.bytes": &segment})
	pc := dialRaw(t, tb.b.Addr())
	for i := range 5 {
		resp := pc.roundTrip(produceRequest(1, "older", 0, oneBatch())).(*kmsg.ProduceResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("produce %d: error %d", i, code)
		}
	}
	if n := tb.b.topic("older").partitions[0].Log.NumSegments(); n < 5 {
		t.Fatalf("%d segments, want one per batch", n)
	}

	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.ReplicaID = -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.SessionEpoch = 60_000, 1<<20, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "older"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = 0, 1, 1<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := dialRaw(t, tb.b.Addr()).roundTrip(req).(*kmsg.FetchResponse)
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.HighWatermark != 5 || len(p.RecordBatches) != len(oneBatch()) {
		t.Fatalf("fetch at offset 1: error %d, high watermark %d, %d record bytes; want the one batch of its segment",
			p.ErrorCode, p.HighWatermark, len(p.RecordBatches))
	}
}
