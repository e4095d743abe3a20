package main

import (
	"os"

	"github.com/silkworm/silkworm/internal/tools/dumplog"
)

func init() {
	commands = append(commands, command{"dump-log", "decode .log, .index and .timeindex files (Kafka's kafka-dump-log.sh)",
		func(args []string) error { return dumplog.Run(args, os.Stdout, os.Stderr) }})
}
