package bench_test

import (
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/silkworm/silkworm/internal/broker"
	"github.com/silkworm/silkworm/internal/config"
)

// The server lives in the external test package: internal/broker imports
// internal/console, which imports this package, so the in-package tests
// cannot import the broker themselves.

// serverEnv is bench_test.go's serverEnv.
const serverEnv = "SILKWORM_BENCH_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "server" {
		os.Exit(serveForTest(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// serveForTest is a minimal `silkworm server`: --override flags only.
func serveForTest(args []string) int {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	var overrides []string
	fs.Func("override", "key=value", func(v string) error { overrides = append(overrides, v); return nil })
	fs.String("log-level", "warn", "ignored")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.Load("", overrides)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	b, err := broker.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	if err := b.Start(); err != nil {
		b.Close()
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	b.Close()
	return 0
}
