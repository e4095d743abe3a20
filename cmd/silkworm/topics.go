package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/topics"
)

func init() {
	commands = append(commands, command{"topics", "create, delete, describe, or change a topic (Kafka's kafka-topics.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return topics.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
