package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/cluster"
)

func init() {
	commands = append(commands, command{"cluster", "show the cluster id, unregister a broker (Kafka's kafka-cluster.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return cluster.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
