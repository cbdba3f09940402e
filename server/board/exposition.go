package board

import (
	"bufio"
	"math"
	"strconv"
	"strings"
)

// textWriter writes gauge families in Prometheus' text format (0.0.4)
// straight to a buffered writer: the same lines the client library's
// encoder prints, without a protobuf message per series in between. Label
// names are given in sorted order, as the library prints them. Errors stick
// in the bufio.Writer; its Flush reports them.
type textWriter struct {
	w   *bufio.Writer
	num []byte // scratch for formatting numbers
}

// label is one name="value" pair of a series.
type label struct{ name, value string }

// family starts a gauge family: its HELP and TYPE lines.
func (t *textWriter) family(name, help string) {
	t.w.WriteString("# HELP ")
	t.w.WriteString(name)
	t.w.WriteByte(' ')
	writeEscaped(t.w, help, false)
	t.w.WriteString("\n# TYPE ")
	t.w.WriteString(name)
	t.w.WriteString(" gauge\n")
}

// series writes one sample line; labels must be sorted by name.
func (t *textWriter) series(name string, labels []label, v float64) {
	t.w.WriteString(name)
	if len(labels) > 0 {
		t.w.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				t.w.WriteByte(',')
			}
			t.w.WriteString(l.name)
			t.w.WriteString(`="`)
			writeEscaped(t.w, l.value, true)
			t.w.WriteByte('"')
		}
		t.w.WriteByte('}')
	}
	t.w.WriteByte(' ')
	t.float(v)
	t.w.WriteByte('\n')
}

// float prints v as the library's text encoder does.
func (t *textWriter) float(v float64) {
	switch {
	case v == 1:
		t.w.WriteByte('1')
	case v == 0:
		t.w.WriteByte('0')
	case v == -1:
		t.w.WriteString("-1")
	case math.IsNaN(v):
		t.w.WriteString("NaN")
	case math.IsInf(v, +1):
		t.w.WriteString("+Inf")
	case math.IsInf(v, -1):
		t.w.WriteString("-Inf")
	default:
		t.num = strconv.AppendFloat(t.num[:0], v, 'g', -1, 64)
		t.w.Write(t.num)
	}
}

// writeEscaped writes s escaped as the text format wants: a backslash and
// a newline everywhere, a double quote in label values.
func writeEscaped(w *bufio.Writer, s string, quote bool) {
	special := "\\\n"
	if quote {
		special = "\\\n\""
	}
	for {
		i := strings.IndexAny(s, special)
		if i < 0 {
			w.WriteString(s)
			return
		}
		w.WriteString(s[:i])
		switch s[i] {
		case '\n':
			w.WriteString(`\n`)
		default:
			w.WriteByte('\\')
			w.WriteByte(s[i])
		}
		s = s[i+1:]
	}
}
