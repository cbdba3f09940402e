package store

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"cardhour/errs"
)

// NameList is a short list of names (host names, OS accounts) kept in one
// comma-separated column: none of the names it holds may contain a comma.
// It is a []string to its users and a JSON array, never null.
type NameList []string

// Value writes the names comma-separated, "" when there are none.
func (n NameList) Value() (driver.Value, error) { return strings.Join(n, ","), nil }

// Scan reads a comma-separated column; empty or NULL is no names.
func (n *NameList) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case nil:
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("store.NameList: cannot scan %T", src)
	}
	*n = splitNames(s)
	return nil
}

// GormDataType tells gorm the names are a column of text.
func (NameList) GormDataType() string { return "string" }

// MarshalJSON writes an empty list as [], not null.
func (n NameList) MarshalJSON() ([]byte, error) {
	if n == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]string(n))
}

// Has tells whether name is in the list, ignoring case.
func (n NameList) Has(name string) bool {
	for _, x := range n {
		if strings.EqualFold(x, name) {
			return true
		}
	}
	return false
}

func splitNames(s string) NameList {
	var out NameList
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// nameRule is how a list of names is checked before it is stored: each
// name by pattern, at most max of them after duplicates are dropped, and
// the column's width.
type nameRule struct {
	field   string // the input field the errors name
	pattern *regexp.Regexp
	lower   bool   // names compare and are kept lowercased
	max     int    // names at most
	width   int    // characters of the column
	invalid string // key: a name that does not match; args: the name
	tooMany string // key: more than max names; args: max
	tooLong string // key: the column would overflow; args: width
}

// invalidErr refuses name as no name of the rule's pattern.
func (r nameRule) invalidErr(op, name string) error {
	return &errs.Error{Code: errs.Invalid, Op: op, Key: r.invalid, Args: []any{name}, Fields: map[string]string{r.field: r.invalid}}
}

// clean trims, optionally lowercases and deduplicates names (keeping the
// first of each), and checks them; empty entries are dropped.
func (r nameRule) clean(op string, names []string) (NameList, error) {
	var out NameList
	for _, n := range names {
		n = strings.TrimSpace(n)
		if r.lower {
			n = strings.ToLower(n)
		}
		if n == "" || slices.Contains(out, n) {
			continue
		}
		if !r.pattern.MatchString(n) {
			return nil, r.invalidErr(op, n)
		}
		out = append(out, n)
	}
	if len(out) > r.max {
		return nil, &errs.Error{Code: errs.Invalid, Op: op, Key: r.tooMany, Args: []any{r.max}, Fields: map[string]string{r.field: r.tooMany}}
	}
	if len(strings.Join(out, ",")) > r.width {
		return nil, &errs.Error{Code: errs.Invalid, Op: op, Key: r.tooLong, Args: []any{r.width}, Fields: map[string]string{r.field: r.tooLong}}
	}
	return out, nil
}
