package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRandomRequestsKeepBrokerServing sends every API at every version the
// broker serves, with field values drawn at random from values that often
// break servers (negative counts, MaxInt32, empty and invalid names, garbage
// record bytes, nil where a value is expected), through real connections.
// Each request must get an answer or a closed connection within the raw
// read deadline, no handler may panic, and afterwards the broker must still
// produce, consume and run a consumer group: bad input gets an error, and
// the broker keeps serving.
//
// SILKWORM_RANDREQ_SEED and SILKWORM_RANDREQ_ROUNDS (requests per API
// version) widen the search; CI runs the fixed seed.
func TestRandomRequestsKeepBrokerServing(t *testing.T) {
	seed, rounds := randomRequestSettings(t)
	logs := &panicLog{}
	tb := &testBroker{t: t, dir: t.TempDir(), logw: logs,
		extra: []string{"group.initial.rebalance.delay.ms=0"}}
	tb.start()
	t.Cleanup(tb.stop)
	ctx := testCtx(t)
	tb.createTopic(ctx, "fuzz-t", 2, nil)
	tb.createTopic(ctx, "live", 2, nil)

	// Real clients run meanwhile: a member of group fuzz-g and an
	// idempotent and a transactional producer (transactional id fuzz-g),
	// all on topic live, which the random requests do not name (they
	// would delete it, and the producers wait for it to come back). The
	// group and transactional id are theirs too. What the random requests
	// do to the clients (fence their epoch, remove the member) is
	// allowed; a hang or a panic is not.
	stop := liveClients(t, tb.b.Addr())
	sendRandomRequests(t, func() *rawConn { return dialRaw(t, tb.b.Addr()) }, logs, seed, rounds)
	stop()
	checkStillServing(ctx, t, tb.adm, logs, tb.b.Addr())
}

// liveClients runs a consumer-group member, an idempotent producer and a
// transactional producer on topic live until the returned stop is called.
func liveClients(t *testing.T, addr string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	run := func(fn func(cl *kgo.Client), opts ...kgo.Opt) {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fn(cl)
			}
			cl.Close()
		}()
	}
	run(func(cl *kgo.Client) { cl.PollFetches(ctx) },
		kgo.ConsumeTopics("live"), kgo.ConsumerGroup("fuzz-g"), kgo.FetchMaxWait(100*time.Millisecond))
	run(func(cl *kgo.Client) {
		cl.ProduceSync(ctx, &kgo.Record{Topic: "live", Value: []byte("live")})
		time.Sleep(5 * time.Millisecond)
	})
	run(func(cl *kgo.Client) {
		if cl.BeginTransaction() != nil {
			time.Sleep(5 * time.Millisecond) // fenced by a random InitProducerId
			return
		}
		res := cl.ProduceSync(ctx, &kgo.Record{Topic: "live", Value: []byte("txn")})
		_ = cl.EndTransaction(ctx, kgo.TransactionEndTry(res.FirstErr() == nil))
		time.Sleep(5 * time.Millisecond)
	}, kgo.TransactionalID("fuzz-g"), kgo.TransactionTimeout(time.Second))
	return func() {
		cancel()
		wg.Wait()
	}
}

// TestRandomRequestsKeepSecuredBrokerServing sends them over an
// authenticated SASL PLAIN connection to a broker with Kafka's
// StandardAuthorizer, where every request is authorized and random ACLs
// (CreateAcls, DeleteAcls) change what the next ones may do.
func TestRandomRequestsKeepSecuredBrokerServing(t *testing.T) {
	seed, rounds := randomRequestSettings(t)
	logs := &panicLog{}
	tb := &testBroker{t: t, dir: t.TempDir(), logw: logs, extra: []string{
		"group.initial.rebalance.delay.ms=0",
		"listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"sasl.enabled.mechanisms=PLAIN", plainJAAS,
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS", "allow.everyone.if.no.acl.found=true",
	}}
	tb.start()
	t.Cleanup(tb.stop)
	ctx := testCtx(t)
	tb.createTopic(ctx, "fuzz-t", 2, nil)

	addr := tb.b.ListenerAddr("SASL_PLAINTEXT")
	sendRandomRequests(t, func() *rawConn {
		c := dialRaw(t, addr)
		c.plainLogin("alice", "alice-secret")
		return c
	}, logs, seed, rounds)
	checkStillServing(ctx, t, tb.adm, logs, tb.b.Addr())
}

// plainLogin authenticates the connection with SASL PLAIN (handshake v1,
// then SaslAuthenticate).
func (c *rawConn) plainLogin(user, pass string) {
	c.t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	if resp := c.roundTrip(hs).(*kmsg.SASLHandshakeResponse); resp.ErrorCode != 0 {
		c.t.Fatalf("SASL handshake: code %d", resp.ErrorCode)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte("\x00"+user+"\x00"+pass)
	if resp := c.roundTrip(auth).(*kmsg.SASLAuthenticateResponse); resp.ErrorCode != 0 {
		c.t.Fatalf("SASL PLAIN login of %s: code %d", user, resp.ErrorCode)
	}
}

// TestRandomRequestsKeepClusterServing is the same on a node of a
// three-node Raft cluster, where admin requests go through the controller
// quorum and writes wait for followers.
func TestRandomRequestsKeepClusterServing(t *testing.T) {
	seed, rounds := randomRequestSettings(t)
	logs := &panicLog{}
	tc := newTestClusterOnDirs(t, 3, func(tc *testCluster, _ int, _ string) { tc.logw = logs })
	ctx := testCtx(t)
	adm := kadm.NewClient(tc.client())
	if _, err := adm.CreateTopic(ctx, 2, 3, nil, "fuzz-t"); err != nil {
		t.Fatalf("create fuzz-t: %v", err)
	}

	sendRandomRequests(t, func() *rawConn { return dialRaw(t, tc.brokers[0].Addr()) }, logs, seed, rounds)
	checkStillServing(ctx, t, adm, logs, tc.seeds()...)
}

// randomRequestSettings reads SILKWORM_RANDREQ_SEED and
// SILKWORM_RANDREQ_ROUNDS (requests per API version).
func randomRequestSettings(t *testing.T) (seed uint64, rounds int) {
	seed, rounds = 1, 3
	if s := os.Getenv("SILKWORM_RANDREQ_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SILKWORM_RANDREQ_SEED=%q: %v", s, err)
		}
		seed = v
	}
	if s := os.Getenv("SILKWORM_RANDREQ_ROUNDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("SILKWORM_RANDREQ_ROUNDS=%q: want a positive integer", s)
		}
		rounds = v
	}
	return seed, rounds
}

// sendRandomRequests sends rounds random requests of every API version the
// broker serves over connections from dial (a new one after each close),
// and fails the test on a hang or a handler panic.
func sendRandomRequests(t *testing.T, dial func() *rawConn, logs *panicLog, seed uint64, rounds int) {
	t.Helper()
	f := &reqFiller{r: rand.New(rand.NewPCG(seed, 0x5eed))}
	c := dial()
	sent := 0
	for _, a := range supportedAPIs() {
		for v := a.min; v <= a.max; v++ {
			for range rounds {
				req := kmsg.RequestForKey(a.key)
				f.fill(reflect.ValueOf(req).Elem(), "", 0)
				req.SetVersion(v)
				what := fmt.Sprintf("%s v%d (seed %d, request %d)", kmsg.NameForKey(a.key), v, seed, sent)
				if c.sendAndSync(req, what) {
					c = dial()
				}
				sent++
				if p := logs.panics(); p != "" {
					t.Fatalf("%s: handler panic: %s", what, p)
				}
			}
		}
	}
	t.Logf("%d random requests (seed %d)", sent, seed)
}

// checkStillServing creates a topic, produces to it with acks=all and
// consumes it in a consumer group that commits, through fresh clients.
func checkStillServing(ctx context.Context, t *testing.T, adm *kadm.Client, logs *panicLog, seeds ...string) {
	t.Helper()
	const topic = "after-fuzz"
	// An UnregisterBroker of a live broker is answered, as in Kafka, and
	// the broker registers again at its next heartbeat: until then a
	// creation may find too few brokers.
	for {
		_, err := adm.CreateTopic(ctx, 1, -1, nil, topic)
		if err == nil {
			break
		}
		if !errors.Is(err, kerr.InvalidReplicationFactor) || ctx.Err() != nil {
			t.Fatalf("create %s after the random requests: %v", topic, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 10 {
		if err := prod.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil {
			t.Fatalf("produce after the random requests: %v", err)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic),
		kgo.ConsumerGroup("after-fuzz-group"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := 0
	for got < 10 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 10 records after the random requests: %v", got, err)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch after the random requests: %v", err) })
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit after the random requests: %v", err)
	}
	if p := logs.panics(); p != "" {
		t.Fatalf("handler panic: %s", p)
	}
}

// sendAndSync writes req, then an ApiVersions v0 on the same connection,
// and reads answers until the ApiVersions one: req's answer, if it has one
// (an acks=0 produce has none), comes first, as Kafka answers in order. It
// reports whether the broker closed the connection instead, which Kafka
// does for requests it cannot parse.
func (c *rawConn) sendAndSync(req kmsg.Request, what string) (closed bool) {
	c.t.Helper()
	frame, _ := c.encode(req)
	c.corr++
	sync := kmsg.NewApiVersionsRequest()
	frame = append(frame, kmsg.NewRequestFormatter(kmsg.FormatterClientID("badinput")).AppendRequest(nil, &sync, c.corr)...)
	_ = c.nc.SetWriteDeadline(time.Now().Add(rawDeadline))
	if _, err := c.nc.Write(frame); err != nil {
		return true // closed while we wrote: an earlier answer was a close
	}
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(rawDeadline))
		var sz [4]byte
		if _, err := io.ReadFull(c.nc, sz[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
				return true
			}
			c.t.Fatalf("%s: no answer and no close: %v", what, err)
		}
		n := binary.BigEndian.Uint32(sz[:])
		body := make([]byte, n)
		if _, err := io.ReadFull(c.nc, body); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
				return true
			}
			c.t.Fatalf("%s: read answer: %v", what, err)
		}
		if n >= 4 && int32(binary.BigEndian.Uint32(body)) == c.corr {
			return false
		}
	}
}

// panicLog is a broker log that keeps the handler panics it sees.
type panicLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *panicLog) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("panic")) {
		l.mu.Lock()
		l.buf.Write(p)
		l.mu.Unlock()
	}
	return len(p), nil
}

func (l *panicLog) panics() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// reqFiller sets the exported fields of a kmsg request to random values,
// picked by field name from values that tend to find bugs.
type reqFiller struct{ r *rand.Rand }

func (f *reqFiller) pick(n int) int { return f.r.IntN(n) }

func (f *reqFiller) fill(v reflect.Value, name string, depth int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.pick(2) == 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := f.int(name)
		bits := v.Type().Bits()
		lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
		v.SetInt(min(max(x, lo), hi))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.pick(3)))
	case reflect.Float64:
		v.SetFloat([]float64{0, -1, 1, 1e12, math.NaN(), math.Inf(1)}[f.pick(6)])
	case reflect.String:
		v.SetString(f.str(name))
	case reflect.Pointer:
		if f.pick(4) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), name, depth+1)
		v.Set(p)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes(f.bytes())
			return
		}
		n := f.pick(4)
		if depth > 3 {
			n = min(n, 1)
		}
		if f.pick(8) == 0 {
			v.SetZero() // a null array
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			f.fill(s.Index(i), name, depth+1)
		}
		v.Set(s)
	case reflect.Array:
		if f.pick(2) == 0 {
			for i := range v.Len() {
				f.fill(v.Index(i), "", depth)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if !sf.IsExported() || sf.Name == "Version" || sf.Name == "UnknownTags" {
				continue
			}
			f.fill(v.Field(i), sf.Name, depth+1)
		}
	}
}

func (f *reqFiller) int(name string) int64 {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "timeout"), strings.Contains(n, "wait"), strings.Contains(n, "millis"),
		strings.Contains(n, "ms"), strings.Contains(n, "interval"), strings.Contains(n, "delay"):
		return []int64{-1, 0, 1, 10, 100}[f.pick(5)]
	case strings.Contains(n, "acks"):
		return []int64{-2, -1, 0, 1, 2}[f.pick(5)]
	}
	return []int64{-2, -1, 0, 1, 2, 3, 7, 100, 1 << 20, math.MaxInt32, math.MinInt32,
		math.MaxInt64, math.MinInt64, int64(f.pick(1000))}[f.pick(14)]
}

func (f *reqFiller) str(name string) string {
	n := strings.ToLower(name)
	var pool []string
	switch {
	case strings.Contains(n, "topic"):
		pool = []string{"", "fuzz-t", "fuzz-new", "__consumer_offsets", "__transaction_state", "a/b", "..", "bad name!", strings.Repeat("t", 300)}
	case strings.Contains(n, "group"), strings.Contains(n, "member"), strings.Contains(n, "transactional"):
		pool = []string{"", "g", "fuzz-g", strings.Repeat("g", 300)}
	case strings.Contains(n, "principal"):
		pool = []string{"", "User:x", "User:*", "bad", ":"}
	case strings.Contains(n, "host"):
		pool = []string{"", "*", "127.0.0.1", "::1", "not a host"}
	case strings.Contains(n, "mechanism"):
		pool = []string{"", "PLAIN", "SCRAM-SHA-256", "GSSAPI", "X"}
	case strings.Contains(n, "name"), strings.Contains(n, "key"):
		pool = []string{"", "cleanup.policy", "retention.ms", "min.insync.replicas", "max.message.bytes",
			"message.max.bytes", "log.retention.ms", "segment.bytes", "consumer_byte_rate", "client-id", "user", "x"}
	case strings.Contains(n, "value"):
		pool = []string{"", "-1", "0", "1", "compact", "delete", "abc", "9223372036854775807", "1e400"}
	case strings.Contains(n, "regex"), strings.Contains(n, "pattern"):
		pool = []string{"", ".*", "[", "fuzz.*", "(a+)+$"}
	default:
		pool = []string{"", "x", "fuzz", "é\x00", strings.Repeat("z", 1000)}
	}
	return pool[f.pick(len(pool))]
}

func (f *reqFiller) bytes() []byte {
	switch f.pick(6) {
	case 4, 5:
		return f.batch()
	case 0:
		return nil
	case 1:
		return []byte{}
	case 2:
		b := make([]byte, 1+f.pick(200))
		for i := range b {
			b[i] = byte(f.pick(256))
		}
		return b
	default:
		// A v2 batch header announcing more than it holds.
		b := kbin.AppendInt64(nil, 0)
		b = kbin.AppendInt32(b, int32(49+f.pick(1<<20)))
		b = kbin.AppendInt32(b, 0)
		b = append(b, 2)
		return append(b, make([]byte, f.pick(60))...)
	}
}

// batch is a v2 record batch with a right length and CRC-32C and random
// header fields (compression, transactional and control bits, producer
// id, epoch and sequence, record count), holding records that may or may
// not match them.
func (f *reqFiller) batch() []byte {
	n := f.pick(4)
	var recs []byte
	for i := range n {
		r := kmsg.Record{OffsetDelta: int32(i), Key: f.bytesOrNil(), Value: f.bytesOrNil()}
		if f.pick(8) == 0 {
			r.OffsetDelta = int32(f.int(""))
		}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1) // the Length varint of 0 is one byte
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{
		Magic:           2,
		Attributes:      int16([]int{0, 0, 1, 2, 3, 4, 5, 0x10, 0x20, 0x30, 0x08}[f.pick(11)]),
		LastOffsetDelta: int32(max(n-1, 0)),
		FirstTimestamp:  time.Now().UnixMilli(),
		MaxTimestamp:    time.Now().UnixMilli(),
		ProducerID:      []int64{-1, -1, 0, 1, 1000}[f.pick(5)],
		ProducerEpoch:   int16([]int{-1, 0, 1}[f.pick(3)]),
		FirstSequence:   int32([]int{-1, 0, 0, 5, math.MaxInt32}[f.pick(5)]),
		NumRecords:      int32(n),
		Records:         recs,
	}
	if f.pick(6) == 0 {
		b.NumRecords = int32(f.int(""))
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func (f *reqFiller) bytesOrNil() []byte {
	if f.pick(3) == 0 {
		return nil
	}
	b := make([]byte, f.pick(20))
	for i := range b {
		b[i] = byte(f.pick(256))
	}
	return b
}
