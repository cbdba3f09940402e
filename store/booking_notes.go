package store

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"

	"cardhour/schedule"
)

// A booking's note says why it is in its state, as notifications do: a
// message key of the web catalogues (state_note) and its arguments (a JSON
// array in state_note_args). Pages and feeds render it in the reader's
// language; nothing reads facts back out of a sentence.
const (
	// NotePreemptedBy: preempted by a booking; args: that booking's id.
	NotePreemptedBy = "note.preempted_by"
	// NotePreempted: preempted by core work that no booking here names
	// (the demo's and the generated data sets' history).
	NotePreempted = "note.preempted"
	// NoteNoShow: nothing ran on its cards; args: the grace in minutes.
	NoteNoShow = "note.no_show"
)

// NoteExpired is the note of a booking whose window passed while it waited
// for reason (WaitApproval, WaitCapacity, WaitData): one key per reason.
func NoteExpired(reason string) string { return "note.expired." + reason }

// NoteKeys lists every note key the store writes, for the test that each
// has its messages.
func NoteKeys() []string {
	keys := []string{NotePreemptedBy, NotePreempted, NoteNoShow}
	for _, r := range schedule.WaitReasons {
		keys = append(keys, NoteExpired(r))
	}
	return keys
}

// NoteArgs are a note's arguments, stored as a JSON array. Numbers read
// back as json.Number, so ids keep every digit.
type NoteArgs []any

// Value writes the arguments as a JSON array, [] when there are none.
func (a NoteArgs) Value() (driver.Value, error) {
	if len(a) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal([]any(a))
	if err != nil {
		return nil, fmt.Errorf("store.NoteArgs: %w", err)
	}
	return string(b), nil
}

// Scan reads a JSON array; an empty or NULL column is no arguments.
func (a *NoteArgs) Scan(src any) error {
	var raw []byte
	switch v := src.(type) {
	case nil:
	case string:
		raw = []byte(v)
	case []byte:
		raw = v
	default:
		return fmt.Errorf("store.NoteArgs: cannot scan %T", src)
	}
	*a = nil
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var out []any
	if err := d.Decode(&out); err != nil {
		return fmt.Errorf("store.NoteArgs: %w", err)
	}
	if len(out) > 0 {
		*a = out
	}
	return nil
}

// GormDataType tells gorm the arguments are a column of text.
func (NoteArgs) GormDataType() string { return "string" }

// Int64 is argument i as an integer, false when it is missing or none.
func (a NoteArgs) Int64(i int) (int64, bool) {
	if i < 0 || i >= len(a) {
		return 0, false
	}
	switch v := a[i].(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

// PreemptedBy is the booking that displaced b, 0 when its note names none.
func (b Booking) PreemptedBy() int64 {
	if b.NoteKey != NotePreemptedBy {
		return 0
	}
	id, _ := b.NoteArgs.Int64(0)
	return id
}
