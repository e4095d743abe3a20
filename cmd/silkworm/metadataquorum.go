package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/silkworm/silkworm/internal/tools/metadataquorum"
)

func init() {
	commands = append(commands, command{"metadata-quorum", "describe the metadata quorum (Kafka's kafka-metadata-quorum.sh)",
		func(args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return metadataquorum.Run(ctx, args, os.Stdout, os.Stderr)
		}})
}
