package store

import (
	"strings"

	"gorm.io/gorm"
)

// PageRequest asks for one page of a list: at most Limit rows after the
// first Offset. A Limit of 0 is the list's default.
type PageRequest struct {
	Limit  int
	Offset int
}

// Page is one page of a list with the length of the whole list, so that a
// page can say "41–60 of 123" and link the pages around it. The booking,
// task and card lists answer with it; Limit and Offset are those applied.
type Page[T any] struct {
	Items  []T
	Total  int64
	Limit  int
	Offset int
}

// MaxPageSize is the most rows one page may ask for.
const MaxPageSize = 1000

// norm applies the list's default size and the bounds: a page asked of a
// script (limit=0, a negative offset) is still a page.
func (r PageRequest) norm(def int) PageRequest {
	if r.Limit <= 0 {
		r.Limit = def
	}
	r.Limit = min(r.Limit, MaxPageSize)
	r.Offset = max(r.Offset, 0)
	return r
}

// findPage counts the rows query(...) selects and reads the page r of them
// in order. query builds the filtered list afresh for each use: gorm's
// statements are not safe to reuse for a count and then a select.
func findPage[T any](query func() *gorm.DB, sel, order string, r PageRequest) (Page[T], error) {
	out := Page[T]{Limit: r.Limit, Offset: r.Offset}
	if err := query().Count(&out.Total).Error; err != nil {
		return out, err
	}
	if out.Total == 0 || int64(r.Offset) >= out.Total {
		return out, nil
	}
	err := query().Select(sel).Order(order).Limit(r.Limit).Offset(r.Offset).Scan(&out.Items).Error
	return out, err
}

// likeAny is the pattern matching text anywhere, its wildcards taken
// literally. "!" escapes (ESCAPE '!'): a backslash would need escaping in
// MySQL's string literals and not in SQLite's.
func likeAny(text string) string {
	return "%" + strings.NewReplacer(`!`, `!!`, `%`, `!%`, `_`, `!_`).Replace(text) + "%"
}

// searchTerm is a search box's text, trimmed, at most 100 characters: a
// longer one matches no name anyway.
func searchTerm(q string) string {
	q = strings.TrimSpace(q)
	if r := []rune(q); len(r) > 100 {
		q = string(r[:100])
	}
	return q
}
