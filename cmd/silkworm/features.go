package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/features"
)

func init() {
	commands = append(commands, command{"features", "describe and change feature flags (Kafka's kafka-features.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return features.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
