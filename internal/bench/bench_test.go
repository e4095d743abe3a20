package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/silkworm/silkworm/bench/scenarios"
	"github.com/silkworm/silkworm/internal/tools/cli"
)

// serverEnv makes the test binary act as `silkworm server` (see
// main_test.go), so the embedded cluster's child processes can be started
// from tests.
const serverEnv = "SILKWORM_BENCH_TEST_SERVER"

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
	began := time.Now()
	opts.OnPoint = func(r *Results) {
		points++
		p := r.Points[len(r.Points)-1]
		t.Logf("%v %s %s (%d brokers)", time.Since(began).Round(100*time.Millisecond), p.Scenario, p.Label, p.Brokers)
	}
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
		// Every shipped scenario fits the embedded cluster, the replica
		// ones included: none may be skipped.
		for _, p := range pts {
			if p.Skipped != "" || p.Error != "" || len(p.Runs) == 0 {
				t.Errorf("%s %s: skipped %q, error %q, %d runs", s.Name, p.Label, p.Skipped, p.Error, len(p.Runs))
				continue
			}
			if want := max(p.Spec.Brokers, p.Spec.Topic.ReplicationFactor, 1); p.Brokers != want {
				t.Errorf("%s %s: ran on %d brokers, want %d", s.Name, p.Label, p.Brokers, want)
			}
			for _, run := range p.Runs {
				checkTotals(t, s, p, run)
			}
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
	for _, want := range []string{"## Seed conclusions", "records/sec", "fetch.MB.sec", "fetch.nMsg.sec", "| min ISR |"} {
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
	// The topic really has its replicas; with acks=all every one of them
	// stayed in sync (a write acknowledged by fewer would not be "sync").
	rf := float64(p.Spec.Topic.ReplicationFactor)
	if m[MReplicas] != rf {
		t.Errorf("%s %s: %v replicas, want %v", s.Name, p.Label, m[MReplicas], rf)
	}
	if p.Spec.Acks == "all" && m[MISRMin] != rf {
		t.Errorf("%s %s: acks=all with min ISR %v of %v replicas", s.Name, p.Label, m[MISRMin], rf)
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

func TestTooManyEmbeddedBrokersRefused(t *testing.T) {
	cfg := testEmbedded(t)
	cfg.Brokers = MaxEmbeddedBrokers + 1
	if _, err := StartEmbedded(context.Background(), cfg); !errors.Is(err, ErrTooManyBrokers) {
		t.Errorf("StartEmbedded(%d brokers) = %v, want ErrTooManyBrokers", cfg.Brokers, err)
	}
}

func TestNodeProps(t *testing.T) {
	ports, ctrl := []int{9001, 9002, 9003}, []int{9101, 9102, 9103}
	one, err := nodeProps(0, 1, "/d", ports, ctrl)
	if err != nil {
		t.Fatal(err)
	}
	if one["listeners"] != "PLAINTEXT://127.0.0.1:9001" || one["node.id"] != "" || one["controller.quorum.voters"] != "" {
		t.Errorf("single node props: %v", one)
	}
	p, err := nodeProps(1, 3, "/d1", ports, ctrl)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"node.id":                    "2",
		"process.roles":              "broker,controller",
		"listeners":                  "PLAINTEXT://127.0.0.1:9002,CONTROLLER://127.0.0.1:9102",
		"advertised.listeners":       "PLAINTEXT://127.0.0.1:9002",
		"controller.listener.names":  "CONTROLLER",
		"inter.broker.listener.name": "PLAINTEXT",
		"controller.quorum.voters":   "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103",
		"log.dirs":                   "/d1",
	} {
		if p[k] != want {
			t.Errorf("node 2 of 3: %s = %q, want %q", k, p[k], want)
		}
	}
	if _, err := nodeProps(0, MaxEmbeddedBrokers+1, "/d", make([]int, 9), make([]int, 9)); !errors.Is(err, ErrTooManyBrokers) {
		t.Errorf("nodeProps beyond MaxEmbeddedBrokers = %v", err)
	}
}

func TestIgnoredSettings(t *testing.T) {
	// background.threads is a Kafka setting Silkworm's config accepts
	// without applying (internal/config lists it in Broker.Ignored); the
	// replication settings the scenarios sweep are applied.
	got := IgnoredSettings(map[string]string{"background.threads": "4", "num.replica.fetchers": "5",
		"replica.socket.receive.buffer.bytes": "65536", "replica.fetch.max.bytes": "1048576"})
	if !slices.Equal(got, []string{"background.threads"}) {
		t.Errorf("IgnoredSettings = %v", got)
	}
	if got := IgnoredSettings(map[string]string{"num.io.threads": "8"}); len(got) != 0 {
		t.Errorf("IgnoredSettings(num.io.threads) = %v", got)
	}
}

// TestEmbeddedCluster starts a 3-broker embedded cluster and checks every
// broker lists all three and a topic with 3 replicas takes acks=all writes.
func TestEmbeddedCluster(t *testing.T) {
	cfg := testEmbedded(t)
	cfg.Brokers = 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang
	defer cancel()
	c, err := StartEmbedded(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Brokers() != 3 || strings.Count(c.Bootstrap(), ",") != 2 {
		t.Fatalf("cluster: %d brokers, bootstrap %q", c.Brokers(), c.Bootstrap())
	}
	for _, addr := range strings.Split(c.Bootstrap(), ",") {
		if err := brokerReady(ctx, addr, 3); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	cl, err := cli.NewClient(ctx, cli.Admin, cli.Props{"bootstrap.servers": c.Bootstrap()})
	if err != nil {
		t.Fatal(err)
	}
	adm := kadm.NewClient(cl)
	defer adm.Close()
	if err := createTopic(ctx, cl, "rf3", TopicSpec{Partitions: 2, ReplicationFactor: 3}); err != nil {
		t.Fatal(err)
	}
	pr, err := cli.NewClient(ctx, cli.Producer, cli.Props{"bootstrap.servers": c.Bootstrap(), "acks": "all"})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	for i := range 20 {
		if err := pr.ProduceSync(ctx, &kgo.Record{Topic: "rf3", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce acks=all: %v", err)
		}
	}
	if n, err := storedRecords(ctx, adm, "rf3"); err != nil || n != 20 {
		t.Errorf("stored %d records (%v), want 20", n, err)
	}
	replicas, isr, err := replicaCounts(ctx, adm, "rf3")
	if err != nil || replicas != 3 || isr != 3 {
		t.Errorf("replicas %d, ISR %d (%v), want 3 and 3", replicas, isr, err)
	}
	// Each broker holds a replica of each partition on disk.
	deadline := time.Now().Add(30 * time.Second)
	for {
		lb, err := c.LogBytes(ctx, "rf3")
		if err != nil {
			t.Fatal(err)
		}
		one := int64(0)
		for _, d := range c.dataDirs[:1] {
			for p := range 2 {
				if fi, err := os.Stat(filepath.Join(d, fmt.Sprintf("rf3-%d", p), "00000000000000000000.log")); err == nil {
					one += fi.Size()
				}
			}
		}
		if one > 0 && lb == 3*one {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log bytes over 3 brokers %d, on broker 0 %d: replicas not all on disk", lb, one)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestChartWithoutData(t *testing.T) {
	svg := chartData{Title: "t", Categories: []string{"a"}, Lines: []chartLine{{Name: "l"}}}.svg()
	if !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "no data measured") {
		t.Errorf("empty chart: %s", svg)
	}
}
