package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/reassign"
)

func init() {
	commands = append(commands, command{"reassign-partitions", "move partitions between brokers (Kafka's kafka-reassign-partitions.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return reassign.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
