package perf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// clusterStartTimeout bounds the start of every node of a perfCluster and
// a restart. It is a hang guard, not an assertion about speed.
const clusterStartTimeout = 90 * time.Second

// perfCluster is a cluster of silkworm server child processes on
// 127.0.0.1, each both a broker and a Raft controller (KRaft combined
// mode), started from the documented config/cluster/node<N>.properties with
// ports, voters and data dirs overridden, as the interop tests start theirs.
// Its methods are called from the test goroutine only; it is not safe for
// concurrent use.
type perfCluster struct {
	nodes []*perfNode
}

// perfNode is one silkworm server process of a perfCluster.
type perfNode struct {
	id   int32
	bin  string
	dir  string // log.dirs
	addr string // PLAINTEXT listener, host:port
	log  string // combined stdout+stderr of every incarnation
	args []string

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
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
// cluster's own settings, and SILKWORM_PERF_OVERRIDES after them.
func startPerfCluster(t *testing.T, n int, overrides ...string) *perfCluster {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := perfBrokerBin(t)
	tmp := t.TempDir()
	used := map[int]bool{}
	distinctPort := func() int {
		for {
			if port := freePort(t); !used[port] {
				used[port] = true
				return port
			}
		}
	}
	clientPorts := make([]int, n)
	controllerPorts := make([]int, n)
	var voters []string
	for i := range n {
		clientPorts[i] = distinctPort()
		controllerPorts[i] = distinctPort()
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, controllerPorts[i]))
	}
	all := append(slices.Clone(overrides), strings.Fields(os.Getenv("SILKWORM_PERF_OVERRIDES"))...)
	c := &perfCluster{}
	for i := range n {
		id := i + 1
		props := filepath.Join(root, "config", "cluster", fmt.Sprintf("node%d.properties", min(id, 3)))
		node := &perfNode{
			id:   int32(id),
			bin:  bin,
			dir:  filepath.Join(tmp, fmt.Sprintf("node%d", id)),
			addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPorts[i])),
			log:  filepath.Join(tmp, fmt.Sprintf("node%d.log", id)),
		}
		node.args = []string{"server", "--config", props,
			"--override", "node.id=" + strconv.Itoa(id),
			"--override", fmt.Sprintf("listeners=PLAINTEXT://%s,CONTROLLER://127.0.0.1:%d", node.addr, controllerPorts[i]),
			"--override", "advertised.listeners=PLAINTEXT://" + node.addr,
			"--override", "controller.quorum.voters=" + strings.Join(voters, ","),
			"--override", "log.dirs=" + node.dir,
			"--log-level", "warn",
		}
		for _, o := range all {
			node.args = append(node.args, "--override", o)
		}
		// SILKWORM_PERF_METRICS_PORT=p serves node i's /metrics on port p+i,
		// to read request counts and latencies while a measurement runs.
		if base := os.Getenv("SILKWORM_PERF_METRICS_PORT"); base != "" {
			port, err := strconv.Atoi(base)
			if err != nil {
				t.Fatalf("SILKWORM_PERF_METRICS_PORT=%q: %v", base, err)
			}
			node.args = append(node.args, "--override", fmt.Sprintf("silkworm.metrics.listener=127.0.0.1:%d", port+i))
		}
		c.nodes = append(c.nodes, node)
	}
	t.Cleanup(func() {
		c.stop(t)
		if t.Failed() {
			for _, node := range c.nodes {
				t.Logf("node %d log (%s), last lines:\n%s", node.id, node.log, clusterTail(node.log, 40))
			}
		}
	})
	// The quorum needs a majority of voters before any node serves, so
	// launch them all before waiting for one.
	for _, node := range c.nodes {
		node.launch(t)
	}
	for _, node := range c.nodes {
		node.waitReady(t, n)
	}
	return c
}

// seeds lists every node's client address.
func (c *perfCluster) seeds() []string {
	var s []string
	for _, node := range c.nodes {
		s = append(s, node.addr)
	}
	return s
}

// client returns a franz-go client seeded with every node, closed when the
// test ends.
func (c *perfCluster) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.seeds()...)}, opts...)...)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
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
	return kadm.NewClient(c.client(t, kgo.MetadataMinAge(adminMetadataMinAge)))
}

// cpu is the utime+stime of every node so far, in node order.
func (c *perfCluster) cpu(t *testing.T) []time.Duration {
	t.Helper()
	out := make([]time.Duration, len(c.nodes))
	for i, node := range c.nodes {
		if node.cmd == nil {
			t.Fatalf("node %d is not running", node.id)
		}
		d, err := procCPU(node.cmd.Process.Pid)
		if err != nil {
			t.Fatalf("node %d cpu: %v", node.id, err)
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

// stop sends every running node SIGTERM at once, then waits for each to
// exit, killing it after 30 s.
func (c *perfCluster) stop(t *testing.T) {
	t.Helper()
	for _, node := range c.nodes {
		if node.cmd != nil {
			_ = node.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, node := range c.nodes {
		node.waitExit(t, 30*time.Second)
	}
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
	if err := clusterPoll(clusterStartTimeout, func() error { return topicLed(ctx, adm, topic, partitions, true) }); err != nil {
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

// launch starts the process without waiting for it to serve.
func (n *perfNode) launch(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("open node %d log: %v", n.id, err)
	}
	fmt.Fprintf(logf, "==== start %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(n.bin, n.args...)
	// SILKWORM_PERF_BROKER_ENV adds environment variables (space
	// separated, e.g. GOMAXPROCS=1) to the brokers' but not the clients'.
	cmd.Env = append(os.Environ(), strings.Fields(os.Getenv("SILKWORM_PERF_BROKER_ENV"))...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start node %d: %v", n.id, err)
	}
	n.cmd = cmd
	n.exited = make(chan struct{})
	exited := n.exited
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
}

// waitReady polls until the node answers Metadata listing brokers brokers.
func (n *perfNode) waitReady(t *testing.T, brokers int) {
	t.Helper()
	exited := n.exited
	err := clusterPoll(clusterStartTimeout, func() error {
		select {
		case <-exited:
			return clusterStop{fmt.Errorf("node exited during startup: %v", n.cmd.ProcessState)}
		default:
		}
		return probeBrokers(n.addr, brokers)
	})
	if err != nil {
		t.Fatalf("node %d on %s not ready: %v\nlog:\n%s", n.id, n.addr, err, clusterTail(n.log, 60))
	}
}

// waitExit waits up to timeout for the current incarnation to exit, then
// kills it; it does nothing when the node is not running.
func (n *perfNode) waitExit(t *testing.T, timeout time.Duration) {
	t.Helper()
	if n.cmd == nil {
		return
	}
	select {
	case <-n.exited:
	case <-time.After(timeout):
		t.Logf("node %d did not exit within %v of SIGTERM: killing it", n.id, timeout)
		if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("kill node %d: %v", n.id, err)
		}
		<-n.exited
	}
	n.cmd = nil
}

// kill stops the current incarnation with SIGKILL and waits for it to
// exit; it does nothing when the node is not running.
func (n *perfNode) kill(t *testing.T) {
	t.Helper()
	if n.cmd == nil {
		return
	}
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("kill node %d: %v", n.id, err)
	}
	<-n.exited
	n.cmd = nil
}

// node returns the node with the given id.
func (c *perfCluster) node(t *testing.T, id int32) *perfNode {
	t.Helper()
	for _, n := range c.nodes {
		if n.id == id {
			return n
		}
	}
	t.Fatalf("no node %d", id)
	return nil
}

// probeBrokers succeeds once addr answers a Metadata request that lists at
// least want brokers.
func probeBrokers(addr string, want int) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	conn.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if len(md.Brokers) < want {
		return fmt.Errorf("metadata lists %d brokers, want %d", len(md.Brokers), want)
	}
	return nil
}

// clusterStop makes clusterPoll give up at once.
type clusterStop struct{ error }

// clusterPoll polls cond until it returns nil, returns a clusterStop, or
// the deadline passes; it returns the last error.
func clusterPoll(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		var stop clusterStop
		if errors.As(err, &stop) {
			return stop.error
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %v: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for an outcome
	}
}

// clusterTail returns the last n lines of a file, for failure messages.
func clusterTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(read %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
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
