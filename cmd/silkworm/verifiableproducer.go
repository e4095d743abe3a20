package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/verifiable"
)

func init() {
	commands = append(commands, command{"verifiable-producer", "produce increasing integers and print JSON events for each acknowledgement (Kafka's VerifiableProducer)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return verifiable.Producer(ctx, args, os.Stdout, os.Stderr)
		}})
}
