package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/leaderelection"
)

func init() {
	commands = append(commands, command{"leader-election", "elect partition leaders (Kafka's kafka-leader-election.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return leaderelection.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
