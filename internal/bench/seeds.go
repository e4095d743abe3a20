package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SeedStudy is one seed study's published figures, read from a YAML file
// of bench/seeds: what the study is (its English title, with the original
// beside it), what it ran on, and the figures it published.
type SeedStudy struct {
	ID            string       `yaml:"id" json:"id"`
	File          string       `yaml:"file" json:"file"`
	Title         string       `yaml:"title" json:"title"`
	OriginalTitle string       `yaml:"original_title" json:"original_title"`
	Kafka         string       `yaml:"kafka" json:"kafka"`
	Hardware      string       `yaml:"hardware" json:"hardware"`
	Figures       []SeedFigure `yaml:"figures" json:"figures"`
}

// SeedFigure is one published figure (a table, a result line, or a
// statement when the study published only a chart image) and the
// scenario it is compared with. Numeric figures have Metrics (metric
// names of result.go, in this package's units) and Rows: one row per value
// of Parameter, one number per metric.
type SeedFigure struct {
	Scenario        string `yaml:"scenario" json:"scenario"`
	Section         string `yaml:"section" json:"section"`
	OriginalSection string `yaml:"original_section" json:"original_section"`
	Setup           string `yaml:"setup" json:"setup"`
	// Series labels the figure's line ("openebs"); SeriesValue is the
	// value of the scenario's series parameter it compares with.
	Series      string `yaml:"series,omitempty" json:"series,omitempty"`
	SeriesValue string `yaml:"series_value,omitempty" json:"series_value,omitempty"`
	// Parameter is the x of the rows: the scenario's sweep parameter
	// (comparable point by point), another name (listed, not compared),
	// or "" for a single point.
	Parameter string    `yaml:"parameter,omitempty" json:"parameter,omitempty"`
	Metrics   []string  `yaml:"metrics,omitempty" json:"metrics,omitempty"`
	Rows      []SeedRow `yaml:"rows,omitempty" json:"rows,omitempty"`
	// Statement is the published conclusion when there are no numbers.
	Statement string `yaml:"statement,omitempty" json:"statement,omitempty"`

	// Study is set by LoadSeeds.
	Study *SeedStudy `yaml:"-" json:"-"`
}

// SeedRow is one row of a figure: V[i] is the value of Metrics[i]; Low
// and High, when set, are the range a value was read off a chart with.
type SeedRow struct {
	X    string    `yaml:"x" json:"x"`
	V    []float64 `yaml:"v" json:"v"`
	Low  []float64 `yaml:"low,omitempty" json:"low,omitempty"`
	High []float64 `yaml:"high,omitempty" json:"high,omitempty"`
	Note string    `yaml:"note,omitempty" json:"note,omitempty"`
}

// Value is the row's value of metric m in figure f.
func (f *SeedFigure) Value(row SeedRow, m string) (float64, bool) {
	i := slices.Index(f.Metrics, m)
	if i < 0 || i >= len(row.V) {
		return 0, false
	}
	return row.V[i], true
}

// Numeric reports whether the figure has numbers (not only a statement).
func (f *SeedFigure) Numeric() bool { return len(f.Rows) > 0 }

// Comparable reports whether the figure's rows line up with the points of
// scenario s: same x parameter, or a single point for a scenario without
// a sweep.
func (f *SeedFigure) Comparable(s *Scenario) bool {
	return f.Numeric() && f.Parameter == s.Sweep.Parameter
}

// Label names the figure's line: "seed 002 openebs".
func (f *SeedFigure) Label() string {
	l := "seed " + f.Study.ID
	if f.Series != "" && f.Series != l {
		l += " " + f.Series
	}
	return l
}

// ParseSeedStudy reads one seed file; unknown fields are errors, and so is
// a row whose numbers do not match the figure's metrics.
func ParseSeedStudy(data []byte) (*SeedStudy, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	var st SeedStudy
	if err := dec.Decode(&st); err != nil {
		return nil, err
	}
	var errs []error
	if st.ID == "" || st.Title == "" || st.OriginalTitle == "" || st.Hardware == "" {
		errs = append(errs, errors.New("id, title, original_title and hardware are required"))
	}
	for i := range st.Figures {
		f := &st.Figures[i]
		f.Study = &st
		where := fmt.Sprintf("figure %d (%s, %s)", i+1, f.Scenario, f.Section)
		if f.Scenario == "" || f.Section == "" || f.OriginalSection == "" {
			errs = append(errs, fmt.Errorf("%s: scenario, section and original_section are required", where))
		}
		if !f.Numeric() && f.Statement == "" {
			errs = append(errs, fmt.Errorf("%s: neither rows nor a statement", where))
		}
		for _, m := range f.Metrics {
			if !knownMetric(m) {
				errs = append(errs, fmt.Errorf("%s: unknown metric %q", where, m))
			}
		}
		for _, r := range f.Rows {
			if len(r.V) != len(f.Metrics) {
				errs = append(errs, fmt.Errorf("%s: row %q has %d values for %d metrics", where, r.X, len(r.V), len(f.Metrics)))
			}
			if (len(r.Low) > 0 && len(r.Low) != len(r.V)) || (len(r.High) > 0 && len(r.High) != len(r.V)) {
				errs = append(errs, fmt.Errorf("%s: row %q: low/high do not match its values", where, r.X))
			}
		}
	}
	return &st, errors.Join(errs...)
}

// LoadSeeds reads every *.yaml file of dir in fsys, sorted by name.
func LoadSeeds(fsys fs.FS, dir string) ([]*SeedStudy, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read seeds: %w", err)
	}
	var out []*SeedStudy
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		p := path.Join(dir, e.Name())
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("seed %s: %w", p, err)
		}
		st, err := ParseSeedStudy(data)
		if err != nil {
			return nil, fmt.Errorf("seed %s: %w", p, err)
		}
		out = append(out, st)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no seed files in %s", dir)
	}
	return out, nil
}

// SeedFiguresOf returns the figures of the studies that belong to scenario.
func SeedFiguresOf(studies []*SeedStudy, scenario string) []*SeedFigure {
	var out []*SeedFigure
	for _, st := range studies {
		for i := range st.Figures {
			if st.Figures[i].Scenario == scenario {
				out = append(out, &st.Figures[i])
			}
		}
	}
	return out
}

// knownMetric reports whether m is one of the metric names of result.go.
func knownMetric(m string) bool {
	for _, group := range [][]column{producerCols, perProducerCols, consumerCols, idleCols, e2eCols, diskCols,
		storedCols, retentionCols, replicaCols, brokerCols, countCols} {
		for _, c := range group {
			if c.metric == m {
				return true
			}
		}
	}
	return false
}

// sortValues orders sweep values numerically when they all are numbers,
// keeping their order otherwise.
func sortValues(vs []string) []string {
	nums := make([]float64, len(vs))
	for i, v := range vs {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return vs
		}
		nums[i] = n
	}
	out := slices.Clone(vs)
	slices.SortStableFunc(out, func(a, b string) int {
		x, _ := strconv.ParseFloat(a, 64)
		y, _ := strconv.ParseFloat(b, 64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return out
}
