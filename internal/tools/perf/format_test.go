package perf

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/silkworm/silkworm/internal/javafmt"
	"github.com/silkworm/silkworm/internal/tools/golden"
)

// checkGolden compares got with testdata/name, or rewrites the file under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

func TestJavaFixed(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		prec int
		want string
	}{
		{0, 1, "0.0"},
		{0.125, 2, "0.13"}, // Java rounds the shortest digits half up; Go's %.2f gives 0.12
		{0.15, 1, "0.2"},   // Go's %.1f gives 0.1 (0.1499999...)
		{2.675, 2, "2.68"},
		{9.995, 2, "10.00"},
		{99.96, 1, "100.0"},
		{1234567.891, 6, "1234567.891000"},
		{0.0004, 4, "0.0004"},
		{0.00004, 4, "0.0000"},
		{0.00005, 4, "0.0001"},
		{1e-10, 2, "0.00"},
		{-1.25, 1, "-1.3"},
		{-0.001, 2, "0.00"},
		{123456789012, 0, "123456789012"},
		{1e21, 1, "1000000000000000000000.0"},
		{zero() / zero(), 4, "NaN"},
		{1 / zero(), 4, "Infinity"},
		{-1 / zero(), 4, "-Infinity"},
	} {
		if got := javafmt.Fixed(tc.v, tc.prec); got != tc.want {
			t.Errorf("javafmt.Fixed(%v, %d) = %q, want %q", tc.v, tc.prec, got, tc.want)
		}
	}
}

func zero() float64 { return 0 }

func TestJavaDouble(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0.0"},
		{1, "1.0"},
		{12.345678, "12.345678"},
		{0.001, "0.001"},
		{0.0001234, "1.234E-4"},
		{1e7, "1.0E7"},
		{12345678.9, "1.23456789E7"},
		{1 / zero(), "Infinity"},
	} {
		if got := javafmt.Double(tc.v); got != tc.want {
			t.Errorf("javafmt.Double(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestJavaDateFormat(t *testing.T) {
	ts := time.Date(2024, time.March, 5, 14, 7, 9, 45*int(time.Millisecond), time.UTC)
	for _, tc := range []struct{ pattern, want string }{
		{"yyyy-MM-dd HH:mm:ss:SSS", "2024-03-05 14:07:09:045"},
		{"yy/M/d h:mm a", "24/3/5 2:07 PM"},
		{"EEE, dd MMM yyyy 'at' HH'h'", "Tue, 05 Mar 2024 at 14h"},
		{"MMMM ''yy Z", "March '24 +0000"},
	} {
		if got := javaDateFormat(tc.pattern, ts); got != tc.want {
			t.Errorf("javaDateFormat(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}

// TestProducerLinesGolden drives producerStats with a fixed clock and
// latencies, through two reporting windows and the final summary.
func TestProducerLinesGolden(t *testing.T) {
	var out bytes.Buffer
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newProducerStats(&out, start, false)
	steady := newProducerStats(&out, start.Add(2*time.Second), true)
	// 10000 records over 10 s: latency i%100 ms + 0.5 ms, 1 KiB each.
	for i := 0; i < 10000; i++ {
		now := start.Add(time.Duration(i+1) * time.Millisecond)
		lat := time.Duration(i%100)*time.Millisecond + 500*time.Microsecond
		s.record(lat, 1024, now)
		if i >= 2000 {
			steady.record(lat, 1024, now)
		}
	}
	// A slow straggler in the last window.
	s.record(1234*time.Millisecond, 1024, start.Add(10001*time.Millisecond))
	end := start.Add(10500 * time.Millisecond)
	out.WriteString(s.totalLine(end) + "\n")
	out.WriteString(steady.totalLine(end) + "\n")
	checkGolden(t, "producer-lines.golden", out.Bytes())
	if !strings.Contains(out.String(), "ms 99.9th.") {
		t.Error("no total line")
	}
}

func TestConsumerLinesGolden(t *testing.T) {
	start := time.Date(2024, 1, 1, 10, 0, 0, 123*int(time.Millisecond), time.UTC)
	end := start.Add(12345 * time.Millisecond)
	const df = "yyyy-MM-dd HH:mm:ss:SSS"
	var b strings.Builder
	b.WriteString(consumerHeader(false) + "\n")
	b.WriteString(consumerTotalLine(df, start, end, 1024*1024*1000, 10_000_000, 3012) + "\n")
	b.WriteString(consumerHeader(true) + "\n")
	b.WriteString(consumerProgressLine(df, start, start.Add(5*time.Second), 500*1024*1024, 0, 5_000_000, 0, 3012) + "\n")
	b.WriteString(consumerProgressLine(df, start.Add(5*time.Second), start.Add(10*time.Second), 1000*1024*1024, 500*1024*1024, 10_000_000, 5_000_000, 0) + "\n")
	b.WriteString(consumerTimeoutWarning(10000) + "\n")
	// Nothing consumed in no time: Java prints NaN/Infinity, not an error.
	b.WriteString(consumerTotalLine(df, start, start, 0, 0, 0) + "\n")
	checkGolden(t, "consumer-lines.golden", []byte(b.String()))
}

func TestE2ELinesGolden(t *testing.T) {
	var lat []time.Duration
	var b strings.Builder
	for i := 0; i < 2001; i++ {
		l := time.Duration(1000+i*37%5000) * time.Microsecond
		if i%1000 == 0 {
			b.WriteString(e2eProgressLine(i, l) + "\n")
		}
		lat = append(lat, l)
	}
	b.WriteString(e2eResults(lat))
	checkGolden(t, "e2e-lines.golden", []byte(b.String()))
}

// TestHelpGolden checks each tool's --help: Kafka's option names, argument
// names and defaults.
func TestHelpGolden(t *testing.T) {
	for name, run := range map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"producer-perf-test": ProducerPerf,
		"consumer-perf-test": ConsumerPerf,
		"e2e-latency":        EndToEndLatency,
	} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"--help"}, &out, io.Discard); err != nil {
			t.Fatalf("%s --help: %v", name, err)
		}
		// The default group id is random; mask it.
		got := out.String()
		if i := strings.Index(got, "perf-consumer-"); i >= 0 {
			j := i + len("perf-consumer-")
			k := j
			for k < len(got) && got[k] >= '0' && got[k] <= '9' {
				k++
			}
			got = got[:j] + "NNNNN" + got[k:]
		}
		checkGolden(t, name+"-help.golden", []byte(got))
	}
}

func TestBadArguments(t *testing.T) {
	for _, tc := range []struct {
		run  func(context.Context, []string, io.Writer, io.Writer) error
		args []string
		want string
	}{
		{ProducerPerf, []string{"--topic", "t", "--num-records", "10", "--throughput", "-1", "--producer-props", "bootstrap.servers=x"}, "--record-size"},
		{ProducerPerf, []string{"--topic", "t", "--num-records", "ten", "--record-size", "1", "--throughput", "-1"}, `"ten"`},
		{ProducerPerf, []string{"--topic", "t", "--num-records", "10", "--record-size", "1", "--throughput", "-1"}, "--producer-props or --producer.config"},
		{ProducerPerf, []string{"--topic", "t", "--num-records", "0", "--record-size", "1", "--throughput", "-1", "--producer-props", "a=b"}, "--num-records"},
		{ProducerPerf, []string{"--topic", "t", "--num-records", "1", "--record-size", "1", "--throughput", "-1", "--producer-props", "bootstrap.servers=x", "lingr.ms=1"}, "lingr.ms"},
		{ProducerPerf, []string{"--topic", "t", "--num-records", "1", "--record-size", "1", "--throughput", "-1", "--producer-props", "bootstrap.servers=x", "--frobnicate"}, "--frobnicate"},
		{ConsumerPerf, []string{"--bootstrap-server", "x", "--topic", "t"}, "messages"},
		{ConsumerPerf, []string{"--zookeeper", "z:2181", "--topic", "t", "--messages", "1"}, "ZooKeeper"},
		{ConsumerPerf, []string{"--bootstrap-server", "x", "--topic", "t", "--messages", "1", "--reporting-interval", "0"}, "interval"},
		{ConsumerPerf, []string{"--topic", "t", "--messages", "1"}, "bootstrap-server"},
		{EndToEndLatency, []string{"x:1", "t", "10", "2", "100"}, "1 or all"},
		{EndToEndLatency, []string{"x:1", "t", "10"}, "USAGE"},
		{EndToEndLatency, []string{"--bootstrap-server", "x:1", "--topic", "t"}, "num-records"},
	} {
		err := tc.run(context.Background(), tc.args, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
