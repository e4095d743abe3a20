package embed

// A goroutine leak check equivalent to go.uber.org/goleak's VerifyNone
// (goleak is not in go.mod): every goroutine that was not there before
// must end, polled for a while, else the check fails with their stacks.

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// goroutines maps the id of every goroutine but the caller's to its stack.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for i, g := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 {
			continue // the caller
		}
		header, _, _ := strings.Cut(string(g), "\n")
		id := strings.Fields(header)
		if len(id) < 2 || id[0] != "goroutine" {
			continue
		}
		if strings.Contains(string(g), "testing.(*T).Run") || strings.Contains(string(g), "testing.tRunner") ||
			strings.Contains(string(g), "os/signal.loop") || strings.Contains(string(g), "runtime.ensureSigM") {
			continue // the test framework's own
		}
		if strings.Contains(string(g), "raft.(*deferError).Error") && strings.Contains(string(g), "metadata.(*Quorum).applyRecord.func") {
			continue // a future hashicorp/raft dropped at shutdown (Quorum.applyRecord)
		}
		out[id[1]] = string(g)
	}
	return out
}

// leaked returns the stacks of goroutines not in base, after waiting up to
// 10 s for them to end.
func leaked(base map[string]string) []string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var extra []string
		for id, stack := range goroutines() {
			if _, ok := base[id]; !ok {
				extra = append(extra, stack)
			}
		}
		if len(extra) == 0 || time.Now().After(deadline) {
			return extra
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// verifyNone fails t when goroutines started during the test (after this
// call) are still running once its cleanups ran. Call it first.
func verifyNone(t *testing.T) {
	base := goroutines()
	t.Cleanup(func() {
		if extra := leaked(base); len(extra) > 0 {
			t.Errorf("%d goroutines left:\n\n%s", len(extra), strings.Join(extra, "\n\n"))
		}
	})
}

func TestMain(m *testing.M) {
	base := goroutines()
	code := m.Run()
	if code == 0 {
		if extra := leaked(base); len(extra) > 0 {
			fmt.Fprintf(os.Stderr, "goroutines left after the tests:\n\n%s\n", strings.Join(extra, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}
