package main

import (
	"os"

	"github.com/silkworm/silkworm/internal/tools/storagetool"
)

func init() {
	commands = append(commands, command{"storage", "format and inspect log directories (Kafka's kafka-storage.sh)",
		func(args []string) error { return storagetool.Run(args, os.Stdout, os.Stderr) }})
}
