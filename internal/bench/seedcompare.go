package bench

import (
	"slices"
	"strconv"
)

// keyMetrics are the metrics the seed comparison shows side by side (the
// full published figures are listed under them).
var keyMetrics = []string{MProduceRecs, MProduceMB, MProduceLatP99, MConsumeRecs, MConsumeMB, MDiskRatio}

// seedColumn is one column of a seed comparison: this run's value of
// metric at series value Series, or a seed figure's (Figure != nil).
type seedColumn struct {
	Metric string
	Series string // this run's series value
	Figure *SeedFigure
}

// seedComparison is a scenario's table of this run against the seeds'
// figures: one row per sweep value, for each key metric a column for this
// run (per series value the figures compare with) and one per figure.
type seedComparison struct {
	Values  []string
	Columns []seedColumn
	figures []*SeedFigure
}

// seedSeries is the series value of this run a figure compares with.
func seedSeries(s *Scenario, f *SeedFigure) string {
	if s.Series.Parameter == "" {
		return ""
	}
	if f.SeriesValue != "" {
		return f.SeriesValue
	}
	if len(s.Series.Values) > 0 {
		return s.Series.Values[0]
	}
	return ""
}

// compareSeeds builds the comparison of scenario s; ok is false when no
// seed figure lines up with its points.
func (r *Results) compareSeeds(s *Scenario) (seedComparison, bool) {
	var c seedComparison
	for _, f := range SeedFiguresOf(r.Seeds, s.Name) {
		if f.Comparable(s) {
			c.figures = append(c.figures, f)
		}
	}
	if len(c.figures) == 0 {
		return c, false
	}
	var values []string
	for _, p := range r.PointsOf(s.Name) {
		if !slices.Contains(values, p.Value) {
			values = append(values, p.Value)
		}
	}
	for _, f := range c.figures {
		for _, row := range f.Rows {
			if !slices.Contains(values, row.X) {
				values = append(values, row.X)
			}
		}
	}
	c.Values = sortValues(values)
	for _, m := range keyMetrics {
		var series []string
		for _, f := range c.figures {
			if slices.Contains(f.Metrics, m) {
				if sv := seedSeries(s, f); !slices.Contains(series, sv) {
					series = append(series, sv)
				}
			}
		}
		for _, sv := range series {
			c.Columns = append(c.Columns, seedColumn{Metric: m, Series: sv})
			for _, f := range c.figures {
				if slices.Contains(f.Metrics, m) && seedSeries(s, f) == sv {
					c.Columns = append(c.Columns, seedColumn{Metric: m, Series: sv, Figure: f})
				}
			}
		}
	}
	return c, len(c.Columns) > 0
}

// head names a column: "producer records/sec: this run (acks=all)".
func (col seedColumn) head(s *Scenario) string {
	who := "this run"
	if col.Figure != nil {
		who = col.Figure.Label()
	} else if col.Series != "" {
		who += " (" + s.Series.Parameter + "=" + col.Series + ")"
	}
	return shortMetric(col.Metric) + ": " + who
}

// value is the column's value at sweep value v.
func (r *Results) seedCell(s *Scenario, col seedColumn, v string) (float64, bool) {
	if col.Figure == nil {
		return r.Find(s.Name, col.Series, v).Median(col.Metric)
	}
	for _, row := range col.Figure.Rows {
		if row.X == v {
			return col.Figure.Value(row, col.Metric)
		}
	}
	return 0, false
}

// rows renders the comparison as a table: a header, then one row per
// sweep value.
func (r *Results) seedTable(s *Scenario, c seedComparison) [][]string {
	param := s.Sweep.Parameter
	if param == "" {
		param = "point"
	}
	head := []string{param}
	for _, col := range c.Columns {
		head = append(head, col.head(s))
	}
	rows := [][]string{head}
	for _, v := range c.Values {
		label := v
		if label == "" {
			label = "baseline"
		}
		row := []string{label}
		for _, col := range c.Columns {
			if x, ok := r.seedCell(s, col, v); ok {
				row = append(row, formatSig(x))
			} else {
				row = append(row, "–")
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// formatSig writes v with digits that fit its size: 1234567, 123.4, 1.23.
func formatSig(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// seedLines are the overlay chart lines of metric m: this run's (one per
// series value) and each figure's, over the comparison's values.
func (r *Results) seedLines(s *Scenario, c seedComparison, m string) []chartLine {
	var out []chartLine
	for _, col := range c.Columns {
		if col.Metric != m {
			continue
		}
		l := chartLine{Name: "this run", Dashed: col.Figure != nil}
		if col.Figure != nil {
			l.Name = col.Figure.Label()
		} else if col.Series != "" {
			l.Name += " " + s.Series.Parameter + "=" + col.Series
		}
		for i, v := range c.Values {
			if y, ok := r.seedCell(s, col, v); ok {
				l.X = append(l.X, float64(i))
				l.Y = append(l.Y, y)
			}
		}
		out = append(out, l)
	}
	return out
}
