package web

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// group puts thousands separators into the integer part of a number
// written with strconv.
func group(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if hasFrac {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// LgHours writes card-hours with one decimal and separators: "12,345.6".
// Less than would show as 0.0 gets two significant digits ("0.0061" for a
// 22-second round), so that a short round's utilisation beside it does not
// read as a share of nothing.
func LgHours(h float64) string {
	if a := math.Abs(h); a > 0 && a < 0.05 {
		decimals := min(9, 1-int(math.Floor(math.Log10(a))))
		return strconv.FormatFloat(h, 'f', decimals, 64)
	}
	return group(strconv.FormatFloat(h, 'f', 1, 64))
}

// LgQty writes an output quantity as recorded, with separators: "1,200",
// "0.83".
func LgQty(q float64) string { return group(strconv.FormatFloat(math.Round(q*1e6)/1e6, 'f', -1, 64)) }

// LgRatio writes a ratio with three significant digits: "13.6", "0.0214",
// "1,234"; "—" for none.
func LgRatio(v *float64) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return "—"
	}
	x := *v
	switch a := math.Abs(x); {
	case a == 0:
		return "0"
	case a >= 100:
		return group(strconv.FormatFloat(x, 'f', 0, 64))
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	// Three significant digits without an exponent: 0.0214, 0.0000926.
	decimals := min(9, 2-int(math.Floor(math.Log10(math.Abs(x)))))
	return strconv.FormatFloat(x, 'f', decimals, 64)
}

// LgPct writes a share (0–1) as a whole per cent, "—" when unknown.
func LgPct(share float64, ok bool) string {
	if !ok {
		return "—"
	}
	return strconv.Itoa(int(math.Round(share*100))) + "%"
}

// LgChange writes the change from prev to cur as a signed per cent: "+12%",
// "−5%", "0%"; "—" when there was nothing before.
func LgChange(cur, prev float64) string {
	if prev == 0 {
		if cur == 0 {
			return "0%"
		}
		return "—"
	}
	d := math.Round((cur - prev) / prev * 100)
	switch {
	case d > 0:
		return "+" + strconv.Itoa(int(d)) + "%"
	case d < 0:
		return "−" + strconv.Itoa(int(-d)) + "%"
	}
	return "0%"
}

// lgChangeClass colours a change: up or down, or nothing for none.
func lgChangeClass(s string) string {
	switch {
	case strings.HasPrefix(s, "+"):
		return "lg-up"
	case strings.HasPrefix(s, "−"):
		return "lg-down"
	}
	return "lg-flat"
}

// lgDate writes a day in the page's zone.
func lgDate(p Page, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	loc := p.TZ
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02")
}

// lgDeviationClass colours a deviation badge.
func lgDeviationClass(d string) string {
	switch d {
	case "over":
		return "chip bk-bad"
	case "idle_heavy":
		return "chip bk-warn"
	}
	return "chip bk-ok"
}

// lgKind is a task kind's label, "unclassified" for none.
func lgKind(p Page, k string) string {
	if k == "" {
		return p.T("lgkind.none")
	}
	if HasKey("lgkind." + k) {
		return p.T("lgkind." + k)
	}
	return k
}

// lgTeamQuery is the team filter as a query suffix.
func lgTeamQuery(team string) string {
	if team == "" {
		return ""
	}
	return "&team=" + team
}

// lgYuanRatio writes fen per unit as yuan: "¥12.34"; "—" for none.
func lgYuanRatio(fen *float64) string {
	if fen == nil || math.IsNaN(*fen) || math.IsInf(*fen, 0) {
		return "—"
	}
	y := *fen / 100
	if y >= 100 {
		return "¥" + group(strconv.FormatFloat(y, 'f', 0, 64))
	}
	return "¥" + strconv.FormatFloat(y, 'f', 2, 64)
}

// LgFinished tells whether a booking state ends a round, so the booking
// has a ledger round to link to.
func LgFinished(state string) bool {
	switch state {
	case "completed", "released", "preempted", "no_show":
		return true
	}
	return false
}
