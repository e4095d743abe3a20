package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/perf"
)

func init() {
	commands = append(commands, command{"producer-perf-test", "measure producer throughput and latency (Kafka's kafka-producer-perf-test.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return perf.ProducerPerf(ctx, args, os.Stdout, os.Stderr)
		}})
}
