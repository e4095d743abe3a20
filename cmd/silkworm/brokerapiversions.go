package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/apiversions"
)

func init() {
	commands = append(commands, command{"broker-api-versions", "list each broker's API versions (Kafka's kafka-broker-api-versions.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return apiversions.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
