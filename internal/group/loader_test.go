package group

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// errorRecorder is a slog handler that keeps the messages logged at
// ERROR level. Safe for concurrent use.
type errorRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *errorRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *errorRecorder) Handle(_ context.Context, rec slog.Record) error {
	if rec.Level >= slog.LevelError {
		r.mu.Lock()
		r.msgs = append(r.msgs, rec.Message)
		r.mu.Unlock()
	}
	return nil
}
func (r *errorRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *errorRecorder) WithGroup(string) slog.Handler      { return r }

func (r *errorRecorder) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

// gatedLog is a partition whose Replay waits at the gate before handing
// over a batch, and records what the coordinator's callback returned.
type gatedLog struct {
	started chan struct{}
	release chan struct{}
	replays int
	result  error
}

func (l *gatedLog) Append([]byte) error { return errors.New("not for appends") }
func (l *gatedLog) Replay(fn func([]byte) error) error {
	l.replays++
	close(l.started)
	<-l.release
	// Not a record batch: were it parsed, the replay would fail with a
	// corrupt-batch error.
	l.result = fn([]byte("not a batch"))
	return l.result
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Close stops a background load at its next batch, without an error in
// the log, and drops what OnElection queues afterwards.
func TestCloseStopsBackgroundLoads(t *testing.T) {
	rec := &errorRecorder{}
	c, err := New(testConfig(), newMemHost(), slog.New(rec))
	if err != nil {
		t.Fatal(err)
	}
	gl := &gatedLog{started: make(chan struct{}), release: make(chan struct{})}
	c.OnElection(1, gl)
	<-gl.started

	closed := make(chan struct{})
	go func() { c.Close(); close(closed) }()
	waitUntil(t, "Close to begin", c.closing.Load)
	close(gl.release)
	<-closed

	if !errors.Is(gl.result, ErrClosed) {
		t.Errorf("replay callback after Close began: %v, want ErrClosed", gl.result)
	}
	c.mu.Lock()
	_, loaded := c.loaded[1]
	c.mu.Unlock()
	if loaded {
		t.Error("partition 1 loaded by a replay cut short")
	}
	// After Close, elections neither block nor replay.
	late := &gatedLog{started: make(chan struct{}), release: make(chan struct{})}
	for range 2 * cap(c.ops) {
		c.OnElection(2, late)
	}
	if late.replays != 0 {
		t.Errorf("a load queued after Close replayed %d times", late.replays)
	}
	if err := c.LoadPartition(2, late); !errors.Is(err, ErrClosed) {
		t.Errorf("LoadPartition after Close: %v, want ErrClosed", err)
	}
	if errs := rec.errors(); len(errs) != 0 {
		t.Errorf("errors logged around Close: %q", errs)
	}
}

// OnElection and OnResignation run in order on the loader goroutine.
func TestOnElectionLoadsInTheBackground(t *testing.T) {
	h := newMemHost()
	c := newTestCoordinator(t, testConfig(), h)
	p := c.PartitionFor("g")
	c.OnElection(p, h.log(p))
	waitUntil(t, "partition loaded", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.loaded[p]
		return ok
	})
	c.OnResignation(p)
	waitUntil(t, "partition unloaded", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.loaded[p]
		return !ok
	})
}
