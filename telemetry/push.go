package telemetry

import (
	"errors"
	"time"
)

// ErrNewlinesStripped is ParsePush's answer to a body whose newlines were
// stripped, so that one line holds several GPUs' rows: curl -d @file does
// that, curl --data-binary @file does not.
var ErrNewlinesStripped = errors.New("the body holds several GPUs' rows on one line: its newlines were stripped " +
	"(curl -d does that); send it with curl --data-binary @file")

// PushParse is what a pushed nvidia-smi body held: the GPUs' rows with
// their processes attached, the GPUs nvidia-smi could not reach, and the
// lines not used.
type PushParse = GPUParse

// ParsePush reads what cron + curl push: the output of --query-gpu
// (GPUQuery, or any query with a header line holding uuid), optionally
// followed by a blank line and the output of --query-compute-apps, each
// with or without its header and units, with \n or \r\n line ends. A
// compute-apps header also starts the processes part without a blank line.
// The error is ErrNewlinesStripped when a line holds several rows; nothing
// else is an error: lines that cannot be used are in Skipped.
func ParsePush(body []byte, host string, at time.Time) (PushParse, error) {
	b, tooLarge := cutInput(body, "body")
	p := newCSVParser(host, at)
	p.run(string(b), true)
	p.out.Skipped = append(p.out.Skipped, tooLarge...)
	res := p.out
	if p.stripped > 0 {
		return res, ErrNewlinesStripped
	}
	AttachProcesses(res.Samples, p.apps)
	return res, nil
}
