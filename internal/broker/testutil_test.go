package broker

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
)

// testBroker is an in-process single-node broker on 127.0.0.1:0 with its
// data in a t.TempDir(), and franz-go clients connected to it.
type testBroker struct {
	t     *testing.T
	dir   string
	extra []string  // extra config overrides, "key=value"
	opts  []Option  // broker options (fault-injecting file systems)
	logw  io.Writer // the broker's log; nil: discarded

	b   *Broker
	cl  *kgo.Client
	adm *kadm.Client
}

// newTestBroker starts a broker with the given config overrides; it is
// closed when the test ends.
func newTestBroker(t *testing.T, overrides ...string) *testBroker {
	t.Helper()
	return newTestBrokerWith(t, nil, overrides...)
}

// newTestBrokerWith is newTestBroker with broker options.
func newTestBrokerWith(t *testing.T, opts []Option, overrides ...string) *testBroker {
	t.Helper()
	tb := &testBroker{t: t, dir: t.TempDir(), extra: overrides, opts: opts}
	tb.start()
	t.Cleanup(tb.stop)
	return tb
}

func (tb *testBroker) start() {
	tb.t.Helper()
	props := append([]string{"listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=" + tb.dir}, tb.extra...)
	cfg, err := config.Load("", props)
	if err != nil {
		tb.t.Fatalf("config: %v", err)
	}
	logw := tb.logw
	if logw == nil {
		logw = io.Discard
	}
	b, err := New(cfg, slog.New(slog.NewTextHandler(logw, nil)), tb.opts...)
	if err != nil {
		tb.t.Fatalf("new broker: %v", err)
	}
	if err := b.Start(); err != nil {
		b.Close()
		tb.t.Fatalf("start broker: %v", err)
	}
	tb.b = b
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		tb.t.Fatalf("client: %v", err)
	}
	tb.cl = cl
	tb.adm = kadm.NewClient(cl)
}

func (tb *testBroker) stop() {
	if tb.b == nil {
		return
	}
	tb.cl.Close()
	if err := tb.b.Close(); err != nil {
		tb.t.Errorf("close broker: %v", err)
	}
	tb.b = nil
}

// restart closes the broker and opens it again on the same data.
func (tb *testBroker) restart() {
	tb.t.Helper()
	tb.stop()
	tb.start()
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// request sends a raw request straight to the broker (not split or merged
// by the client) and fails the test on a transport error.
func (tb *testBroker) request(ctx context.Context, req kmsg.Request) kmsg.Response {
	tb.t.Helper()
	resp, err := tb.cl.Broker(int(tb.b.nodeID)).Request(ctx, req)
	if err != nil {
		tb.t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

// createTopic creates a topic and fails the test if that fails.
func (tb *testBroker) createTopic(ctx context.Context, name string, partitions int32, configs map[string]*string) {
	tb.t.Helper()
	resp, err := tb.adm.CreateTopic(ctx, partitions, 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		tb.t.Fatalf("create topic %s: %v", name, err)
	}
}

// produce writes n records to one partition synchronously.
func (tb *testBroker) produce(ctx context.Context, topic string, partition int32, n int) {
	tb.t.Helper()
	for i := 0; i < n; i++ {
		r := &kgo.Record{Topic: topic, Partition: partition, Value: []byte("value-of-some-record")}
		if err := tb.cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			tb.t.Fatalf("produce to %s-%d: %v", topic, partition, err)
		}
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline; it never asserts how long the wait took.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
