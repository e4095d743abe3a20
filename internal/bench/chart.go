package bench

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// chartLine is one line (or one bar per category) of a chart.
type chartLine struct {
	Name   string
	X, Y   []float64
	Dashed bool
}

// chartData is a chart drawn as inline SVG: with Categories the x values
// are indexes into it (sweep values, evenly spaced); without, x is numeric.
type chartData struct {
	Title, XLabel, YLabel string
	Categories            []string
	Lines                 []chartLine
	Bars                  bool
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	// The last tick is at or above hi, so nothing is drawn above the
	// plot.
	for v := math.Floor(lo/step) * step; ; v += step {
		ticks = append(ticks, v)
		if v >= hi-step*1e-9 {
			break
		}
	}
	return ticks
}

func fmtTick(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	case a == math.Trunc(a):
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// chartFont is the font list of the SVG text: the page's, with fallbacks
// that exist everywhere.
const chartFont = `system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'Liberation Sans', 'DejaVu Sans', sans-serif`

// html renders the chart as a figure: the title as its caption and the
// legend as a list under the plot, both outside the SVG so that no bar
// or line can cover them and long names wrap instead of being cut.
func (c chartData) html() string {
	var b strings.Builder
	b.WriteString(`<figure class="chart">`)
	fmt.Fprintf(&b, `<figcaption>%s</figcaption>`, html.EscapeString(c.Title))
	b.WriteString(c.svg())
	b.WriteString(`<ul class="legend">`)
	for li, l := range c.Lines {
		style := "solid"
		if l.Dashed {
			style = "dashed"
		}
		fmt.Fprintf(&b, `<li><span class="swatch %s" style="border-color:%s"></span>%s</li>`, style, c.color(li), html.EscapeString(l.Name))
	}
	b.WriteString(`</ul></figure>`)
	return b.String()
}

func (c chartData) color(i int) string { return palette[i%len(palette)] }

// svg renders the plot (axes, grid, data); it needs no script and no
// external resource, and scales down with the page (viewBox).
func (c chartData) svg() string {
	const (
		w, h                     = 560, 300
		left, right, top, bottom = 64, 16, 14, 48
	)
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="%s" viewBox="0 0 %d %d" font-family="%s" font-size="11">`,
		html.EscapeString(c.Title), w, h, chartFont)

	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymax := 0.0
	for _, l := range c.Lines {
		for i := range l.X {
			xmin, xmax = min(xmin, l.X[i]), max(xmax, l.X[i])
			ymax = max(ymax, l.Y[i])
		}
	}
	if math.IsInf(xmin, 0) {
		fmt.Fprintf(&b, `<text x="%d" y="%d">no data measured</text></svg>`, left+20, top+int(ph/2))
		return b.String()
	}
	if len(c.Categories) > 0 {
		xmin, xmax = -0.5, float64(len(c.Categories))-0.5
	}
	if xmax == xmin {
		xmin, xmax = xmin-1, xmax+1
	}
	ticks := niceTicks(0, ymax, 5)
	ytop := ticks[len(ticks)-1]
	if ytop <= 0 {
		ytop = 1
	}
	px := func(x float64) float64 { return float64(left) + (x-xmin)/(xmax-xmin)*pw }
	py := func(y float64) float64 { return float64(top) + ph - y/ytop*ph }

	// Axes and grid.
	for _, t := range ticks {
		y := py(t)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`, left, y, float64(left)+pw, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`, left-6, y+4, fmtTick(t))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%.1f" stroke="#333"/>`, left, top, left, float64(top)+ph)
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, left, float64(top)+ph, float64(left)+pw, float64(top)+ph)
	if len(c.Categories) > 0 {
		for i, cat := range c.Categories {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px(float64(i)), float64(top)+ph+16, html.EscapeString(cat))
		}
	} else {
		for _, t := range niceTicks(xmin, xmax, 6) {
			if t < xmin || t > xmax {
				continue
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, px(t), float64(top)+ph+16, fmtTick(t))
		}
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, float64(left)+pw/2, h-8, html.EscapeString(c.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(14,%.1f) rotate(-90)" text-anchor="middle">%s</text>`, float64(top)+ph/2, html.EscapeString(c.YLabel))

	// Data.
	n := float64(len(c.Lines))
	for li, l := range c.Lines {
		col := c.color(li)
		if c.Bars && len(c.Categories) > 0 {
			slot := pw / float64(len(c.Categories)) * 0.8
			bw := slot / n
			for i := range l.X {
				x := px(l.X[i]) - slot/2 + float64(li)*bw
				y := py(l.Y[i])
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`,
					x, y, max(bw-1, 1), float64(top)+ph-y, col, html.EscapeString(l.Name), fmtTick(l.Y[i]))
			}
		} else {
			var pts []string
			for i := range l.X {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(l.X[i]), py(l.Y[i])))
			}
			dash := ""
			if l.Dashed {
				dash = ` stroke-dasharray="5,3"`
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, col, dash, strings.Join(pts, " "))
			for i := range l.X {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s</title></circle>`,
					px(l.X[i]), py(l.Y[i]), col, html.EscapeString(l.Name), fmtTick(l.Y[i]))
			}
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}
