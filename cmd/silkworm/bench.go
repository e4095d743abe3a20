package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/silkworm/silkworm/bench/omb"
	"github.com/silkworm/silkworm/bench/scenarios"
	"github.com/silkworm/silkworm/bench/seeds"
	"github.com/silkworm/silkworm/internal/bench"
	"github.com/silkworm/silkworm/internal/tools/cli"
)

func init() {
	commands = append(commands, command{"bench", "run the Kafka performance study and write a report with charts (compare: two runs side by side)", runBench})
}

func runBench(args []string) error {
	if len(args) > 0 && args[0] == "compare" {
		return runBenchCompare(args[1:])
	}
	p := cli.NewParser("bench", "Runs the Kafka performance study (the seed scenarios) on an embedded Silkworm cluster, "+
		"or on any Kafka cluster with --bootstrap-server, and writes results.json, results.csv, summary.md and report.html "+
		"with the seed studies' published figures beside this run's. --omb-workload runs an OpenMessaging Benchmark "+
		"workload instead and writes OMB's result JSON. 'silkworm bench compare A.json B.json' puts two runs side by side.")
	p.Output = os.Stdout
	profile := p.String("profile", "quick|full", "quick: every scenario scaled down (minutes); full: the seeds' sizes.", "quick")
	only := p.Multi("scenario", "name", "Run only this scenario (repeatable, or comma-separated).")
	bootstrap := p.String("bootstrap-server", "host:port", "Measure this cluster instead of starting an embedded one.", "")
	out := p.String("out", "dir", "Report directory (default bench-results/<time>).", "")
	dir := p.String("scenarios", "dir", "Directory of scenario YAML files (default: the built-in set).", "")
	verify := p.Flag("verify", "Read back produce-only runs, so records sent = stored = consumed is checked everywhere.")
	list := p.Flag("list", "List the scenarios and exit.")
	maxRecords := p.Int64("max-records", "count", "Cap the records of every run (smoke runs).", 0)
	reps := p.Int("repetitions", "count", "Cap the repetitions of every point.", 0)
	budget := p.String("time-budget", "duration", "Full profile: scale the seeds' sizes down to fit this estimated time (0: no limit).", "12h")
	estimateOnly := p.Flag("estimate", "Print the estimate of time and disk and exit.")
	ombWorkload := p.String("omb-workload", "file|name", "Run this OpenMessaging Benchmark workload file (or built-in workload, see --list) instead of the study.", "")
	ombDriver := p.String("omb-driver", "file|name", "OMB Kafka driver file (or built-in: kafka-latency, kafka-throughput); default kafka-latency.", "")
	ombDuration := p.String("omb-duration", "duration", "Override the workload's testDurationMinutes (e.g. 30s for a smoke run).", "")
	ombWarmup := p.String("omb-warmup", "duration", "Override the workload's warmupDurationMinutes.", "")
	ombInterval := p.String("omb-interval", "duration", "Reporting interval: one entry of OMB's per-interval lists each (OMB: 10s).", "10s")
	if err := p.Parse(args); err != nil {
		if errors.Is(err, cli.ErrHelp) {
			return nil
		}
		return err
	}
	if *ombWorkload != "" {
		return runOMB(*ombWorkload, *ombDriver, *bootstrap, *out, *ombDuration, *ombWarmup, *ombInterval)
	}
	var ss []*bench.Scenario
	var err error
	if *dir != "" {
		ss, err = bench.LoadScenarioDir(*dir)
	} else {
		ss, err = bench.LoadScenarios(scenarios.FS, ".")
	}
	if err != nil {
		return err
	}
	if *list {
		for _, s := range ss {
			fmt.Printf("%-34s %s\n", s.Name, s.Title)
		}
		names, err := bench.BuiltinOMBWorkloads(omb.Workloads)
		if err != nil {
			return err
		}
		fmt.Println("\nOpenMessaging Benchmark workloads (--omb-workload NAME):")
		for _, n := range names {
			fmt.Printf("  %s\n", n)
		}
		return nil
	}
	prof, err := bench.ProfileByName(*profile)
	if err != nil {
		return err
	}
	prof.MaxRecords, prof.MaxRepetitions = *maxRecords, *reps
	opts := bench.DefaultOptions()
	opts.Profile = prof
	opts.Scenarios = ss
	opts.Bootstrap = *bootstrap
	opts.Verify = *verify
	opts.Progress = os.Stderr
	if opts.Seeds, err = bench.LoadSeeds(seeds.FS, "."); err != nil {
		return err
	}
	if *budget != "" && *budget != "0" {
		if opts.Limits.TimeBudget, err = time.ParseDuration(*budget); err != nil {
			return fmt.Errorf("--time-budget: %w", err)
		}
	}
	if *bootstrap == "" {
		dir := opts.Embedded.Dir
		if dir == "" {
			dir = os.TempDir()
		}
		if free, err := bench.FreeDiskAt(dir); err == nil {
			opts.Limits.FreeDisk = free
		}
	}
	for _, o := range *only {
		for _, name := range strings.Split(o, ",") {
			if name = strings.TrimSpace(name); name != "" {
				opts.Only = append(opts.Only, name)
			}
		}
	}
	est, err := bench.EstimateRun(opts)
	if err != nil {
		return err
	}
	if err := est.Write(os.Stderr); err != nil {
		return err
	}
	if *estimateOnly {
		return nil
	}
	if *out == "" {
		*out = filepath.Join("bench-results", time.Now().Format("20060102-150405"))
	}
	opts.OnPoint = func(r *bench.Results) {
		if err := r.WriteAll(*out); err != nil {
			fmt.Fprintf(os.Stderr, "silkworm bench: save results: %v\n", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, runErr := bench.Run(ctx, opts)
	if res == nil {
		return runErr
	}
	if err := res.WriteAll(*out); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "report: %s\n", filepath.Join(*out, bench.FileHTML))
	fmt.Fprintf(os.Stderr, "summary: %s\n", filepath.Join(*out, bench.FileMarkdown))
	if runErr != nil && ctx.Err() != nil {
		fmt.Fprintln(os.Stderr, "interrupted: the report holds the points that finished")
		return nil
	}
	return runErr
}

func runBenchCompare(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: silkworm bench compare A.json B.json")
	}
	a, err := bench.ReadResults(args[0])
	if err != nil {
		return err
	}
	b, err := bench.ReadResults(args[1])
	if err != nil {
		return err
	}
	return bench.WriteCompare(os.Stdout, a, b, args[0], args[1])
}
