package bench

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/silkworm/silkworm/bench/scenarios"
	"github.com/silkworm/silkworm/bench/seeds"
)

func loadShippedSeeds(t *testing.T) []*SeedStudy {
	t.Helper()
	st, err := LoadSeeds(seeds.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSeedsLoadAndCoverScenarios: the seed files parse, every shipped
// scenario has at least one seed figure, every figure names a shipped
// scenario, and a few transcribed numbers are what the seeds published.
func TestSeedsLoadAndCoverScenarios(t *testing.T) {
	studies := loadShippedSeeds(t)
	ss := loadShipped(t)
	names := map[string]*Scenario{}
	for _, s := range ss {
		names[s.Name] = s
		if len(SeedFiguresOf(studies, s.Name)) == 0 {
			t.Errorf("scenario %s has no seed figure", s.Name)
		}
	}
	for _, st := range studies {
		for _, f := range st.Figures {
			s, ok := names[f.Scenario]
			if !ok {
				t.Errorf("seed %s figure %q names unknown scenario %q", st.ID, f.Section, f.Scenario)
				continue
			}
			if f.Parameter != "" && f.Parameter == s.Sweep.Parameter && f.SeriesValue != "" && !strings.Contains(strings.Join(s.Series.Values, ","), f.SeriesValue) {
				t.Errorf("seed %s figure %q compares with series %q the scenario does not have", st.ID, f.Section, f.SeriesValue)
			}
		}
	}
	if len(studies) != 5 {
		t.Errorf("%d seed studies, want 5 (000–004)", len(studies))
	}
	// Spot checks against the published tables.
	check := func(scenario, series, x, metric string, want float64) {
		t.Helper()
		for _, f := range SeedFiguresOf(studies, scenario) {
			if f.Series != series {
				continue
			}
			for _, row := range f.Rows {
				if row.X != x {
					continue
				}
				if v, ok := f.Value(row, metric); ok {
					if v != want {
						t.Errorf("%s %s x=%s %s = %v, published %v", scenario, series, x, metric, v, want)
					}
					return
				}
			}
		}
		t.Errorf("%s %s x=%s %s: not found", scenario, series, x, metric)
	}
	check("record-size", "openebs", "1024", MProduceRecs, 366703)
	check("record-size", "ceph", "8192", MConsumeRecs, 66220.7801)
	check("record-size", "seed 001", "1024", MProduceLatP99, 1043)
	check("producer-partitions-record-size", "2048 B", "15", MProduceMB, 152.53)
	check("broker-replica-fetchers", "2 brokers", "5", MProduceRecs, 161733.7862)
	check("compression", "", "snappy", MDiskRatio, 0.10)
}

func TestParseSeedStudyErrors(t *testing.T) {
	base := "id: \"9\"\ntitle: t\noriginal_title: o\nhardware: h\nfigures:\n"
	for _, tc := range []struct{ yaml, want string }{
		{base + "  - {scenario: x, section: s, original_section: o, metrics: [producer.records_per_sec], rows: [{x: a, v: [1, 2]}]}\n", "2 values for 1 metrics"},
		{base + "  - {scenario: x, section: s, original_section: o, metrics: [bogus], rows: [{x: a, v: [1]}]}\n", "unknown metric"},
		{base + "  - {scenario: x, section: s, original_section: o}\n", "neither rows nor a statement"},
		{"id: \"9\"\ntitle: t\nbogus: 1\n", "bogus"},
	} {
		if _, err := ParseSeedStudy([]byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseSeedStudy(%q) = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// fixtureResults is a small fixed result set: a one-point scenario, a
// record-size sweep and a sweep with a series, with made-up medians.
func fixtureResults(t testing.TB) *Results {
	ss, err := LoadScenarios(scenarios.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	studies, err := LoadSeeds(seeds.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r := &Results{Version: ResultsVersion, Started: start, Finished: start.Add(3 * time.Minute), Profile: "quick",
		Cluster: "embedded silkworm (1 to 3 brokers, as each scenario asks)", Host: "fixture, linux/amd64, 2 CPUs", Seeds: studies}
	stat := func(v float64) Stat { return Stat{N: 3, Median: v, Min: v * 0.95, Max: v * 1.05, Spread: 0.1} }
	add := func(s *Scenario, series, value string, m map[string]float64) {
		pr := PointResult{Scenario: s.Name, Series: series, Value: value, Summary: map[string]Stat{}, Brokers: 1}
		pr.Label = Point{Scenario: s, Series: series, Value: value}.Label()
		run := Repetition{Rep: 1, Metrics: m}
		pr.Runs = []Repetition{run}
		for k, v := range m {
			pr.Summary[k] = stat(v)
		}
		r.Points = append(r.Points, pr)
	}
	for _, s := range ss {
		switch s.Name {
		case "producer-throughput":
			r.Scenarios = append(r.Scenarios, s)
			add(s, "", "", map[string]float64{MProduceRecs: 2190264, MProduceMB: 208.9, MProduceLatP50: 1.2, MProduceLatP95: 3.4,
				MProduceLatP99: 5.6, MProduceLatP999: 9.1, MProduceLatMax: 40, MSent: 3e6, MStored: 3e6})
		case "record-size":
			r.Scenarios = append(r.Scenarios, s)
			for i, v := range []string{"10", "100", "1024", "2048", "4096", "8192", "10240", "102400"} {
				size := []float64{10, 100, 1024, 2048, 4096, 8192, 10240, 102400}[i]
				recs := 2.2e6 / (1 + size/300)
				add(s, "", v, map[string]float64{MProduceRecs: recs, MProduceMB: recs * size / mb, MProduceLatP99: 4 + size/2000,
					MConsumeRecs: recs * 1.3, MConsumeMB: recs * 1.3 * size / mb, MConsumeFetchMB: recs * 1.4 * size / mb})
			}
		case "producer-replicas":
			r.Scenarios = append(r.Scenarios, s)
			for _, acks := range []string{"1", "all"} {
				for i, rf := range []string{"1", "2", "3"} {
					add(s, acks, rf, map[string]float64{MProduceRecs: 900000 / float64(i+1), MReplicas: float64(i + 1), MISRMin: float64(i + 1)})
				}
			}
		}
	}
	if len(r.Scenarios) != 3 {
		t.Fatalf("fixture: %d scenarios", len(r.Scenarios))
	}
	return r
}

var (
	cjk       = regexp.MustCompile(`\p{Han}`)
	origSpan  = regexp.MustCompile(`<span class="orig" lang="zh">[^<]*</span>`)
	tagRE     = regexp.MustCompile(`<[^>]*>`)
	tdRE      = regexp.MustCompile(`<td class="(num|text)">(.*?)</td>`)
	anyTDRE   = regexp.MustCompile(`<td[ >]`)
	headingRE = regexp.MustCompile(`(?s)<(h[1-3]|th|figcaption)[^>]*>(.*?)</(h[1-3]|th|figcaption)>`)
)

// TestReportStructure renders the fixture and checks what a reader needs:
// no CJK text outside the original-title spans (and none of those alone
// in a heading), numbers right-aligned and text left-aligned, the seed's
// figures beside this run's with both hardware descriptions, overlay
// charts, figures instead of a chart for one point, fonts with
// fallbacks, a print stylesheet, nothing external.
func TestReportStructure(t *testing.T) {
	r := fixtureResults(t)
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()

	if rest := origSpan.ReplaceAllString(page, ""); cjk.MatchString(rest) {
		i := cjk.FindStringIndex(rest)[0]
		t.Errorf("CJK text outside an original-title span: …%s…", rest[max(0, i-80):min(len(rest), i+40)])
	}
	if !strings.Contains(page, `<span class="orig" lang="zh">Kafka学习（3）——测试</span>`) {
		t.Error("seed 000's original title is not shown beside its English one")
	}
	for _, m := range headingRE.FindAllStringSubmatch(page, -1) {
		text := strings.TrimSpace(tagRE.ReplaceAllString(origSpan.ReplaceAllString(m[2], ""), ""))
		if !strings.ContainsFunc(text, unicode.IsLetter) && !strings.ContainsFunc(text, unicode.IsDigit) && m[1] != "th" {
			t.Errorf("%s %q has no English text", m[1], m[2])
		}
	}

	// Alignment: every cell is classed, numbers num and words text.
	cells := tdRE.FindAllStringSubmatch(page, -1)
	if n := len(anyTDRE.FindAllString(page, -1)); n != len(cells) {
		t.Errorf("%d of %d table cells lack an alignment class", n-len(cells), n)
	}
	var nums, texts int
	for _, c := range cells {
		want := "text"
		if numericCell.MatchString(strings.TrimSpace(tagRE.ReplaceAllString(c[2], ""))) {
			want = "num"
		}
		if c[1] != want {
			t.Errorf("cell %q has class %s, want %s", c[2], c[1], want)
		}
		if c[1] == "num" {
			nums++
		} else {
			texts++
		}
	}
	if nums == 0 || texts == 0 {
		t.Errorf("%d numeric and %d text cells", nums, texts)
	}
	for _, want := range []string{".num{text-align:right", ".text{text-align:left", "@media print", `"Noto Sans CJK SC"`,
		"sans-serif", "max-width:1200px", `<meta name="viewport"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "https://", "http://cdn", "<link", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("report is not self-contained: contains %q", bad)
		}
	}

	section := func(name string) string {
		i := strings.Index(page, fmt.Sprintf(`<section class="scenario" id=%q>`, name))
		if i < 0 {
			t.Fatalf("no section %s", name)
		}
		j := strings.Index(page[i:], "</section>")
		return page[i : i+j]
	}
	// One point: figures, no chart; the seed's range beside it.
	one := section("producer-throughput")
	if strings.Contains(one, "<svg") || !strings.Contains(one, `class="figure"`) {
		t.Error("a one-point scenario must show figures, not a chart")
	}
	if !strings.Contains(one, "seed 000: <span class=\"num\">500000–600000</span>") {
		t.Error("producer-throughput does not show seed 000's published range")
	}
	// A sweep: line charts (no bars), the overlay with dashed seed lines,
	// the comparison table, both hardware descriptions.
	rs := section("record-size")
	if strings.Contains(rs, "<rect x=") {
		t.Error("a record-size sweep is drawn with bars; sweeps are lines")
	}
	for _, want := range []string{"this run and the seeds</figcaption>", "seed 002 openebs", "seed 002 ceph", "seed 001",
		`class="swatch dashed"`, `stroke-dasharray`, `<table class="seedcmp">`, "<b>This run</b>", "<b>Seed 002</b>",
		"Kubernetes, 5 brokers", "366703"} {
		if !strings.Contains(rs, want) {
			t.Errorf("record-size section lacks %q", want)
		}
	}
	// A seed on a series: seed 004's acks=-1 line beside this run's acks=all.
	if pr := section("producer-replicas"); !strings.Contains(pr, "this run (acks=all)") || !strings.Contains(pr, "seed 004 acks=-1") {
		t.Error("producer-replicas does not compare seed 004 with this run's acks=all series")
	}
	// No table is wider than 11 columns (the page does not scroll).
	for _, tbl := range regexp.MustCompile(`(?s)<table.*?</table>`).FindAllString(page, -1) {
		first := tbl[:strings.Index(tbl, "</tr>")]
		if n := strings.Count(first, "<th"); n > 11 {
			t.Errorf("a table has %d columns", n)
		}
	}

	var md bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "record_size | producer records/sec: this run | producer records/sec: seed 001") {
		t.Errorf("summary lacks the seed comparison table:\n%s", md.String())
	}
}
