package broker

// Produce v0-v2 from clients before Kafka 0.11: hand-built message sets of
// magic 0 and 1 sent on a raw socket (with no ApiVersions first, as those
// clients do), then read back by a modern franz-go consumer; and sarama
// configured as a 0.8.2 and a 0.10.0 client, end to end.

import (
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
	"github.com/silkworm/silkworm/internal/wire"
)

// upProduce sends one Produce request of the given version carrying
// records for partition 0 of topic, and returns the partition's answer.
// acks=0 gets no answer: the zero value is returned.
func upProduce(t *testing.T, c *rawConn, version, acks int16, topic string, records []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = version, acks, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = 0, records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	if acks == 0 {
		c.send(req)
		return kmsg.ProduceResponseTopicPartition{}
	}
	resp := c.roundTrip(req).(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("Produce v%d answer: %d topics", version, len(resp.Topics))
	}
	sp := resp.Topics[0].Partitions[0]
	if sp.ErrorCode != 0 && sp.ErrorMessage != nil {
		t.Logf("Produce v%d: error %d: %s", version, sp.ErrorCode, *sp.ErrorMessage)
	}
	return sp
}

// upConsume reads exactly n records of partition 0 of topic from the start
// with a franz-go consumer (which asks for Fetch v2-era formats no more).
func upConsume(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testCtx(t)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: read %d of %d records: %v", topic, len(out), n, ctx.Err())
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("%s: fetch: %v", topic, err) })
		out = append(out, fs.Records()...)
	}
	if len(out) != n {
		t.Fatalf("%s: %d records, want %d", topic, len(out), n)
	}
	return out
}

// upWant is a record expected in a partition.
type upWant struct {
	offset     int64
	key, value []byte // nil = null
	timestamp  int64
}

// upExpect lists the records a legacy set should become, from offset base:
// magic 0 messages have no timestamp (-1).
func upExpect(base int64, magic int8, msgs []record.LegacyMessage) []upWant {
	out := make([]upWant, len(msgs))
	for i, m := range msgs {
		ts := m.Timestamp
		if magic == record.MagicV0 {
			ts = -1
		}
		out[i] = upWant{base + int64(i), m.Key, m.Value, ts}
	}
	return out
}

// upCheckRecords compares what a consumer read with what was produced.
func upCheckRecords(t *testing.T, got []*kgo.Record, want []upWant) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		w := want[i]
		if r.Offset != w.offset || !upSame(r.Key, w.key) || !upSame(r.Value, w.value) || r.Timestamp.UnixMilli() != w.timestamp {
			t.Fatalf("record %d: offset %d key %q value %q timestamp %d; want offset %d key %q value %q timestamp %d",
				i, r.Offset, r.Key, r.Value, r.Timestamp.UnixMilli(), w.offset, w.key, w.value, w.timestamp)
		}
		if len(r.Headers) != 0 {
			t.Fatalf("record %d has headers %v", i, r.Headers)
		}
	}
}

// upSame compares bytes telling null (nil) from empty.
func upSame(a, b []byte) bool { return (a == nil) == (b == nil) && string(a) == string(b) }

// upMsgs returns n messages with keys, values and timestamps from ts; the
// first has a null key, the second an empty value.
func upMsgs(tag string, n int, ts int64) []record.LegacyMessage {
	msgs := make([]record.LegacyMessage, n)
	for i := range msgs {
		msgs[i] = record.LegacyMessage{Offset: int64(i), Timestamp: ts + int64(i),
			Key: fmt.Appendf(nil, "%s-key-%d", tag, i), Value: fmt.Appendf(nil, "%s-value-%d", tag, i)}
	}
	msgs[0].Key = nil
	if n > 1 {
		msgs[1].Value = []byte{}
	}
	return msgs
}

func TestLegacyProduce(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	const topic = "legacy-create"
	tb.createTopic(ctx, topic, 1, nil)
	// The first request on this connection is a Produce v0, as a 0.8/0.9
	// client sends it: nothing asks for ApiVersions first.
	c := dialRaw(t, tb.b.Addr())
	ts := time.Now().Add(-time.Minute).UnixMilli()

	var want []upWant
	next := int64(0)
	for _, tc := range []struct {
		name    string
		version int16
		magic   int8
		codec   record.Compression
		xerial  bool
		n       int
	}{
		{"v0 magic 0 uncompressed", 0, 0, record.CompressionNone, false, 3},
		{"v0 magic 0 gzip", 0, 0, record.CompressionGzip, false, 3},
		{"v0 magic 0 snappy (xerial)", 0, 0, record.CompressionSnappy, true, 2},
		{"v0 magic 0 lz4 (old header checksum)", 0, 0, record.CompressionLZ4, false, 3},
		{"v1 magic 0 snappy (raw)", 1, 0, record.CompressionSnappy, false, 2},
		{"v2 magic 1 uncompressed", 2, 1, record.CompressionNone, false, 3},
		{"v2 magic 1 gzip", 2, 1, record.CompressionGzip, false, 3},
		{"v2 magic 1 snappy (xerial)", 2, 1, record.CompressionSnappy, true, 2},
		{"v2 magic 1 lz4", 2, 1, record.CompressionLZ4, false, 4},
		{"v2 magic 0 (an old format in v2)", 2, 0, record.CompressionNone, false, 1},
	} {
		msgs := upMsgs(strconv.Itoa(int(next)), tc.n, ts+next)
		set := record.BuildMessageSet(record.MessageSetOptions{Magic: tc.magic, Compression: tc.codec, XerialSnappy: tc.xerial}, msgs)
		sp := upProduce(t, c, tc.version, -1, topic, set)
		if sp.ErrorCode != 0 || sp.BaseOffset != next {
			t.Fatalf("%s: error %v, base offset %d, want none and %d", tc.name, kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset, next)
		}
		if tc.version == 2 && sp.LogAppendTime != -1 {
			t.Fatalf("%s: log append time %d on a CreateTime topic", tc.name, sp.LogAppendTime)
		}
		want = append(want, upExpect(next, tc.magic, msgs)...)
		next += int64(tc.n)
	}

	// A v2 batch in Produce v1 (Kafka does not tie the magic to v0-v2).
	v2recs := []record.Record{{Key: []byte("v2-key"), Value: []byte("v2-value")}}
	if sp := upProduce(t, c, 1, -1, topic, record.BuildBatch(record.BuildOptions{FirstTimestamp: ts}, v2recs)); sp.ErrorCode != 0 || sp.BaseOffset != next {
		t.Fatalf("v2 batch in Produce v1: error %v, base offset %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}
	want = append(want, upWant{next, []byte("v2-key"), []byte("v2-value"), ts})
	next++

	// Refusals: nothing is appended and the connection keeps serving.
	refused := func(name string, version int16, set []byte, code int16) {
		t.Helper()
		if sp := upProduce(t, c, version, -1, topic, set); sp.ErrorCode != code || sp.BaseOffset != -1 {
			t.Fatalf("%s: error %v, base offset %d; want %v", name, kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset, kerr.ErrorForCode(code))
		}
		stillServes(t, c)
	}
	corrupt := record.BuildMessageSet(record.MessageSetOptions{}, upMsgs("bad", 2, 0))
	corrupt[len(corrupt)-1] ^= 0xff
	refused("crc mismatch", 0, corrupt, kerr.CorruptMessage.Code)
	// Kafka's legacy record iterator refuses a zstd wrapper with
	// InvalidRecordException: INVALID_RECORD, not UNSUPPORTED_COMPRESSION_TYPE.
	zstdSet := record.BuildMessageSet(record.MessageSetOptions{Magic: 1, Compression: record.CompressionZstd}, upMsgs("zstd", 2, ts))
	refused("zstd in a magic 1 set", 2, zstdSet, kerr.InvalidRecord.Code)
	// Kafka 2.8 and 3.x refuse a legacy set in Produce v3+
	// (ProduceRequest.validateRecords): only v0-v2 carry them.
	refused("magic 1 set in Produce v3", 3, record.BuildMessageSet(record.MessageSetOptions{Magic: 1}, upMsgs("v3", 2, ts)), kerr.InvalidRecord.Code)
	two := append(record.BuildMessageSet(record.MessageSetOptions{Magic: 1, Compression: record.CompressionGzip}, upMsgs("w1", 2, ts)),
		record.BuildMessageSet(record.MessageSetOptions{Magic: 1, Compression: record.CompressionGzip}, upMsgs("w2", 2, ts))...)
	refused("two wrappers", 2, two, kerr.InvalidRecord.Code)

	// No records: nothing appended, no error, base offset -1 (Kafka).
	if sp := upProduce(t, c, 2, -1, topic, nil); sp.ErrorCode != 0 || sp.BaseOffset != -1 {
		t.Fatalf("empty Produce v2: error %v, base offset %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
	}

	// acks=0 gets no answer; the next request still is.
	msgs := upMsgs("acks0", 2, ts)
	upProduce(t, c, 0, 0, topic, record.BuildMessageSet(record.MessageSetOptions{Compression: record.CompressionGzip}, msgs))
	stillServes(t, c)
	want = append(want, upExpect(next, 0, msgs)...)
	next += 2
	msgs = upMsgs("last", 1, ts)
	if sp := upProduce(t, c, 0, 1, topic, record.BuildMessageSet(record.MessageSetOptions{}, msgs)); sp.ErrorCode != 0 || sp.BaseOffset != next {
		t.Fatalf("produce after the refusals: error %v, base offset %d, want %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset, next)
	}
	want = append(want, upExpect(next, 0, msgs)...)

	upCheckRecords(t, upConsume(t, tb.b.Addr(), topic, len(want)), want)
}

func TestLegacyProduceTopicConfigs(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	c := dialRaw(t, tb.b.Addr())
	now := time.Now().UnixMilli()

	t.Run("LogAppendTime", func(t *testing.T) {
		const topic = "legacy-append"
		tb.createTopic(ctx, topic, 1, map[string]*string{"message.timestamp.type": kmsg.StringPtr("LogAppendTime")})
		before := time.Now().UnixMilli()
		msgs := upMsgs("lat", 3, 1000)
		sp := upProduce(t, c, 2, -1, topic, record.BuildMessageSet(record.MessageSetOptions{Magic: 1, Compression: record.CompressionLZ4}, msgs))
		after := time.Now().UnixMilli()
		if sp.ErrorCode != 0 || sp.BaseOffset != 0 || sp.LogAppendTime < before || sp.LogAppendTime > after {
			t.Fatalf("error %v, base offset %d, log append time %d not in [%d, %d]", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset, sp.LogAppendTime, before, after)
		}
		m0 := upMsgs("lat0", 1, 0)
		sp0 := upProduce(t, c, 0, -1, topic, record.BuildMessageSet(record.MessageSetOptions{}, m0))
		if sp0.ErrorCode != 0 || sp0.BaseOffset != 3 {
			t.Fatalf("magic 0: error %v, base offset %d", kerr.ErrorForCode(sp0.ErrorCode), sp0.BaseOffset)
		}
		// A producer may not claim LogAppendTime (Kafka: INVALID_TIMESTAMP).
		claim := record.BuildMessageSet(record.MessageSetOptions{Magic: 1}, []record.LegacyMessage{{Timestamp: now, Value: []byte("v"), LogAppendTime: true}})
		if sp := upProduce(t, c, 2, -1, topic, claim); sp.ErrorCode != kerr.InvalidTimestamp.Code {
			t.Fatalf("LogAppendTime message: error %v, want INVALID_TIMESTAMP", kerr.ErrorForCode(sp.ErrorCode))
		}
		got := upConsume(t, tb.b.Addr(), topic, 4)
		for i, r := range got {
			if r.Attrs.TimestampType() != 1 || r.Offset != int64(i) {
				t.Fatalf("record %d: offset %d timestamp type %d, want LogAppendTime", i, r.Offset, r.Attrs.TimestampType())
			}
			if i < 3 && (r.Timestamp.UnixMilli() != sp.LogAppendTime || !upSame(r.Value, msgs[i].Value)) {
				t.Fatalf("record %d: timestamp %d value %q, want %d %q", i, r.Timestamp.UnixMilli(), r.Value, sp.LogAppendTime, msgs[i].Value)
			}
		}
	})

	t.Run("compression.type", func(t *testing.T) {
		const topic = "legacy-lz4"
		tb.createTopic(ctx, topic, 1, map[string]*string{"compression.type": kmsg.StringPtr("lz4")})
		var want []upWant
		for i, set := range [][]record.LegacyMessage{upMsgs("a", 3, now), upMsgs("b", 2, now)} {
			codec := []record.Compression{record.CompressionGzip, record.CompressionNone}[i]
			sp := upProduce(t, c, 2, -1, topic, record.BuildMessageSet(record.MessageSetOptions{Magic: 1, Compression: codec}, set))
			if sp.ErrorCode != 0 {
				t.Fatalf("produce: %v", kerr.ErrorForCode(sp.ErrorCode))
			}
			want = append(want, upExpect(sp.BaseOffset, 1, set)...)
		}
		for _, h := range upStoredBatches(t, c, topic) {
			if h.Compression() != record.CompressionLZ4 {
				t.Fatalf("stored batch at %d is %v, the topic says lz4", h.BaseOffset, h.Compression())
			}
		}
		upCheckRecords(t, upConsume(t, tb.b.Addr(), topic, len(want)), want)
	})

	t.Run("producer codec kept", func(t *testing.T) {
		const topic = "legacy-producer-codec"
		tb.createTopic(ctx, topic, 1, nil) // compression.type=producer
		set := record.BuildMessageSet(record.MessageSetOptions{Magic: 0, Compression: record.CompressionSnappy, XerialSnappy: true}, upMsgs("s", 3, 0))
		if sp := upProduce(t, c, 0, -1, topic, set); sp.ErrorCode != 0 {
			t.Fatalf("produce: %v", kerr.ErrorForCode(sp.ErrorCode))
		}
		hs := upStoredBatches(t, c, topic)
		if len(hs) != 1 || hs[0].Compression() != record.CompressionSnappy || hs[0].RecordCount != 3 || hs[0].ProducerID != -1 {
			t.Fatalf("stored batches %+v, want one snappy batch of 3 records from a plain producer", hs)
		}
	})

	t.Run("compacted and max.message.bytes", func(t *testing.T) {
		const topic = "legacy-compacted"
		tb.createTopic(ctx, topic, 1, map[string]*string{
			"cleanup.policy":    kmsg.StringPtr("compact"),
			"max.message.bytes": kmsg.StringPtr("1000"),
		})
		keyless := upMsgs("nokey", 2, now) // the first has a null key
		if sp := upProduce(t, c, 0, -1, topic, record.BuildMessageSet(record.MessageSetOptions{Compression: record.CompressionGzip}, keyless)); sp.ErrorCode != kerr.InvalidRecord.Code {
			t.Fatalf("keyless message to a compacted topic: %v, want INVALID_RECORD", kerr.ErrorForCode(sp.ErrorCode))
		}
		big := []record.LegacyMessage{{Key: []byte("k"), Value: make([]byte, 2000)}}
		if sp := upProduce(t, c, 2, -1, topic, record.BuildMessageSet(record.MessageSetOptions{Magic: 1}, big)); sp.ErrorCode != kerr.MessageTooLarge.Code {
			t.Fatalf("2000-byte message, max.message.bytes 1000: %v, want MESSAGE_TOO_LARGE", kerr.ErrorForCode(sp.ErrorCode))
		}
		keyed := upMsgs("keyed", 3, now)
		keyed[0].Key = []byte("k0")
		sp := upProduce(t, c, 1, -1, topic, record.BuildMessageSet(record.MessageSetOptions{Compression: record.CompressionSnappy}, keyed))
		if sp.ErrorCode != 0 || sp.BaseOffset != 0 {
			t.Fatalf("keyed messages: error %v, base offset %d", kerr.ErrorForCode(sp.ErrorCode), sp.BaseOffset)
		}
		upCheckRecords(t, upConsume(t, tb.b.Addr(), topic, 3), upExpect(0, 0, keyed))
	})

	t.Run("timestamp window", func(t *testing.T) {
		const topic = "legacy-window"
		tb.createTopic(ctx, topic, 1, map[string]*string{"message.timestamp.difference.max.ms": kmsg.StringPtr("3600000")})
		old := upMsgs("old", 2, time.Now().Add(-2*time.Hour).UnixMilli())
		if sp := upProduce(t, c, 2, -1, topic, record.BuildMessageSet(record.MessageSetOptions{Magic: 1}, old)); sp.ErrorCode != kerr.InvalidTimestamp.Code {
			t.Fatalf("two hours old with difference.max.ms one hour: %v, want INVALID_TIMESTAMP", kerr.ErrorForCode(sp.ErrorCode))
		}
		// Magic 0 has no timestamp to check.
		if sp := upProduce(t, c, 0, -1, topic, record.BuildMessageSet(record.MessageSetOptions{}, old)); sp.ErrorCode != 0 {
			t.Fatalf("magic 0: %v", kerr.ErrorForCode(sp.ErrorCode))
		}
		fresh := upMsgs("fresh", 2, time.Now().UnixMilli())
		if sp := upProduce(t, c, 2, -1, topic, record.BuildMessageSet(record.MessageSetOptions{Magic: 1, Compression: record.CompressionGzip}, fresh)); sp.ErrorCode != 0 {
			t.Fatalf("fresh timestamps: %v", kerr.ErrorForCode(sp.ErrorCode))
		}
	})
}

// upStoredBatches returns the headers of the batches stored in partition 0
// of topic, read by a Fetch v11 from offset 0.
func upStoredBatches(t *testing.T, c *rawConn, topic string) []record.Header {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MaxBytes, req.ReplicaID = 11, 0, 1<<20, -1
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.PartitionMaxBytes = 0, 1<<20
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	resp := c.roundTrip(req).(*kmsg.FetchResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch %s: %+v", topic, resp.Topics)
	}
	var out []record.Header
	for b := resp.Topics[0].Partitions[0].RecordBatches; len(b) > 0; {
		h, err := record.ParseHeader(b)
		if err != nil {
			t.Fatalf("stored batch: %v", err)
		}
		out = append(out, h)
		b = b[int(h.BatchLength)+record.LogOverhead:]
	}
	return out
}

// TestLegacyProduceSarama runs sarama as a 0.8.2 client (Produce v0,
// magic 0) and a 0.10.0 client (Produce v2, magic 1) with each codec that
// version allows, against a real broker, and reads back with franz-go.
func TestLegacyProduceSarama(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for _, tc := range []struct {
		version sarama.KafkaVersion
		codec   sarama.CompressionCodec
	}{
		{sarama.V0_8_2_0, sarama.CompressionNone},
		{sarama.V0_8_2_0, sarama.CompressionGZIP},
		{sarama.V0_8_2_0, sarama.CompressionSnappy},
		{sarama.V0_10_0_0, sarama.CompressionNone},
		{sarama.V0_10_0_0, sarama.CompressionSnappy},
		{sarama.V0_10_0_0, sarama.CompressionLZ4},
	} {
		name := fmt.Sprintf("%s-%s", tc.version, tc.codec)
		t.Run(name, func(t *testing.T) {
			topic := "sarama-" + name
			tb.createTopic(ctx, topic, 1, nil)
			cfg := sarama.NewConfig()
			cfg.Version = tc.version
			cfg.Producer.Compression = tc.codec
			cfg.Producer.RequiredAcks = sarama.WaitForAll
			cfg.Producer.Return.Successes = true
			cfg.Producer.Partitioner = sarama.NewManualPartitioner
			cfg.Metadata.Retry.Backoff = 10 * time.Millisecond
			p, err := sarama.NewSyncProducer([]string{tb.b.Addr()}, cfg)
			if err != nil {
				t.Fatalf("sarama producer: %v", err)
			}
			defer func() {
				if err := p.Close(); err != nil {
					t.Errorf("close sarama producer: %v", err)
				}
			}()
			const n = 20
			msgs := make([]*sarama.ProducerMessage, n)
			want := make([]upWant, n)
			for i := range msgs {
				ts := base.Add(time.Duration(i) * time.Millisecond)
				key, value := fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "%s value %d", name, i)
				msgs[i] = &sarama.ProducerMessage{Topic: topic, Partition: 0, Key: sarama.ByteEncoder(key), Value: sarama.ByteEncoder(value), Timestamp: ts}
				want[i] = upWant{int64(i), key, value, -1}
				if tc.version.IsAtLeast(sarama.V0_10_0_0) {
					want[i].timestamp = ts.UnixMilli()
				}
			}
			if err := p.SendMessages(msgs); err != nil {
				var perrs sarama.ProducerErrors
				if errors.As(err, &perrs) && len(perrs) > 0 {
					err = perrs[0].Err
				}
				t.Fatalf("send: %v", err)
			}
			for i, m := range msgs {
				if m.Offset != int64(i) {
					t.Fatalf("message %d acknowledged at offset %d", i, m.Offset)
				}
			}
			upCheckRecords(t, upConsume(t, tb.b.Addr(), topic, n), want)
		})
	}
}

// BenchmarkLegacyProduce100B is BenchmarkProduce100B/Handler for old
// producers: the same records (as many 100-byte values as fill a 16 KiB
// v2 batch) sent as a legacy message set, so each request pays the
// validation and conversion to v2 before the append. Compare its
// cpu-ns/record with BenchmarkProduce100B/Handler.
func BenchmarkLegacyProduce100B(b *testing.B) {
	for _, tc := range []struct {
		name    string
		version int16
		magic   int8
		codec   record.Compression
	}{
		{"v0-magic0", 0, record.MagicV0, record.CompressionNone},
		{"v2-magic1", 2, record.MagicV1, record.CompressionNone},
		{"v2-magic1-lz4", 2, record.MagicV1, record.CompressionLZ4},
	} {
		b.Run(tc.name, func(b *testing.B) {
			brk, _ := startBenchBroker(b)
			_, n := benchBatch(100)
			value := make([]byte, 100)
			for i := range value {
				value[i] = byte('a' + i%26)
			}
			msgs := make([]record.LegacyMessage, n)
			now := time.Now().UnixMilli()
			for i := range msgs {
				msgs[i] = record.LegacyMessage{Offset: int64(i), Timestamp: now + int64(i), Value: value}
			}
			set := record.BuildMessageSet(record.MessageSetOptions{Magic: tc.magic, Compression: tc.codec}, msgs)
			req := kmsg.NewPtrProduceRequest()
			req.Version, req.Acks, req.TimeoutMillis = tc.version, 1, 30_000
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = benchTopic
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Records = set
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 0)[4:]
			c := &conn{out: make(chan *wire.Response, 1), done: make(chan struct{})}
			b.SetBytes(int64(len(set)))
			b.ReportAllocs()
			cpu0 := benchCPUTime(b)
			b.ResetTimer()
			for b.Loop() {
				kreq := kmsg.NewPtrProduceRequest()
				hdr, err := wire.ParseRequest(frame, kreq)
				if err != nil {
					b.Fatal(err)
				}
				brk.handle(&request{c: c, hdr: hdr, kreq: kreq, handled: make(chan struct{}), received: time.Now()})
				if out := <-c.out; out.Size() == 0 {
					b.Fatal("empty response")
				}
			}
			b.StopTimer()
			benchReport(b, int64(b.N)*int64(n), cpu0)
		})
	}
}
