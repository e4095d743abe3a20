package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/groups"
)

func init() {
	commands = append(commands, command{"consumer-groups", "list, describe, delete consumer groups (classic and KIP-848) or reset their offsets (Kafka's kafka-consumer-groups.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return groups.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
