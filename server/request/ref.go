package request

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/store"
)

// Ref names a record by name or by id: a JSON string or a JSON integer, so
// a script can say "card_type":"H800" without looking the id up first.
type Ref struct {
	set  bool
	id   int64
	name string
}

// UnmarshalJSON reads a name (string), an id (integer) or null.
func (r *Ref) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		r.set, r.name = true, strings.TrimSpace(s)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("want a name (string) or an id (integer)")
	}
	r.set, r.id = true, n
	return nil
}

// Set reports whether the request named a record at all.
func (r Ref) Set() bool { return r.set }

// ID is the id the request gave, 0 when it gave a name.
func (r Ref) ID() int64 { return r.id }

// Name is the name the request gave, "" when it gave an id.
func (r Ref) Name() string { return r.name }

// numeric reports the id a name spells when it is all digits ("12").
func (r Ref) numeric() (int64, bool) {
	if r.name == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(r.name, 10, 64)
	return n, err == nil && n > 0
}

// QueryRef reads a query parameter naming a record by name or id.
func QueryRef(c echo.Context, name string) Ref {
	raw := strings.TrimSpace(c.QueryParam(name))
	if raw == "" {
		return Ref{}
	}
	return Ref{set: true, name: raw}
}

// CardTypeID turns a card type reference into its id; an unknown one is a
// message on field. An id is passed on unchecked: the store checks it
// inside its transaction.
func CardTypeID(ctx context.Context, st *store.Store, r Ref, field string, v *errs.Validation) (int64, error) {
	if !r.set {
		return 0, nil
	}
	if r.name == "" {
		if r.id <= 0 {
			v.Add(field, "cardtype.not_found")
		}
		return r.id, nil
	}
	t, err := st.FindCardTypeByName(ctx, r.name)
	switch {
	case err == nil:
		return t.ID, nil
	case !errs.Is(err, errs.NotFound):
		return 0, err
	}
	if id, ok := r.numeric(); ok {
		return id, nil
	}
	v.Add(field, "cardtype.not_found")
	return 0, nil
}

// TeamID turns a team reference into its id, by exact name first and then
// ignoring case.
func TeamID(ctx context.Context, st *store.Store, r Ref, field string, v *errs.Validation) (int64, error) {
	if !r.set {
		return 0, nil
	}
	if r.name == "" {
		if r.id <= 0 {
			v.Add(field, "team.not_found")
		}
		return r.id, nil
	}
	teams, err := st.FindTeams(ctx)
	if err != nil {
		return 0, err
	}
	var folded int64
	for _, t := range teams {
		if t.Name == r.name {
			return t.ID, nil
		}
		if folded == 0 && strings.EqualFold(t.Name, r.name) {
			folded = t.ID
		}
	}
	if folded != 0 {
		return folded, nil
	}
	if id, ok := r.numeric(); ok {
		return id, nil
	}
	v.Add(field, "team.not_found")
	return 0, nil
}

// ImageID turns an image reference into its id; nil when none was named.
func ImageID(ctx context.Context, st *store.Store, r Ref, field string, v *errs.Validation) (*int64, error) {
	if !r.set {
		return nil, nil
	}
	if r.name == "" {
		if r.id <= 0 {
			v.Add(field, "image.not_found")
			return nil, nil
		}
		id := r.id
		return &id, nil
	}
	images, err := st.FindImages(ctx)
	if err != nil {
		return nil, err
	}
	for _, i := range images {
		if i.Name == r.name {
			id := i.ID
			return &id, nil
		}
	}
	if id, ok := r.numeric(); ok {
		return &id, nil
	}
	v.Add(field, "image.not_found")
	return nil, nil
}
