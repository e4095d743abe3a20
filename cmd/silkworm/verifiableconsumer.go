package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/verifiable"
)

func init() {
	commands = append(commands, command{"verifiable-consumer", "consume in a group and print JSON events for rebalances, records and commits (Kafka's VerifiableConsumer)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return verifiable.Consumer(ctx, args, os.Stdout, os.Stderr)
		}})
}
