package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/logdirs"
)

func init() {
	commands = append(commands, command{"log-dirs", "describe brokers' log directories (Kafka's kafka-log-dirs.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return logdirs.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
