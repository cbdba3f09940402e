package response

import (
	"strconv"

	"cardhour/store"
	"cardhour/web"
)

// Limits hands a form the store's limits of its fields, for Field to write
// as maxlength, min and max: the numbers the store's checks use.
func Limits(ls store.Limits) map[string]web.Limit {
	out := make(map[string]web.Limit, len(ls))
	for field, l := range ls {
		wl := web.Limit{MaxLen: l.MaxLen}
		if l.Range {
			wl.Min = strconv.FormatFloat(l.Min, 'f', -1, 64)
			wl.Max = strconv.FormatFloat(l.Max, 'f', -1, 64)
		}
		out[field] = wl
	}
	return out
}

// Limited is f with the store's limits ls on its fields.
func Limited(f web.Form, ls store.Limits) web.Form {
	f.Limits = Limits(ls)
	return f
}
