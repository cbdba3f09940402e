package files

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"cardhour/web"
)

// Limits on what is shown and compared line by line: beyond them a page
// would be too long to read and a diff too slow to compute.
const (
	maxShownLines = 5000
	maxDiffLines  = 50000
	diffContext   = 3
)

// isText tells text from binary content: valid UTF-8 without NUL bytes
// and with hardly any control characters besides tabs, line ends, form
// feeds and escapes (terminal colours in scripts).
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	sample := b[:min(len(b), 64<<10)]
	odd := 0
	for _, c := range sample {
		switch {
		case c == 0:
			return false
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b:
			odd++
		case c == 0x7f:
			odd++
		}
	}
	return odd*100 <= len(sample)
}

// textLines splits content into lines without their line ends.
func textLines(b []byte) []string {
	s := string(b)
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// lineOp is one line of an edit script.
type lineOp struct {
	kind      string // "=", "-", "+"
	text      string
	noNewline bool
}

// diffLines compares two texts line by line with Myers' algorithm (the
// diff-match-patch implementation, each line mapped to one symbol) and
// returns the changes as hunks with diffContext lines of context, the
// counts of added and removed lines, and false when either side is too
// long to compare.
func diffLines(a, b []byte) ([]web.DiffHunk, int, int, bool) {
	if strings.Count(string(a), "\n") > maxDiffLines || strings.Count(string(b), "\n") > maxDiffLines {
		return nil, 0, 0, false
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 5 * time.Second
	ra, rb, table := dmp.DiffLinesToRunes(string(a), string(b))
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ra, rb, false), table)
	var ops []lineOp
	added, removed := 0, 0
	for _, d := range diffs {
		kind := "="
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			kind = "+"
		case diffmatchpatch.DiffDelete:
			kind = "-"
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l == "" {
				continue
			}
			op := lineOp{kind: kind, text: strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r"), noNewline: !strings.HasSuffix(l, "\n")}
			ops = append(ops, op)
			switch kind {
			case "+":
				added++
			case "-":
				removed++
			}
		}
	}
	return hunks(ops), added, removed, true
}

// hunks groups an edit script into runs of changes with their context,
// joining runs whose contexts touch, as unified diffs do.
func hunks(ops []lineOp) []web.DiffHunk {
	all := make([]numberedOp, len(ops))
	o, n := 0, 0
	for i, op := range ops {
		switch op.kind {
		case "=":
			o++
			n++
			all[i] = numberedOp{op, o, n}
		case "-":
			o++
			all[i] = numberedOp{op, o, 0}
		case "+":
			n++
			all[i] = numberedOp{op, 0, n}
		}
	}
	var out []web.DiffHunk
	i := 0
	for i < len(all) {
		for i < len(all) && all[i].kind == "=" {
			i++
		}
		if i == len(all) {
			break
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(all) {
			if all[end].kind != "=" {
				end++
				continue
			}
			// A run of equal lines longer than twice the context ends the hunk.
			run := end
			for run < len(all) && all[run].kind == "=" {
				run++
			}
			if run == len(all) || run-end > 2*diffContext {
				end = min(end+diffContext, len(all))
				break
			}
			end = run
		}
		h := web.DiffHunk{}
		for _, x := range all[start:end] {
			h.Lines = append(h.Lines, web.DiffLine{Kind: x.kind, Old: x.old, New: x.new, Text: x.text, NoNewline: x.noNewline})
			if x.kind != "+" {
				h.OldLines++
				if h.OldStart == 0 {
					h.OldStart = x.old
				}
			}
			if x.kind != "-" {
				h.NewLines++
				if h.NewStart == 0 {
					h.NewStart = x.new
				}
			}
		}
		// An empty side starts after the line before it, as in unified diffs.
		if h.OldLines == 0 {
			h.OldStart = lastOld(all[:start])
		}
		if h.NewLines == 0 {
			h.NewStart = lastNew(all[:start])
		}
		out = append(out, h)
		i = end
	}
	return out
}

// numberedOp is an edit-script line with its numbers on both sides (0
// where the line is not on that side).
type numberedOp struct {
	lineOp
	old, new int
}

// lastOld is the last old-side line number before a hunk.
func lastOld(xs []numberedOp) int {
	for i := len(xs) - 1; i >= 0; i-- {
		if xs[i].old > 0 {
			return xs[i].old
		}
	}
	return 0
}

// lastNew is the last new-side line number before a hunk.
func lastNew(xs []numberedOp) int {
	for i := len(xs) - 1; i >= 0; i-- {
		if xs[i].new > 0 {
			return xs[i].new
		}
	}
	return 0
}
