package broker

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/record"
)

// legacyMsg is one message of a legacy message set, unwrapped.
type legacyMsg struct {
	offset    int64
	timestamp int64
	attrs     byte
	key       []byte
	value     []byte
}

// parseLegacySet decodes a Fetch v0-v3 message set as an old client does:
// it checks each CRC and the magic, unwraps compressed wrappers and ignores
// a trailing partial message (reported by partial).
func parseLegacySet(t *testing.T, set []byte, magic int8) (msgs []legacyMsg, partial bool) {
	t.Helper()
	be := binary.BigEndian
	for pos := 0; pos < len(set); {
		if len(set)-pos < 12 {
			return msgs, true
		}
		size := int(be.Uint32(set[pos+8:]))
		if pos+12+size > len(set) {
			return msgs, true
		}
		m := set[pos : pos+12+size]
		pos += len(m)
		if crc32.ChecksumIEEE(m[record.LegacyOffsetMagic:]) != be.Uint32(m[record.LegacyOffsetCRC:]) {
			t.Fatalf("message at %d: bad crc", be.Uint64(m))
		}
		if int8(m[record.LegacyOffsetMagic]) != magic {
			t.Fatalf("message at %d: magic %d, want %d", be.Uint64(m), m[record.LegacyOffsetMagic], magic)
		}
		msg := legacyMsg{offset: int64(be.Uint64(m)), timestamp: -1, attrs: m[record.LegacyOffsetAttributes]}
		i := record.LegacyHeaderSizeV0
		if magic == record.MagicV1 {
			msg.timestamp = int64(be.Uint64(m[record.LegacyOffsetTimestamp:]))
			i = record.LegacyHeaderSizeV1
		}
		field := func() []byte {
			n := int32(be.Uint32(m[i:]))
			i += 4
			if n < 0 {
				return nil
			}
			i += int(n)
			return m[i-int(n) : i]
		}
		msg.key, msg.value = field(), field()
		codec := record.Compression(msg.attrs & record.LegacyAttrCompressionMask)
		if codec == record.CompressionNone {
			msgs = append(msgs, msg)
			continue
		}
		value := msg.value
		if codec == record.CompressionLZ4 && magic == record.MagicV0 {
			// Kafka's magic 0 lz4 header checksum: repair it for the decoder.
			value = bytes.Clone(value)
			value[6] = lz4DescriptorChecksum(value[4:6])
		}
		raw, err := record.Decompress(codec, value, 64<<20)
		if err != nil {
			t.Fatalf("wrapper at %d (%s): %v", msg.offset, codec, err)
		}
		inner, innerPartial := parseLegacySet(t, raw, magic)
		if innerPartial || len(inner) == 0 {
			t.Fatalf("wrapper at %d: %d inner messages, partial %v", msg.offset, len(inner), innerPartial)
		}
		shift := int64(0)
		if magic == record.MagicV1 {
			shift = msg.offset - inner[len(inner)-1].offset
		}
		for _, in := range inner {
			in.offset += shift
			msgs = append(msgs, in)
		}
	}
	return msgs, false
}

// lz4DescriptorChecksum is the standard lz4 frame header checksum of a
// two-byte descriptor, computed by compressing nothing with the same flags.
func lz4DescriptorChecksum(desc []byte) byte {
	frame, err := record.Compress(record.CompressionLZ4, nil, nil)
	if err != nil || !bytes.Equal(frame[4:6], desc) {
		panic(fmt.Sprintf("lz4 descriptor %x differs from the writer's %x (%v)", desc, frame[4:6], err))
	}
	return frame[6]
}

// legacyFetch sends one Fetch of version v for a partition on c and
// returns its partition answer.
func legacyFetch(t *testing.T, c *rawConn, v int16, topic string, offset int64, partMax int32) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(v)
	req.MaxWaitMillis = 0
	req.MinBytes = 1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = partMax
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.roundTrip(req).(*kmsg.FetchResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch v%d: %d topics in the answer", v, len(resp.Topics))
	}
	return resp.Topics[0].Partitions[0]
}

// legacyReadAll fetches a partition with version v from offset 0 up to
// end, checking each answer, and returns every message.
func legacyReadAll(t *testing.T, c *rawConn, v int16, topic string, end int64) []legacyMsg {
	t.Helper()
	magic := fetchLegacyMagic(v)
	var all []legacyMsg
	for off := int64(0); off < end; {
		p := legacyFetch(t, c, v, topic, off, 1<<20)
		if p.ErrorCode != 0 {
			t.Fatalf("fetch v%d at %d: %v", v, off, kerr.ErrorForCode(p.ErrorCode))
		}
		msgs, _ := parseLegacySet(t, p.RecordBatches, magic)
		if len(msgs) == 0 {
			break // up to the last stable offset
		}
		for _, m := range msgs {
			if m.offset >= off {
				all = append(all, m)
			}
		}
		off = msgs[len(msgs)-1].offset + 1
	}
	return all
}

func TestLegacyFetchEveryVersionAndCodec(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "old", 1, nil)
	// A modern idempotent producer writes headers, in every codec old
	// formats have and in none.
	var want []string
	for _, codec := range []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression()} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic("old"))
		if err != nil {
			t.Fatal(err)
		}
		var rs []*kgo.Record
		for i := range 20 {
			v := fmt.Sprintf("%d-%d", len(want)/20, i)
			want = append(want, v)
			rs = append(rs, &kgo.Record{Key: []byte("k"), Value: []byte(v), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
	c := dialRaw(t, tb.b.Addr()) // no ApiVersions first, as 0.9 clients
	for v := int16(0); v <= 3; v++ {
		msgs := legacyReadAll(t, c, v, "old", int64(len(want)))
		if len(msgs) != len(want) {
			t.Fatalf("fetch v%d: %d messages, want %d", v, len(msgs), len(want))
		}
		for i, m := range msgs {
			if m.offset != int64(i) || string(m.value) != want[i] || string(m.key) != "k" {
				t.Fatalf("fetch v%d: message %d is %d %q %q, want %d %q", v, i, m.offset, m.key, m.value, i, want[i])
			}
			if v >= 2 && m.timestamp <= 0 {
				t.Fatalf("fetch v%d: message %d has timestamp %d", v, i, m.timestamp)
			}
		}
	}
	// v4 still gets the stored v2 batches.
	p := legacyFetch(t, c, 4, "old", 0, 1<<20)
	if p.ErrorCode != 0 || len(p.RecordBatches) < record.HeaderSize || p.RecordBatches[record.OffsetMagic] != record.MagicV2 {
		t.Fatalf("fetch v4: error %d, %d bytes", p.ErrorCode, len(p.RecordBatches))
	}
}

func TestLegacyFetchTransactions(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "txn", 1, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.TransactionalID("legacy-txn"), kgo.DefaultProduceTopic("txn"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	txn := func(value string, commit bool) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "%s-%d", value, i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	txn("committed", true)
	txn("aborted", false)
	txn("again", true)

	// An open transaction is not served to old clients until it ends.
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, tb.b.Addr())
	for _, v := range []int16{1, 2} {
		var got []string
		for _, m := range legacyReadAll(t, c, v, "txn", 100) {
			got = append(got, string(m.value))
		}
		want := "[committed-0 committed-1 committed-2 again-0 again-1 again-2]"
		if fmt.Sprint(got) != want {
			t.Fatalf("fetch v%d: %v, want %v (no aborted, open or control records)", v, got, want)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the committed open transaction to be served", func() bool {
		msgs := legacyReadAll(t, c, 2, "txn", 100)
		return len(msgs) == 7 && string(msgs[6].value) == "open"
	})
}

func TestLegacyFetchRefusals(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	off := "false"
	tb.createTopic(ctx, "noconv", 1, map[string]*string{"message.downconversion.enable": &off})
	tb.createTopic(ctx, "zstd", 1, nil)
	tb.produce(ctx, "noconv", 0, 2)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.DefaultProduceTopic("zstd"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: bytes.Repeat([]byte("z"), 100)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, tb.b.Addr())
	for v := int16(0); v <= 3; v++ {
		if p := legacyFetch(t, c, v, "noconv", 0, 1<<20); p.ErrorCode != kerr.UnsupportedVersion.Code {
			t.Errorf("fetch v%d, down-conversion disabled: error %d, want UNSUPPORTED_VERSION", v, p.ErrorCode)
		}
		if p := legacyFetch(t, c, v, "zstd", 0, 1<<20); p.ErrorCode != kerr.UnsupportedCompressionType.Code {
			t.Errorf("fetch v%d of zstd: error %d, want UNSUPPORTED_COMPRESSION_TYPE", v, p.ErrorCode)
		}
	}
	if p := legacyFetch(t, c, 4, "noconv", 0, 1<<20); p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		t.Errorf("fetch v4, down-conversion disabled: error %d, %d bytes; want the batches", p.ErrorCode, len(p.RecordBatches))
	}
}

func TestLegacyFetchLimits(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "big", 1, nil)
	big := bytes.Repeat([]byte("b"), 10_000)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tb.b.Addr()), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.DefaultProduceTopic("big"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: big}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	c := dialRaw(t, tb.b.Addr())
	// v0-v2: a hard limit; the first message, larger, comes cut.
	for v := int16(0); v <= 2; v++ {
		p := legacyFetch(t, c, v, "big", 0, 1000)
		msgs, partial := parseLegacySet(t, p.RecordBatches, fetchLegacyMagic(v))
		if p.ErrorCode != 0 || len(p.RecordBatches) != 1000 || len(msgs) != 0 || !partial {
			t.Fatalf("fetch v%d, limit 1000: error %d, %d bytes, %d messages; want a 1000-byte partial message",
				v, p.ErrorCode, len(p.RecordBatches), len(msgs))
		}
	}
	// v3: the first message whole (KIP-74), and no more.
	p := legacyFetch(t, c, 3, "big", 0, 1000)
	msgs, _ := parseLegacySet(t, p.RecordBatches, record.MagicV1)
	if p.ErrorCode != 0 || len(msgs) != 1 || len(msgs[0].value) != len(big) {
		t.Fatalf("fetch v3, limit 1000: error %d, %d messages; want the first whole", p.ErrorCode, len(msgs))
	}
	// Within the limit, v0-v2 get whole messages and stop at the limit.
	p = legacyFetch(t, c, 2, "big", 0, 25_000)
	msgs, _ = parseLegacySet(t, p.RecordBatches, record.MagicV1)
	if len(msgs) != 2 || len(p.RecordBatches) > 25_000 {
		t.Fatalf("fetch v2, limit 25000: %d messages in %d bytes; want 2", len(msgs), len(p.RecordBatches))
	}
	// v0 answers carry no throttle time: the frame parsed above proves it.
}

func TestListOffsetsV0(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "lo", 1, nil)
	tb.produce(ctx, "lo", 0, 5)
	c := dialRaw(t, tb.b.Addr())
	ask := func(topic string, ts int64, maxNum int32) (int16, []int64) {
		req := kmsg.NewPtrListOffsetsRequest()
		req.SetVersion(0)
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp, rp.MaxNumOffsets = ts, maxNum
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := c.roundTrip(req).(*kmsg.ListOffsetsResponse)
		p := resp.Topics[0].Partitions[0]
		return p.ErrorCode, p.OldStyleOffsets
	}
	for _, tc := range []struct {
		ts     int64
		maxNum int32
		want   string
	}{
		{-1, 1, "[5]"},
		{-1, 10, "[5 0]"},
		{-2, 1, "[0]"},
		{-2, 0, "[]"},
		{1, 1, "[]"},              // every record is newer
		{1 << 62, 5, "[5 0]"},     // the future: as latest
		{-1 - (1 << 40), 5, "[]"}, // a negative timestamp: nothing before it
	} {
		code, offs := ask("lo", tc.ts, tc.maxNum)
		if code != 0 || fmt.Sprint(offs) != tc.want {
			t.Errorf("ListOffsets v0 (%d, max %d): error %d, %v; want %s", tc.ts, tc.maxNum, code, offs, tc.want)
		}
	}
	// A timestamp after every record but before now: the log start.
	waitFor(t, "ListOffsets v0 just before now to answer the log start", func() bool {
		_, offs := ask("lo", timeNowMillis()-1, 3)
		return fmt.Sprint(offs) == "[0]"
	})

	// One batch per segment: every segment's base offset, newest first,
	// after the log end (the high watermark).
	small := "100"
	tb.createTopic(ctx, "segs", 1, map[string]*string{"segment.bytes": &small})
	tb.produce(ctx, "segs", 0, 4)
	for _, tc := range []struct {
		ts     int64
		maxNum int32
		want   string
	}{
		{-1, 10, "[4 3 2 1 0]"},
		{-1, 2, "[4 3]"},
		{-2, 10, "[0]"},
		{1 << 62, 3, "[4 3 2]"},
	} {
		code, offs := ask("segs", tc.ts, tc.maxNum)
		if code != 0 || fmt.Sprint(offs) != tc.want {
			t.Errorf("ListOffsets v0 on 4 segments (%d, max %d): error %d, %v; want %s", tc.ts, tc.maxNum, code, offs, tc.want)
		}
	}
}

func timeNowMillis() int64 { return time.Now().UnixMilli() }

// TestLegacyFetchMemoryBounded down-converts a backlog with Fetch v2 (a
// 0.10 consumer) and checks the broker's heap does not grow with it.
// SILKWORM_LEGACY_BACKLOG_MB sets the backlog (default 64 MiB, twice the
// allowed growth, to keep CI short; 1024 for the
// 1 GiB case by hand).
func TestLegacyFetchMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large backlog")
	}
	backlogMB := 64
	if s := os.Getenv("SILKWORM_LEGACY_BACKLOG_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		backlogMB = n
	}
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "backlog", 1, nil)
	batches := legacyBacklog(t, tb, "backlog", backlogMB)

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	c := dialRaw(t, tb.b.Addr())
	var n int64
	for off := int64(0); off < batches*legacyBacklogRecords; {
		p := legacyFetch(t, c, 2, "backlog", off, 1<<20)
		// The records are uncompressed: walk the entries' offsets only.
		var count int64
		last := int64(-1)
		for pos := 0; pos+12 <= len(p.RecordBatches); {
			size := int(binary.BigEndian.Uint32(p.RecordBatches[pos+8:]))
			if pos+12+size > len(p.RecordBatches) {
				break
			}
			last = int64(binary.BigEndian.Uint64(p.RecordBatches[pos:]))
			count++
			pos += 12 + size
		}
		if p.ErrorCode != 0 || count == 0 || last != off+count-1 {
			t.Fatalf("fetch v2 at %d: error %d, %d messages up to %d", off, p.ErrorCode, count, last)
		}
		n += count
		off = last + 1
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	if n != batches*legacyBacklogRecords {
		t.Fatalf("read %d messages, want %d", n, batches*legacyBacklogRecords)
	}
	growth := int64(peak) - int64(base)
	t.Logf("backlog %d MiB: heap in use %d MiB before, peak %d MiB", backlogMB, base>>20, peak>>20)
	if growth > 32<<20 {
		t.Fatalf("heap grew by %d MiB reading a %d MiB backlog: the conversion is not bounded", growth>>20, backlogMB)
	}
}

const legacyBacklogRecords = 1000 // 1 KiB records per 1 MB batch

// legacyBacklog appends about mb MiB of uncompressed 1 KiB records to
// partition 0 of topic, one raw Produce of a ~1 MiB batch at a time, and
// returns the number of batches.
func legacyBacklog(t *testing.T, tb *testBroker, topic string, mb int) int64 {
	t.Helper()
	c := dialRaw(t, tb.b.Addr())
	recs := make([]record.Record, legacyBacklogRecords)
	for i := range recs {
		recs[i] = record.Record{Value: bytes.Repeat([]byte{byte('a' + i%26)}, 1024)}
	}
	batch := record.BuildBatch(record.BuildOptions{FirstTimestamp: timeNowMillis()}, recs)
	n := int64(mb) << 20 / int64(len(batch))
	for range n {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(7)
		req.Acks = 1
		req.TimeoutMillis = 30_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := c.roundTrip(req).(*kmsg.ProduceResponse)
		if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("produce backlog: %v", kerr.ErrorForCode(code))
		}
	}
	return n
}

// BenchmarkLegacyFetch1KiB compares a v2-native fetch (v11, sendfile) with
// down-converted fetches (v2: magic 1, v0: magic 0) of 1 KiB records,
// uncompressed and lz4, in 1 MiB fetches over loopback, wrapping at the
// high watermark. MB/s counts record values delivered; cpu-ms/MB is the
// process's CPU time (broker and this client) per MB of values.
func BenchmarkLegacyFetch1KiB(b *testing.B) {
	for _, codec := range []record.Compression{record.CompressionNone, record.CompressionLZ4} {
		for _, v := range []int16{11, 2, 0} {
			b.Run(fmt.Sprintf("%s/v%d", codec, v), func(b *testing.B) {
				brk, p := startBenchBroker(b)
				// Values half random letters, half text: lz4 halves them
				// or so, as with real payloads.
				rng := rand.New(rand.NewPCG(1, 2))
				recs := make([]record.Record, 64)
				for i := range recs {
					value := make([]byte, 1024)
					for j := range value {
						if j < 512 {
							value[j] = byte('a' + rng.IntN(26))
						} else {
							value[j] = "the quick brown fox jumps over the lazy dog "[j%44]
						}
					}
					recs[i] = record.Record{TimestampDelta: int64(i), Value: value}
				}
				batch := record.BuildBatch(record.BuildOptions{FirstTimestamp: timeNowMillis(), Compression: codec}, recs)
				for p.HighWatermark() < 32<<10 { // 32 MiB of values
					if _, err := p.AppendAsLeader(append([]byte(nil), batch...), 0); err != nil {
						b.Fatal(err)
					}
				}
				hw := p.HighWatermark()
				rc := benchDial(b, brk.Addr())
				resp := kmsg.NewPtrFetchResponse()
				resp.Version = v
				var records, offset int64
				cpu0 := benchCPUTime(b)
				b.ResetTimer()
				for b.Loop() {
					rc.send(legacyBenchFrame(v, offset))
					rc.recv(resp, false)
					fp := resp.Topics[0].Partitions[0]
					if fp.ErrorCode != 0 {
						b.Fatalf("fetch v%d at %d: error %d", v, offset, fp.ErrorCode)
					}
					var n, next int64
					if v >= 4 {
						n, next = benchCountBatches(b, fp.RecordBatches)
					} else {
						n, next = legacyBenchCount(fp.RecordBatches)
					}
					if n == 0 {
						b.Fatalf("fetch v%d at %d: no records", v, offset)
					}
					records += n
					if offset = next; offset >= hw {
						offset = 0
					}
				}
				b.StopTimer()
				mb := float64(records*1024) / 1e6
				b.ReportMetric(mb/b.Elapsed().Seconds(), "MB/s")
				b.ReportMetric(float64((benchCPUTime(b)-cpu0).Milliseconds())/mb, "cpu-ms/MB")
			})
		}
	}
}

// legacyBenchFrame is a Fetch of version v for 1 MiB of the bench topic.
func legacyBenchFrame(v int16, offset int64) []byte {
	req := kmsg.NewPtrFetchRequest()
	req.Version = v
	req.MinBytes = 1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = benchTopic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench")).AppendRequest(nil, req, 0)
}

// legacyBenchCount counts the records of a legacy message set as an old
// client learns them (the inner messages of a magic 1 wrapper are as many
// as the wrapper offset minus the previous one, since no record is
// missing here) and returns the offset after the last.
func legacyBenchCount(set []byte) (n, next int64) {
	last := int64(-1)
	for pos := 0; pos+12 <= len(set); {
		size := int(binary.BigEndian.Uint32(set[pos+8:]))
		if pos+12+size > len(set) {
			break
		}
		off := int64(binary.BigEndian.Uint64(set[pos:]))
		switch {
		case set[pos+record.LegacyOffsetAttributes]&record.LegacyAttrCompressionMask == 0:
			n++
		case last < 0:
			n += 64 // the first wrapper: one 64-record batch
		default:
			n += off - last
		}
		last = off
		pos += 12 + size
	}
	return n, last + 1
}
