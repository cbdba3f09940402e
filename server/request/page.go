package request

import (
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/web"
)

// ListPage reads a list page's ?limit= and ?offset=. A value that does not
// parse is the first page at web.DefaultPageSize, not an error: it comes
// from a link, not from someone who can fix it; a limit is at most the
// largest size the pager offers.
func ListPage(c echo.Context) store.PageRequest {
	r := store.PageRequest{Limit: web.DefaultPageSize}
	if n, err := strconv.Atoi(c.QueryParam("limit")); err == nil && n >= 1 {
		r.Limit = min(n, slices.Max(web.PageSizes))
	}
	if n, err := strconv.Atoi(c.QueryParam("offset")); err == nil && n > 0 {
		r.Offset = n
	}
	return r
}

// APIPage reads an API list's ?limit= (1 to store.MaxPageSize, def when
// absent) and ?offset= (0 or more); outside them is a field message.
func APIPage(c echo.Context, def int, v *errs.Validation) store.PageRequest {
	return store.PageRequest{
		Limit:  QueryInt(c, "limit", def, 1, store.MaxPageSize, "api.limit_range", v),
		Offset: QueryInt(c, "offset", 0, 0, 1<<31-1, "field.offset_range", v),
	}
}
