package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/silkworm/silkworm/bench/scenarios"
	"github.com/silkworm/silkworm/internal/broker"
	"github.com/silkworm/silkworm/internal/config"
)

// serverEnv makes the test binary act as `silkworm server`, so the
// embedded cluster's child processes can be started from tests.
const serverEnv = "SILKWORM_BENCH_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "server" {
		os.Exit(serveForTest(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// serveForTest is a minimal `silkworm server`: --override flags only.
func serveForTest(args []string) int {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	var overrides []string
	fs.Func("override", "key=value", func(v string) error { overrides = append(overrides, v); return nil })
	fs.String("log-level", "warn", "ignored")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.Load("", overrides)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	b, err := broker.New(cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	if err := b.Start(); err != nil {
		b.Close()
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
	b.Close()
	return 0
}

func testEmbedded(t *testing.T) EmbeddedConfig {
	t.Helper()
	t.Setenv(serverEnv, "1")
	cfg := DefaultEmbeddedConfig()
	cfg.Executable = os.Args[0]
	cfg.Args = []string{"server"}
	return cfg
}

func loadShipped(t *testing.T) []*Scenario {
	t.Helper()
	ss, err := LoadScenarios(scenarios.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// TestQuickProfileTiny runs every shipped scenario at a tiny scale on an
// embedded cluster and checks the results, the report and compare.
func TestQuickProfileTiny(t *testing.T) {
	ss := loadShipped(t)
	opts := DefaultOptions()
	opts.Profile = Profile{Name: "quick", MaxRecords: 300, MaxRepetitions: 1, MaxDuration: time.Second}
	opts.Scenarios = ss
	opts.Embedded = testEmbedded(t)
	opts.Verify = true
	points := 0
	opts.OnPoint = func(*Results) { points++ }
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a guard against a hang
	defer cancel()
	res, err := Run(ctx, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if points != len(res.Points) {
		t.Errorf("OnPoint called %d times for %d points", points, len(res.Points))
	}

	for _, s := range ss {
		pts := res.PointsOf(s.Name)
		if len(pts) == 0 {
			t.Errorf("%s: no results", s.Name)
			continue
		}
		ran := 0
		for _, p := range pts {
			if p.Skipped != "" {
				if p.Spec.Topic.ReplicationFactor <= MaxEmbeddedBrokers || !strings.Contains(p.Skipped, "needs") {
					t.Errorf("%s %s: skipped for a wrong reason: %s", s.Name, p.Label, p.Skipped)
				}
				continue
			}
			if p.Error != "" || len(p.Runs) == 0 {
				t.Errorf("%s %s: error %q, %d runs", s.Name, p.Label, p.Error, len(p.Runs))
				continue
			}
			ran++
			for _, run := range p.Runs {
				checkTotals(t, s, p, run)
			}
		}
		if ran == 0 && s.Topic.ReplicationFactor <= MaxEmbeddedBrokers && s.Sweep.Parameter != "replication_factor" {
			t.Errorf("%s: no point ran", s.Name)
		}
	}

	dir := t.TempDir()
	if err := res.WriteAll(dir); err != nil {
		t.Fatal(err)
	}
	html := readFile(t, filepath.Join(dir, FileHTML))
	if n := strings.Count(html, "<svg"); n < len(ss) {
		t.Errorf("report has %d charts for %d scenarios", n, len(ss))
	}
	for _, bad := range []string{"<script", "https://", "http://cdn", "<link"} {
		if strings.Contains(html, bad) {
			t.Errorf("report is not self-contained: contains %q", bad)
		}
	}
	md := readFile(t, filepath.Join(dir, FileMarkdown))
	for _, want := range []string{"## Seed conclusions", "records/sec", "fetch.MB.sec", "fetch.nMsg.sec", "skipped: needs 2 brokers"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	csv := readFile(t, filepath.Join(dir, FileCSV))
	if !strings.Contains(csv, MProduceRecs) {
		t.Errorf("CSV lacks %s", MProduceRecs)
	}

	// The consumers-vs-partitions conclusion is structural, not timing:
	// it must hold at any scale.
	for _, c := range Conclusions(res) {
		if strings.Contains(c.Claim, "beyond the partition count") && c.Verdict != "yes" {
			t.Errorf("idle consumers: %s (%s)", c.Verdict, c.Detail)
		}
	}

	// compare: the run against itself gives 1.00 everywhere.
	a, err := ReadResults(filepath.Join(dir, FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	rows := Compare(a, res)
	if len(rows) == 0 {
		t.Fatal("compare: no rows")
	}
	for _, r := range rows {
		if r.HasA && r.HasB && r.A != 0 && r.Ratio() != 1 {
			t.Errorf("compare %s %s %s: ratio %v against itself", r.Scenario, r.Point, r.Metric, r.Ratio())
		}
	}
	var out bytes.Buffer
	if err := WriteCompare(&out, a, res, "a.json", "b.json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "1.00×") {
		t.Errorf("compare output has no ratio:\n%s", out.String())
	}
}

// checkTotals: records sent = stored = consumed (each consumer reads
// everything when they are separate, the group together when shared).
func checkTotals(t *testing.T, s *Scenario, p *PointResult, run Repetition) {
	t.Helper()
	m := run.Metrics
	if s.Kind == KindRetention {
		if len(run.Samples) == 0 || m[MSent] == 0 {
			t.Errorf("%s: retention run has %d samples, %v sent", s.Name, len(run.Samples), m[MSent])
		}
		return
	}
	sent, stored, consumed := m[MSent], m[MStored], m[MConsumed]
	if sent == 0 || sent != stored || stored != consumed {
		t.Errorf("%s %s: sent %v, stored %v, consumed %v", s.Name, p.Label, sent, stored, consumed)
	}
	if want := float64(p.Spec.Records); sent != want {
		t.Errorf("%s %s: sent %v records, want %v", s.Name, p.Label, sent, want)
	}
	if s.Kind != KindConsume && m[MProduceRecs] <= 0 {
		t.Errorf("%s %s: no producer throughput", s.Name, p.Label)
	}
	if len(run.Consumers) > 0 && m[MConsumeRecs] <= 0 {
		t.Errorf("%s %s: no consumer throughput", s.Name, p.Label)
	}
	if s.Kind == KindEndToEnd && m[ME2EP99] <= 0 {
		t.Errorf("%s %s: no end-to-end latency", s.Name, p.Label)
	}
	if _, ok := m[MBrokerCPU]; !ok {
		t.Errorf("%s %s: no broker CPU", s.Name, p.Label)
	}
	if m[MLogBytes] <= 0 {
		t.Errorf("%s %s: no log bytes on disk", s.Name, p.Label)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInterruptKeepsFinished cancels a run after its first point and
// checks the finished point is returned.
func TestInterruptKeepsFinished(t *testing.T) {
	ss := loadShipped(t)
	opts := DefaultOptions()
	opts.Profile = Profile{Name: "quick", MaxRecords: 200, MaxRepetitions: 1, MaxDuration: time.Second}
	opts.Scenarios = ss
	opts.Only = []string{"producer-partitions"}
	opts.Embedded = testEmbedded(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.OnPoint = func(*Results) { cancel() }
	res, err := Run(ctx, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v, want context.Canceled", err)
	}
	if res == nil || !res.Interrupted || len(res.Points) == 0 || len(res.Points[0].Runs) == 0 {
		t.Fatalf("interrupted results do not keep the finished point: %+v", res)
	}
	var md bytes.Buffer
	if err := res.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "Interrupted") {
		t.Errorf("summary does not say it was interrupted (err %v)", err)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	base := "name: x\nkind: produce\nrecord_size: 100\nrecords: 10\n"
	for _, tc := range []struct{ yaml, want string }{
		{base + "bogus: 1\n", "bogus"},
		{base + "sweep: {parameter: colour, values: [1]}\n", `unknown sweep parameter "colour"`},
		{base + "sweep: {parameter: partitions, values: [0]}\n", "not a positive integer"},
		{base + "sweep: {parameter: compression, values: [brotli]}\n", "brotli"},
		{"name: x\nkind: consume\nrecord_size: 100\nrecords: 10\n", "needs consumers"},
		{"name: x\nkind: nope\nrecord_size: 100\nrecords: 10\n", "kind"},
		{"name: x\nkind: retention\nrecord_size: 100\n", "retention needs duration and rate"},
	} {
		_, err := ParseScenario([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseScenario(%q) = %v, want an error with %q", tc.yaml, err, tc.want)
		}
	}
}

func TestPoints(t *testing.T) {
	s, err := ParseScenario([]byte(`name: x
kind: produce
record_size: 1000
records: 1000000
max_bytes: 100000000
repetitions: 5
sweep: {parameter: record_size, values: [100, 1000000]}
series: {parameter: acks, values: ["1", all]}
quick: {records: 1000, repetitions: 2, values: [10]}
`))
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Points(ProfileFull)
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != 4 {
		t.Fatalf("full: %d points, want 4", len(full))
	}
	if p := full[1]; p.Label() != "acks=1 record_size=1000000" || p.Spec.Records != 100 || p.Spec.Acks != "1" || p.Spec.Repetitions != 5 {
		t.Errorf("full[1] = %s, %d records, acks %s, %d reps", p.Label(), p.Spec.Records, p.Spec.Acks, p.Spec.Repetitions)
	}
	quick, err := s.Points(ProfileQuick)
	if err != nil {
		t.Fatal(err)
	}
	if len(quick) != 2 || quick[0].Spec.Records != 1000 || quick[0].Spec.Repetitions != 2 || quick[1].Spec.RecordSize != 10 {
		t.Errorf("quick points wrong: %+v", quick)
	}
	capped, _ := s.Points(Profile{Name: "quick", MaxRecords: 7, MaxRepetitions: 1})
	if capped[0].Spec.Records != 7 || capped[0].Spec.Repetitions != 1 {
		t.Errorf("caps not applied: %d records, %d reps", capped[0].Spec.Records, capped[0].Spec.Repetitions)
	}
}

func TestStat(t *testing.T) {
	st := statOf([]float64{30, 10, 20, 40})
	if st.N != 4 || st.Median != 25 || st.Min != 10 || st.Max != 40 || st.Spread != 30.0/25 {
		t.Errorf("statOf = %+v", st)
	}
	if st := statOf([]float64{5}); st.Median != 5 || st.Spread != 0 {
		t.Errorf("statOf one = %+v", st)
	}
}

func TestMultiBrokerEmbeddedRefused(t *testing.T) {
	cfg := testEmbedded(t)
	cfg.Brokers = MaxEmbeddedBrokers + 1
	if _, err := StartEmbedded(context.Background(), cfg); !errors.Is(err, ErrMultiBroker) {
		t.Errorf("StartEmbedded(%d brokers) = %v, want ErrMultiBroker", cfg.Brokers, err)
	}
}

func TestChartWithoutData(t *testing.T) {
	svg := chartData{Title: "t", Categories: []string{"a"}, Lines: []chartLine{{Name: "l"}}}.svg()
	if !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "no data measured") {
		t.Errorf("empty chart: %s", svg)
	}
}
