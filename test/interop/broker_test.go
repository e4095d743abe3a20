package interop

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/silkworm/silkworm/internal/testcluster"
)

// brokerStartTimeout bounds how long we poll for a starting broker. It is a
// hang guard, not an assertion about speed.
const brokerStartTimeout = 60 * time.Second

// broker is the Kafka endpoint under test. Its methods are called from the
// test goroutine only; it is not safe for concurrent use.
type broker interface {
	// Addr is the bootstrap address, host:port.
	Addr() string
	// CanRestart reports whether Restart is supported.
	CanRestart() bool
	// Restart kills the broker abruptly and starts it again on the same
	// data dir and port, returning once it serves requests.
	Restart(t *testing.T)
}

// startBroker returns the broker the environment asks for: an external one
// (SILKWORM_TEST_BOOTSTRAP), franz-go's kfake (SILKWORM_TEST_BROKER=kfake) or,
// by default, a freshly built silkworm child process. It is stopped when the
// test ends. overrides are server.properties key=value pairs passed to a
// silkworm child process with --override; kfake and an external broker
// ignore them.
func startBroker(t *testing.T, overrides ...string) broker {
	t.Helper()
	if addr := os.Getenv("SILKWORM_TEST_BOOTSTRAP"); addr != "" {
		return externalBroker(addr)
	}
	if os.Getenv("SILKWORM_TEST_BROKER") == "kfake" {
		return startFakeBroker(t)
	}
	return startProcessBroker(t, overrides...)
}

// externalBroker is a broker someone else runs; it cannot be restarted.
type externalBroker string

func (b externalBroker) Addr() string       { return string(b) }
func (b externalBroker) CanRestart() bool   { return false }
func (b externalBroker) Restart(*testing.T) {}

// processBroker is a silkworm server running as a child process.
type processBroker struct {
	node *testcluster.Node
}

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	buildBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// silkwormBinary returns the broker binary: SILKWORM_TEST_BROKER_BIN if set,
// else ./cmd/silkworm built once per test binary run.
func silkwormBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SILKWORM_TEST_BROKER_BIN"); bin != "" {
		return bin
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "silkworm-interop-bin-")
		if buildErr != nil {
			buildErr = fmt.Errorf("temp dir for broker binary: %w", buildErr)
			return
		}
		buildBin, buildErr = testcluster.Build(buildDir, os.Getenv("SILKWORM_TEST_BROKER_RACE") == "1")
	})
	if buildErr != nil {
		t.Fatalf("build broker: %v", buildErr)
	}
	return buildBin
}

// startProcessBroker starts a broker on a free port with a fresh data dir.
func startProcessBroker(t *testing.T, overrides ...string) *processBroker {
	t.Helper()
	return startProcessBrokerOn(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(testcluster.FreePort(t))), overrides...)
}

// startProcessBrokerOn starts a broker whose PLAINTEXT listener is addr,
// with a fresh data dir; overrides come after listeners and log.dirs, so
// they can replace them. It is killed when the test ends.
func startProcessBrokerOn(t *testing.T, addr string, overrides ...string) *processBroker {
	t.Helper()
	tmp := t.TempDir()
	n := &testcluster.Node{
		Name:         "broker",
		Bin:          silkwormBinary(t),
		Dir:          filepath.Join(tmp, "data"),
		Addr:         addr,
		Log:          filepath.Join(tmp, "broker.log"),
		StartTimeout: brokerStartTimeout,
	}
	n.Args = []string{"server",
		"--override", "listeners=PLAINTEXT://" + n.Addr,
		"--override", "log.dirs=" + n.Dir,
	}
	for _, o := range overrides {
		n.Args = append(n.Args, "--override", o)
	}
	t.Cleanup(func() {
		n.Kill(t)
		if t.Failed() {
			t.Logf("broker log (%s), last lines:\n%s", n.Log, testcluster.Tail(n.Log, 60))
		}
	})
	n.Start(t)
	return &processBroker{node: n}
}

func (b *processBroker) Addr() string     { return b.node.Addr }
func (b *processBroker) CanRestart() bool { return true }

// Restart sends SIGKILL, waits for the process to be gone and starts a new
// one on the same data dir and port.
func (b *processBroker) Restart(t *testing.T) {
	t.Helper()
	old := b.node.Pid()
	b.node.Kill(t)
	b.node.Start(t)
	t.Logf("broker killed with SIGKILL (pid %d) and restarted (pid %d) on %s", old, b.node.Pid(), b.node.Addr)
}

// fakeBroker is franz-go's kfake cluster with one broker, persisting to a
// data dir so that a restart has something to reload. A restart closes it
// (kfake has no crash mode) and opens a new one on the same dir and port.
type fakeBroker struct {
	dir  string
	port int
	c    *kfake.Cluster
}

func startFakeBroker(t *testing.T) *fakeBroker {
	t.Helper()
	b := &fakeBroker{dir: t.TempDir(), port: testcluster.FreePort(t)}
	b.start(t)
	t.Cleanup(func() { b.c.Close() })
	return b
}

func (b *fakeBroker) start(t *testing.T) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(b.port), kfake.DataDir(b.dir))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	b.c = c
	if err := testcluster.Poll(brokerStartTimeout, func() error { return testcluster.Probe(b.Addr(), 1) }); err != nil {
		t.Fatalf("kfake not ready: %v", err)
	}
}

func (b *fakeBroker) Addr() string     { return net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port)) }
func (b *fakeBroker) CanRestart() bool { return true }
func (b *fakeBroker) Restart(t *testing.T) {
	t.Helper()
	b.c.Close()
	b.start(t)
}
