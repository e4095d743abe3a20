package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/sharegroups"
)

func init() {
	commands = append(commands, command{"console-share-consumer", "print records read through a share group to standard output (Kafka's kafka-console-share-consumer.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return sharegroups.RunConsoleShareConsumer(ctx, args, os.Stdout, os.Stderr)
		}})
}
