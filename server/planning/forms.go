package planning

import (
	"strconv"

	"github.com/labstack/echo/v4"

	"cardhour/web"
)

// typeOptions lists the card types as choices, with their names.
func (a *Area) typeOptions(c echo.Context) ([]web.Option, map[int64]string, error) {
	types, err := a.Store.FindCardTypes(c.Request().Context())
	if err != nil {
		return nil, nil, err
	}
	opts := make([]web.Option, 0, len(types))
	names := make(map[int64]string, len(types))
	for _, t := range types {
		opts = append(opts, web.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name})
		names[t.ID] = t.Name
	}
	return opts, names, nil
}

func idSet(ids []int64) map[int64]bool {
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}
