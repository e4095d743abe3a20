package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/console"
)

func init() {
	commands = append(commands,
		command{"console-producer", "send lines of standard input as records (Kafka's kafka-console-producer.sh)",
			func(args []string) error {
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return console.RunProducer(ctx, args, os.Stdin, os.Stdout, os.Stderr)
			}},
		command{"console-consumer", "print records to standard output (Kafka's kafka-console-consumer.sh)",
			func(args []string) error {
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return console.RunConsumer(ctx, args, os.Stdout, os.Stderr)
			}})
}
