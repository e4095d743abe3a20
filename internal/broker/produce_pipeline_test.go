package broker

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/wire"
)

// TestSequencerAnswersInRequestOrder: answers given out of order leave the
// connection in request order; an answer waits for every earlier request,
// one without a response included, and a closing answer is followed by
// the close.
func TestSequencerAnswersInRequestOrder(t *testing.T) {
	c := &conn{out: make(chan *wire.Response, connQueue), written: make(chan struct{}, 1),
		next: make(chan struct{}, 1), done: make(chan struct{})}
	var rs []*request
	var resps []*wire.Response
	for i := range 4 {
		r := &request{c: c, hdr: wire.RequestHeader{CorrelationID: int32(i)}}
		c.seq.add(r)
		rs = append(rs, r)
		resps = append(resps, &wire.Response{Chunks: []wire.Chunk{{Bytes: []byte{byte(i)}}}})
	}
	rs[3].respondRaw(resps[3])
	rs[1].respondNone()
	rs[2].respondRaw(resps[2])
	if len(c.out) != 0 || c.queued() != 4 {
		t.Fatalf("before the first request is answered: %d responses queued for writing, %d waiting in all; want 0 and 4", len(c.out), c.queued())
	}
	rs[0].release() // a pipelined produce: the reader moves on, the answer still waits
	if len(c.out) != 0 {
		t.Fatalf("a released request let %d responses out", len(c.out))
	}
	rs[0].respondRaw(resps[0])
	for _, want := range []*wire.Response{resps[0], resps[2], resps[3]} {
		select {
		case got := <-c.out:
			if got != want {
				t.Fatalf("response %v, want %v", got.Chunks[0].Bytes, want.Chunks[0].Bytes)
			}
		default:
			t.Fatalf("response %v not queued", want.Chunks[0].Bytes)
		}
	}
	if c.queued() != 0 {
		t.Fatalf("after every answer: %d responses still waiting", c.queued())
	}

	// A closing answer behind an unanswered request: both wait, then
	// the response and the close (nil) leave in order.
	first := &request{c: c}
	closing := &request{c: c}
	c.seq.add(first)
	c.seq.add(closing)
	end := &wire.Response{Chunks: []wire.Chunk{{Bytes: []byte{9}}}}
	closing.respondAndClose(kmsg.NewPtrSASLAuthenticateResponse())
	if len(c.out) != 0 {
		t.Fatalf("a closing answer left before the earlier request's")
	}
	first.respondRaw(end)
	if got := <-c.out; got != end {
		t.Fatal("the earlier request's answer is not first")
	}
	if got := <-c.out; got == nil || got.Size() == 0 {
		t.Fatal("the closing answer is not second")
	}
	if got := <-c.out; got != nil {
		t.Fatal("no close after the closing answer")
	}
}

// TestProducePipelinedAcksAllInOrder: a client pipelines acks=all produce
// requests of an idempotent producer to a replicated partition on one
// connection, with other requests (Metadata, ApiVersions, an acks=1
// produce to an unreplicated topic) in between whose answers are ready
// before the ISR has the records. Every response comes back in request
// order (the raw client checks each correlation id), with the base offsets
// the records were appended at, and the followers end up with every
// record.
func TestProducePipelinedAcksAllInOrder(t *testing.T) {
	tc := newTestCluster(t, 2, "replica.fetch.wait.max.ms=500")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(tc.client())
	for topic, rf := range map[string]int16{"piped": 2, "single": 1} {
		res, err := adm.CreateTopic(ctx, 1, rf, nil, topic)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			t.Fatalf("create topic %s: %v", topic, err)
		}
	}
	var leader *Broker
	waitFor(t, "both replicas of piped-0 in the ISR", func() bool {
		id := tc.leaderOf("piped", 0)
		if id < 1 {
			return false
		}
		leader = tc.brokers[id-1]
		_, p := leader.partition("piped", 0)
		return p != nil && p.IsLeader() && p.ISRSize() == 2
	})
	waitFor(t, "single-0 has a leader", func() bool { return tc.leaderOf("single", 0) > 0 })
	single := tc.leaderOf("single", 0)

	c := dialRaw(t, leader.Addr())
	ipReq := kmsg.NewPtrInitProducerIDRequest()
	ipReq.Version = 4
	ipReq.TransactionTimeoutMillis = -1
	ipReq.ProducerID, ipReq.ProducerEpoch = -1, -1
	ip := c.roundTrip(ipReq).(*kmsg.InitProducerIDResponse)
	if ip.ErrorCode != 0 {
		t.Fatalf("InitProducerId: error %d", ip.ErrorCode)
	}

	const requests, perBatch = 12, 5
	produce := func(topic string, acks int16, seq int32) kmsg.Request {
		recs := make([]record.Record, perBatch)
		for i := range recs {
			recs[i] = record.Record{TimestampDelta: int64(i), Value: []byte("pipelined")}
		}
		opts := record.BuildOptions{FirstTimestamp: time.Now().UnixMilli()}
		if seq >= 0 {
			opts.Idempotent, opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence = true, ip.ProducerID, ip.ProducerEpoch, seq
		}
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, acks, 30_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = record.BuildBatch(opts, recs)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return req
	}
	type sent struct {
		corr int32
		req  kmsg.Request
		want int64 // the base offset expected of a produce to piped; -1: not one
	}
	var all []sent
	for i := range requests {
		req := produce("piped", -1, int32(i*perBatch))
		all = append(all, sent{c.send(req), req, int64(i * perBatch)})
		var other kmsg.Request
		switch i % 3 {
		case 0:
			m := kmsg.NewPtrMetadataRequest()
			m.Version = 9
			other = m
		case 1:
			v := kmsg.NewPtrApiVersionsRequest()
			v.Version = 3
			v.ClientSoftwareName, v.ClientSoftwareVersion = "pipeline-test", "1"
			other = v
		default:
			if single != leader.cfg.NodeID {
				continue // the unreplicated topic is led elsewhere
			}
			other = produce("single", 1, -1)
		}
		all = append(all, sent{c.send(other), other, -1})
	}
	for _, s := range all {
		resp := s.req.ResponseKind()
		resp.SetVersion(s.req.GetVersion())
		c.readResponse(s.corr, resp) // fails unless this is the next response
		pr, ok := resp.(*kmsg.ProduceResponse)
		if !ok || s.want < 0 {
			continue
		}
		sp := pr.Topics[0].Partitions[0]
		if sp.ErrorCode != 0 || sp.BaseOffset != s.want {
			t.Fatalf("produce (correlation %d): error %d, base offset %d; want 0 and %d", s.corr, sp.ErrorCode, sp.BaseOffset, s.want)
		}
	}
	waitFor(t, "every replica of piped-0 holds every record", func() bool {
		for _, b := range tc.brokers {
			_, p := b.partition("piped", 0)
			if p == nil || p.Log.LogEndOffset() != requests*perBatch {
				return false
			}
		}
		return true
	})
}

// TestProduceLargeRequestsBackToBack: produce requests above the
// connection's own buffer (six partitions of about 1 MiB each) come
// through pooled buffers that the reader reuses for the next frame. Sent
// back to back on one connection with different contents, each is
// appended whole: every batch reads back with the bytes sent (its records'
// values) at the offsets answered.
func TestProduceLargeRequestsBackToBack(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	const parts, requests = 6, 3
	tb.createTopic(ctx, "large", parts, nil)
	c := dialRaw(t, tb.b.Addr())
	value := func(req, part int) []byte {
		return bytes.Repeat([]byte{byte('a' + req*parts + part)}, 1000)
	}
	var corrs []int32
	for i := range requests {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, 1, 30_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "large"
		for p := range parts {
			recs := make([]record.Record, 1000) // about 1 MiB: max.message.bytes allows 1 MiB and a little
			for j := range recs {
				recs[j] = record.Record{TimestampDelta: int64(j), Value: value(i, p)}
			}
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Partition = int32(p)
			rp.Records = record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().UnixMilli()}, recs)
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		frame, corr := c.encode(req)
		if len(frame) <= connBufferMax {
			t.Fatalf("request of %d bytes fits the connection's buffer; the test needs a pooled one", len(frame))
		}
		c.write(frame)
		corrs = append(corrs, corr)
	}
	for i, corr := range corrs {
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		c.readResponse(corr, resp)
		for _, sp := range resp.Topics[0].Partitions {
			if sp.ErrorCode != 0 || sp.BaseOffset != int64(i*1000) {
				t.Fatalf("request %d, partition %d: error %d, base offset %d; want 0 and %d", i, sp.Partition, sp.ErrorCode, sp.BaseOffset, i*1000)
			}
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumeTopics("large"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxPartitionBytes(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for seen := 0; seen < parts*requests*1000; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("fetch after %d records: %v", seen, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen++
			if want := value(int(r.Offset/1000), int(r.Partition)); !bytes.Equal(r.Value, want) {
				t.Fatalf("partition %d offset %d: value %q..., want %q...", r.Partition, r.Offset, r.Value[:8], want[:8])
			}
		})
	}
}
