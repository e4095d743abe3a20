// Package testcluster starts silkworm servers as child processes for the
// end-to-end test suites (test/interop, test/perf): a single broker or a
// cluster of nodes on 127.0.0.1 that are each a broker and a Raft
// controller (KRaft combined mode), started from the documented
// config/cluster/node<N>.properties with their ports, voters and data dirs
// (under t.TempDir) overridden.
//
// A Node is one server process across its incarnations: Launch starts it,
// WaitReady polls until it answers Metadata, Kill stops it with SIGKILL and
// Terminate with SIGTERM, and a later Launch restarts it on the same data
// dir and ports. The combined output of every incarnation goes to one log
// file whose last lines the cluster logs when a test fails.
//
// It also holds what the suites share around the processes: building
// ./cmd/silkworm, free loopback ports, polling with a deadline and log
// tails. The types are used from the test goroutine only; they are not
// safe for concurrent use. There is no non-test use of this package.
package testcluster

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultStartTimeout bounds WaitReady when a Node has no StartTimeout.
// It is a hang guard, not an assertion about speed.
const DefaultStartTimeout = 60 * time.Second

// terminateTimeout is how long Cluster.Terminate waits for each node to
// exit after SIGTERM before it kills it.
const terminateTimeout = 30 * time.Second

// Node is one silkworm server process and its restarts.
type Node struct {
	ID   int32
	Name string   // for messages; "" means "node <ID>"
	Bin  string   // the silkworm binary
	Args []string // its arguments, from "server" on
	Env  []string // added to the test process's environment
	Dir  string   // log.dirs
	Addr string   // the client listener, host:port
	Log  string   // combined stdout+stderr of every incarnation

	// StartTimeout bounds WaitReady; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// Ready reports nil once the node serves; nil means Probe(Addr, 1).
	Ready func() error

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

func (n *Node) name() string {
	if n.Name != "" {
		return n.Name
	}
	return fmt.Sprintf("node %d", n.ID)
}

// Launch starts a new incarnation without waiting for it to serve.
func (n *Node) Launch(t testing.TB) {
	t.Helper()
	logf, err := os.OpenFile(n.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("open %s log: %v", n.name(), err)
	}
	fmt.Fprintf(logf, "==== start %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(n.Bin, n.Args...)
	if len(n.Env) > 0 {
		cmd.Env = append(os.Environ(), n.Env...)
	}
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", n.name(), err)
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

// WaitReady polls Ready until it succeeds, failing the test when the
// process exits or StartTimeout passes first.
func (n *Node) WaitReady(t testing.TB) {
	t.Helper()
	ready := n.Ready
	if ready == nil {
		ready = func() error { return Probe(n.Addr, 1) }
	}
	timeout := n.StartTimeout
	if timeout == 0 {
		timeout = DefaultStartTimeout
	}
	err := Poll(timeout, func() error {
		if err := n.Exited(); err != nil {
			return GiveUp(fmt.Errorf("%w during startup", err))
		}
		return ready()
	})
	if err != nil {
		t.Fatalf("%s on %s not ready: %v\nlog:\n%s", n.name(), n.Addr, err, Tail(n.Log, 60))
	}
}

// Start launches the node and waits until it is ready.
func (n *Node) Start(t testing.TB) {
	t.Helper()
	n.Launch(t)
	n.WaitReady(t)
}

// Running reports whether an incarnation was launched and has not been
// waited for by Kill, Terminate or WaitExit.
func (n *Node) Running() bool { return n.cmd != nil }

// Pid is the process id of the current incarnation; the node must be
// running.
func (n *Node) Pid() int { return n.cmd.Process.Pid }

// Signal sends sig to the current incarnation; the node must be running.
func (n *Node) Signal(sig os.Signal) error { return n.cmd.Process.Signal(sig) }

// Exited returns nil while the current incarnation runs, else an error
// naming how it exited.
func (n *Node) Exited() error {
	if n.cmd == nil {
		return errors.New("not running")
	}
	select {
	case <-n.exited:
		return fmt.Errorf("exited (%v)", n.cmd.ProcessState)
	default:
		return nil
	}
}

// Kill stops the current incarnation with SIGKILL and waits for it to
// exit; it does nothing when the node is not running.
func (n *Node) Kill(t testing.TB) {
	t.Helper()
	if n.cmd == nil {
		return
	}
	select {
	case <-n.exited:
	default:
		if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("kill %s: %v", n.name(), err)
		}
		<-n.exited
	}
	n.cmd = nil
}

// Terminate sends the current incarnation SIGTERM and waits up to timeout
// for it to exit, then kills it; it does nothing when the node is not
// running.
func (n *Node) Terminate(t testing.TB, timeout time.Duration) {
	t.Helper()
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	n.WaitExit(t, timeout)
}

// WaitExit waits up to timeout for the current incarnation to exit, then
// kills it; it does nothing when the node is not running.
func (n *Node) WaitExit(t testing.TB, timeout time.Duration) {
	t.Helper()
	if n.cmd == nil {
		return
	}
	select {
	case <-n.exited:
	case <-time.After(timeout):
		t.Logf("%s did not exit within %v: killing it", n.name(), timeout)
		if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("kill %s: %v", n.name(), err)
		}
		<-n.exited
	}
	n.cmd = nil
}

// Config describes a cluster for Start.
type Config struct {
	Bin   string // the silkworm binary
	Nodes int

	// Properties is node id's --config file; nil means the module's
	// config/cluster/node<min(id,3)>.properties.
	Properties func(id int) string
	// Listener is the security protocol of the client listener (also the
	// advertised one); "" means PLAINTEXT.
	Listener string
	// Overrides ("key=value") come after the cluster's own settings and so
	// win over them; NodeOverrides(id), if set, come after Overrides.
	Overrides     []string
	NodeOverrides func(id int) []string
	// LogLevel is passed as --log-level when set.
	LogLevel string
	// Env is added to the nodes' environment, not the test's.
	Env []string

	// StartTimeout bounds each node's WaitReady; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// ReadyBrokers is how many brokers a node's Metadata must list for it
	// to be ready; 0 means 1.
	ReadyBrokers int
	// Ready, if set, replaces the Metadata probe of ReadyBrokers.
	Ready func(n *Node) error

	// ClientOpts come first in every Client's options, after the seeds.
	ClientOpts []kgo.Opt
	// Terminate makes the test's cleanup stop the nodes with SIGTERM
	// (Cluster.Terminate) instead of SIGKILL.
	Terminate bool
}

// Cluster is a set of silkworm server processes that form one cluster.
type Cluster struct {
	Nodes []*Node
	cfg   Config
}

// Start starts cfg.Nodes nodes, data dirs and logs under t.TempDir, and
// returns once every node is ready. They are stopped when the test ends,
// and on a failure the last lines of each node's log are logged.
func Start(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	n := cfg.Nodes
	if cfg.Properties == nil {
		root, err := ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Properties = func(id int) string {
			return filepath.Join(root, "config", "cluster", fmt.Sprintf("node%d.properties", min(id, 3)))
		}
	}
	listener := cmp.Or(cfg.Listener, "PLAINTEXT")
	tmp := t.TempDir()
	ports := Ports(t, 2*n) // client ports, then controller ports
	var voters []string
	for i := range n {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, ports[n+i]))
	}
	c := &Cluster{cfg: cfg}
	for i := range n {
		id := i + 1
		node := &Node{
			ID:           int32(id),
			Bin:          cfg.Bin,
			Env:          cfg.Env,
			Dir:          filepath.Join(tmp, fmt.Sprintf("node%d", id)),
			Addr:         net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i])),
			Log:          filepath.Join(tmp, fmt.Sprintf("node%d.log", id)),
			StartTimeout: cfg.StartTimeout,
		}
		node.Args = []string{"server", "--config", cfg.Properties(id)}
		if cfg.LogLevel != "" {
			node.Args = append(node.Args, "--log-level", cfg.LogLevel)
		}
		overrides := []string{
			"node.id=" + strconv.Itoa(id),
			fmt.Sprintf("listeners=%s://%s,CONTROLLER://127.0.0.1:%d", listener, node.Addr, ports[n+i]),
			fmt.Sprintf("advertised.listeners=%s://%s", listener, node.Addr),
			"controller.quorum.voters=" + strings.Join(voters, ","),
			"log.dirs=" + node.Dir,
		}
		overrides = append(overrides, cfg.Overrides...)
		if cfg.NodeOverrides != nil {
			overrides = append(overrides, cfg.NodeOverrides(id)...)
		}
		for _, o := range overrides {
			node.Args = append(node.Args, "--override", o)
		}
		if cfg.Ready != nil {
			node.Ready = func() error { return cfg.Ready(node) }
		} else {
			want := max(cfg.ReadyBrokers, 1)
			node.Ready = func() error { return Probe(node.Addr, want) }
		}
		c.Nodes = append(c.Nodes, node)
	}
	t.Cleanup(func() {
		if cfg.Terminate {
			c.Terminate(t)
		} else {
			c.Kill(t)
		}
		if t.Failed() {
			for _, node := range c.Nodes {
				t.Logf("node %d log (%s), last lines:\n%s", node.ID, node.Log, Tail(node.Log, 40))
			}
		}
	})
	// The quorum needs a majority of voters before any node serves, so
	// launch them all before waiting for one.
	for _, node := range c.Nodes {
		node.Launch(t)
	}
	for _, node := range c.Nodes {
		node.WaitReady(t)
	}
	return c
}

// Seeds lists every node's client address.
func (c *Cluster) Seeds() []string {
	var s []string
	for _, node := range c.Nodes {
		s = append(s, node.Addr)
	}
	return s
}

// Node returns the node with the given id.
func (c *Cluster) Node(t testing.TB, id int32) *Node {
	t.Helper()
	for _, n := range c.Nodes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("no node %d", id)
	return nil
}

// Client returns a franz-go client seeded with every node, with the
// cluster's ClientOpts and then opts, closed when the test ends.
func (c *Cluster) Client(t testing.TB, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{kgo.SeedBrokers(c.Seeds()...)}, c.cfg.ClientOpts...)
	cl, err := kgo.NewClient(append(all, opts...)...)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Kill stops every running node with SIGKILL.
func (c *Cluster) Kill(t testing.TB) {
	t.Helper()
	for _, node := range c.Nodes {
		node.Kill(t)
	}
}

// Terminate sends every running node SIGTERM at once, then waits for each
// to exit, killing it after 30 s.
func (c *Cluster) Terminate(t testing.TB) {
	t.Helper()
	for _, node := range c.Nodes {
		if node.cmd != nil {
			_ = node.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, node := range c.Nodes {
		node.WaitExit(t, terminateTimeout)
	}
}

// Probe succeeds once addr accepts TCP connections and answers a Metadata
// request that lists at least want brokers.
func Probe(addr string, want int) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	conn.Close()
	return ProbeMetadata(addr, want)
}

// ProbeMetadata succeeds once a client of addr with opts (TLS, SASL) gets
// a Metadata answer that lists at least want brokers.
func ProbeMetadata(addr string, want int, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RetryTimeout(time.Second)}, opts...)...)
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

// giveUp makes Poll return at once.
type giveUp struct{ error }

// GiveUp wraps err so that Poll returns it at once instead of polling on.
func GiveUp(err error) error { return giveUp{err} }

// Poll polls cond until it returns nil, returns an error of GiveUp, or the
// deadline passes; it returns the last error.
func Poll(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		var stop giveUp
		if errors.As(err, &stop) {
			return stop.error
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %v: %w", timeout, err)
		}
		runtime.Gosched()
		time.Sleep(20 * time.Millisecond) // polling interval, not a wait for an outcome
	}
}

// Tail returns the last n lines of a file, for failure messages.
func Tail(path string, n int) string {
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

// ModuleRoot finds the directory holding go.mod, walking up from the
// working directory (a test's package directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getwd: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// Build compiles the module's ./cmd/silkworm, with -race when race is
// set, into dir and returns the binary's path.
func Build(dir string, race bool) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "silkworm")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	args = append(args, "./cmd/silkworm")
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

// FreePort returns a loopback port that is free now, picked at random
// below Linux's default ephemeral range (32768-60999): a port the kernel
// hands out for outgoing connections could be taken by a client between a
// broker's kill and its restart on the same port.
func FreePort(t testing.TB) int {
	t.Helper()
	var lastErr error
	for range 100 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			lastErr = err
			continue
		}
		ln.Close()
		return port
	}
	t.Fatalf("find a free port: %v", lastErr)
	return 0
}

// Ports returns n distinct free loopback ports (FreePort).
func Ports(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for len(ports) < n {
		if p := FreePort(t); !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports
}
