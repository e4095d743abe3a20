package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/acls"
)

func init() {
	commands = append(commands, command{"acls", "add, remove or list ACLs (Kafka's kafka-acls.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return acls.Run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
		}})
}
