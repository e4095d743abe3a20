package interop

import (
	"context"
	"errors"
	"fmt"
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

	recordbatch "github.com/silkworm/silkworm/internal/record"
)

// processCluster is a cluster of silkworm server child processes on
// 127.0.0.1, each both a broker and a Raft controller. Every node starts
// from the documented config/cluster/node<N>.properties with its ports,
// voters and data dir overridden, so the test also checks that those files
// describe a working cluster. Its methods are called from the test
// goroutine only; it is not safe for concurrent use.
type processCluster struct {
	nodes []*clusterNode
}

// clusterNode is one silkworm server process of a processCluster.
type clusterNode struct {
	id   int32
	bin  string
	dir  string // log.dirs
	addr string // PLAINTEXT listener, host:port
	log  string // combined stdout+stderr of every incarnation
	args []string

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

// startProcessCluster starts n nodes and returns once every one of them
// answers Metadata. overrides are extra server properties for every node;
// they come after the cluster's own and so win over them.
func startProcessCluster(t *testing.T, n int, overrides ...string) *processCluster {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := silkwormBinary(t)
	tmp := t.TempDir()
	clientPorts := make([]int, n)
	controllerPorts := make([]int, n)
	var voters []string
	used := map[int]bool{}
	distinctPort := func() int {
		for {
			if port := freePort(t); !used[port] {
				used[port] = true
				return port
			}
		}
	}
	for i := range n {
		clientPorts[i] = distinctPort()
		controllerPorts[i] = distinctPort()
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, controllerPorts[i]))
	}
	c := &processCluster{}
	for i := range n {
		id := i + 1
		props := filepath.Join(root, "config", "cluster", fmt.Sprintf("node%d.properties", min(id, 3)))
		node := &clusterNode{
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
		}
		for _, o := range overrides {
			node.args = append(node.args, "--override", o)
		}
		c.nodes = append(c.nodes, node)
	}
	t.Cleanup(func() {
		for _, node := range c.nodes {
			node.kill(t)
		}
		if t.Failed() {
			for _, node := range c.nodes {
				t.Logf("node %d log (%s), last lines:\n%s", node.id, node.log, tail(node.log, 40))
			}
		}
	})
	// The quorum needs a majority of voters before any node serves, so
	// launch them all before waiting for one.
	for _, node := range c.nodes {
		node.launch(t)
	}
	for _, node := range c.nodes {
		node.waitReady(t)
	}
	return c
}

// seeds lists every node's client address.
func (c *processCluster) seeds() []string {
	var s []string
	for _, node := range c.nodes {
		s = append(s, node.addr)
	}
	return s
}

// node returns the node with the given id.
func (c *processCluster) node(id int32) *clusterNode {
	return c.nodes[id-1]
}

// client returns a franz-go client seeded with every node, closed when the
// test ends.
func (c *processCluster) client(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(c.seeds()...),
		kgo.MetadataMinAge(100 * time.Millisecond),
	}, opts...)...)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// partitionDetail returns what the cluster's metadata says about one
// partition.
func partitionDetail(ctx context.Context, adm *kadm.Client, topic string, p int32) (kadm.PartitionDetail, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return kadm.PartitionDetail{}, fmt.Errorf("metadata: %w", err)
	}
	td, ok := md.Topics[topic]
	if !ok {
		return kadm.PartitionDetail{}, fmt.Errorf("metadata has no topic %s", topic)
	}
	if td.Err != nil {
		return kadm.PartitionDetail{}, fmt.Errorf("topic %s: %w", topic, td.Err)
	}
	pd, ok := td.Partitions[p]
	if !ok {
		return kadm.PartitionDetail{}, fmt.Errorf("metadata has no partition %s-%d", topic, p)
	}
	if pd.Err != nil {
		return pd, fmt.Errorf("partition %s-%d: %w", topic, p, pd.Err)
	}
	return pd, nil
}

// waitFullISR polls until every partition of topic has a leader and all
// of its replicas in the ISR.
func waitFullISR(ctx context.Context, adm *kadm.Client, topic string, partitions int32, timeout time.Duration) error {
	return waitFor(timeout, func() error {
		for p := range partitions {
			pd, err := partitionDetail(ctx, adm, topic, p)
			if err != nil {
				return err
			}
			if pd.Leader < 0 || len(pd.ISR) != len(pd.Replicas) {
				return fmt.Errorf("%s-%d: leader %d, replicas %v, isr %v", topic, p, pd.Leader, pd.Replicas, pd.ISR)
			}
		}
		return nil
	})
}

// launch starts the process without waiting for it to serve.
func (n *clusterNode) launch(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("open node %d log: %v", n.id, err)
	}
	fmt.Fprintf(logf, "==== start %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(n.bin, n.args...)
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

// waitReady polls until the node answers Metadata.
func (n *clusterNode) waitReady(t *testing.T) {
	t.Helper()
	exited := n.exited
	err := waitFor(brokerStartTimeout, func() error {
		select {
		case <-exited:
			return errStop{fmt.Errorf("node exited during startup: %v", n.cmd.ProcessState)}
		default:
		}
		return probe(n.addr)
	})
	if err != nil {
		t.Fatalf("node %d on %s not ready: %v\nlog:\n%s", n.id, n.addr, err, tail(n.log, 60))
	}
}

// kill stops the current incarnation with SIGKILL and waits for it to
// exit; it does nothing when the node is not running.
func (n *clusterNode) kill(t *testing.T) {
	t.Helper()
	if n.cmd == nil {
		return
	}
	select {
	case <-n.exited:
	default:
		if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("kill node %d: %v", n.id, err)
		}
		<-n.exited
	}
	n.cmd = nil
}

// batchInfo is what identifies a stored record batch: its header fields
// and the CRC over its attributes and records.
type batchInfo struct {
	BaseOffset           int64
	LastOffsetDelta      int32
	RecordCount          int32
	PartitionLeaderEpoch int32
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	CRC                  uint32
}

func (b batchInfo) lastOffset() int64 { return b.BaseOffset + int64(b.LastOffsetDelta) }

// replicaLogDiff compares the batches of several replicas of one partition
// that end below highWatermark, and describes the first difference, or
// returns "" when they are identical. It also reports a replica whose
// batches do not cover [0, highWatermark) without gaps.
func replicaLogDiff(replicas map[int32][]batchInfo, highWatermark int64) string {
	ids := make([]int32, 0, len(replicas))
	for id := range replicas {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	below := func(bs []batchInfo) []batchInfo {
		var out []batchInfo
		for _, b := range bs {
			if b.lastOffset() < highWatermark {
				out = append(out, b)
			}
		}
		return out
	}
	for _, id := range ids {
		next := int64(0)
		for _, b := range below(replicas[id]) {
			if b.BaseOffset != next {
				return fmt.Sprintf("replica %d: batch at offset %d, want %d", id, b.BaseOffset, next)
			}
			next = b.lastOffset() + 1
		}
		if next != highWatermark {
			return fmt.Sprintf("replica %d: batches end at offset %d, high watermark is %d", id, next, highWatermark)
		}
	}
	if len(ids) < 2 {
		return ""
	}
	ref := below(replicas[ids[0]])
	for _, id := range ids[1:] {
		got := below(replicas[id])
		for i := range min(len(ref), len(got)) {
			if ref[i] != got[i] {
				return fmt.Sprintf("batch %d differs: replica %d has %+v, replica %d has %+v", i, ids[0], ref[i], id, got[i])
			}
		}
		if len(ref) != len(got) {
			return fmt.Sprintf("replica %d has %d batches below the high watermark, replica %d has %d", ids[0], len(ref), id, len(got))
		}
	}
	return ""
}

// readReplicaBatches reads the headers of every batch in the segment files
// of one partition replica (<log.dirs>/<topic>-<partition>/*.log), in
// offset order. A torn batch at the end of a segment ends that segment's
// list: the files may be read while the broker appends.
func readReplicaBatches(logDir, topic string, p int32) ([]batchInfo, error) {
	dir := filepath.Join(logDir, fmt.Sprintf("%s-%d", topic, p))
	segments, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, fmt.Errorf("list segments of %s: %w", dir, err)
	}
	slices.Sort(segments) // names are zero-padded base offsets
	var out []batchInfo
	for _, seg := range segments {
		data, err := os.ReadFile(seg)
		if err != nil {
			return nil, fmt.Errorf("read segment: %w", err)
		}
		for pos := int64(0); pos < int64(len(data)); {
			h, err := recordbatch.ParseHeader(data[pos:])
			if err != nil || h.Magic != 2 || h.BatchLength <= 0 || pos+h.Size() > int64(len(data)) {
				break
			}
			out = append(out, batchInfo{
				BaseOffset:           h.BaseOffset,
				LastOffsetDelta:      h.LastOffsetDelta,
				RecordCount:          h.RecordCount,
				PartitionLeaderEpoch: h.PartitionLeaderEpoch,
				ProducerID:           h.ProducerID,
				ProducerEpoch:        h.ProducerEpoch,
				BaseSequence:         h.BaseSequence,
				CRC:                  h.CRC,
			})
			pos += h.Size()
		}
	}
	return out, nil
}
