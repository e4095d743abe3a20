package perf

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// clusterStartTimeout bounds the start of every node of a perfCluster and
// a restart. It is a hang guard, not an assertion about speed.
const clusterStartTimeout = 90 * time.Second

// perfCluster is a cluster of silkworm server child processes on
// 127.0.0.1 (testcluster.Start), each both a broker and a Raft controller
// (KRaft combined mode), started from the documented
// config/cluster/node<N>.properties with ports, voters and data dirs
// overridden, as the interop tests start theirs, with the measurements of
// this package added. A node is ready once its Metadata lists every node.
// Its methods are called from the test goroutine only; it is not safe for
// concurrent use.
type perfCluster struct {
	*testcluster.Cluster
}

// perfBrokerBin is SILKWORM_PERF_BROKER_BIN, or ./cmd/silkworm built into a
// temporary directory.
func perfBrokerBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SILKWORM_PERF_BROKER_BIN"); bin != "" {
		return bin
	}
	return buildBroker(t)
}

// startPerfCluster starts n nodes and returns once every node answers
// Metadata listing all n brokers. overrides ("key=value") come after the
// cluster's own settings, and SILKWORM_PERF_OVERRIDES after them. The
// nodes log at warn level and are stopped with SIGTERM when the test ends.
func startPerfCluster(t *testing.T, n int, overrides ...string) *perfCluster {
	t.Helper()
	cfg := testcluster.Config{
		Bin:       perfBrokerBin(t),
		Nodes:     n,
		Overrides: append(slices.Clone(overrides), strings.Fields(os.Getenv("SILKWORM_PERF_OVERRIDES"))...),
		LogLevel:  "warn",
		// SILKWORM_PERF_BROKER_ENV adds environment variables (space
		// separated, e.g. GOMAXPROCS=1) to the brokers' but not the
		// clients'.
		Env:          strings.Fields(os.Getenv("SILKWORM_PERF_BROKER_ENV")),
		StartTimeout: clusterStartTimeout,
		ReadyBrokers: n,
		Terminate:    true,
	}
	// SILKWORM_PERF_METRICS_PORT=p serves node i's /metrics on port p+i
	// (i from 0), to read request counts and latencies while a
	// measurement runs.
	if base := os.Getenv("SILKWORM_PERF_METRICS_PORT"); base != "" {
		port, err := strconv.Atoi(base)
		if err != nil {
			t.Fatalf("SILKWORM_PERF_METRICS_PORT=%q: %v", base, err)
		}
		cfg.NodeOverrides = func(id int) []string {
			return []string{fmt.Sprintf("silkworm.metrics.listener=127.0.0.1:%d", port+id-1)}
		}
	}
	return &perfCluster{testcluster.Start(t, cfg)}
}

// adminMetadataMinAge lets the admin clients' Metadata polls see changes
// at once: kadm answers Metadata from the client's cache for
// MetadataMinAge (5 s by default), which would quantize every time the
// harness measures by polling Metadata.
const adminMetadataMinAge = 10 * time.Millisecond

// admin returns an admin client seeded with every node, whose Metadata
// calls are served from a cache at most 10 ms old.
func (c *perfCluster) admin(t *testing.T) *kadm.Client {
	t.Helper()
	return kadm.NewClient(c.Client(t, kgo.MetadataMinAge(adminMetadataMinAge)))
}

// cpu is the utime+stime of every node so far, in node order.
func (c *perfCluster) cpu(t *testing.T) []time.Duration {
	t.Helper()
	out := make([]time.Duration, len(c.Nodes))
	for i, node := range c.Nodes {
		if !node.Running() {
			t.Fatalf("node %d is not running", node.ID)
		}
		d, err := procCPU(node.Pid())
		if err != nil {
			t.Fatalf("node %d cpu: %v", node.ID, err)
		}
		out[i] = d
	}
	return out
}

// idleWindow is how long idleCPU measures.
const idleWindow = 2 * time.Second

// idleCPU is the CPU the nodes use together with no client traffic (Raft,
// heartbeats, replica fetchers' long polls), in cores, measured over
// idleWindow: the floor under every CPU-per-record figure of the cluster.
func (c *perfCluster) idleCPU(t *testing.T) float64 {
	t.Helper()
	before, start := c.cpu(t), time.Now()
	time.Sleep(idleWindow) // the window measured, not a wait for an outcome
	return float64(sumCPU(cpuDelta(before, c.cpu(t)))) / float64(time.Since(start))
}

// createTopic creates topic with the given partitions, replication factor
// and configs, and waits until every partition has a leader and all of its
// replicas in the ISR.
func (c *perfCluster) createTopic(ctx context.Context, t *testing.T, adm *kadm.Client, topic string, partitions int32, rf int16, configs map[string]*string) {
	t.Helper()
	resp, err := adm.CreateTopic(ctx, partitions, rf, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	if err := testcluster.Poll(clusterStartTimeout, func() error { return topicLed(ctx, adm, topic, partitions, true) }); err != nil {
		t.Fatalf("topic %s: %v", topic, err)
	}
}

// topicLed reports nil once Metadata shows every partition of topic with a
// leader, and, when fullISR is set, all of its replicas in the ISR.
func topicLed(ctx context.Context, adm *kadm.Client, topic string, partitions int32, fullISR bool) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	td, ok := md.Topics[topic]
	if !ok {
		return fmt.Errorf("metadata has no topic %s", topic)
	}
	if td.Err != nil {
		return fmt.Errorf("topic %s: %w", topic, td.Err)
	}
	if int32(len(td.Partitions)) != partitions {
		return fmt.Errorf("topic %s has %d partitions, want %d", topic, len(td.Partitions), partitions)
	}
	for p, pd := range td.Partitions {
		if pd.Err != nil {
			return fmt.Errorf("partition %s-%d: %w", topic, p, pd.Err)
		}
		if pd.Leader < 0 {
			return fmt.Errorf("partition %s-%d has no leader", topic, p)
		}
		if fullISR && len(pd.ISR) != len(pd.Replicas) {
			return fmt.Errorf("%s-%d: replicas %v, isr %v", topic, p, pd.Replicas, pd.ISR)
		}
	}
	return nil
}

// replicasEqual reports nil once rf replicas of each of the partitions of
// topic hold the same number of bytes (DescribeLogDirs), that is once the
// followers have copied everything the leaders hold.
func replicasEqual(ctx context.Context, adm *kadm.Client, topic string, partitions int32, rf int16) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// An empty partition list describes no partitions: name them all.
	set := kadm.TopicsSet{}
	for p := range partitions {
		set.Add(topic, p)
	}
	dirs, err := adm.DescribeAllLogDirs(ctx, set)
	if err != nil {
		return fmt.Errorf("describe log dirs: %w", err)
	}
	sizes := map[int32][]int64{}
	var dirErr error
	dirs.Each(func(d kadm.DescribedLogDir) {
		if d.Err != nil {
			dirErr = fmt.Errorf("broker %d dir %s: %w", d.Broker, d.Dir, d.Err)
		}
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == topic {
				sizes[p.Partition] = append(sizes[p.Partition], p.Size)
			}
		})
	})
	if dirErr != nil {
		return dirErr
	}
	for p := range partitions {
		s := sizes[p]
		if len(s) != int(rf) {
			return fmt.Errorf("%s-%d: %d replicas described, want %d", topic, p, len(s), rf)
		}
		if slices.Min(s) != slices.Max(s) {
			return fmt.Errorf("%s-%d: replica sizes %v", topic, p, s)
		}
	}
	return nil
}

// sumCPU is the sum of per-node CPU times.
func sumCPU(d []time.Duration) time.Duration {
	var s time.Duration
	for _, v := range d {
		s += v
	}
	return s
}

// cpuDelta is after-before per node.
func cpuDelta(before, after []time.Duration) []time.Duration {
	out := make([]time.Duration, len(after))
	for i := range after {
		out[i] = after[i] - before[i]
	}
	return out
}

// microsPer is d in µs divided by n.
func microsPer(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Nanoseconds()) / 1e3 / float64(n)
}

// envNonNegative is the integer value of key, def when unset; it fails the
// test on a negative or malformed value.
func envNonNegative(t *testing.T, key string, def int) int {
	t.Helper()
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		t.Fatalf("%s=%q: want a non-negative integer", key, s)
	}
	return v
}

// percentile is the q-quantile (0 < q <= 1) of sorted by the nearest-rank
// method, 0 for an empty slice.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(float64(len(sorted))*q)) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ms is d in milliseconds, for tables.
func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }
