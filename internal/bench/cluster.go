package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/tools/cli"
)

// Cluster is where a benchmark runs: an embedded cluster the runner started
// or a remote one. Methods are safe for concurrent use.
type Cluster interface {
	// Bootstrap is the bootstrap.servers value for clients.
	Bootstrap() string
	// Brokers is the number of brokers.
	Brokers() int
	// Embedded reports whether the runner started (and owns) the brokers.
	Embedded() bool
	// Usage is the CPU time and resident memory of the broker processes
	// (ok is false when they cannot be read, e.g. a remote cluster).
	Usage() (u Usage, ok bool)
	// LogBytes is the size of the topic's log segments on disk, summed
	// over partitions and replicas.
	LogBytes(ctx context.Context, topic string) (int64, error)
	// Close stops brokers the runner started and removes their data.
	Close() error
}

// Usage is what the broker processes used, summed over brokers.
type Usage struct {
	CPU time.Duration // user + system time since the process started
	RSS int64         // resident set size in bytes
}

// MaxEmbeddedBrokers is the largest embedded cluster StartEmbedded runs:
// the seeds' replica experiments need three brokers. Points that need
// more are skipped with "needs N brokers".
const MaxEmbeddedBrokers = 3

// nodeProps are the server properties of node i (0-based) of an n-node
// embedded cluster whose client ports are ports[0..n) and controller ports
// are ctrlPorts[0..n). One node runs as Silkworm's single-node default;
// more are each broker and Raft controller (KRaft's combined mode), the
// voters being every node's CONTROLLER listener.
func nodeProps(i, n int, dataDir string, ports, ctrlPorts []int) (map[string]string, error) {
	if n < 1 || i < 0 || i >= n || len(ports) < n || len(ctrlPorts) < n {
		return nil, fmt.Errorf("node %d of %d with %d ports and %d controller ports", i, n, len(ports), len(ctrlPorts))
	}
	if n > MaxEmbeddedBrokers {
		return nil, fmt.Errorf("embedded cluster of %d brokers: %w", n, ErrTooManyBrokers)
	}
	client := "PLAINTEXT://127.0.0.1:" + strconv.Itoa(ports[i])
	p := map[string]string{
		"log.dirs":  dataDir,
		"listeners": client,
		// The group coordinator's join delay would count as rebalance
		// time in every consumer run.
		"group.initial.rebalance.delay.ms": "0",
	}
	if n == 1 {
		return p, nil
	}
	voters := make([]string, n)
	for j := range n {
		voters[j] = fmt.Sprintf("%d@127.0.0.1:%d", j+1, ctrlPorts[j])
	}
	maps.Copy(p, map[string]string{
		"node.id":                        strconv.Itoa(i + 1),
		"process.roles":                  "broker,controller",
		"listeners":                      client + ",CONTROLLER://127.0.0.1:" + strconv.Itoa(ctrlPorts[i]),
		"advertised.listeners":           client,
		"controller.listener.names":      "CONTROLLER",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name":     "PLAINTEXT",
		"controller.quorum.voters":       strings.Join(voters, ","),
	})
	return p, nil
}

// IgnoredSettings are the broker settings among props that Silkworm
// accepts (Kafka knows them) but does not apply, sorted; the runner notes
// them so that a flat line in a sweep of one is not read as a finding.
// Props the config cannot parse are left to the broker to refuse.
func IgnoredSettings(props map[string]string) []string {
	var overrides []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		overrides = append(overrides, k+"="+props[k])
	}
	cfg, err := config.Load("", overrides)
	if err != nil {
		return nil
	}
	return cfg.Ignored
}

// ErrTooManyBrokers is returned when an embedded cluster of more brokers
// than MaxEmbeddedBrokers is asked for.
var ErrTooManyBrokers = errors.New("more brokers than the embedded cluster runs")

// EmbeddedConfig configures an embedded cluster of `silkworm server` child
// processes.
type EmbeddedConfig struct {
	// Executable is the silkworm binary; "" means os.Executable().
	Executable string
	// Args come before the --override flags; nil means
	// {"server", "--log-level", "warn"}.
	Args []string
	// Brokers is the number of brokers (1..MaxEmbeddedBrokers).
	Brokers int
	// Props are server properties for every broker (the scenario's
	// broker settings), on top of the per-node ones.
	Props map[string]string
	// Dir is where the data dirs and broker logs go; "" makes a temp dir
	// that Close removes.
	Dir string
	// StartTimeout bounds the wait for the brokers to answer.
	StartTimeout time.Duration
}

// DefaultEmbeddedConfig is one broker from this binary.
func DefaultEmbeddedConfig() EmbeddedConfig {
	return EmbeddedConfig{Brokers: 1, StartTimeout: 30 * time.Second}
}

// Validate reports a config StartEmbedded cannot run.
func (c EmbeddedConfig) Validate() error {
	if c.Brokers < 1 {
		return fmt.Errorf("embedded cluster: %d brokers", c.Brokers)
	}
	if c.Brokers > MaxEmbeddedBrokers {
		return fmt.Errorf("embedded cluster of %d brokers (at most %d): %w", c.Brokers, MaxEmbeddedBrokers, ErrTooManyBrokers)
	}
	if c.StartTimeout <= 0 {
		return errors.New("embedded cluster: StartTimeout must be > 0")
	}
	return nil
}

// EmbeddedCluster is brokers running as child processes, each with its own
// data dir and port. Safe for concurrent use.
type EmbeddedCluster struct {
	cfg      EmbeddedConfig
	dir      string
	ownDir   bool
	dataDirs []string
	addrs    []string

	mu    sync.Mutex // guards procs
	procs []*exec.Cmd
}

// StartEmbedded starts the brokers, all at once (in a cluster each node's
// start waits for the Raft quorum of the others), and waits until each
// answers and lists all of them in DescribeCluster. On error everything
// started is stopped again.
func StartEmbedded(ctx context.Context, cfg EmbeddedConfig) (*EmbeddedCluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("embedded cluster: find silkworm binary: %w", err)
		}
		cfg.Executable = exe
	}
	if cfg.Args == nil {
		cfg.Args = []string{"server", "--log-level", "warn"}
	}
	c := &EmbeddedCluster{cfg: cfg, dir: cfg.Dir}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "silkworm-bench-")
		if err != nil {
			return nil, fmt.Errorf("embedded cluster: %w", err)
		}
		c.dir, c.ownDir = d, true
	}
	ports, err := freePorts(2 * cfg.Brokers)
	if err != nil {
		c.Close()
		return nil, err
	}
	for i := range cfg.Brokers {
		dataDir := filepath.Join(c.dir, fmt.Sprintf("broker-%d", i))
		props, err := nodeProps(i, cfg.Brokers, dataDir, ports[:cfg.Brokers], ports[cfg.Brokers:])
		if err != nil {
			c.Close()
			return nil, err
		}
		all := maps.Clone(cfg.Props)
		if all == nil {
			all = map[string]string{}
		}
		maps.Copy(all, props)
		if err := c.startNode(i, all); err != nil {
			c.Close()
			return nil, err
		}
		c.dataDirs = append(c.dataDirs, dataDir)
		c.addrs = append(c.addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[i])))
	}
	if err := c.waitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *EmbeddedCluster) startNode(i int, props map[string]string) error {
	args := slices.Clone(c.cfg.Args)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		args = append(args, "--override", k+"="+props[k])
	}
	logPath := filepath.Join(c.dir, fmt.Sprintf("broker-%d.log", i))
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("broker %d log: %w", i, err)
	}
	cmd := exec.Command(c.cfg.Executable, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Own process group: Ctrl-C on the terminal reaches the runner, which
	// stops the brokers itself after keeping what finished. Pdeathsig
	// ends them if the runner dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start broker %d (%s): %w", i, c.cfg.Executable, err)
	}
	logf.Close() // the child holds its own descriptor
	c.mu.Lock()
	c.procs = append(c.procs, cmd)
	c.mu.Unlock()
	return nil
}

// waitReady polls until every broker answers and, in a cluster of more
// than one, until each lists all of them in DescribeCluster (so a topic
// with a replication factor up to Brokers can be created). It fails as
// soon as a child exits, or when the start timeout passes.
func (c *EmbeddedCluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartTimeout)
	defer cancel()
	ready := make([]bool, len(c.addrs))
	var last error
	for {
		for i := range c.addrs {
			if err := c.exited(i); err != nil {
				return err
			}
		}
		all := true
		for i, addr := range c.addrs {
			if ready[i] {
				continue
			}
			if err := brokerReady(ctx, addr, len(c.addrs)); err != nil {
				last = fmt.Errorf("broker %d at %s: %w", i, addr, err)
				all = false
				continue
			}
			ready[i] = true
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			i := slices.Index(ready, false)
			return fmt.Errorf("embedded cluster of %d brokers not ready within %v: %w (last: %v); log of broker %d:\n%s",
				len(c.addrs), c.cfg.StartTimeout, ctx.Err(), last, i, c.logTail(i))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// exited reports an error when broker i has exited.
func (c *EmbeddedCluster) exited(i int) error {
	c.mu.Lock()
	p := c.procs[i].Process
	c.mu.Unlock()
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(p.Pid, &ws, syscall.WNOHANG, nil)
	if err != nil || pid == 0 {
		return nil
	}
	return fmt.Errorf("broker %d exited (%v); log:\n%s", i, ws, c.logTail(i))
}

func (c *EmbeddedCluster) logTail(i int) string {
	b, _ := os.ReadFile(filepath.Join(c.dir, fmt.Sprintf("broker-%d.log", i)))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// brokerReady asks the broker at addr for the cluster's brokers and
// reports an error until it answers with (at least) want of them.
func brokerReady(ctx context.Context, addr string, want int) error {
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cl, err := cli.NewClient(pctx, cli.Admin, cli.Props{"bootstrap.servers": addr})
	if err != nil {
		return err
	}
	defer cl.Close()
	if want <= 1 {
		return nil
	}
	// Ask this broker (the one seed), not whichever one the client picks.
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return errors.New("no seed broker")
	}
	req := kmsg.NewPtrDescribeClusterRequest()
	resp, err := req.RequestWith(pctx, seeds[0])
	if err != nil {
		return fmt.Errorf("describe cluster: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("describe cluster: %w", err)
	}
	if len(resp.Brokers) < want {
		return fmt.Errorf("describe cluster lists %d of %d brokers", len(resp.Brokers), want)
	}
	return nil
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Bootstrap implements Cluster.
func (c *EmbeddedCluster) Bootstrap() string { return strings.Join(c.addrs, ",") }

// Brokers implements Cluster.
func (c *EmbeddedCluster) Brokers() int { return len(c.addrs) }

// Embedded implements Cluster.
func (c *EmbeddedCluster) Embedded() bool { return true }

// Props are the broker settings the cluster was started with.
func (c *EmbeddedCluster) Props() map[string]string { return c.cfg.Props }

// Usage implements Cluster from /proc/<pid>/stat and /proc/<pid>/status.
func (c *EmbeddedCluster) Usage() (Usage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var u Usage
	for _, p := range c.procs {
		pu, err := procUsage(p.Process.Pid)
		if err != nil {
			return Usage{}, false
		}
		u.CPU += pu.CPU
		u.RSS += pu.RSS
	}
	return u, len(c.procs) > 0
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat;
// it is 100 on every Linux architecture Go supports.
const clockTicks = 100

func procUsage(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, err
	}
	// The command name (field 2) may hold spaces; fields after it start
	// after the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return Usage{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return Usage{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return Usage{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	u := Usage{CPU: time.Duration(utime+stime) * time.Second / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, err
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return Usage{}, fmt.Errorf("parse VmRSS of %d: %w", pid, err)
			}
			u.RSS = kb * 1024
		}
	}
	return u, nil
}

// LogBytes implements Cluster by walking the data dirs (du of the
// topic's partition directories, .log files only).
func (c *EmbeddedCluster) LogBytes(_ context.Context, topic string) (int64, error) {
	var total int64
	for _, d := range c.dataDirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			return 0, fmt.Errorf("log bytes: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			j := strings.LastIndexByte(name, '-')
			if !e.IsDir() || j < 0 || name[:j] != topic {
				continue
			}
			if _, err := strconv.Atoi(name[j+1:]); err != nil {
				continue
			}
			err := filepath.WalkDir(filepath.Join(d, name), func(p string, de fs.DirEntry, err error) error {
				if err != nil {
					if errors.Is(err, fs.ErrNotExist) {
						return nil // a segment deleted while walking
					}
					return err
				}
				if de.IsDir() || !strings.HasSuffix(p, ".log") {
					return nil
				}
				info, err := de.Info()
				if err != nil {
					if errors.Is(err, fs.ErrNotExist) {
						return nil
					}
					return err
				}
				total += info.Size()
				return nil
			})
			if err != nil {
				return 0, fmt.Errorf("log bytes of %s: %w", name, err)
			}
		}
	}
	return total, nil
}

// Close implements Cluster: SIGTERM to each broker, SIGKILL after 10 s,
// then the data dirs are removed (when Dir was not given).
func (c *EmbeddedCluster) Close() error {
	c.mu.Lock()
	procs := c.procs
	c.procs = nil
	c.mu.Unlock()
	for _, p := range procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}
	if c.ownDir {
		return os.RemoveAll(c.dir)
	}
	return nil
}

// RemoteCluster is a cluster the runner did not start, reached through
// bootstrap servers. Safe for concurrent use.
type RemoteCluster struct {
	bootstrap string
	brokers   int
	adm       *kadm.Client
}

// ConnectRemote connects to bootstrap and counts its brokers.
func ConnectRemote(ctx context.Context, bootstrap string) (*RemoteCluster, error) {
	cl, err := cli.NewClient(ctx, cli.Admin, cli.Props{"bootstrap.servers": bootstrap})
	if err != nil {
		return nil, err
	}
	adm := kadm.NewClient(cl)
	md, err := adm.BrokerMetadata(ctx)
	if err != nil {
		adm.Close()
		return nil, fmt.Errorf("metadata of %s: %w", bootstrap, err)
	}
	return &RemoteCluster{bootstrap: bootstrap, brokers: len(md.Brokers), adm: adm}, nil
}

// Bootstrap implements Cluster.
func (r *RemoteCluster) Bootstrap() string { return r.bootstrap }

// Brokers implements Cluster.
func (r *RemoteCluster) Brokers() int { return r.brokers }

// Embedded implements Cluster.
func (r *RemoteCluster) Embedded() bool { return false }

// Usage implements Cluster: a remote cluster's processes cannot be seen.
func (r *RemoteCluster) Usage() (Usage, bool) { return Usage{}, false }

// LogBytes implements Cluster with DescribeLogDirs.
func (r *RemoteCluster) LogBytes(ctx context.Context, topic string) (int64, error) {
	return describeLogBytes(ctx, r.adm, topic)
}

func describeLogBytes(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	dirs, err := adm.DescribeAllLogDirs(ctx, kadm.TopicsSet{topic: nil})
	if err != nil {
		return 0, fmt.Errorf("describe log dirs: %w", err)
	}
	var total int64
	for _, byDir := range dirs {
		for _, d := range byDir {
			if d.Err != nil {
				return 0, fmt.Errorf("describe log dir %s on broker %d: %w", d.Dir, d.Broker, d.Err)
			}
			for _, p := range d.Topics[topic] {
				total += p.Size
			}
		}
	}
	return total, nil
}

// Close implements Cluster.
func (r *RemoteCluster) Close() error { r.adm.Close(); return nil }
