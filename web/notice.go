package web

import (
	"encoding/json"
	"fmt"
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
	if HasKey("notify.subject." + kind) {
		subject = T(lang, "notify.subject."+kind)
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
