package broker

// The bad-input suite: malformed requests, each on a fresh raw connection,
// must get Kafka's answer (an exact error code in a well-formed response,
// or a closed connection) while a well-behaved idempotent producer keeps
// producing to the same topic and loses nothing.
//
// Where Silkworm's answer differs from Apache Kafka's, the case says so:
//   - trailing bytes after a complete request body are ignored (the request
//     is answered), as Kafka's generated readers do not check for them;
//   - a malformed record inside an intact batch (negative length, fewer
//     records than announced) is CORRUPT_MESSAGE; Kafka answers
//     INVALID_RECORD (record.ErrCorruptMessage documents the choice);
//   - an undefined codec is UNSUPPORTED_COMPRESSION_TYPE; Kafka fails on
//     an IllegalArgumentException (UNKNOWN_SERVER_ERROR);
//   - a decompression bomb is MESSAGE_TOO_LARGE once the records pass the
//     decompression cap; Kafka, which inflates record by record, fails on
//     the first malformed record instead.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

const (
	badTopic      = "badinput"
	badPartitions = 3
	// badMaxMessageBytes is the broker's message.max.bytes in this suite:
	// small, so that an oversized batch stays small, and above the size of
	// the compressed decompression bomb.
	badMaxMessageBytes = 512 << 10
)

// bgProducer is the well-behaved client: an idempotent acks=all franz-go
// producer writing key "bg" and value "<seq>" to every partition in turn.
type bgProducer struct {
	cl   *kgo.Client
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex // guards acked and errs
	acked  [badPartitions][]int64
	errs   []error
	nAcked int
}

func startBackgroundProducer(t *testing.T, addr string) *bgProducer {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchMaxBytes(16<<10),
		kgo.ProducerLinger(0))
	if err != nil {
		t.Fatalf("producer client: %v", err)
	}
	p := &bgProducer{cl: cl, stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	t.Cleanup(p.halt)
	return p
}

func (p *bgProducer) run() {
	defer close(p.done)
	ctx := context.Background()
	for seq := 0; ; seq++ {
		select {
		case <-p.stop:
			return
		default:
		}
		recs := make([]*kgo.Record, badPartitions)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: badTopic, Partition: int32(i), Key: []byte("bg"),
				Value: []byte(strconv.Itoa(seq))}
		}
		results := p.cl.ProduceSync(ctx, recs...)
		p.mu.Lock()
		for _, r := range results {
			if r.Err != nil {
				p.errs = append(p.errs, fmt.Errorf("partition %d seq %d: %w", r.Record.Partition, seq, r.Err))
				continue
			}
			part := r.Record.Partition
			if len(p.acked[part]) != seq {
				p.errs = append(p.errs, fmt.Errorf("partition %d: seq %d acknowledged after %d acks", part, seq, len(p.acked[part])))
			}
			p.acked[part] = append(p.acked[part], r.Record.Offset)
			p.nAcked++
		}
		p.mu.Unlock()
	}
}

// count is the number of records acknowledged so far.
func (p *bgProducer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nAcked
}

// halt stops producing and waits for the last request; safe to call twice.
func (p *bgProducer) halt() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
	p.cl.Close()
}

// badCase is one malformed input sent on a fresh connection.
type badCase struct {
	name string
	run  func(t *testing.T, c *rawConn)
}

func TestBadInput(t *testing.T) {
	tb := newTestBroker(t, "message.max.bytes="+strconv.Itoa(badMaxMessageBytes))
	ctx := testCtx(t)
	tb.createTopic(ctx, badTopic, badPartitions, nil)
	addr := tb.b.Addr()

	bomb := zstdBomb(t) // before the producer starts, to keep its run short
	bg := startBackgroundProducer(t, addr)
	waitFor(t, "background producer acknowledged records", func() bool { return bg.count() >= 30 })

	var rawMu sync.Mutex
	var rawAcked []string // values of raw records the broker accepted
	rawOK := func(v string) {
		rawMu.Lock()
		rawAcked = append(rawAcked, v)
		rawMu.Unlock()
	}

	cases := badCases(tb, bomb, rawOK)
	if len(cases) < 25 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, bc := range cases {
		t.Run(bc.name, func(t *testing.T) { bc.run(t, dialRaw(t, addr)) })
	}

	// The producer is still going: its count keeps growing.
	before := bg.count()
	waitFor(t, "background producer still producing", func() bool { return bg.count() >= before+3*badPartitions })
	bg.halt()
	bg.mu.Lock()
	errs, acked := bg.errs, bg.acked
	bg.mu.Unlock()
	for _, err := range errs {
		t.Errorf("background producer: %v", err)
	}
	verifyBadTopic(t, testCtx(t), addr, acked, rawAcked)

	// A fresh connection still gets a normal ApiVersions answer.
	c := dialRaw(t, addr)
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "badinput", "1.0"
	resp := c.roundTrip(req).(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("final ApiVersions: error %d, %d keys", resp.ErrorCode, len(resp.ApiKeys))
	}
}

// verifyBadTopic reads the topic from offset 0 and checks that every
// record the background producer got acknowledged is there, at its
// acknowledged offset, in order, once; and that the only other records
// are the raw ones the broker accepted.
func verifyBadTopic(t *testing.T, ctx context.Context, addr string, acked [badPartitions][]int64, rawAcked []string) {
	t.Helper()
	parts := map[int32]kgo.Offset{}
	for p := range int32(badPartitions) {
		parts[p] = kgo.NewOffset().At(0)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{badTopic: parts}))
	if err != nil {
		t.Fatalf("consumer client: %v", err)
	}
	defer cl.Close()

	var (
		seen     [badPartitions][]*kgo.Record
		raw      []string
		complete = func() bool {
			for p := range badPartitions {
				if len(acked[p]) > 0 && (len(seen[p]) == 0 || seen[p][len(seen[p])-1].Offset < acked[p][len(acked[p])-1]) {
					return false
				}
			}
			return true
		}
	)
	for !complete() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming %s: %v", badTopic, ctx.Err())
		}
		for _, fe := range fs.Errors() {
			t.Fatalf("fetch %s-%d: %v", fe.Topic, fe.Partition, fe.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			switch string(r.Key) {
			case "bg":
				seen[r.Partition] = append(seen[r.Partition], r)
			default:
				raw = append(raw, string(r.Value))
			}
		})
	}
	total := 0
	for p := range badPartitions {
		if len(seen[p]) != len(acked[p]) {
			t.Errorf("partition %d: read %d producer records, %d were acknowledged", p, len(seen[p]), len(acked[p]))
		}
		for i, r := range seen[p] {
			if want := strconv.Itoa(i); string(r.Value) != want {
				t.Fatalf("partition %d: record %d at offset %d has value %q, want %q (gap, duplicate or reorder)",
					p, i, r.Offset, r.Value, want)
			}
			if i < len(acked[p]) && r.Offset != acked[p][i] {
				t.Fatalf("partition %d: record %d at offset %d, acknowledged at %d", p, i, r.Offset, acked[p][i])
			}
		}
		total += len(seen[p])
	}
	if strings.Join(raw, ",") != strings.Join(rawAcked, ",") {
		t.Errorf("raw records in the log: %q, want only the accepted ones %q", raw, rawAcked)
	}
	t.Logf("verified %d producer records and %d accepted raw records", total, len(raw))
}

// badCases lists the malformed inputs. rawOK records the value of a raw
// record the broker is expected to accept.
func badCases(tb *testBroker, bomb []byte, rawOK func(string)) []badCase {
	cfg := tb.b.cfg
	var cases []badCase
	add := func(name string, run func(t *testing.T, c *rawConn)) {
		cases = append(cases, badCase{name, run})
	}
	closed := func(name string, frame func() []byte) {
		add(name, func(t *testing.T, c *rawConn) {
			c.write(frame())
			c.expectClosed(name)
		})
	}
	size := func(n int32, rest ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(n)), rest...)
	}
	framed := func(body []byte) []byte { return size(int32(len(body)), body...) }

	// Framing and headers: the connection is closed.
	closed("frame length 0", func() []byte { return size(0) })
	closed("frame length negative", func() []byte { return size(-5, 1, 2, 3) })
	add("frame length 2^31-1 then nothing", func(t *testing.T, c *rawConn) {
		noBigAllocation(t, func() {
			c.write(size(math.MaxInt32))
			c.expectClosed("frame of 2^31-1 bytes")
		})
	})
	closed("frame above socket.request.max.bytes", func() []byte {
		return size(int32(cfg.SocketRequestMaxBytes)+1, rawHeader(kmsg.Metadata.Int16(), 4, 1)...)
	})
	closed("truncated header", func() []byte { return framed([]byte{0, 3, 0}) })
	closed("unknown api key", func() []byte { return framed(rawHeader(9999, 0, 7)) })
	closed("produce version 99", func() []byte { return framed(rawHeader(kmsg.Produce.Int16(), 99, 7)) })
	add("apiversions version 99", func(t *testing.T, c *rawConn) {
		c.write(framed(append(rawHeader(kmsg.ApiVersions.Int16(), 99, 77), 0)))
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = 0
		c.readResponse(77, resp)
		if resp.ErrorCode != kerr.UnsupportedVersion.Code {
			t.Fatalf("error code %d, want UNSUPPORTED_VERSION", resp.ErrorCode)
		}
		found := false
		for _, k := range resp.ApiKeys {
			if k.ApiKey == kmsg.Produce.Int16() && k.MinVersion == 0 && k.MaxVersion == 13 {
				found = true
			}
		}
		if !found {
			t.Fatalf("api list %+v lacks Produce 0-13", resp.ApiKeys)
		}
	})
	closed("client id longer than the frame", func() []byte {
		b := rawHeader(kmsg.Metadata.Int16(), 4, 7)
		b = b[:8]                                  // drop the client id
		b = binary.BigEndian.AppendUint16(b, 1000) // announce 1000 bytes
		return framed(append(b, "abc"...))
	})
	add("array count INT32_MAX in a 10-byte body", func(t *testing.T, c *rawConn) {
		noBigAllocation(t, func() {
			body := binary.BigEndian.AppendUint32(nil, math.MaxInt32) // Metadata v4 topics
			body = append(body, 0, 0, 0, 0, 0, 0)
			c.write(framed(append(rawHeader(kmsg.Metadata.Int16(), 4, 7), body...)))
			c.expectClosed("array count INT32_MAX")
		})
	})
	add("trailing garbage after metadata (ignored, as Kafka)", func(t *testing.T, c *rawConn) {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 4
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(badTopic)}}
		frame, corr := c.encode(req)
		frame = append(frame, "garbage"...)
		binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		c.write(frame)
		resp := kmsg.NewPtrMetadataResponse()
		resp.SetVersion(4)
		c.readResponse(corr, resp)
		if len(resp.Topics) != 1 || resp.Topics[0].Topic == nil || *resp.Topics[0].Topic != badTopic {
			t.Fatalf("Metadata with trailing bytes answered %+v, want topic %s", resp.Topics, badTopic)
		}
	})

	// Produce: a per-partition error code; the connection stays usable.
	n := 0
	batch := func(opts record.BuildOptions) []byte {
		n++
		opts.FirstTimestamp = time.Now().UnixMilli()
		recs := make([]record.Record, 3)
		for i := range recs {
			recs[i] = record.Record{Key: []byte("raw"), Value: fmt.Appendf(nil, "bad-%d-%d", n, i)}
		}
		return record.BuildBatch(opts, recs)
	}
	plain := func() []byte { return batch(record.BuildOptions{}) }
	reCRC := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[record.OffsetCRC:], record.ComputeCRC(b))
		return b
	}
	produceCode := func(name string, acks int16, want int16, records func() []byte) {
		add(name, func(t *testing.T, c *rawConn) {
			got := rawProduce(t, c, acks, badTopic, int32(len(name)%badPartitions), records())
			if got != want {
				t.Fatalf("error code %d (%v), want %d (%v)", got, kerr.ErrorForCode(got), want, kerr.ErrorForCode(want))
			}
			stillServes(t, c)
		})
	}
	produceCode("produce acks=2", 2, kerr.InvalidRequiredAcks.Code, plain)
	add("produce to unknown partition and topic", func(t *testing.T, c *rawConn) {
		if got := rawProduce(t, c, -1, badTopic, badPartitions, plain()); got != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("unknown partition: error code %d", got)
		}
		if got := rawProduce(t, c, -1, "no-such-topic", 0, plain()); got != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("unknown topic: error code %d", got)
		}
		stillServes(t, c)
	})
	setLength := func(b []byte, delta int32) []byte {
		l := int32(binary.BigEndian.Uint32(b[record.OffsetBatchLength:]))
		binary.BigEndian.PutUint32(b[record.OffsetBatchLength:], uint32(l+delta))
		return b
	}
	// Kafka finds no whole batch: INVALID_RECORD.
	produceCode("batch length larger than present", -1, kerr.InvalidRecord.Code, func() []byte { return setLength(plain(), 10) })
	// Kafka reads the shorter batch, whose CRC then fails: CORRUPT_MESSAGE.
	produceCode("batch length smaller than present", -1, kerr.CorruptMessage.Code, func() []byte { return setLength(plain(), -5) })
	produceCode("magic 1", -1, kerr.InvalidRecord.Code, func() []byte {
		b := plain()
		b[record.OffsetMagic] = 1
		return b
	})
	produceCode("magic 3", -1, kerr.CorruptMessage.Code, func() []byte {
		b := plain()
		b[record.OffsetMagic] = 3
		return b
	})
	produceCode("crc mismatch", -1, kerr.CorruptMessage.Code, func() []byte {
		b := plain()
		b[len(b)-1] ^= 0xff
		return b
	})
	setCount := func(b []byte, count int32) []byte {
		binary.BigEndian.PutUint32(b[record.OffsetRecordCount:], uint32(count))
		return b
	}
	produceCode("record count 0", -1, kerr.InvalidRecord.Code, func() []byte { return reCRC(setCount(plain(), 0)) })
	produceCode("record count above last offset delta", -1, kerr.InvalidRecord.Code, func() []byte { return reCRC(setCount(plain(), 5)) })
	// Kafka: INVALID_RECORD (records missing inside an intact batch).
	produceCode("record count larger than present", -1, kerr.CorruptMessage.Code, func() []byte {
		b := setCount(plain(), 5)
		binary.BigEndian.PutUint32(b[record.OffsetLastOffsetDelta:], 4)
		return reCRC(b)
	})
	// Kafka: INVALID_RECORD.
	produceCode("negative record length", -1, kerr.CorruptMessage.Code, func() []byte {
		b := plain()
		b[record.HeaderSize] = 0x01 // zigzag varint -1
		return reCRC(b)
	})
	for _, codec := range []uint16{5, 6, 7} {
		produceCode(fmt.Sprintf("undefined codec %d", codec), -1, kerr.UnsupportedCompressionType.Code, func() []byte {
			b := plain()
			attrs := binary.BigEndian.Uint16(b[record.OffsetAttributes:])
			binary.BigEndian.PutUint16(b[record.OffsetAttributes:], attrs&^uint16(record.AttrCompressionMask)|codec)
			return reCRC(b)
		})
	}
	corruptStream := func(c record.Compression) func() []byte {
		return func() []byte {
			b := batch(record.BuildOptions{Compression: c})
			for i := record.HeaderSize + 4; i < len(b)-4; i++ {
				b[i] ^= 0x5a
			}
			return reCRC(b)
		}
	}
	produceCode("corrupt gzip stream", -1, kerr.CorruptMessage.Code, corruptStream(record.CompressionGzip))
	produceCode("corrupt zstd stream", -1, kerr.CorruptMessage.Code, corruptStream(record.CompressionZstd))
	add("zstd decompression bomb", func(t *testing.T, c *rawConn) {
		b := make([]byte, record.HeaderSize, record.HeaderSize+len(bomb))
		b = append(b, bomb...)
		h := plain()
		copy(b, h[:record.HeaderSize])
		binary.BigEndian.PutUint32(b[record.OffsetBatchLength:], uint32(len(b)-record.LogOverhead))
		attrs := binary.BigEndian.Uint16(b[record.OffsetAttributes:])
		binary.BigEndian.PutUint16(b[record.OffsetAttributes:], attrs|uint16(record.CompressionZstd))
		reCRC(b)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got := rawProduce(t, c, -1, badTopic, 0, b)
		runtime.ReadMemStats(&after)
		if got != kerr.MessageTooLarge.Code {
			t.Fatalf("error code %d (%v), want MESSAGE_TOO_LARGE", got, kerr.ErrorForCode(got))
		}
		// Inflating it all would allocate 1 GiB; the cap is 64 MiB.
		d := after.TotalAlloc - before.TotalAlloc
		if d > 512<<20 {
			t.Fatalf("the bomb made the process allocate %d MiB", d>>20)
		}
		t.Logf("the bomb cost %d MiB of allocations", d>>20)
		stillServes(t, c)
	})
	produceCode("batch over message.max.bytes", -1, kerr.MessageTooLarge.Code, func() []byte {
		big := bytes.Repeat([]byte("x"), badMaxMessageBytes+1)
		return record.BuildBatch(record.BuildOptions{FirstTimestamp: time.Now().UnixMilli()},
			[]record.Record{{Key: []byte("raw"), Value: big}})
	})
	produceCode("two batches in one partition", -1, kerr.InvalidRecord.Code, func() []byte {
		return append(plain(), plain()...)
	})
	produceCode("null records", -1, kerr.InvalidRecord.Code, func() []byte { return nil })
	add("acks=0 corrupt batch closes the connection", func(t *testing.T, c *rawConn) {
		b := plain()
		b[len(b)-1] ^= 0xff
		c.send(produceRequest(0, badTopic, 0, b))
		c.expectClosed("acks=0 produce with a CRC mismatch")
	})
	add("idempotent sequence gap", func(t *testing.T, c *rawConn) {
		init := kmsg.NewPtrInitProducerIDRequest()
		init.Version = 4
		init.ProducerID, init.ProducerEpoch = -1, -1
		ir := c.roundTrip(init).(*kmsg.InitProducerIDResponse)
		if ir.ErrorCode != 0 || ir.ProducerID < 0 {
			t.Fatalf("InitProducerId: error %d, producer id %d", ir.ErrorCode, ir.ProducerID)
		}
		idem := func(seq int32) []byte {
			n++
			v := fmt.Sprintf("idem-%d-seq-%d", ir.ProducerID, seq)
			return record.BuildBatch(record.BuildOptions{Idempotent: true, ProducerID: ir.ProducerID,
				ProducerEpoch: ir.ProducerEpoch, BaseSequence: seq, FirstTimestamp: time.Now().UnixMilli()},
				[]record.Record{{Key: []byte("raw"), Value: []byte(v)}})
		}
		if got := rawProduce(t, c, -1, badTopic, 1, idem(0)); got != 0 {
			t.Fatalf("sequence 0: error code %d", got)
		}
		rawOK(fmt.Sprintf("idem-%d-seq-0", ir.ProducerID))
		if got := rawProduce(t, c, -1, badTopic, 1, idem(5)); got != kerr.OutOfOrderSequenceNumber.Code {
			t.Fatalf("sequence 5 after 0: error code %d (%v), want OUT_OF_ORDER_SEQUENCE_NUMBER", got, kerr.ErrorForCode(got))
		}
		stillServes(t, c)
	})

	// Admin and reads.
	add("create topics with invalid names", func(t *testing.T, c *rawConn) {
		names := []string{"", ".", "..", "a/b", strings.Repeat("t", 250)}
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 5
		req.TimeoutMillis = 10000
		for _, name := range names {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
			req.Topics = append(req.Topics, rt)
		}
		resp := c.roundTrip(req).(*kmsg.CreateTopicsResponse)
		if len(resp.Topics) != len(names) {
			t.Fatalf("%d answers for %d topics", len(resp.Topics), len(names))
		}
		for _, rt := range resp.Topics {
			if rt.ErrorCode != kerr.InvalidTopicException.Code {
				t.Errorf("topic %.20q: error code %d, want INVALID_TOPIC_EXCEPTION", rt.Topic, rt.ErrorCode)
			}
		}
	})
	add("create topic with an invalid config value", func(t *testing.T, c *rawConn) {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 5
		req.TimeoutMillis = 10000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "badinput-config", 1, 1
		rt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "retention.ms", Value: kmsg.StringPtr("soon")}}
		req.Topics = append(req.Topics, rt)
		resp := c.roundTrip(req).(*kmsg.CreateTopicsResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != kerr.InvalidConfig.Code {
			t.Fatalf("answer %+v, want INVALID_CONFIG", resp.Topics)
		}
	})
	fetchRequest := func() *kmsg.FetchRequest {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12
		req.ReplicaID = -1
		req.MaxBytes = 1 << 20
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = badTopic
		for p := range int32(badPartitions) {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.PartitionMaxBytes = p, 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		return req
	}
	// Kafka: only a broker of the partition's replica set may fetch as a
	// replica; Silkworm, a cluster of one, answers NOT_LEADER_OR_FOLLOWER.
	add("client fetch claiming replica id 5", func(t *testing.T, c *rawConn) {
		req := fetchRequest()
		req.ReplicaID = 5
		resp := c.roundTrip(req).(*kmsg.FetchResponse)
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != badPartitions {
			t.Fatalf("answer: error %d, topics %d", resp.ErrorCode, len(resp.Topics))
		}
		for _, rp := range resp.Topics[0].Partitions {
			if rp.ErrorCode != kerr.NotLeaderForPartition.Code || len(rp.RecordBatches) != 0 {
				t.Errorf("partition %d: error code %d with %d record bytes, want NOT_LEADER_OR_FOLLOWER and none",
					rp.Partition, rp.ErrorCode, len(rp.RecordBatches))
			}
		}
	})
	add("fetch with an unknown session id", func(t *testing.T, c *rawConn) {
		req := fetchRequest()
		req.SessionID, req.SessionEpoch = 12345, 1
		resp := c.roundTrip(req).(*kmsg.FetchResponse)
		if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
			t.Fatalf("error code %d, want FETCH_SESSION_ID_NOT_FOUND", resp.ErrorCode)
		}
	})
	add("list offsets of an unknown topic", func(t *testing.T, c *rawConn) {
		req := kmsg.NewPtrListOffsetsRequest()
		req.Version = 7
		req.ReplicaID = -1
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "no-such-topic"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = 0, -1
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := c.roundTrip(req).(*kmsg.ListOffsetsResponse)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 ||
			resp.Topics[0].Partitions[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
			t.Fatalf("answer %+v, want UNKNOWN_TOPIC_OR_PARTITION", resp.Topics)
		}
	})
	return cases
}

// produceRequest is a Produce v9 request for one partition.
func produceRequest(acks int16, topic string, partition int32, records []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = acks
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// rawProduce sends one partition's records and returns its error code.
func rawProduce(t *testing.T, c *rawConn, acks int16, topic string, partition int32, records []byte) int16 {
	t.Helper()
	resp := c.roundTrip(produceRequest(acks, topic, partition, records)).(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("produce answer has %d topics", len(resp.Topics))
	}
	sp := resp.Topics[0].Partitions[0]
	if sp.Partition != partition {
		t.Fatalf("produce answer for partition %d, want %d", sp.Partition, partition)
	}
	if sp.ErrorCode != 0 && sp.ErrorMessage != nil {
		t.Logf("error %d: %s", sp.ErrorCode, *sp.ErrorMessage)
	}
	return sp.ErrorCode
}

// stillServes checks that a per-partition error left the connection open.
func stillServes(t *testing.T, c *rawConn) {
	t.Helper()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	if resp := c.roundTrip(req).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 {
		t.Fatalf("ApiVersions on the same connection: error %d", resp.ErrorCode)
	}
}

// noBigAllocation runs fn and fails if the process allocated more than
// 64 MiB meanwhile (background traffic included): a frame or array size
// must never be trusted before the bytes are there.
func noBigAllocation(t *testing.T, fn func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<20 {
		t.Fatalf("allocated %d MiB while handling the input", d>>20)
	}
}

// zstdBomb is 1 GiB of zeros compressed with a streaming zstd encoder
// (a window the broker's decoder accepts), a few hundred KiB.
func zstdBomb(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatalf("zstd writer: %v", err)
	}
	zeros := make([]byte, 1<<20)
	for range 1024 {
		if _, err := enc.Write(zeros); err != nil {
			t.Fatalf("zstd write: %v", err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatalf("zstd close: %v", err)
	}
	if buf.Len()+record.HeaderSize > badMaxMessageBytes {
		t.Fatalf("bomb of %d bytes does not fit message.max.bytes", buf.Len())
	}
	return buf.Bytes()
}
