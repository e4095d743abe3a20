package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/offsets"
)

func init() {
	run := func(f func(context.Context, []string, *os.File, *os.File) error) func([]string) error {
		return func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return f(ctx, args, os.Stdout, os.Stderr)
		}
	}
	commands = append(commands,
		command{"get-offsets", "print the offsets of topic partitions (Kafka's kafka-get-offsets.sh)",
			run(func(ctx context.Context, a []string, o, e *os.File) error { return offsets.RunGetOffsets(ctx, a, o, e) })},
		command{"delete-records", "delete records up to given offsets (Kafka's kafka-delete-records.sh)",
			run(func(ctx context.Context, a []string, o, e *os.File) error {
				return offsets.RunDeleteRecords(ctx, a, o, e)
			})})
}
