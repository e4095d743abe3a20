package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/perf"
)

func init() {
	commands = append(commands, command{"e2e-latency", "measure produce-to-consume latency one record at a time (Kafka's EndToEndLatency)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return perf.EndToEndLatency(ctx, args, os.Stdout, os.Stderr)
		}})
}
