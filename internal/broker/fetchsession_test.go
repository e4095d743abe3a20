package broker

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/wire"
)

// sessionFetch builds a Fetch request at version v that answers at once.
// parts maps partition to fetch offset; forget lists partitions to forget.
func sessionFetch(v int16, topic string, id [16]byte, sessionID, epoch int32, parts map[int32]int64, forget ...int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(v)
	req.ReplicaID = -1
	req.ReplicaState.ID = -1
	req.MaxWaitMillis = 0
	req.MaxBytes = 1 << 20
	req.SessionID, req.SessionEpoch = sessionID, epoch
	if len(parts) > 0 {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, id
		for _, p := range slices.Sorted(func(yield func(int32) bool) {
			for p := range parts {
				if !yield(p) {
					return
				}
			}
		}) {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, parts[p], 1<<20
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	if len(forget) > 0 {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.TopicID, ft.Partitions = topic, id, forget
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
	return req
}

// answered returns, per partition in the response, whether it carried
// records and its error code.
func answered(resp *kmsg.FetchResponse) map[int32]string {
	out := map[int32]string{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			s := "empty"
			if len(p.RecordBatches) > 0 {
				s = "records"
			}
			if p.ErrorCode != 0 {
				s = kerr.ErrorForCode(p.ErrorCode).Error()
			}
			out[p.Partition] = s
		}
	}
	return out
}

func TestFetchSessionEveryIDAndEpoch(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "s", 3, nil)
	for p := int32(0); p < 3; p++ {
		tb.produce(ctx, "s", p, 2)
	}
	id := tb.b.topic("s").id
	c := dialRaw(t, tb.b.Addr())
	fetch := func(req *kmsg.FetchRequest) *kmsg.FetchResponse {
		t.Helper()
		return c.roundTrip(req).(*kmsg.FetchResponse)
	}
	expect := func(what string, resp *kmsg.FetchResponse, code int16, session bool, parts map[int32]string) {
		t.Helper()
		if resp.ErrorCode != code {
			t.Fatalf("%s: error %v, want %v", what, kerr.ErrorForCode(resp.ErrorCode), kerr.ErrorForCode(code))
		}
		if session != (resp.SessionID != 0) {
			t.Fatalf("%s: session id %d, want a session: %v", what, resp.SessionID, session)
		}
		if got := answered(resp); fmt.Sprint(got) != fmt.Sprint(parts) {
			t.Fatalf("%s: partitions %v, want %v", what, got, parts)
		}
	}
	all := map[int32]int64{0: 0, 1: 0, 2: 0}
	allRecords := map[int32]string{0: "records", 1: "records", 2: "records"}

	// (0, 0): a full fetch that creates a session.
	full := fetch(sessionFetch(16, "", id, 0, 0, all))
	expect("(0, 0)", full, 0, true, allRecords)
	sid := full.SessionID

	// (N, 1) with nothing new: no partition to report.
	expect("(N, 1) caught up", fetch(sessionFetch(16, "", id, sid, 1, map[int32]int64{0: 2, 1: 2, 2: 2})), 0, true, map[int32]string{})
	if r := fetch(sessionFetch(16, "", id, sid, 2, nil)); r.SessionID != sid {
		t.Fatalf("(N, 2): session id %d, want %d", r.SessionID, sid)
	}

	// New records in partition 1: only it is answered (its high
	// watermark moved and it has records), and the others stay silent.
	tb.produce(ctx, "s", 1, 1)
	expect("(N, 3) after a produce", fetch(sessionFetch(16, "", id, sid, 3, nil)), 0, true, map[int32]string{1: "records"})

	// The same epoch again (a duplicate): INVALID_FETCH_SESSION_EPOCH,
	// with no session id and no partitions.
	expect("(N, 3) again", fetch(sessionFetch(16, "", id, sid, 3, nil)), kerr.InvalidFetchSessionEpoch.Code, false, map[int32]string{})
	// A session id nobody created.
	expect("(unknown, 1)", fetch(sessionFetch(16, "", id, sid^1, 1, nil)), kerr.FetchSessionIDNotFound.Code, false, map[int32]string{})
	// A version without topic ids on a session that uses them.
	expect("v12 on a v16 session", fetch(sessionFetch(12, "s", [16]byte{}, sid, 4, nil)), kerr.FetchSessionTopicIDError.Code, false, map[int32]string{})

	// Forgotten partitions are no longer read; the others are.
	expect("(N, 4) forgetting 1 and 2", fetch(sessionFetch(16, "", id, sid, 4, map[int32]int64{1: 3}, 1, 2)), 0, true, map[int32]string{})
	tb.produce(ctx, "s", 1, 1)
	tb.produce(ctx, "s", 0, 1)
	expect("(N, 5) after produces to 0 and 1", fetch(sessionFetch(16, "", id, sid, 5, nil)), 0, true, map[int32]string{0: "records"})

	// (N, −1): a full fetch that closes the session and still returns data.
	expect("(N, -1)", fetch(sessionFetch(16, "", id, sid, -1, all)), 0, false, allRecords)
	expect("(N, 6) after close", fetch(sessionFetch(16, "", id, sid, 6, nil)), kerr.FetchSessionIDNotFound.Code, false, map[int32]string{})

	// (0, −1): sessionless, nothing cached.
	before := tb.b.fetchSessions().size()
	expect("(0, -1)", fetch(sessionFetch(16, "", id, 0, -1, all)), 0, false, allRecords)
	if n := tb.b.fetchSessions().size(); n != before {
		t.Fatalf("(0, -1) changed the cache from %d to %d sessions", before, n)
	}

	// (N, 0): closes N and opens another.
	a := fetch(sessionFetch(16, "", id, 0, 0, all))
	b := fetch(sessionFetch(16, "", id, a.SessionID, 0, all))
	expect("(N, 0)", b, 0, true, allRecords)
	if b.SessionID == a.SessionID {
		t.Fatalf("(N, 0) kept session %d", a.SessionID)
	}
	expect("old session after (N, 0)", fetch(sessionFetch(16, "", id, a.SessionID, 1, nil)), kerr.FetchSessionIDNotFound.Code, false, map[int32]string{})

	// A session emptied by forgetting everything is closed; the request
	// is answered sessionless.
	expect("forget all", fetch(sessionFetch(16, "", id, b.SessionID, 1, nil, 0, 1, 2)), 0, false, map[int32]string{})
	expect("after forget all", fetch(sessionFetch(16, "", id, b.SessionID, 2, nil)), kerr.FetchSessionIDNotFound.Code, false, map[int32]string{})

	// Sessions by topic name (v12) work the same way.
	n := fetch(sessionFetch(12, "s", [16]byte{}, 0, 0, all))
	expect("v12 (0, 0)", n, 0, true, allRecords)
	expect("v12 (N, 1)", fetch(sessionFetch(12, "s", [16]byte{}, n.SessionID, 1, map[int32]int64{0: 3, 1: 4, 2: 2})), 0, true, map[int32]string{})
	expect("v16 on a v12 session", fetch(sessionFetch(16, "", id, n.SessionID, 2, nil)), kerr.FetchSessionTopicIDError.Code, false, map[int32]string{})
}

// An error is answered once in a session, and again once the partition is
// fine (its high watermark is then news).
func TestFetchSessionReportsErrorsAndRecovery(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	tb.createTopic(ctx, "e", 1, nil)
	tb.produce(ctx, "e", 0, 2)
	id := tb.b.topic("e").id
	c := dialRaw(t, tb.b.Addr())
	fetch := func(req *kmsg.FetchRequest) *kmsg.FetchResponse { return c.roundTrip(req).(*kmsg.FetchResponse) }

	s := fetch(sessionFetch(16, "", id, 0, 0, map[int32]int64{0: 99}))
	if got := answered(s); got[0] != kerr.OffsetOutOfRange.Error() || s.SessionID == 0 {
		t.Fatalf("full fetch out of range: %v, session %d", got, s.SessionID)
	}
	if p := s.Topics[0].Partitions[0]; p.HighWatermark != -1 || p.LogStartOffset != -1 {
		t.Fatalf("out of range: high watermark %d, log start %d; want -1 as Kafka", p.HighWatermark, p.LogStartOffset)
	}
	if got := answered(fetch(sessionFetch(16, "", id, s.SessionID, 1, nil))); got[0] != kerr.OffsetOutOfRange.Error() {
		t.Fatalf("incremental, still out of range: %v", got)
	}
	if got := answered(fetch(sessionFetch(16, "", id, s.SessionID, 2, map[int32]int64{0: 2}))); got[0] != "empty" {
		t.Fatalf("incremental at the log end: %v, want the partition (its high watermark is news)", got)
	}
	if got := answered(fetch(sessionFetch(16, "", id, s.SessionID, 3, nil))); len(got) != 0 {
		t.Fatalf("incremental, nothing new: %v", got)
	}
}

func TestFetchSessionCacheEviction(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	c := newFetchSessionCache(16) // two slots per shard
	c.now = func() time.Time { return now }
	parts := func(n int) []*cachedPartition {
		var out []*cachedPartition
		for i := range n {
			out = append(out, &cachedPartition{req: fetchPartReq{key: fetchKey{topic: "t", partition: int32(i)}}})
		}
		return out
	}
	// Creations go to the shards in turn: 16 fill every shard.
	var ids []int32
	for range 16 {
		id := c.maybeCreate(false, false, parts(2))
		if id == 0 {
			t.Fatalf("session %d not created with room in the cache", len(ids))
		}
		ids = append(ids, id)
	}
	for i, id := range ids {
		if sh := c.shardFor(id); sh != c.shards[i%fetchSessionShards] {
			t.Fatalf("session %d (id %d) in shard %d, want %d", i, id, sh.num, i%fetchSessionShards)
		}
	}
	// Full, and every session is young: a consumer cannot evict one.
	if id := c.maybeCreate(false, false, parts(50)); id != 0 {
		t.Fatalf("consumer session created in a full cache of young sessions: %d", id)
	}
	// A follower (privileged) evicts a consumer session at once: the
	// privileged flag sorts first (Kafka's EvictableKey), so even a
	// smaller follower session wins.
	if id := c.maybeCreate(true, false, parts(1)); id == 0 || c.size() != 16 {
		t.Fatalf("follower session: id %d, %d sessions; want created by an eviction", id, c.size())
	}
	// After two minutes unused, the least recently used session goes to
	// any newcomer.
	now = now.Add(fetchSessionEvictionMs*time.Millisecond + time.Millisecond)
	sh := c.shards[c.counter.Load()%fetchSessionShards]
	sh.mu.Lock()
	var stalest *fetchSession
	for _, s := range sh.sessions {
		if stalest == nil || s.lastUsedMs < stalest.lastUsedMs || (s.lastUsedMs == stalest.lastUsedMs && s.id < stalest.id) {
			stalest = s
		}
	}
	sh.mu.Unlock()
	if id := c.maybeCreate(false, false, parts(1)); id == 0 {
		t.Fatal("no session created although the cache holds a stale one")
	}
	if c.remove(stalest.id) {
		t.Fatalf("the least recently used session %d was not the one evicted", stalest.id)
	}
}

func TestFetchSessionCacheSlotsConfig(t *testing.T) {
	tb := newTestBroker(t, "max.incremental.fetch.session.cache.slots=0")
	ctx := testCtx(t)
	tb.createTopic(ctx, "z", 1, nil)
	tb.produce(ctx, "z", 0, 1)
	c := dialRaw(t, tb.b.Addr())
	resp := c.roundTrip(sessionFetch(16, "", tb.b.topic("z").id, 0, 0, map[int32]int64{0: 0})).(*kmsg.FetchResponse)
	if resp.SessionID != 0 || answered(resp)[0] != "records" {
		t.Fatalf("no slots: session %d, partitions %v; want no session and the data", resp.SessionID, answered(resp))
	}
}

// franz-go uses fetch sessions unless told not to; both ways a consumer
// reads every record in order.
func TestFetchSessionFranzGoConsumer(t *testing.T) {
	tb := newTestBroker(t)
	ctx := testCtx(t)
	const parts, perPart = 4, 50
	tb.createTopic(ctx, "kgo", parts, nil)
	for p := int32(0); p < parts; p++ {
		var recs []*kgo.Record
		for i := range perPart {
			recs = append(recs, &kgo.Record{Topic: "kgo", Partition: p, Value: fmt.Appendf(nil, "%d-%d", p, i)})
		}
		if err := tb.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for _, sessions := range []bool{true, false} {
		t.Run(fmt.Sprintf("sessions=%v", sessions), func(t *testing.T) {
			before := tb.b.fetchSessions().size()
			opts := []kgo.Opt{kgo.SeedBrokers(tb.b.Addr()), kgo.ConsumeTopics("kgo"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxPartitionBytes(300)}
			if !sessions {
				opts = append(opts, kgo.DisableFetchSessions())
			}
			cl, err := kgo.NewClient(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			next := map[int32]int{}
			got := 0
			for got < parts*perPart {
				fs := cl.PollFetches(ctx)
				if err := ctx.Err(); err != nil {
					t.Fatalf("after %d records: %v", got, err)
				}
				fs.EachError(func(_ string, p int32, err error) { t.Fatalf("partition %d: %v", p, err) })
				fs.EachRecord(func(r *kgo.Record) {
					if want := fmt.Sprintf("%d-%d", r.Partition, next[r.Partition]); string(r.Value) != want {
						t.Fatalf("partition %d offset %d: %q, want %q", r.Partition, r.Offset, r.Value, want)
					}
					next[r.Partition]++
					got++
				})
			}
			if n := tb.b.fetchSessions().size(); sessions && n <= before {
				t.Errorf("the consumer opened no fetch session (%d before, %d after)", before, n)
			} else if !sessions && n != before {
				t.Errorf("a consumer without sessions changed the cache from %d to %d", before, n)
			}
		})
	}
}

// BenchmarkFetchSession1000Partitions measures the broker's work for one
// caught-up consumer poll of 1,000 partitions: sessionless (the request
// names every partition, the answer lists every partition) against an
// incremental session (an empty request, an empty answer). It runs the
// handler's steps in process: parse, session lookup, read, encode.
func BenchmarkFetchSession1000Partitions(b *testing.B) {
	const n = 1000
	cfg, err := config.Load("", []string{"listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=" + b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	brk, err := New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	if err := brk.Start(); err != nil {
		b.Fatal(err)
	}
	defer brk.Close()
	if _, err := brk.createTopic("bench", n, 1, nil); err != nil {
		b.Fatal(err)
	}
	id := brk.topic("bench").id
	all := map[int32]int64{}
	for p := range int32(n) {
		all[p] = 0
	}
	frameOf := func(req *kmsg.FetchRequest) []byte {
		f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bench"))
		return f.AppendRequest(nil, req, 1)[4:]
	}
	poll := func(b *testing.B, frame []byte) int {
		req := kmsg.NewPtrFetchRequest()
		hdr, err := wire.ParseRequest(frame, req)
		if err != nil {
			b.Fatal(err)
		}
		r := &request{hdr: hdr, kreq: req, received: time.Now()}
		parts, forget := fetchRequestParts(req, hdr.APIVersion, brk.topicNameByID)
		fc := brk.fetchSessions().newFetchContext(hdr.APIVersion, req.SessionID, req.SessionEpoch, false, parts, forget)
		if fc.kind == sessionErrorFetch {
			b.Fatalf("session error %d", fc.errorCode)
		}
		topics, _, _ := brk.readFetchParts(r, req, fc.parts, -1)
		sel, _, _ := fc.response(topics)
		resp := encodeFetchSession(r, 0, 0, sel)
		fc.commit(topics)
		return int(resp.Size())
	}
	b.Run("sessionless", func(b *testing.B) {
		frame := frameOf(sessionFetch(16, "", id, 0, -1, all))
		var size int
		b.ReportAllocs()
		for b.Loop() {
			size = poll(b, frame)
		}
		b.ReportMetric(float64(size), "resp-bytes")
		b.ReportMetric(float64(len(frame)), "req-bytes")
	})
	b.Run("session", func(b *testing.B) {
		full := sessionFetch(16, "", id, 0, 0, all)
		req := kmsg.NewPtrFetchRequest()
		if _, err := wire.ParseRequest(frameOf(full), req); err != nil {
			b.Fatal(err)
		}
		parts, _ := fetchRequestParts(req, 16, brk.topicNameByID)
		fc := brk.fetchSessions().newFetchContext(16, 0, 0, false, parts, nil)
		r := &request{hdr: wire.RequestHeader{APIKey: 1, APIVersion: 16}, kreq: req}
		topics, _, _ := brk.readFetchParts(r, req, fc.parts, -1)
		sid := fc.commit(topics)
		if sid == 0 {
			b.Fatal("no session")
		}
		epoch := int32(1)
		var size, reqSize int
		b.ReportAllocs()
		for b.Loop() {
			frame := frameOf(sessionFetch(16, "", id, sid, epoch, nil))
			reqSize = len(frame)
			size = poll(b, frame)
			epoch++
		}
		b.ReportMetric(float64(size), "resp-bytes")
		b.ReportMetric(float64(reqSize), "req-bytes")
	})
}
