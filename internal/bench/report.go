package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// column is one table column: a metric shown as its median.
type column struct {
	head   string
	metric string
	digits int
}

// Column groups in the seeds' layouts: kafka-producer-perf-test's summary
// line and kafka-consumer-perf-test's header.
var (
	producerCols = []column{
		{"records/sec", MProduceRecs, 1}, {"MB/sec", MProduceMB, 2},
		{"avg latency (ms)", MProduceLatMean, 2}, {"max latency (ms)", MProduceLatMax, 1},
		{"50% (ms)", MProduceLatP50, 1}, {"95% (ms)", MProduceLatP95, 1},
		{"99% (ms)", MProduceLatP99, 1}, {"99.9% (ms)", MProduceLatP999, 1},
	}
	perProducerCols = []column{{"per producer records/sec", MProducePerClient, 1}}
	consumerCols    = []column{
		{"data.consumed.in.MB", MConsumeDataMB, 4}, {"MB.sec", MConsumeMB, 4}, {"nMsg.sec", MConsumeRecs, 4},
		{"rebalance.time.ms", MConsumeRebalance, 0}, {"fetch.time.ms", MConsumeFetchMs, 0},
		{"fetch.MB.sec", MConsumeFetchMB, 4}, {"fetch.nMsg.sec", MConsumeFetchRecs, 4},
	}
	idleCols = []column{{"idle consumers", MConsumeIdle, 0}}
	e2eCols  = []column{
		{"e2e 50% (ms)", ME2EP50, 2}, {"e2e 95% (ms)", ME2EP95, 2}, {"e2e 99% (ms)", ME2EP99, 2},
		{"e2e 99.9% (ms)", ME2EP999, 2}, {"e2e max (ms)", ME2EMax, 2},
	}
	diskCols      = []column{{"log bytes on disk", MLogBytes, 0}, {"disk / raw", MDiskRatio, 3}}
	storedCols    = []column{{"last vs first quarter (%)", MStoredFlat, 1}}
	retentionCols = []column{{"peak MB", MRetentionPeakMB, 2}, {"final MB", MRetentionFinalMB, 2}, {"deleted after (s)", MRetentionDeleted, 1}}
	replicaCols   = []column{{"replicas", MReplicas, 0}, {"min ISR", MISRMin, 0}}
	brokerCols    = []column{{"broker CPU (cores)", MBrokerCPU, 2}, {"broker RSS (MB)", MBrokerRSS, 0}}
	countCols     = []column{{"sent", MSent, 0}, {"stored", MStored, 0}, {"consumed", MConsumed, 0}}
)

// mainMetric is the metric whose spread a scenario's table shows.
func mainMetric(s *Scenario) string {
	switch s.Kind {
	case KindConsume:
		return MConsumeRecs
	case KindEndToEnd:
		return ME2EP99
	case KindRetention:
		return MRetentionDeleted
	}
	return MProduceRecs
}

// table builds a scenario's table: a header row and one row per point.
func (r *Results) table(s *Scenario) [][]string {
	pts := r.PointsOf(s.Name)
	has := func(m string) bool {
		for _, p := range pts {
			if _, ok := p.Summary[m]; ok {
				return true
			}
		}
		return false
	}
	var cols []column
	add := func(group []column) {
		for _, c := range group {
			if has(c.metric) {
				cols = append(cols, c)
			}
		}
	}
	switch s.Kind {
	case KindConsume:
		add(consumerCols)
	default:
		add(producerCols)
		if s.Producers > 1 || s.Sweep.Parameter == "producers" || s.Series.Parameter == "producers" {
			add(perProducerCols)
		}
		add(consumerCols)
	}
	if s.Consumers > 1 || s.Sweep.Parameter == "consumers" {
		add(idleCols)
	}
	add(e2eCols)
	if s.Sweep.Parameter == "compression" || s.Series.Parameter == "compression" {
		add(diskCols)
	}
	if s.Kind == KindStoredData {
		add(storedCols)
	}
	if s.Kind == KindRetention {
		add(retentionCols)
	}
	if s.Topic.ReplicationFactor > 1 || s.Sweep.Parameter == "replication_factor" {
		add(replicaCols)
	}
	add(brokerCols)
	add(countCols)

	var head []string
	if s.Series.Parameter != "" {
		head = append(head, s.Series.Parameter)
	}
	if s.Sweep.Parameter != "" {
		head = append(head, s.Sweep.Parameter)
	}
	if len(head) == 0 {
		head = append(head, "point")
	}
	main := mainMetric(s)
	for _, c := range cols {
		head = append(head, c.head)
		if c.metric == main {
			head = append(head, "spread")
		}
	}
	head = append(head, "runs")
	rows := [][]string{head}
	for _, p := range pts {
		var row []string
		if s.Series.Parameter != "" {
			row = append(row, p.Series)
		}
		if s.Sweep.Parameter != "" {
			row = append(row, p.Value)
		}
		if s.Series.Parameter == "" && s.Sweep.Parameter == "" {
			row = append(row, p.Label)
		}
		if p.Skipped != "" || (p.Error != "" && len(p.Runs) == 0) {
			msg := "skipped: " + p.Skipped
			if p.Skipped == "" {
				msg = "error: " + p.Error
			}
			row = append(row, msg)
			for len(row) < len(head) {
				row = append(row, "")
			}
			rows = append(rows, row)
			continue
		}
		for _, c := range cols {
			st, ok := p.Summary[c.metric]
			if !ok {
				row = append(row, "–")
			} else {
				row = append(row, formatNum(st.Median, c.digits))
			}
			if c.metric == main {
				if ok && st.N > 1 {
					row = append(row, fmt.Sprintf("±%.0f %%", st.Spread*50))
				} else {
					row = append(row, "–")
				}
			}
		}
		row = append(row, strconv.Itoa(len(p.Runs)))
		rows = append(rows, row)
	}
	return rows
}

func formatNum(v float64, digits int) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', digits, 64)
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func writeMDTable(w io.Writer, rows [][]string) {
	for i, row := range rows {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = mdEscape(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", len(row)))
		}
	}
}

// WriteMarkdown writes the summary: the conclusions table, then one table
// per scenario in the seeds' column layout. Spread is ±half of
// (max-min)/median over the repetitions.
func (r *Results) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "# silkworm bench — %s profile\n\n", r.Profile)
	fmt.Fprintf(w, "Cluster: %s. Host: %s. Started %s, took %s.",
		r.Cluster, r.Host, r.Started.Format("2006-01-02 15:04:05"), r.Finished.Sub(r.Started).Round(1e9))
	if r.Interrupted {
		fmt.Fprint(w, " **Interrupted: only finished points are listed.**")
	}
	for _, sc := range r.Scaling {
		fmt.Fprintf(w, "\n\nScaled down for this host: %s", sc)
	}
	fmt.Fprint(w, "\n\n## Seed conclusions\n\n")
	rows := [][]string{{"seed", "conclusion", "this run"}}
	for _, c := range Conclusions(r) {
		rows = append(rows, []string{c.Seed, c.Claim, c.Verdict + detailSep(c.Detail)})
	}
	writeMDTable(w, rows)
	for _, s := range r.Scenarios {
		fmt.Fprintf(w, "\n## %s (`%s`)\n\n", s.Title, s.Name)
		if s.Seed != "" {
			fmt.Fprintf(w, "Seed: %s. ", s.Seed)
		}
		fmt.Fprintf(w, "%s\n\n", strings.TrimSpace(s.Description))
		for _, note := range r.notes(s) {
			fmt.Fprintf(w, "Note: %s\n\n", note)
		}
		for _, f := range SeedFiguresOf(r.Seeds, s.Name) {
			if f.Statement != "" && !f.Numeric() {
				fmt.Fprintf(w, "Seed %s, %s (%s): %s\n\n", f.Study.ID, f.Section, f.OriginalSection, strings.TrimSpace(f.Statement))
			}
		}
		if cmp, ok := r.compareSeeds(s); ok {
			fmt.Fprint(w, "This run beside the seeds' figures:\n\n")
			for _, f := range cmp.figures {
				fmt.Fprintf(w, "- %s: %s (%s); %s.\n", f.Label(), f.Section, f.OriginalSection, f.Setup)
			}
			fmt.Fprintln(w)
			writeMDTable(w, r.seedTable(s, cmp))
			fmt.Fprint(w, "\nThis run:\n\n")
		}
		writeMDTable(w, r.table(s))
	}
	if len(r.Seeds) > 0 {
		fmt.Fprint(w, "\n## Seed studies\n\n")
		rows := [][]string{{"seed", "title", "original title", "Kafka", "measured on"}}
		for _, st := range r.Seeds {
			rows = append(rows, []string{st.ID, st.Title, st.OriginalTitle, st.Kafka, st.Hardware})
		}
		rows = append(rows, []string{"this run", "silkworm bench, " + r.Profile + " profile", "", "Silkworm", r.Cluster + "; " + r.Host})
		writeMDTable(w, rows)
	}
	return nil
}

// numericValues reports whether every value is a number.
func numericValues(vs []string) bool {
	for _, v := range vs {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return false
		}
	}
	return len(vs) > 0
}

func detailSep(d string) string {
	if d == "" {
		return ""
	}
	return ", " + d
}

// notes are the distinct notes and errors of a scenario's points.
func (r *Results) notes(s *Scenario) []string {
	var out []string
	for _, p := range r.PointsOf(s.Name) {
		for _, n := range []string{p.Note, p.Error} {
			if n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// charts builds a scenario's charts from its chart specs.
func (r *Results) charts(s *Scenario) []chartData {
	pts := r.PointsOf(s.Name)
	specs := s.Charts
	if len(specs) == 0 {
		specs = []ChartSpec{{Title: s.Title, Metrics: []string{mainMetric(s)}}}
	}
	var out []chartData
	for _, cs := range specs {
		// Sweeps of numbers are lines; bars only for named categories
		// (codecs).
		cd := chartData{Title: cs.Title, YLabel: cs.YLabel, Bars: cs.Bars && !numericValues(s.Sweep.Values)}
		if cd.YLabel == "" && len(cs.Metrics) > 0 {
			cd.YLabel = cs.Metrics[0]
		}
		if cs.X == "samples" {
			if s.Kind == KindRetention {
				cd.XLabel = "seconds since the first write"
			} else {
				cd.XLabel = "MB stored before the window"
			}
			for _, p := range pts {
				if len(p.Runs) == 0 {
					continue
				}
				l := chartLine{Name: p.Label}
				for _, smp := range p.Runs[0].Samples {
					l.X = append(l.X, smp.X)
					l.Y = append(l.Y, smp.Y)
				}
				cd.Lines = append(cd.Lines, l)
			}
			out = append(out, cd)
			continue
		}
		cd.XLabel = s.Sweep.Parameter
		var values, series []string
		for _, p := range pts {
			if !slices.Contains(values, p.Value) {
				values = append(values, p.Value)
			}
			if !slices.Contains(series, p.Series) {
				series = append(series, p.Series)
			}
		}
		cd.Categories = values
		for _, m := range cs.Metrics {
			for _, sv := range series {
				name := m
				if sv != "" {
					name = s.Series.Parameter + "=" + sv + " " + shortMetric(m)
				} else if len(cs.Metrics) > 1 || cs.PerClient {
					name = shortMetric(m)
				}
				l := chartLine{Name: name}
				for i, v := range values {
					if y, ok := r.Find(s.Name, sv, v).Median(m); ok {
						l.X = append(l.X, float64(i))
						l.Y = append(l.Y, y)
					}
				}
				cd.Lines = append(cd.Lines, l)
			}
		}
		if cs.PerClient {
			// p_i_j: producer j of the point with i producers, mean over runs.
			maxN := 0
			for _, p := range pts {
				for _, run := range p.Runs {
					maxN = max(maxN, len(run.Producers))
				}
			}
			for j := range maxN {
				l := chartLine{Name: fmt.Sprintf("producer %d", j+1), Dashed: true}
				for i, v := range values {
					p := r.Find(s.Name, "", v)
					if p == nil {
						continue
					}
					var sum float64
					var n int
					for _, run := range p.Runs {
						if j < len(run.Producers) {
							sum += run.Producers[j].RecordsPerSec
							n++
						}
					}
					if n > 0 {
						l.X = append(l.X, float64(i))
						l.Y = append(l.Y, sum/float64(n))
					}
				}
				cd.Lines = append(cd.Lines, l)
			}
		}
		out = append(out, cd)
	}
	return out
}

func shortMetric(m string) string {
	for _, group := range [][]column{producerCols, perProducerCols, consumerCols, e2eCols, diskCols, retentionCols, brokerCols, idleCols} {
		for _, c := range group {
			if c.metric == m {
				prefix := "producer "
				if strings.HasPrefix(m, "consumer.") {
					prefix = "consumer "
				} else if !strings.HasPrefix(m, "producer.") {
					prefix = ""
				}
				return prefix + c.head
			}
		}
	}
	return m
}
