package files_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"cardhour/server/files"
	"cardhour/store"
	"cardhour/web"
)

func render(hs []web.DiffHunk) string {
	var b strings.Builder
	for _, h := range hs {
		b.WriteString(h.Header() + "\n")
		for _, l := range h.Lines {
			b.WriteString(fmt.Sprintf("%s%s|%d|%d\n", l.Kind, l.Text, l.Old, l.New))
		}
	}
	return b.String()
}

func TestDiffLines(t *testing.T) {
	t.Parallel()
	lines := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if c, ok := change[i]; ok {
				if c != "" {
					b.WriteString(c + "\n")
				}
				continue
			}
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name           string
		a, b           string
		want           string
		added, removed int
	}{
		{"identical", "a\nb\n", "a\nb\n", "", 0, 0},
		{"one line changed in the middle", lines(10, nil), lines(10, map[int]string{5: "five"}),
			"@@ -2,7 +2,7 @@\n=line 2|2|2\n=line 3|3|3\n=line 4|4|4\n-line 5|5|0\n+five|0|5\n=line 6|6|6\n=line 7|7|7\n=line 8|8|8\n", 1, 1},
		{"two far changes make two hunks", lines(20, nil), lines(20, map[int]string{2: "two", 18: "eighteen"}),
			"@@ -1,5 +1,5 @@\n=line 1|1|1\n-line 2|2|0\n+two|0|2\n=line 3|3|3\n=line 4|4|4\n=line 5|5|5\n" +
				"@@ -15,6 +15,6 @@\n=line 15|15|15\n=line 16|16|16\n=line 17|17|17\n-line 18|18|0\n+eighteen|0|18\n=line 19|19|19\n=line 20|20|20\n", 2, 2},
		{"near changes share a hunk", lines(12, nil), lines(12, map[int]string{3: "", 8: "eight"}),
			"@@ -1,11 +1,10 @@\n=line 1|1|1\n=line 2|2|2\n-line 3|3|0\n=line 4|4|3\n=line 5|5|4\n=line 6|6|5\n=line 7|7|6\n-line 8|8|0\n+eight|0|7\n=line 9|9|8\n=line 10|10|9\n=line 11|11|10\n", 1, 2},
		{"from empty", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a|0|1\n+b|0|2\n", 2, 0},
		{"to empty", "a\n", "", "@@ -1,1 +0,0 @@\n-a|1|0\n", 0, 1},
		{"append at the end", "a\nb\n", "a\nb\nc\n", "@@ -1,2 +1,3 @@\n=a|1|1\n=b|2|2\n+c|0|3\n", 1, 0},
		{"missing final newline", "a\nb", "a\nb\n", "@@ -1,2 +1,2 @@\n=a|1|1\n-b|2|0\n+b|0|2\n", 1, 1},
		{"CRLF ends are not text", "a\r\nb\r\n", "a\r\nc\r\n", "@@ -1,2 +1,2 @@\n=a|1|1\n-b|2|0\n+c|0|2\n", 1, 1},
		{"moved block", "x\ny\nz\n", "z\nx\ny\n", "@@ -1,3 +1,3 @@\n+z|0|1\n=x|1|2\n=y|2|3\n-z|3|0\n", 1, 1},
	} {
		hs, added, removed, ok := files.DiffLines([]byte(c.a), []byte(c.b))
		if !ok {
			t.Errorf("%s: too large?", c.name)
			continue
		}
		if got := render(hs); got != c.want || added != c.added || removed != c.removed {
			t.Errorf("%s: +%d -%d\n%s\nwant +%d -%d\n%s", c.name, added, removed, got, c.added, c.removed, c.want)
		}
	}
	big := strings.Repeat("x\n", 50001)
	if _, _, _, ok := files.DiffLines([]byte(big), []byte("x\n")); ok {
		t.Error("a 50,001-line file was diffed")
	}
}

// A big file with scattered edits is diffed minimally and quickly enough
// for a page (Myers, not a quadratic table).
func TestDiffLinesLargeFile(t *testing.T) {
	t.Parallel()
	var a, b strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&a, "row %d\n", i)
		if i%1000 == 500 {
			fmt.Fprintf(&b, "row %d changed\n", i)
		} else {
			fmt.Fprintf(&b, "row %d\n", i)
		}
	}
	hs, added, removed, ok := files.DiffLines([]byte(a.String()), []byte(b.String()))
	if !ok || added != 20 || removed != 20 || len(hs) != 20 {
		t.Errorf("ok=%v +%d -%d, %d hunks; want 20 one-line changes", ok, added, removed, len(hs))
	}
}

func TestIsText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"":                          true,
		"#!/bin/sh\necho 你好\n":      true,
		"a\tb\r\nc\f":               true,
		"\x1b[31mred\x1b[0m\n":      true,
		"bin\x00ary":                false,
		"\xff\xfe\x00h\x00i":        false,
		"gbk \xc4\xe3\xba\xc3":      false,
		"\x01\x02\x03\x04\x05 ctrl": false,
	} {
		if got := files.IsText([]byte(in)); got != want {
			t.Errorf("IsText(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestRenderPlan(t *testing.T) {
	t.Parallel()
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	start := time.Date(2026, 5, 1, 1, 0, 0, 0, time.UTC)
	ended := start.Add(90 * time.Minute)
	ready := start.Add(-time.Hour)
	p := store.TaskPlan{
		Task: store.Task{ID: 7, Name: `7B "续训"`, Priority: "core", EstimateCardSeconds: 100 * 3600, DataReadiness: "ready",
			DataReadyAt: &ready, VRAMGiB: 60, Precision: "bf16"},
		TeamName: "llm",
		Bookings: []store.PlanBooking{
			{ID: 1, CardTypeName: "H800", CardCount: 8, StartAt: start, EndAt: start.Add(4 * time.Hour), State: store.BookingActive, Username: "dev"},
			{ID: 2, CardTypeName: "H800", CardCount: 2, StartAt: start, EndAt: start.Add(3 * time.Hour), EndedAt: &ended, State: store.BookingReleased, Username: "dev"},
			{ID: 3, CardTypeName: "A800", CardCount: 1, StartAt: start.Add(24 * time.Hour), EndAt: start.Add(25 * time.Hour), State: store.BookingPending, Username: "boss"},
		},
	}
	got := string(files.RenderPlan(p, shanghai))
	want := `# 卡时计划 · card-hour plan
# Written by cardhour from the task's baseline and bookings whenever they change; edits here are not kept.
task:
  id: 7
  name: "7B \"续训\""
  team: "llm"
  priority: core
  estimate_card_hours: 100
  data_readiness: ready
  data_ready_at: 2026-05-01T08:00:00+08:00
  vram_gib: 60
  precision: bf16
card_hours:
  estimate: 100
  booked: 35
  waiting: 1
  remaining: 64
bookings:
  - id: 1
    card_type: "H800"
    cards: 8
    start: 2026-05-01T09:00:00+08:00
    end: 2026-05-01T13:00:00+08:00
    card_hours: 32
    status: booked
    booked_by: "dev"
  - id: 2
    card_type: "H800"
    cards: 2
    start: 2026-05-01T09:00:00+08:00
    end: 2026-05-01T12:00:00+08:00
    ended: 2026-05-01T10:30:00+08:00
    card_hours: 3
    status: released
    booked_by: "dev"
  - id: 3
    card_type: "A800"
    cards: 1
    start: 2026-05-02T09:00:00+08:00
    end: 2026-05-02T10:00:00+08:00
    card_hours: 1
    status: waiting
    booked_by: "boss"
`
	if got != want {
		t.Errorf("plan:\n%s\nwant:\n%s", got, want)
	}
}
