package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startFailure runs the server subcommand with args, expecting it to fail
// during start-up, and returns the error text. A server that starts
// instead would block on signals, so the wait is bounded (a guard against
// a hung test, not a timing assertion).
func startFailure(t *testing.T, args ...string) string {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- runServer(args) }()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatalf("runServer(%q) succeeded, want a start-up error", args)
		}
		return err.Error()
	case <-time.After(30 * time.Second):
		t.Fatalf("runServer(%q) did not fail: the broker started", args)
		return ""
	}
}

// wantAll fails unless msg contains every part.
func wantAll(t *testing.T, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not mention %q", msg, p)
		}
	}
}

func TestServerStartupErrors(t *testing.T) {
	listener := "listeners=PLAINTEXT://127.0.0.1:0"

	t.Run("invalid config value", func(t *testing.T) {
		msg := startFailure(t, "--override", "log.dirs="+t.TempDir(), "--override", listener,
			"--override", "num.io.threads=abc")
		wantAll(t, msg, "num.io.threads", `"abc"`)
	})

	t.Run("invalid value in the properties file", func(t *testing.T) {
		props := filepath.Join(t.TempDir(), "server.properties")
		body := "log.dirs=" + t.TempDir() + "\n" + listener + "\nlog.retention.hours=forever\n"
		if err := os.WriteFile(props, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		msg := startFailure(t, props) // positional, as kafka-server-start.sh takes it
		wantAll(t, msg, "log.retention.hours", `"forever"`)
	})

	t.Run("unknown key", func(t *testing.T) {
		msg := startFailure(t, "--override", "log.dirs="+t.TempDir(), "--override", listener,
			"--override", "bogus.key=1")
		wantAll(t, msg, `"bogus.key"`)
	})

	t.Run("missing config file", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope.properties")
		msg := startFailure(t, "--config", missing)
		wantAll(t, msg, missing)
	})

	// chmod cannot make a directory unwritable for root, so the log dir is
	// placed under a regular file, where nobody can create it.
	t.Run("unwritable log dir", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "plain-file")
		if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(file, "sub")
		msg := startFailure(t, "--override", "log.dirs="+dir, "--override", listener)
		wantAll(t, msg, dir)
	})

	t.Run("corrupt segment", func(t *testing.T) {
		dir := t.TempDir()
		seg := filepath.Join(dir, "events-0", "00000000000000000000.log")
		if err := os.MkdirAll(seg, 0o755); err != nil { // a segment that is a directory
			t.Fatal(err)
		}
		msg := startFailure(t, "--override", "log.dirs="+dir, "--override", listener)
		wantAll(t, msg, seg)
	})
}
