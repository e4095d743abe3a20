// Command silkworm is the Silkworm broker and Kafka's tools in one binary.
//
//	silkworm server [--config server.properties] [--override key=value ...]
package main

import (
	"fmt"
	"os"
)

type command struct {
	name  string
	usage string
	run   func(args []string) error
}

var commands []command

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	name := os.Args[1]
	for _, c := range commands {
		if c.name == name {
			if err := c.run(os.Args[2:]); err != nil {
				fmt.Fprintf(os.Stderr, "silkworm %s: %v\n", name, err)
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintf(os.Stderr, "silkworm: unknown command %q\n\n", name)
	usage()
	os.Exit(2)
}

func usage() {
	fmt.Fprintln(os.Stderr, "Usage: silkworm <command> [options]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-22s %s\n", c.name, c.usage)
	}
}
