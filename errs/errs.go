// Package errs is the one error type of cardhour: every failure the user can
// see carries a code that the HTTP layer maps to a status, and a message key
// that the web catalogue translates. Only Internal errors are logged; their
// text never reaches the user.
package errs

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Code classifies an error by what the caller can do about it.
type Code string

const (
	Invalid      Code = "invalid"
	NotFound     Code = "not_found"
	Conflict     Code = "conflict"
	Forbidden    Code = "forbidden"
	Unauthorized Code = "unauthorized"
	Unavailable  Code = "unavailable"
	TooLarge     Code = "too_large"
	RateLimited  Code = "rate_limited"
	Internal     Code = "internal"
)

// Error is a coded error. Key names a message in the i18n catalogue (for
// example "cardtype.name_required"); Args fill its placeholders. Fields maps a
// form field to the key of its inline message, so a page can show each next
// to its input and the JSON answer can list them.
type Error struct {
	Code   Code
	Op     string
	Key    string
	Args   []any
	Fields map[string]string
	// FieldArgs fill the placeholders of a field's message ("at most %d
	// characters"), when it has any.
	FieldArgs map[string][]any
	Err       error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	b.WriteString(string(e.Code))
	if e.Key != "" {
		b.WriteString(" ")
		b.WriteString(e.Key)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// E builds a coded error with a message key.
func E(code Code, op, key string, args ...any) *Error {
	return &Error{Code: code, Op: op, Key: key, Args: args}
}

// Wrap keeps cause as the wrapped error of a coded error.
func Wrap(code Code, op string, cause error) *Error {
	return &Error{Code: code, Op: op, Err: cause}
}

// Internalf is for failures the user cannot act on: they get a generic
// message, the log gets the detail.
func Internalf(op, format string, args ...any) *Error {
	return &Error{Code: Internal, Op: op, Err: fmt.Errorf(format, args...)}
}

// CodeOf returns the code of the first coded error in err's chain, Internal
// for an uncoded error and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// As returns the first coded error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Is reports whether err carries code.
func Is(err error, code Code) bool { return CodeOf(err) == code }

// Validation collects field problems so a form shows all of them at once.
type Validation struct {
	op        string
	fields    map[string]string
	fieldArgs map[string][]any
	first     string
	firstArgs []any
}

// NewValidation starts collecting problems for op.
func NewValidation(op string) *Validation {
	return &Validation{op: op, fields: map[string]string{}}
}

// Add records the message key for field; the first one added also becomes
// the error's headline.
func (v *Validation) Add(field, key string) {
	if _, seen := v.fields[field]; seen {
		return
	}
	v.fields[field] = key
	if v.first == "" {
		v.first = key
	}
}

// AddArgs is Add for a message with placeholders: the limit a value broke
// ("at most %d characters"), so that the message says what is allowed.
func (v *Validation) AddArgs(field, key string, args ...any) {
	if _, seen := v.fields[field]; seen {
		return
	}
	if v.first == "" {
		v.firstArgs = args
	}
	v.Add(field, key)
	if v.fieldArgs == nil {
		v.fieldArgs = map[string][]any{}
	}
	v.fieldArgs[field] = args
}

// Check adds key for field when ok is false.
func (v *Validation) Check(ok bool, field, key string, args ...any) {
	if !ok {
		v.AddArgs(field, key, args...)
	}
}

// CheckLen refuses text of more than max characters (runes) with the
// message "at most max characters": the one rule every length limit uses.
func (v *Validation) CheckLen(text string, max int, field string) {
	v.Check(utf8.RuneCountInString(text) <= max, field, "field.too_long", max)
}

// Err is nil when nothing was added.
func (v *Validation) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return &Error{Code: Invalid, Op: v.op, Key: v.first, Args: v.firstArgs, Fields: v.fields, FieldArgs: v.fieldArgs}
}
