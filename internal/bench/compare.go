package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// compareMetrics are the metrics Compare lists, in order.
var compareMetrics = []string{
	MProduceRecs, MProduceMB, MProducePerClient, MProduceLatP50, MProduceLatP99, MProduceLatMax,
	MConsumeRecs, MConsumeMB, MConsumeFetchMB, MConsumeFetchRecs,
	ME2EP50, ME2EP99, MLogBytes, MDiskRatio, MRetentionDeleted, MBrokerCPU, MBrokerRSS,
}

// CompareRow is one metric of one point in both runs.
type CompareRow struct {
	Scenario, Point, Metric string
	A, B                    float64
	HasA, HasB              bool
}

// Ratio is B/A (0 when either side is missing or A is 0).
func (c CompareRow) Ratio() float64 {
	if !c.HasA || !c.HasB || c.A == 0 {
		return 0
	}
	return c.B / c.A
}

// Compare pairs the points of a and b by scenario and label and lists each
// metric measured in either.
func Compare(a, b *Results) []CompareRow {
	type key struct{ scenario, label string }
	var order []key
	pa, pb := map[key]*PointResult{}, map[key]*PointResult{}
	for _, side := range []struct {
		r *Results
		m map[key]*PointResult
	}{{a, pa}, {b, pb}} {
		for i := range side.r.Points {
			p := &side.r.Points[i]
			k := key{p.Scenario, p.Label}
			if _, seen := pa[k]; !seen {
				if _, seen := pb[k]; !seen {
					order = append(order, k)
				}
			}
			side.m[k] = p
		}
	}
	var rows []CompareRow
	for _, k := range order {
		metrics := map[string]bool{}
		for _, p := range []*PointResult{pa[k], pb[k]} {
			if p != nil {
				for m := range maps.Keys(p.Summary) {
					metrics[m] = true
				}
			}
		}
		for _, m := range compareMetrics {
			if !metrics[m] {
				continue
			}
			row := CompareRow{Scenario: k.scenario, Point: k.label, Metric: m}
			row.A, row.HasA = pa[k].Median(m)
			row.B, row.HasB = pb[k].Median(m)
			rows = append(rows, row)
		}
	}
	return rows
}

// WriteCompare writes the comparison as a Markdown table with B/A per cell.
// Names label the two runs (e.g. the file names).
func WriteCompare(w io.Writer, a, b *Results, nameA, nameB string) error {
	fmt.Fprintf(w, "# silkworm bench compare\n\nA: %s — %s, %s profile, %s\n\nB: %s — %s, %s profile, %s\n\n",
		nameA, a.Cluster, a.Profile, a.Started.Format("2006-01-02 15:04"),
		nameB, b.Cluster, b.Profile, b.Started.Format("2006-01-02 15:04"))
	rows := [][]string{{"scenario", "point", "metric", "A", "B", "B/A"}}
	for _, c := range Compare(a, b) {
		cell := func(v float64, ok bool) string {
			if !ok {
				return "–"
			}
			return formatNum(v, 2)
		}
		ratio := "–"
		if r := c.Ratio(); r != 0 {
			ratio = fmt.Sprintf("%.2f×", r)
		}
		rows = append(rows, []string{c.Scenario, c.Point, c.Metric, cell(c.A, c.HasA), cell(c.B, c.HasB), ratio})
	}
	writeMDTable(w, rows)
	var onlyA, onlyB []string
	for _, s := range a.Scenarios {
		if b.Scenario(s.Name) == nil {
			onlyA = append(onlyA, s.Name)
		}
	}
	for _, s := range b.Scenarios {
		if a.Scenario(s.Name) == nil {
			onlyB = append(onlyB, s.Name)
		}
	}
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	if len(onlyA) > 0 {
		fmt.Fprintf(w, "\nOnly in A: %s\n", strings.Join(onlyA, ", "))
	}
	if len(onlyB) > 0 {
		fmt.Fprintf(w, "\nOnly in B: %s\n", strings.Join(onlyB, ", "))
	}
	return nil
}
