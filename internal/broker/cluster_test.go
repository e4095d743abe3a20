package broker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/testcluster"
)

// testCluster is an in-process cluster of brokers that are also the Raft
// controllers, on 127.0.0.1 with free ports and temp dirs.
type testCluster struct {
	t       *testing.T
	dirs    []string
	cports  []int
	brokers []*Broker
	extra   []string
	// clientOpts are added to every client (security settings).
	clientOpts []kgo.Opt
	// logw, when set before the nodes start, receives every node's log.
	logw io.Writer
}

func newTestCluster(t *testing.T, n int, overrides ...string) *testCluster {
	t.Helper()
	return newTestClusterOnDirs(t, n, nil, overrides...)
}

// newTestClusterOnDirs is newTestCluster with prepare called on each
// node's (1-based id) empty log dir before any node starts; it may add to
// tc.extra.
func newTestClusterOnDirs(t *testing.T, n int, prepare func(tc *testCluster, id int, dir string), overrides ...string) *testCluster {
	t.Helper()
	tc := &testCluster{t: t, extra: overrides, brokers: make([]*Broker, n)}
	// Distinct ports below the ephemeral range: two ports the kernel picks
	// for :0 may be the same one, and such a port may be taken by an
	// outgoing connection before the node listens on it.
	tc.cports = testcluster.Ports(t, n)
	for i := 0; i < n; i++ {
		tc.dirs = append(tc.dirs, t.TempDir())
		if prepare != nil {
			prepare(tc, i+1, tc.dirs[i])
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tc.brokers[i], errs[i] = tc.startNode(i)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
	}
	t.Cleanup(func() {
		for _, b := range tc.brokers {
			if b != nil {
				b.Close()
			}
		}
	})
	return tc
}

func (tc *testCluster) startNode(i int) (*Broker, error) {
	var voters []string
	for j, p := range tc.cports {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", j+1, p))
	}
	props := []string{
		fmt.Sprintf("node.id=%d", i+1),
		"process.roles=broker,controller",
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:%d", tc.cports[i]),
		"advertised.listeners=PLAINTEXT://127.0.0.1:0",
		"controller.listener.names=CONTROLLER",
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name=PLAINTEXT",
		"controller.quorum.voters=" + strings.Join(voters, ","),
		"log.dirs=" + tc.dirs[i],
		"group.initial.rebalance.delay.ms=0",
		"replica.lag.time.max.ms=2000",
		"replica.fetch.wait.max.ms=100",
		"broker.session.timeout.ms=3000",
		"broker.heartbeat.interval.ms=500",
		"offsets.topic.num.partitions=3",
	}
	// {cport} in an override is this node's controller port.
	for _, x := range tc.extra {
		props = append(props, strings.ReplaceAll(x, "{cport}", fmt.Sprint(tc.cports[i])))
	}
	cfg, err := config.Load("", props)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if tc.logw != nil {
		log = slog.New(slog.NewTextHandler(tc.logw, nil)).With("node", i+1)
	}
	if os.Getenv("SILKWORM_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", i+1)
	}
	b, err := New(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := b.Start(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (tc *testCluster) seeds() []string {
	var s []string
	for _, b := range tc.brokers {
		if b != nil {
			s = append(s, b.Addr())
		}
	}
	return s
}

func (tc *testCluster) client(opts ...kgo.Opt) *kgo.Client {
	tc.t.Helper()
	base := append([]kgo.Opt{kgo.SeedBrokers(tc.seeds()...), kgo.MetadataMinAge(50 * time.Millisecond)}, tc.clientOpts...)
	cl, err := kgo.NewClient(append(base, opts...)...)
	if err != nil {
		tc.t.Fatal(err)
	}
	tc.t.Cleanup(cl.Close)
	return cl
}

// kill stops node id (1-based). Close does a controlled shutdown first,
// so leadership moves before the node goes away.
func (tc *testCluster) kill(id int32) {
	b := tc.brokers[id-1]
	b.Close()
	tc.brokers[id-1] = nil
}

func (tc *testCluster) restart(id int32) {
	tc.t.Helper()
	b, err := tc.startNode(int(id - 1))
	if err != nil {
		tc.t.Fatalf("restart node %d: %v", id, err)
	}
	tc.brokers[id-1] = b
}

func (tc *testCluster) leaderOf(topic string, p int32) int32 {
	for _, b := range tc.brokers {
		if b == nil {
			continue
		}
		if t := b.meta.Image().Topics[topic]; t != nil && int(p) < len(t.Partitions) {
			return t.Partitions[p].Leader
		}
	}
	return -1
}

func TestClusterReplicatesAndFailsOver(t *testing.T) {
	testReplicatesAndFailsOver(t, newTestCluster(t, 3))
}

// testReplicatesAndFailsOver writes acks=all records to a partition of
// three replicas, kills its leader, writes more, and reads every record
// back in order; then the old leader restarts and catches up.
func testReplicatesAndFailsOver(t *testing.T, tc *testCluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(tc.client())
	res, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, "rep")
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	waitFor(t, "every broker has the partition", func() bool {
		for _, b := range tc.brokers {
			if _, p := b.partition("rep", 0); p == nil {
				return false
			}
		}
		return true
	})

	prod := tc.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("rep"),
		kgo.RecordRetries(100), kgo.RetryTimeout(30*time.Second))
	produce := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("v%05d", i))}).FirstErr(); err != nil {
				t.Fatalf("produce %d: %v", i, err)
			}
		}
	}
	produce(0, 200)

	// acks=all: every in-sync replica holds what was acknowledged.
	waitFor(t, "followers catch up", func() bool {
		for _, b := range tc.brokers {
			_, p := b.partition("rep", 0)
			if p == nil || p.Log.LogEndOffset() != 200 {
				return false
			}
		}
		return true
	})
	old := tc.leaderOf("rep", 0)
	tc.kill(old)
	waitFor(t, "a new leader", func() bool {
		l := tc.leaderOf("rep", 0)
		return l >= 0 && l != old
	})
	produce(200, 300)

	cons := tc.client(kgo.ConsumeTopics("rep"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 300 {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of 300: %v", len(got), err)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	for i, v := range got {
		if want := fmt.Sprintf("v%05d", i); v != want {
			t.Fatalf("record %d = %s, want %s (acknowledged records lost or reordered)", i, v, want)
		}
	}
	tc.restart(old)
	waitFor(t, "restarted broker catches up", func() bool {
		_, p := tc.brokers[old-1].partition("rep", 0)
		return p != nil && p.Log.LogEndOffset() == 300
	})
}

// A whole-cluster restart keeps every topic and record: each node replays
// the metadata log before it acts on it, so no log looks like a stray.
func TestClusterFullRestartKeepsData(t *testing.T) {
	tc := newTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	adm := kadm.NewClient(tc.client())
	for _, name := range []string{"before-a", "before-b"} {
		res, err := adm.CreateTopic(ctx, 2, 3, nil, name)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
	}
	prod := tc.client(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordRetries(100))
	for i := 0; i < 100; i++ {
		topic := []string{"before-a", "before-b"}[i%2]
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	prod.Close()
	type key struct {
		node  int32
		topic string
		p     int32
	}
	leo := map[key]int64{}
	waitFor(t, "followers hold every record", func() bool {
		total := int64(0)
		for _, b := range tc.brokers {
			for _, name := range []string{"before-a", "before-b"} {
				for p := int32(0); p < 2; p++ {
					if _, part := b.partition(name, p); part != nil {
						leo[key{b.nodeID, name, p}] = part.Log.LogEndOffset()
						total += part.Log.LogEndOffset()
					}
				}
			}
		}
		return total == 300
	})
	for id := int32(1); id <= 3; id++ {
		tc.kill(id)
	}
	var wg sync.WaitGroup
	for i := range tc.brokers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := tc.startNode(i)
			if err != nil {
				t.Errorf("restart node %d: %v", i+1, err)
				return
			}
			tc.brokers[i] = b
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for _, b := range tc.brokers {
		for _, name := range []string{"before-a", "before-b"} {
			for p := int32(0); p < 2; p++ {
				_, part := b.partition(name, p)
				if part == nil || part.Log.LogEndOffset() != leo[key{b.nodeID, name, p}] {
					t.Fatalf("node %d lost data of %s-%d in a full restart", b.nodeID, name, p)
				}
			}
		}
	}
	cons := tc.client(kgo.ConsumeTopics("before-a", "before-b"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	n := 0
	for n < 100 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of 100 records after a full restart", n)
		}
		n += fs.NumRecords()
	}
}
