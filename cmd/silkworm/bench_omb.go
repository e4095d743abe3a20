package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/silkworm/silkworm/bench/omb"
	"github.com/silkworm/silkworm/internal/bench"
)

// runOMB is `silkworm bench --omb-workload`: one OpenMessaging Benchmark
// workload on the embedded cluster (or --bootstrap-server), its result
// JSON (OMB's TestResult, named as OMB names it) written under out.
func runOMB(workload, driver, bootstrap, out, duration, warmup, interval string) error {
	var w *bench.OMBWorkload
	var err error
	if st, serr := os.Stat(workload); serr == nil && !st.IsDir() {
		w, err = bench.LoadOMBWorkload(workload)
	} else {
		w, err = bench.BuiltinOMBWorkload(omb.Workloads, workload)
	}
	if err != nil {
		return err
	}
	d := bench.DefaultOMBDriver()
	if driver != "" {
		if st, serr := os.Stat(driver); serr == nil && !st.IsDir() {
			d, err = bench.LoadOMBDriver(driver)
		} else {
			var data []byte
			data, err = omb.Workloads.ReadFile("drivers/" + strings.TrimSuffix(driver, ".yaml") + ".yaml")
			if err != nil {
				return fmt.Errorf("omb driver %q: not a file and not built in (kafka-latency, kafka-throughput)", driver)
			}
			d, err = bench.ParseOMBDriver(data)
		}
		if err != nil {
			return err
		}
	}
	opts := bench.OMBOptions{Workload: w, Driver: d, Bootstrap: bootstrap, Embedded: bench.DefaultEmbeddedConfig(), Log: os.Stderr}
	for _, f := range []struct {
		flag, value string
		into        *time.Duration
	}{{"--omb-duration", duration, &opts.Duration}, {"--omb-warmup", warmup, &opts.Warmup}, {"--omb-interval", interval, &opts.Interval}} {
		if f.value == "" {
			continue
		}
		if *f.into, err = time.ParseDuration(f.value); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	test, warm := w.TestDuration(), w.WarmupDuration()
	if opts.Duration > 0 {
		test = opts.Duration
	}
	if opts.Warmup > 0 {
		warm = opts.Warmup
	}
	rate := "max (rate search)"
	if w.ProducerRate > 0 {
		rate = fmt.Sprintf("%.0f msg/s", w.ProducerRate)
	}
	fmt.Fprintf(os.Stderr, "omb: %q: %d topic(s) × %d partitions, %d B messages, %s; warm-up %v + test %v",
		w.Name, w.Topics, w.PartitionsPerTopic, w.MessageSize, rate, warm, test)
	if w.ConsumerBacklogSizeGB > 0 {
		fmt.Fprintf(os.Stderr, " after building and draining a %.3g GB backlog", w.ConsumerBacklogSizeGB)
	}
	fmt.Fprintln(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.RunOMB(ctx, opts)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join("bench-results", "omb")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(out, res.FileName(time.Now()))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := res.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := res.WriteSummary(os.Stdout); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "result: %s (OMB's bin/create_charts.py reads it)\n", path)
	return nil
}
