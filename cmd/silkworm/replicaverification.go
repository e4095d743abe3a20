package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/replicaverify"
)

func init() {
	commands = append(commands, command{"replica-verification", "check that all replicas of a set of topics hold the same data (Kafka's kafka-replica-verification.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return replicaverify.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
