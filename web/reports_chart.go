package web

import (
	"math"
	"strconv"
	"strings"
)

// Charts are drawn on the server as SVG: no script, nothing fetched, and
// they print as sharply as the text around them. The geometry is computed
// here; the templates only place what it gives.

// SVGChart is a chart laid out in user units of its viewBox.
type SVGChart struct {
	Width, Height int
	Label         string // what a screen reader hears
	Rects         []SVGRect
	Texts         []SVGText
	Lines         []SVGLine
	Legend        []LegendItem
}

// SVGRect is one bar or bar segment.
type SVGRect struct {
	X, Y, W, H float64
	Class      string
	Title      string // the hover and screen-reader text
}

// SVGText is a label.
type SVGText struct {
	X, Y   float64
	Text   string
	Anchor string // start, middle, end
	Class  string
}

// SVGLine is an axis or grid line.
type SVGLine struct {
	X1, Y1, X2, Y2 float64
	Class          string
}

// LegendItem names a series.
type LegendItem struct {
	Class, Label string
}

// StackRow is one bar of a stacked bar chart: a label and its segments, in
// the order of the legend.
type StackRow struct {
	Label    string
	Values   []float64
	Total    string // printed at the bar's end
	Segments []string
}

// TrendPoint is one period of a trend chart: its label and one value per
// series, in the order of the legend.
type TrendPoint struct {
	Label  string
	Values []float64
	Titles []string
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// chartScale is a chart's value axis: ticks at 0, step, 2·step … top, with
// step 1, 2 or 5 × a power of ten, so that every tick reads as a round
// number (0, 50, 100, 150 — not 0, 63, 125), and between two and five
// steps, the fewest that reach v.
type chartScale struct {
	step  float64
	steps int
}

func newChartScale(v float64) chartScale {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return chartScale{step: 1, steps: 4}
	}
	// The smallest round step with at most five steps reaching v.
	p := math.Pow(10, math.Floor(math.Log10(v/5)))
	for {
		for _, m := range []float64{1, 2, 5} {
			step := m * p
			if n := int(math.Ceil(v/step - 1e-9)); n <= 5 {
				return chartScale{step: step, steps: max(n, 2)}
			}
		}
		p *= 10
	}
}

// top is the axis's end.
func (sc chartScale) top() float64 { return sc.tick(sc.steps) }

// tick is the value of tick i, computed as an integer multiple so that 0.1
// steps do not drift into 0.30000000000000004.
func (sc chartScale) tick(i int) float64 {
	v := sc.step * float64(i)
	if sc.step < 1 {
		d := math.Round(1 / sc.step)
		v = math.Round(float64(i)*sc.step*d) / d
	}
	return v
}

// HStackChart draws one horizontal stacked bar per row, each segment in its
// series' class, with the row's label on the left and its total on the
// right, and a scale of round ticks. format writes a tick value.
func HStackChart(label string, rows []StackRow, legend []LegendItem, format func(float64) string) SVGChart {
	const width, labelW, totalW, barH, gap, top = 760, 150, 90, 22, 10, 8
	plotW := float64(width - labelW - totalW)
	height := top + len(rows)*(barH+gap) + 24
	c := SVGChart{Width: width, Height: height, Label: label, Legend: legend}
	maxV := 0.0
	for _, r := range rows {
		sum := 0.0
		for _, v := range r.Values {
			sum += v
		}
		maxV = math.Max(maxV, sum)
	}
	scale := newChartScale(maxV)
	top_ := scale.top()
	axisY := float64(top + len(rows)*(barH+gap))
	for i := 0; i <= scale.steps; i++ {
		x := float64(labelW) + plotW*float64(i)/float64(scale.steps)
		c.Lines = append(c.Lines, SVGLine{X1: x, Y1: top - 2, X2: x, Y2: axisY, Class: "chart-grid"})
		c.Texts = append(c.Texts, SVGText{X: x, Y: axisY + 16, Text: format(scale.tick(i)), Anchor: "middle", Class: "chart-tick"})
	}
	for i, r := range rows {
		y := float64(top + i*(barH+gap))
		c.Texts = append(c.Texts, SVGText{X: labelW - 8, Y: y + barH*0.7, Text: shorten(r.Label, 14), Anchor: "end", Class: "chart-label"})
		x := float64(labelW)
		for j, v := range r.Values {
			if v <= 0 {
				continue
			}
			w := plotW * v / top_
			class := ""
			if j < len(legend) {
				class = legend[j].Class
			}
			title := ""
			if j < len(r.Segments) {
				title = r.Segments[j]
			}
			c.Rects = append(c.Rects, SVGRect{X: x, Y: y, W: w, H: barH, Class: class, Title: title})
			x += w
		}
		c.Texts = append(c.Texts, SVGText{X: x + 6, Y: y + barH*0.7, Text: r.Total, Anchor: "start", Class: "chart-value"})
	}
	return c
}

// TrendChart draws grouped vertical bars, one group per period and one bar
// per series, with a scale of round ticks.
func TrendChart(label string, points []TrendPoint, legend []LegendItem, format func(float64) string) SVGChart {
	const width, height, left, right, top, bottom = 760, 240, 70, 10, 10, 30
	plotW, plotH := float64(width-left-right), float64(height-top-bottom)
	c := SVGChart{Width: width, Height: height, Label: label, Legend: legend}
	maxV := 0.0
	for _, p := range points {
		for _, v := range p.Values {
			maxV = math.Max(maxV, v)
		}
	}
	scale := newChartScale(maxV)
	top_ := scale.top()
	for i := 0; i <= scale.steps; i++ {
		y := float64(top) + plotH*(1-float64(i)/float64(scale.steps))
		c.Lines = append(c.Lines, SVGLine{X1: left, Y1: y, X2: float64(width - right), Y2: y, Class: "chart-grid"})
		c.Texts = append(c.Texts, SVGText{X: left - 6, Y: y + 4, Text: format(scale.tick(i)), Anchor: "end", Class: "chart-tick"})
	}
	if len(points) == 0 {
		return c
	}
	groupW := plotW / float64(len(points))
	series := max(1, len(legend))
	barW := math.Min(28, groupW*0.8/float64(series))
	for i, p := range points {
		gx := float64(left) + groupW*float64(i) + (groupW-barW*float64(series))/2
		for j, v := range p.Values {
			if v <= 0 {
				continue
			}
			h := plotH * v / top_
			class := ""
			if j < len(legend) {
				class = legend[j].Class
			}
			title := ""
			if j < len(p.Titles) {
				title = p.Titles[j]
			}
			c.Rects = append(c.Rects, SVGRect{X: gx + barW*float64(j), Y: float64(top) + plotH - h, W: barW, H: h, Class: class, Title: title})
		}
		c.Texts = append(c.Texts, SVGText{X: float64(left) + groupW*(float64(i)+0.5), Y: float64(height - 10), Text: p.Label, Anchor: "middle", Class: "chart-label"})
	}
	return c
}

// shorten cuts a label to n characters with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// ViewBox is the chart's viewBox attribute.
func (c SVGChart) ViewBox() string {
	return "0 0 " + strconv.Itoa(c.Width) + " " + strconv.Itoa(c.Height)
}
