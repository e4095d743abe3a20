package embed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func slogStderr() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitFor polls cond until it holds, failing the test after 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// producer is an idempotent acks=all producer that retries until ctx ends,
// and keeps the values Kafka acknowledged in order.
type producer struct {
	t     *testing.T
	cl    *kgo.Client
	topic string
	acked []string
}

func newProducer(t *testing.T, c *Cluster, topic string, opts ...kgo.Opt) *producer {
	return &producer{t: t, topic: topic, cl: client(t, c, append([]kgo.Opt{
		kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), // every record to partition 0: one order
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
	}, opts...)...)}
}

// produce sends values from..to-1 one at a time, failing the test on an
// error.
func (p *producer) produce(ctx context.Context, from, to int) {
	p.t.Helper()
	for i := from; i < to; i++ {
		v := fmt.Sprintf("v%05d", i)
		if err := p.cl.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			p.t.Fatalf("produce %s: %v", v, err)
		}
		p.acked = append(p.acked, v)
	}
}

// readAll consumes topic from the start until it has n records (failing
// when ctx ends first) and returns their values.
func readAll(t *testing.T, ctx context.Context, c *Cluster, topic string, n int, opts ...kgo.Opt) []string {
	t.Helper()
	cons := client(t, c, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	defer cons.Close()
	var got []string
	for len(got) < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records of %s: %v", len(got), n, topic, err)
		}
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				t.Logf("fetch %s-%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	return got
}

// checkAcked fails unless the topic holds exactly the acknowledged values,
// in order: nothing lost, doubled or reordered.
func checkAcked(t *testing.T, ctx context.Context, c *Cluster, topic string, acked []string, opts ...kgo.Opt) {
	t.Helper()
	got := readAll(t, ctx, c, topic, len(acked), opts...)
	if len(got) != len(acked) {
		t.Fatalf("read %d records, %d acknowledged", len(got), len(acked))
	}
	for i := range acked {
		if got[i] != acked[i] {
			t.Fatalf("record %d is %s, acknowledged %s (lost, doubled or reordered)", i, got[i], acked[i])
		}
	}
}

// leaderOf is the leader of topic's partition as a running node other
// than except answers (except 0: any node).
func leaderOf(t *testing.T, ctx context.Context, c *Cluster, topic string, p int32, except int32) int32 {
	t.Helper()
	for id := int32(1); int(id) <= len(c.nodes); id++ {
		if id == except || !c.Running(id) {
			continue
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(id)))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		md, err := kadm.NewClient(cl).Metadata(ctx, topic)
		if err != nil {
			t.Fatalf("metadata from node %d: %v", id, err)
		}
		if d, ok := md.Topics[topic].Partitions[p]; ok {
			return d.Leader
		}
		return -1
	}
	t.Fatal("no running node to ask")
	return -1
}

// cleanShutdown reports whether node's log dir has Kafka's clean-shutdown
// marker (written by a clean close, missing after a crash).
func cleanShutdown(c *Cluster, node int32) bool {
	_, err := os.Stat(filepath.Join(c.DataDir(node), ".kafka_cleanshutdown"))
	return err == nil
}

func kadmClient(cl *kgo.Client) *kadm.Client { return kadm.NewClient(cl) }

func itoa[T ~int32 | ~int](n T) string { return strconv.Itoa(int(n)) }

func configValue(cs []kadm.Config, key string) string {
	for _, c := range cs {
		if c.Key == key && c.Value != nil {
			return *c.Value
		}
	}
	return ""
}
