// Command silkworm is the Silkworm broker and Kafka's tools in one binary.
//
//	silkworm server [--config server.properties] [--override key=value ...]
//
// Each tool also answers to its Kafka script name (silkworm kafka-topics.sh
// or kafka-topics), and the binary run through a link of such a name (ln
// -s silkworm kafka-topics.sh) is that tool, so scripts written for
// Kafka's bin/ directory run unchanged.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

type command struct {
	name  string
	usage string
	run   func(args []string) error
}

var commands []command

// lookup finds a command by its name or by its Kafka script name:
// kafka-<name>, with or without .sh (kafka-server-start is server).
func lookup(name string) (command, bool) {
	for _, n := range []string{name, kafkaScriptCommand(name)} {
		for _, c := range commands {
			if n != "" && c.name == n {
				return c, true
			}
		}
	}
	return command{}, false
}

// kafkaScriptCommand is the command a Kafka script name stands for, or "".
func kafkaScriptCommand(name string) string {
	n, ok := strings.CutPrefix(strings.TrimSuffix(name, ".sh"), "kafka-")
	switch {
	case !ok:
		return ""
	case n == "server-start":
		return "server"
	}
	return n
}

func main() {
	args := os.Args[1:]
	name := ""
	// Run through a link named after a Kafka script: that tool.
	if c, ok := lookup(filepath.Base(os.Args[0])); ok && filepath.Base(os.Args[0]) != "silkworm" {
		name = c.name
	} else {
		if len(args) < 1 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			usage()
			if len(args) < 1 {
				os.Exit(2)
			}
			return
		}
		name, args = args[0], args[1:]
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "silkworm: unknown command %q\n\n", name)
		usage()
		os.Exit(2)
	}
	if err := c.run(args); err != nil {
		fmt.Fprintf(os.Stderr, "silkworm %s: %v\n", c.name, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "Usage: silkworm <command> [options]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-22s %s\n", c.name, c.usage)
	}
	fmt.Fprintln(os.Stderr, "\nEach command also answers to its Kafka script name (kafka-topics.sh, kafka-server-start.sh).")
}
