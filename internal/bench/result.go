package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Metric names. Throughputs are sums over the clients of a run; latencies
// are in milliseconds; "per_client" is the mean over producers.
const (
	MProduceRecs      = "producer.records_per_sec"
	MProduceMB        = "producer.mb_per_sec"
	MProducePerClient = "producer.per_client_records_per_sec"
	MProduceLatMean   = "producer.latency.mean_ms"
	MProduceLatP50    = "producer.latency.p50_ms"
	MProduceLatP95    = "producer.latency.p95_ms"
	MProduceLatP99    = "producer.latency.p99_ms"
	MProduceLatP999   = "producer.latency.p999_ms"
	MProduceLatMax    = "producer.latency.max_ms"

	MConsumeDataMB    = "consumer.data_consumed_mb"
	MConsumeRecs      = "consumer.records_per_sec"
	MConsumeMB        = "consumer.mb_per_sec"
	MConsumePerClient = "consumer.per_client_records_per_sec"
	MConsumeRebalance = "consumer.rebalance_ms"
	MConsumeFetchMs   = "consumer.fetch_ms"
	MConsumeFetchMB   = "consumer.fetch_mb_per_sec"
	MConsumeFetchRecs = "consumer.fetch_records_per_sec"
	MConsumeIdle      = "consumer.idle"

	ME2EP50  = "e2e.latency.p50_ms"
	ME2EP95  = "e2e.latency.p95_ms"
	ME2EP99  = "e2e.latency.p99_ms"
	ME2EP999 = "e2e.latency.p999_ms"
	ME2EMax  = "e2e.latency.max_ms"

	MSent     = "records.sent"
	MStored   = "records.stored"
	MConsumed = "records.consumed"

	MReplicas = "replication.replicas" // smallest replica set of the topic's partitions
	MISRMin   = "replication.isr_min"  // smallest ISR of the topic's partitions after the run

	MLogBytes   = "disk.log_bytes"
	MDiskRatio  = "disk.ratio" // log bytes / value bytes sent
	MBrokerCPU  = "broker.cpu_cores"
	MBrokerRSS  = "broker.rss_mb"
	MStoredFlat = "stored.last_vs_first_pct" // last quarter vs first quarter of the samples

	MRetentionPeakMB  = "retention.peak_mb"
	MRetentionFinalMB = "retention.final_mb"
	MRetentionDeleted = "retention.deleted_after_s" // after the last write, until below half the peak
)

// Sample is one point of a run's time series: stored-data (X = MB stored
// before the window, Y = records/s in it) or retention (X = seconds since
// the first write, Y = MB of log on disk).
type Sample struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Repetition is one run of one point.
type Repetition struct {
	Rep       int                `json:"rep"`
	Started   time.Time          `json:"started"`
	Seconds   float64            `json:"seconds"`
	Producers []ClientResult     `json:"producers,omitempty"`
	Consumers []ClientResult     `json:"consumers,omitempty"`
	Samples   []Sample           `json:"samples,omitempty"`
	Metrics   map[string]float64 `json:"metrics"`
}

// Stat is a metric over the repetitions of a point.
type Stat struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// Spread is (max-min)/median, 0 for one repetition.
	Spread float64 `json:"spread"`
}

// PointResult is the outcome of one point: its runs and their summary, or
// why it was skipped or failed.
type PointResult struct {
	Scenario string `json:"scenario"`
	Label    string `json:"label"`
	Series   string `json:"series,omitempty"`
	Value    string `json:"value,omitempty"`
	// Spec is the resolved experiment (sizes of the profile applied).
	Spec    Scenario        `json:"spec"`
	Brokers int             `json:"brokers,omitempty"` // brokers of the cluster it ran on
	Skipped string          `json:"skipped,omitempty"`
	Error   string          `json:"error,omitempty"`
	Note    string          `json:"note,omitempty"`
	Runs    []Repetition    `json:"runs,omitempty"`
	Summary map[string]Stat `json:"summary,omitempty"`
}

// Median of metric m, and whether the point measured it.
func (p *PointResult) Median(m string) (float64, bool) {
	if p == nil {
		return 0, false
	}
	s, ok := p.Summary[m]
	if !ok || s.N == 0 {
		return 0, false
	}
	return s.Median, true
}

// Results is a whole `silkworm bench` run.
type Results struct {
	Version     int           `json:"version"`
	Started     time.Time     `json:"started"`
	Finished    time.Time     `json:"finished"`
	Profile     string        `json:"profile"`
	Cluster     string        `json:"cluster"`
	Host        string        `json:"host"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Scenarios   []*Scenario   `json:"scenarios"`
	Points      []PointResult `json:"points"`
	// Scaling says how the full profile was scaled down to fit this
	// host's disk or the time budget (empty when it was not).
	Scaling []string `json:"scaling,omitempty"`
	// Seeds are the seed studies' published figures the report puts
	// beside this run's.
	Seeds []*SeedStudy `json:"seeds,omitempty"`
}

// ResultsVersion is the JSON format version.
const ResultsVersion = 1

// Scenario returns the definition of the named scenario, or nil.
func (r *Results) Scenario(name string) *Scenario {
	for _, s := range r.Scenarios {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// PointsOf returns the points of a scenario in run order.
func (r *Results) PointsOf(scenario string) []*PointResult {
	var out []*PointResult
	for i := range r.Points {
		if r.Points[i].Scenario == scenario {
			out = append(out, &r.Points[i])
		}
	}
	return out
}

// Find returns the point of scenario with the given series and sweep
// value, or nil.
func (r *Results) Find(scenario, series, value string) *PointResult {
	for _, p := range r.PointsOf(scenario) {
		if p.Series == series && p.Value == value {
			return p
		}
	}
	return nil
}

func summarize(runs []Repetition) map[string]Stat {
	vals := map[string][]float64{}
	for _, r := range runs {
		for k, v := range r.Metrics {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals[k] = append(vals[k], v)
			}
		}
	}
	out := map[string]Stat{}
	for k, vs := range vals {
		out[k] = statOf(vs)
	}
	return out
}

func statOf(vs []float64) Stat {
	if len(vs) == 0 {
		return Stat{}
	}
	s := slices.Clone(vs)
	sort.Float64s(s)
	st := Stat{N: len(s), Min: s[0], Max: s[len(s)-1]}
	if len(s)%2 == 1 {
		st.Median = s[len(s)/2]
	} else {
		st.Median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if st.Median != 0 {
		st.Spread = (st.Max - st.Min) / math.Abs(st.Median)
	}
	return st
}

// ReadResults reads a results JSON file.
func ReadResults(path string) (*Results, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	var r Results
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("parse results %s: %w", path, err)
	}
	if r.Version != ResultsVersion {
		return nil, fmt.Errorf("results %s: format version %d, want %d", path, r.Version, ResultsVersion)
	}
	for _, st := range r.Seeds {
		for i := range st.Figures {
			st.Figures[i].Study = st
		}
	}
	return &r, nil
}

// WriteJSON writes the results, indented.
func (r *Results) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteCSV writes one row per point and metric: scenario, point, series,
// value, metric, n, median, min, max, spread, and skipped/error text.
func (r *Results) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"scenario", "point", "series", "value", "metric", "n", "median", "min", "max", "spread", "status"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, p := range r.Points {
		status := "ok"
		switch {
		case p.Skipped != "":
			status = "skipped: " + p.Skipped
		case p.Error != "":
			status = "error: " + p.Error
		}
		if len(p.Summary) == 0 {
			_ = cw.Write([]string{p.Scenario, p.Label, p.Series, p.Value, "", "0", "", "", "", "", status})
			continue
		}
		for _, m := range slices.Sorted(maps.Keys(p.Summary)) {
			s := p.Summary[m]
			_ = cw.Write([]string{p.Scenario, p.Label, p.Series, p.Value, m, strconv.Itoa(s.N), f(s.Median), f(s.Min), f(s.Max), f(s.Spread), status})
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeFileAtomic writes path through a temp file and rename, so a
// Ctrl-C never leaves half a file.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	// CreateTemp makes 0600 files; a report is for others to read too.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Report file names in the output directory.
const (
	FileJSON     = "results.json"
	FileCSV      = "results.csv"
	FileMarkdown = "summary.md"
	FileHTML     = "report.html"
)

// WriteAll writes results.json, results.csv, summary.md and report.html
// into dir (created if missing).
func (r *Results) WriteAll(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report dir: %w", err)
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{FileJSON, r.WriteJSON},
		{FileCSV, r.WriteCSV},
		{FileMarkdown, r.WriteMarkdown},
		{FileHTML, r.WriteHTML},
	} {
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	return nil
}
