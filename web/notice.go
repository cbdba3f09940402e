package web

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// digestArgs is how many of a digest notice's arguments its summary line
// takes; the next one is its per-task detail as JSON.
const digestArgs = 6

// DigestLine is one task of a digest, as the store writes it.
type DigestLine struct {
	Task   string  `json:"task"`
	Team   string  `json:"team"`
	Booked float64 `json:"booked"`
	Used   float64 `json:"used"`
	Idle   float64 `json:"idle"`
}

// NoticeText is a notice in lang: its subject (one line: the mail's
// subject, the robot's title), its text, and the lines of detail some
// kinds carry (the digest's tasks). The bell, the mail and the robots all
// read a notice through here, so it says the same everywhere.
func NoticeText(lang, kind, key string, args []any) (subject, text string, lines []string) {
	subject = kind
	if HasKey(SubjectKey(kind)) {
		subject = T(lang, SubjectKey(kind))
	} else {
		subject = T(lang, "notify.subject.other")
	}
	if kind == "digest" && len(args) > digestArgs {
		detail, _ := args[digestArgs].(string)
		args = args[:digestArgs]
		var tasks []DigestLine
		_ = json.Unmarshal([]byte(detail), &tasks)
		for _, t := range tasks {
			lines = append(lines, T(lang, "notify.digest_line", t.Task, t.Team, hoursText(t.Booked), hoursText(t.Used), hoursText(t.Idle)))
		}
		if len(tasks) == 0 {
			lines = append(lines, T(lang, "notify.digest_none"))
		}
	}
	for i, a := range args {
		if f, ok := a.(float64); ok {
			args[i] = hoursText(f)
		}
	}
	return subject, T(lang, key, args...), lines
}

// hoursText prints a JSON number as a person would: 12, 12.5.
func hoursText(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%.1f", f)
}

// Has tells whether the comma-separated value of field lists v (a group of
// checkboxes sharing one name).
func (f Form) Has(field, v string) bool {
	return slices.Contains(strings.Split(f.Values[field], ","), v)
}

func joinComma(xs []string) string { return strings.Join(xs, ", ") }

// bellCount is the bell's badge: the count, or 99+.
func bellCount(n int) string {
	if n > 99 {
		return "99+"
	}
	return fmt.Sprint(n)
}

// SubjectKey is the catalogue key of a notice kind's subject.
func SubjectKey(kind string) string { return "notify.subject." + kind }

// ChannelKindKey is the catalogue key of a channel kind's name.
func ChannelKindKey(kind string) string { return "ntf.ch.kind." + kind }

func eventGroupKey(group string) string { return "ntf.group." + group }
