// Package brokertest starts an in-process single-node broker for the tests
// of packages that talk to it over the Kafka protocol (tools, bench). Only
// tests import it.
package brokertest

import (
	"io"
	"log/slog"
	"testing"

	"github.com/silkworm/silkworm/internal/broker"
	"github.com/silkworm/silkworm/internal/config"
)

// Start runs a broker on 127.0.0.1 with a kernel-chosen port and its data
// in t.TempDir(), with the given config overrides ("key=value"), and
// closes it when the test ends. It returns the address to bootstrap from.
func Start(t testing.TB, overrides ...string) string {
	t.Helper()
	props := append([]string{"listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=" + t.TempDir()}, overrides...)
	cfg, err := config.Load("", props)
	if err != nil {
		t.Fatal(err)
	}
	b, err := broker.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b.Addr()
}
