package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/transactions"
)

func init() {
	commands = append(commands, command{"transactions", "list, describe and abort transactions, find hanging ones (Kafka's kafka-transactions.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return transactions.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
