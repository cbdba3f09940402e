// Package money handles amounts in integer fen (分), the only form cardhour
// stores: floats would drift when card-hours are multiplied by prices and
// summed over a year.
package money

import (
	"errors"
	"strconv"
	"strings"
)

// Fen is an amount of money in fen; 100 fen = 1 yuan.
type Fen int64

// ErrFormat is returned for text that is not a yuan amount.
var ErrFormat = errors.New("not a yuan amount with at most two decimals")

// ParseYuan reads "12", "12.5", "12.50" or "1,234.56" as fen, exactly.
func ParseYuan(s string) (Fen, error) {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	s = strings.TrimPrefix(s, "¥")
	if s == "" {
		return 0, ErrFormat
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" {
		whole = "0"
	}
	if hasDot && (frac == "" || len(frac) > 2) {
		return 0, ErrFormat
	}
	for len(frac) < 2 {
		frac += "0"
	}
	w, err := strconv.ParseUint(whole, 10, 40)
	if err != nil {
		return 0, ErrFormat
	}
	f, err := strconv.ParseUint(frac, 10, 8)
	if err != nil {
		return 0, ErrFormat
	}
	v := Fen(w*100 + f)
	if neg {
		v = -v
	}
	return v, nil
}

// Yuan formats fen as yuan with two decimals and thousands separators.
func (f Fen) Yuan() string {
	neg := f < 0
	if neg {
		f = -f
	}
	whole := strconv.FormatInt(int64(f/100), 10)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	frac := int64(f % 100)
	b.WriteByte('.')
	b.WriteByte(byte('0' + frac/10))
	b.WriteByte(byte('0' + frac%10))
	return b.String()
}

// Plain formats fen as yuan without separators, for form fields.
func (f Fen) Plain() string {
	return strings.ReplaceAll(f.Yuan(), ",", "")
}
