package testcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPollGiveUp(t *testing.T) {
	calls := 0
	boom := errors.New("boom")
	err := Poll(time.Minute, func() error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return GiveUp(boom)
	})
	if err != boom || calls != 3 {
		t.Fatalf("Poll = %v after %d calls, want boom after 3", err, calls)
	}
	if err := Poll(0, func() error { return errors.New("never") }); err == nil || !strings.Contains(err.Error(), "never") {
		t.Fatalf("Poll past its deadline = %v, want the last error", err)
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Tail(path, 2); got != "b\nc" {
		t.Fatalf("Tail = %q, want %q", got, "b\nc")
	}
	if got := Tail(path+".missing", 2); !strings.HasPrefix(got, "(read ") {
		t.Fatalf("Tail of a missing file = %q", got)
	}
}
