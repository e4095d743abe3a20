package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
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
	bin  string
	dir  string // log.dirs
	addr string
	log  string // combined stdout+stderr of every incarnation
	// overrides are extra key=value server properties.
	overrides []string

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
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
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		buildDir, err = os.MkdirTemp("", "silkworm-interop-bin-")
		if err != nil {
			buildErr = fmt.Errorf("temp dir for broker binary: %w", err)
			return
		}
		buildBin = filepath.Join(buildDir, "silkworm")
		args := []string{"build", "-o", buildBin}
		if os.Getenv("SILKWORM_TEST_BROKER_RACE") == "1" {
			args = append(args, "-race")
		}
		args = append(args, "./cmd/silkworm")
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build broker: %v", buildErr)
	}
	return buildBin
}

// moduleRoot finds the directory holding go.mod, walking up from the
// package directory (the test's working directory).
func moduleRoot() (string, error) {
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

// freePort returns a loopback port that is free now, picked at random
// below Linux's default ephemeral range (32768-60999): a port the kernel
// hands out for outgoing connections could be taken by a client between the
// broker's kill and its restart on the same port.
func freePort(t *testing.T) int {
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

func startProcessBroker(t *testing.T, overrides ...string) *processBroker {
	t.Helper()
	tmp := t.TempDir()
	b := &processBroker{
		bin:       silkwormBinary(t),
		dir:       filepath.Join(tmp, "data"),
		addr:      net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))),
		log:       filepath.Join(tmp, "broker.log"),
		overrides: overrides,
	}
	t.Cleanup(func() {
		b.kill(t)
		if t.Failed() {
			t.Logf("broker log (%s), last lines:\n%s", b.log, tail(b.log, 60))
		}
	})
	b.start(t)
	return b
}

func (b *processBroker) Addr() string     { return b.addr }
func (b *processBroker) CanRestart() bool { return true }

// Restart sends SIGKILL, waits for the process to be gone and starts a new
// one on the same data dir and port.
func (b *processBroker) Restart(t *testing.T) {
	t.Helper()
	old := b.cmd.Process.Pid
	b.kill(t)
	b.start(t)
	t.Logf("broker killed with SIGKILL (pid %d) and restarted (pid %d) on %s", old, b.cmd.Process.Pid, b.addr)
}

func (b *processBroker) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(b.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("open broker log: %v", err)
	}
	fmt.Fprintf(logf, "==== start %s\n", time.Now().Format(time.RFC3339Nano))
	args := []string{"server",
		"--override", "listeners=PLAINTEXT://" + b.addr,
		"--override", "log.dirs=" + b.dir,
	}
	for _, o := range b.overrides {
		args = append(args, "--override", o)
	}
	cmd := exec.Command(b.bin, args...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start broker: %v", err)
	}
	b.cmd = cmd
	b.exited = make(chan struct{})
	exited := b.exited
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()

	err = waitFor(brokerStartTimeout, func() error {
		select {
		case <-exited:
			return errStop{fmt.Errorf("broker exited during startup: %v", cmd.ProcessState)}
		default:
		}
		return probe(b.addr)
	})
	if err != nil {
		t.Fatalf("broker on %s not ready: %v\nlog:\n%s", b.addr, err, tail(b.log, 60))
	}
}

// kill stops the current incarnation with SIGKILL and waits for it to exit.
func (b *processBroker) kill(t *testing.T) {
	t.Helper()
	if b.cmd == nil {
		return
	}
	select {
	case <-b.exited:
	default:
		if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("kill broker: %v", err)
		}
		<-b.exited
	}
	b.cmd = nil
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
	b := &fakeBroker{dir: t.TempDir(), port: freePort(t)}
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
	if err := waitFor(brokerStartTimeout, func() error { return probe(b.Addr()) }); err != nil {
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

// probe succeeds once addr accepts TCP connections and answers a Metadata
// request that lists at least one broker.
func probe(addr string) error {
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
	if len(md.Brokers) == 0 {
		return errors.New("metadata lists no brokers")
	}
	return nil
}

// errStop makes waitFor give up at once.
type errStop struct{ error }

// waitFor polls cond until it returns nil, returns an errStop, or the
// deadline passes; it returns the last error.
func waitFor(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return nil
		}
		var stop errStop
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

// tail returns the last n lines of a file, for failure messages.
func tail(path string, n int) string {
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
