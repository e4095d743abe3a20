package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/configs"
)

func init() {
	commands = append(commands, command{"configs", "describe or alter topic and broker configs (Kafka's kafka-configs.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return configs.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
