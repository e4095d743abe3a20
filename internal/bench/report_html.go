package bench

import (
	"fmt"
	"html"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// reportCSS is the report's style: fonts with fallbacks that exist on
// every system (the page never needs a CJK font: original titles sit in
// .orig spans beside their English ones), numbers right-aligned and text
// left-aligned, charts that shrink with the window (no sideways
// scrolling at laptop widths), and a print layout.
const reportCSS = `
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans","Liberation Sans","DejaVu Sans",sans-serif;
 font-size:15px;line-height:1.45;color:#1d1d1f;background:#fff;max-width:1200px;margin:0 auto;padding:1.5em 1.25em;overflow-wrap:break-word}
h1{font-size:1.6em;margin:.2em 0 .4em}
h2{font-size:1.3em;border-bottom:1px solid #d0d4d9;padding-bottom:.2em;margin:2.2em 0 .6em}
h3{font-size:1.05em;margin:1.4em 0 .4em}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace;font-size:.88em;color:#444}
.orig{font-family:"Noto Sans CJK SC","Source Han Sans SC","PingFang SC","Hiragino Sans GB","Microsoft YaHei","WenQuanYi Micro Hei",sans-serif;
 color:#5f6368;font-weight:normal;font-size:.85em;margin-left:.4em}
.muted,.note{color:#5f6368;font-size:13px}
table{border-collapse:collapse;margin:.6em 0 1em;font-size:12.5px;max-width:100%}
th,td{border:1px solid #d0d4d9;padding:3px 7px;vertical-align:top}
th{background:#f2f4f7;font-weight:600}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
th.num{white-space:normal}
.text{text-align:left}
.tablewrap{max-width:100%;overflow-x:auto}
.yes{color:#17702a;font-weight:600}.no{color:#b02020;font-weight:600}.nm{color:#777}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(400px,1fr));gap:1.2em 2em;margin:1em 0}
figure.chart{margin:0;min-width:0}
figure.chart svg{width:100%;height:auto;display:block}
figcaption{font-weight:600;margin-bottom:.35em}
ul.legend{list-style:none;padding:0;margin:.35em 0 0;display:flex;flex-wrap:wrap;gap:.2em 1.2em;font-size:12.5px}
.swatch{display:inline-block;width:20px;height:0;border-top:3px solid;vertical-align:middle;margin-right:.4em}
.swatch.dashed{border-top-style:dashed}
.figures{display:flex;flex-wrap:wrap;gap:.8em;margin:1em 0}
.figure{border:1px solid #d0d4d9;border-radius:6px;padding:.55em .9em;min-width:11em;max-width:100%}
.figure .label{font-size:12.5px;color:#5f6368}
.figure .value{font-size:1.55em;font-weight:600;font-variant-numeric:tabular-nums}
.figure .seed{font-size:12.5px}
.hw{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:.4em 2em;font-size:13px;margin:.6em 0}
.hw div{border-left:3px solid #d0d4d9;padding-left:.6em}
.statement{border-left:3px solid #9aa5b1;margin:.6em 0;padding:.1em .9em;font-size:14px}
details{margin:.6em 0}
summary{cursor:pointer;color:#1f5fbf}
nav ol{columns:2;column-gap:2em;font-size:14px}
@media (max-width:700px){nav ol{columns:1}.charts{grid-template-columns:1fr}}
@media print{
 body{max-width:none;font-size:10pt;padding:0}
 nav,summary{display:none}
 details{display:block}
 h2{break-after:avoid;margin-top:1.2em}
 figure,.figure,tr,.statement{break-inside:avoid}
 .charts{grid-template-columns:1fr 1fr}
 .tablewrap{overflow:visible}
 a{color:inherit;text-decoration:none}
}
@page{margin:1.5cm}
`

var numericCell = regexp.MustCompile(`^([−+±-]?[0-9][0-9,]*(\.[0-9]+)?( ?[%×])?|–)$`)

// cellClass is "num" for numbers (and the dash of a missing one), "text"
// otherwise.
func cellClass(s string) string {
	if numericCell.MatchString(strings.TrimSpace(s)) {
		return "num"
	}
	return "text"
}

// writeHTMLTable writes rows (the first is the header) with alignment
// classes; a header cell is aligned like the cells under it.
func writeHTMLTable(w io.Writer, rows [][]string, class string) {
	if len(rows) == 0 {
		return
	}
	e := html.EscapeString
	colClass := make([]string, len(rows[0]))
	for j := range colClass {
		colClass[j] = "text"
		nums, texts := 0, 0
		for _, row := range rows[1:] {
			if j < len(row) && row[j] != "" && row[j] != "–" {
				if cellClass(row[j]) == "num" {
					nums++
				} else {
					texts++
				}
			}
		}
		if nums > 0 && texts == 0 {
			colClass[j] = "num"
		}
	}
	fmt.Fprintf(w, "<div class=\"tablewrap\"><table class=%q>\n", class)
	for i, row := range rows {
		fmt.Fprint(w, "<tr>")
		for j, c := range row {
			if i == 0 {
				cc := "text"
				if j < len(colClass) {
					cc = colClass[j]
				}
				fmt.Fprintf(w, "<th class=%q>%s</th>", cc, e(c))
				continue
			}
			fmt.Fprintf(w, "<td class=%q>%s</td>", cellClass(c), e(c))
		}
		fmt.Fprint(w, "</tr>\n")
	}
	fmt.Fprint(w, "</table></div>\n")
}

// splitColumns cuts a wide table into tables of at most max data columns,
// each repeating the first key columns, so no table is wider than the
// page.
func splitColumns(rows [][]string, key, maxCols int) [][][]string {
	if len(rows) == 0 || len(rows[0]) <= key+maxCols {
		return [][][]string{rows}
	}
	// Even parts: 11 columns become 6 and 5, not 10 and 1.
	data := len(rows[0]) - key
	parts := (data + maxCols - 1) / maxCols
	size := (data + parts - 1) / parts
	var out [][][]string
	for from := key; from < len(rows[0]); from += size {
		to := min(from+size, len(rows[0]))
		part := make([][]string, len(rows))
		for i, row := range rows {
			r := slices.Clone(row[:min(key, len(row))])
			if from < len(row) {
				r = append(r, row[from:min(to, len(row))]...)
			}
			part[i] = r
		}
		out = append(out, part)
	}
	return out
}

// orig is the original-language title beside an English one: a span the
// page does not depend on (without a CJK font it shows boxes, the English
// title still reads).
func orig(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf(`<span class="orig" lang="zh">%s</span>`, html.EscapeString(s))
}

func (r *Results) study(id string) *SeedStudy {
	for _, st := range r.Seeds {
		if st.ID == id {
			return st
		}
	}
	return nil
}

var seedRef = regexp.MustCompile(`seed (\d{3})`)

// seedLabelHTML is a conclusion's seed label with each study's original
// title beside it.
func (r *Results) seedLabelHTML(label string) string {
	out := html.EscapeString(label)
	for _, m := range seedRef.FindAllStringSubmatch(label, -1) {
		if st := r.study(m[1]); st != nil {
			out += " " + orig(st.OriginalTitle)
		}
	}
	return out
}

// WriteHTML writes a self-contained report: inline CSS and SVG, no
// scripts, no external resources.
func (r *Results) WriteHTML(w io.Writer) error {
	e := html.EscapeString
	fmt.Fprintf(w, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>silkworm bench — %s profile</title>
<style>%s</style></head><body>
`, e(r.Profile), reportCSS)
	fmt.Fprintf(w, "<h1>silkworm bench — %s profile</h1>\n", e(r.Profile))
	fmt.Fprintf(w, "<p>Cluster: %s. Host: %s. Started %s, took %s.</p>\n",
		e(r.Cluster), e(r.Host), e(r.Started.Format("2006-01-02 15:04:05")), e(r.Finished.Sub(r.Started).Round(1e9).String()))
	if r.Interrupted {
		fmt.Fprint(w, "<p><b>Interrupted: only finished points are listed.</b></p>\n")
	}
	if len(r.Scaling) > 0 {
		fmt.Fprint(w, "<p><b>Scaled down for this host:</b></p><ul>\n")
		for _, s := range r.Scaling {
			fmt.Fprintf(w, "<li>%s</li>\n", e(s))
		}
		fmt.Fprint(w, "</ul>\n")
	}

	fmt.Fprint(w, "<nav><h2>Contents</h2><ol>\n<li><a href=\"#conclusions\">Seed conclusions</a></li>\n")
	if len(r.Seeds) > 0 {
		fmt.Fprint(w, "<li><a href=\"#seeds\">Seed studies and their hardware</a></li>\n")
	}
	for _, s := range r.Scenarios {
		fmt.Fprintf(w, "<li><a href=\"#%s\">%s</a></li>\n", e(s.Name), e(s.Title))
	}
	fmt.Fprint(w, "</ol></nav>\n")

	fmt.Fprint(w, "<h2 id=\"conclusions\">Seed conclusions</h2>\n<div class=\"tablewrap\"><table class=\"conclusions\">\n<tr><th class=\"text\">seed</th><th class=\"text\">conclusion</th><th class=\"text\">this run</th></tr>\n")
	for _, c := range Conclusions(r) {
		class := "nm"
		switch {
		case c.Verdict == notMeasured:
		case strings.HasPrefix(c.Verdict, "yes"):
			class = "yes"
		case strings.HasPrefix(c.Verdict, "no"):
			class = "no"
		}
		fmt.Fprintf(w, "<tr><td class=\"text\">%s</td><td class=\"text\">%s</td><td class=\"text\"><span class=%q>%s</span>%s</td></tr>\n",
			r.seedLabelHTML(c.Seed), e(c.Claim), class, e(c.Verdict), e(detailSep(c.Detail)))
	}
	fmt.Fprint(w, "</table></div>\n")

	if len(r.Seeds) > 0 {
		fmt.Fprint(w, "<h2 id=\"seeds\">Seed studies and their hardware</h2>\n<div class=\"tablewrap\"><table class=\"seeds\">\n<tr><th class=\"text\">seed</th><th class=\"text\">title</th><th class=\"text\">Kafka</th><th class=\"text\">measured on</th></tr>\n")
		for _, st := range r.Seeds {
			fmt.Fprintf(w, "<tr><td class=\"text\">seed %s</td><td class=\"text\">%s %s</td><td class=\"text\">%s</td><td class=\"text\">%s</td></tr>\n",
				e(st.ID), e(st.Title), orig(st.OriginalTitle), e(st.Kafka), e(st.Hardware))
		}
		fmt.Fprintf(w, "<tr><td class=\"text\">this run</td><td class=\"text\">silkworm bench, %s profile</td><td class=\"text\">Silkworm (Kafka protocol)</td><td class=\"text\">%s; %s</td></tr>\n",
			e(r.Profile), e(r.Cluster), e(r.Host))
		fmt.Fprint(w, "</table></div>\n")
	}

	for _, s := range r.Scenarios {
		r.writeScenarioHTML(w, s)
	}
	_, err := fmt.Fprint(w, "</body></html>\n")
	return err
}

func (r *Results) writeScenarioHTML(w io.Writer, s *Scenario) {
	e := html.EscapeString
	figs := SeedFiguresOf(r.Seeds, s.Name)
	fmt.Fprintf(w, "<section class=\"scenario\" id=%q>\n<h2>%s <small><code>%s</code></small></h2>\n", s.Name, e(s.Title), e(s.Name))
	fmt.Fprintf(w, "<p>%s</p>\n", e(strings.TrimSpace(s.Description)))

	// Where each figure was measured: this host and each seed's.
	fmt.Fprintf(w, "<div class=\"hw\"><div><b>This run</b>: %s; %s</div>\n", e(r.Cluster), e(r.Host))
	var studies []*SeedStudy
	for _, f := range figs {
		if !slices.Contains(studies, f.Study) {
			studies = append(studies, f.Study)
		}
	}
	for _, st := range studies {
		fmt.Fprintf(w, "<div><b>Seed %s</b>, %s %s (Kafka %s): %s</div>\n", e(st.ID), e(st.Title), orig(st.OriginalTitle), e(st.Kafka), e(st.Hardware))
	}
	fmt.Fprint(w, "</div>\n")
	if len(figs) == 0 {
		fmt.Fprint(w, "<p class=\"note\">No seed published a figure for this scenario.</p>\n")
	}
	for _, f := range figs {
		if f.Statement != "" && !f.Numeric() {
			fmt.Fprintf(w, "<div class=\"statement\"><b>Seed %s, %s</b> %s<br><span class=\"muted\">Setup: %s.</span><br>%s</div>\n",
				e(f.Study.ID), e(f.Section), orig(f.OriginalSection), e(f.Setup), e(f.Statement))
		}
	}
	for _, n := range r.notes(s) {
		fmt.Fprintf(w, "<p class=\"note\">Note: %s</p>\n", e(n))
	}

	pts := r.PointsOf(s.Name)
	cmp, hasCmp := r.compareSeeds(s)
	if len(pts) == 1 && s.Sweep.Parameter == "" && s.Series.Parameter == "" {
		r.writeFiguresHTML(w, s, pts[0], cmp, hasCmp)
	} else {
		fmt.Fprint(w, "<div class=\"charts\">\n")
		for _, c := range r.charts(s) {
			fmt.Fprintln(w, c.html())
		}
		if hasCmp && len(cmp.Values) > 1 {
			var metrics []string
			for _, col := range cmp.Columns {
				if !slices.Contains(metrics, col.Metric) {
					metrics = append(metrics, col.Metric)
				}
			}
			for _, m := range metrics {
				cd := chartData{
					Title:      fmt.Sprintf("%s vs %s: this run and the seeds", capitalize(shortMetric(m)), s.Sweep.Parameter),
					XLabel:     s.Sweep.Parameter,
					YLabel:     shortMetric(m),
					Categories: cmp.Values,
					Lines:      r.seedLines(s, cmp, m),
				}
				fmt.Fprintln(w, cd.html())
			}
		}
		fmt.Fprint(w, "</div>\n")
	}
	if hasCmp {
		fmt.Fprint(w, "<h3>This run beside the seeds' figures</h3>\n")
		for _, f := range cmp.figures {
			fmt.Fprintf(w, "<p class=\"note\">%s: %s %s; %s.", e(f.Label()), e(f.Section), orig(f.OriginalSection), e(f.Setup))
			for _, row := range f.Rows {
				if row.Note != "" {
					x := row.X
					if x == "" {
						x = "the value"
					}
					fmt.Fprintf(w, " At %s: %s.", e(x), e(row.Note))
				}
			}
			fmt.Fprint(w, "</p>\n")
		}
		for _, part := range splitColumns(r.seedTable(s, cmp), 1, 9) {
			writeHTMLTable(w, part, "seedcmp")
		}
	}
	fmt.Fprint(w, "<h3>This run</h3>\n")
	key := 1
	if s.Series.Parameter != "" && s.Sweep.Parameter != "" {
		key = 2
	}
	for _, part := range splitColumns(r.table(s), key, 10) {
		writeHTMLTable(w, part, "data")
	}
	var numeric []*SeedFigure
	for _, f := range figs {
		if f.Numeric() {
			numeric = append(numeric, f)
		}
	}
	if len(numeric) > 0 {
		fmt.Fprint(w, "<details><summary>The seeds' figures as published</summary>\n")
		for _, f := range numeric {
			fmt.Fprintf(w, "<p><b>%s</b>, %s %s (file %s)</p>\n", e(f.Label()), e(f.Section), orig(f.OriginalSection), e(f.Study.File))
			param := f.Parameter
			if param == "" {
				param = "point"
			}
			head := []string{param}
			for _, m := range f.Metrics {
				head = append(head, shortMetric(m))
			}
			head = append(head, "note")
			rows := [][]string{head}
			for _, row := range f.Rows {
				x := row.X
				if x == "" {
					x = "baseline"
				}
				cells := []string{x}
				for _, v := range row.V {
					cells = append(cells, strconv.FormatFloat(v, 'f', -1, 64))
				}
				rows = append(rows, append(cells, row.Note))
			}
			for _, part := range splitColumns(rows, 1, 10) {
				writeHTMLTable(w, part, "published")
			}
		}
		fmt.Fprint(w, "</details>\n")
	}
	fmt.Fprint(w, "</section>\n")
}

// writeFiguresHTML shows a one-point scenario as figures (a chart of one
// bar says nothing more): each charted metric's value, with the seeds'
// value of the same metric under it.
func (r *Results) writeFiguresHTML(w io.Writer, s *Scenario, p *PointResult, cmp seedComparison, hasCmp bool) {
	e := html.EscapeString
	var metrics []string
	for _, cs := range s.Charts {
		for _, m := range cs.Metrics {
			if !slices.Contains(metrics, m) {
				metrics = append(metrics, m)
			}
		}
	}
	if len(metrics) == 0 {
		metrics = []string{mainMetric(s)}
	}
	fmt.Fprint(w, "<div class=\"figures\">\n")
	for _, m := range metrics {
		v, ok := p.Median(m)
		val := "–"
		if ok {
			val = formatSig(v)
		}
		fmt.Fprintf(w, "<div class=\"figure\"><div class=\"label\">%s</div><div class=\"value num\">%s</div>", e(shortMetric(m)), e(val))
		if hasCmp {
			for _, f := range cmp.figures {
				for _, row := range f.Rows {
					sv, ok := f.Value(row, m)
					if !ok || row.X != "" {
						continue
					}
					txt := formatSig(sv)
					i := slices.Index(f.Metrics, m)
					if i < len(row.Low) && i < len(row.High) {
						txt = formatSig(row.Low[i]) + "–" + formatSig(row.High[i])
					}
					fmt.Fprintf(w, "<div class=\"seed\">%s: <span class=\"num\">%s</span></div>", e(f.Label()), e(txt))
				}
			}
		}
		fmt.Fprint(w, "</div>\n")
	}
	fmt.Fprint(w, "</div>\n")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
