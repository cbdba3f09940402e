package store

import (
	"strconv"
	"strings"

	"cardhour/errs"
)

// Limit is what one input accepts. Each form's limits are stated once, in
// the tables below: the store's checks read them, and the server hands the
// same table to the form, whose inputs carry them as maxlength, min and max.
// The browser, the store and the message ("at most 100 characters") then
// name one number.
type Limit struct {
	// MaxLen is the most characters (runes) a text may have; 0 is none.
	MaxLen int
	// Min and Max bound a number when Range is set. Above makes Min itself
	// refused (a price, an estimate: more than 0); an input's min attribute
	// still says Min, the nearest a browser can state it.
	Min, Max float64
	Range    bool
	Above    bool
}

// Limits are one form's limits by field name.
type Limits map[string]Limit

func maxLen(n int) Limit { return Limit{MaxLen: n} }

func between(lo, hi float64) Limit { return Limit{Min: lo, Max: hi, Range: true} }

func above(lo, hi float64) Limit { return Limit{Min: lo, Max: hi, Range: true, Above: true} }

// Allows tells whether x lies in the range; a limit without one allows any.
func (l Limit) Allows(x float64) bool {
	if !l.Range {
		return true
	}
	if x > l.Max || x < l.Min {
		return false
	}
	return !(l.Above && x == l.Min)
}

// Args are the bounds as a range message states them ("above %s and at most
// %s"), grouped by thousands.
func (l Limit) Args() []any { return []any{groupDigits(l.Min), groupDigits(l.Max)} }

// groupDigits writes 1000000 as "1,000,000" and 0.5 as "0.5": how the
// messages in both languages write numbers.
func groupDigits(x float64) string {
	s := strconv.FormatFloat(x, 'f', -1, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// checkLen refuses a text longer than field's limit with the message that
// states it.
func (ls Limits) checkLen(v *errs.Validation, field, text string) {
	v.CheckLen(text, ls[field].MaxLen, field)
}

// checkRange refuses a number outside field's range with key, a message
// that states the bounds (Args).
func (ls Limits) checkRange(v *errs.Validation, field string, x float64, key string) {
	l := ls[field]
	v.Check(l.Allows(x), field, key, l.Args()...)
}

// The forms' limits. The widths are those of the columns (migrations) or
// tighter; the ranges are what a real fleet or plan can need, anything
// beyond is a typo.
var (
	// TaskLimits: a task baseline.
	TaskLimits = Limits{
		"name":                maxLen(100),
		"notes":               maxLen(2000),
		"estimate_card_hours": above(0, 1_000_000),
		"vram_gib":            between(0, 100_000),
	}
	// CardTypeLimits: a card type; the price is in yuan per card-hour, as
	// the form takes it (the store keeps fen).
	CardTypeLimits = Limits{
		"name":        maxLen(100),
		"vram_gib":    between(1, 4096),
		"price":       above(0, 1_000_000),
		"tflops_fp32": between(0, 100_000), "tflops_tf32": between(0, 100_000), "tflops_bf16": between(0, 100_000),
		"tflops_fp16": between(0, 100_000), "tflops_fp8": between(0, 100_000), "tflops_int8": between(0, 100_000),
	}
	// HostLimits: a host; hostNamePattern allows the same 100 characters.
	HostLimits = Limits{"name": maxLen(100), "zone": maxLen(100)}
	// CardLimits: a card; nvidia-smi's uuids are well under 64 characters.
	CardLimits = Limits{"index": between(0, 1023), "uuid": maxLen(64)}
	// ImageLimits: an image; the reference is counted in characters too,
	// and may hold no blank (image.reference_invalid).
	ImageLimits = Limits{"name": maxLen(100), "reference": maxLen(255), "cuda_version": maxLen(32),
		"frameworks": maxLen(255), "description": maxLen(500)}
	// TeamLimits: a team.
	TeamLimits = Limits{"name": maxLen(100), "description": maxLen(500)}
	// UserLimits: a user; usernamePattern allows the same 64 characters.
	UserLimits = Limits{"username": maxLen(64), "display_name": maxLen(100), "os_accounts": maxLen(osAccountsWidth)}
	// QuotaLimits: a quota grant.
	QuotaLimits = Limits{"card_hours": above(0, 10_000_000), "max_cards": between(0, 10_000), "note": maxLen(255)}
	// TokenLimits: an API, board or agent token's name.
	TokenLimits = Limits{"name": maxLen(100)}
)

// BookingLimits are the booking form's: the card count a booking may take
// is the deployment's policy.
func (s *Store) BookingLimits() Limits {
	return Limits{"count": between(1, float64(s.policy.MaxCards))}
}

// TemplateLimits are the booking template form's: its count and length are
// those a booking may take.
func (s *Store) TemplateLimits() Limits {
	return Limits{
		"name":           maxLen(100),
		"count":          between(1, float64(s.policy.MaxCards)),
		"duration_hours": between(s.policy.MinDuration.Hours(), s.policy.Horizon.Hours()),
	}
}
