package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/perf"
)

func init() {
	commands = append(commands, command{"consumer-perf-test", "measure consumer throughput (Kafka's kafka-consumer-perf-test.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return perf.ConsumerPerf(ctx, args, os.Stdout, os.Stderr)
		}})
}
