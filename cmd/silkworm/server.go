package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/silkworm/silkworm/internal/broker"
	"github.com/silkworm/silkworm/internal/config"
	"github.com/silkworm/silkworm/internal/security/sasl"
)

func init() {
	commands = append(commands, command{"server", "run a broker (Kafka's kafka-server-start.sh)", runServer})
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runServer(args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "broker configuration file in Kafka's server.properties format")
	var overrides multiFlag
	fs.Var(&overrides, "override", "optional property that overrides the value set in the config file (key=value, repeatable)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	// Kafka's start script takes the properties file as a positional argument.
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 && *cfgPath == "" {
		*cfgPath = fs.Arg(0)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	cfg, err := config.Load(*cfgPath, overrides)
	if err != nil {
		return err
	}
	for _, k := range cfg.Ignored {
		log.Warn("config is not supported yet; ignored", "key", k)
	}
	var opts []broker.Option
	if path := sasl.JAASFileFromOpts(os.Getenv("KAFKA_OPTS")); path != "" {
		// Kafka's start script hands KAFKA_OPTS to the JVM, which reads the
		// JAAS file it names.
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("KAFKA_OPTS java.security.auth.login.config: %w", err)
		}
		sections, err := sasl.ParseJAASFile(string(data))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		opts = append(opts, broker.WithJAASFile(sections))
	}
	b, err := broker.New(cfg, log, opts...)
	if err != nil {
		return err
	}
	if err := b.Start(); err != nil {
		b.Close()
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sigs:
		log.Info("shutting down", "signal", s.String())
	case <-b.Failed():
		b.Close()
		return fmt.Errorf("every log dir is offline after an I/O error (see the log above); stopped")
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("shut down cleanly")
	return nil
}
