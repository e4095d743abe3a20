package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/sharegroups"
)

func init() {
	commands = append(commands, command{"share-groups", "list, describe, delete share groups or reset their start offsets (Kafka's kafka-share-groups.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return sharegroups.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
