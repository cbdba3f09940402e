package account

import (
	"cardhour/server/request"
	"cardhour/store"
	"net/http"

	"github.com/labstack/echo/v4"
)

func (a *Area) apiMe(c echo.Context) error {
	u := request.User(c)
	ms, err := a.Store.FindMemberships(c.Request().Context(), store.MembershipFilter{UserID: u.ID})
	if err != nil {
		return err
	}
	if ms == nil {
		ms = []store.MembershipView{}
	}
	return c.JSON(http.StatusOK, meJSON{User: u, Memberships: ms})
}

// meJSON answers GET /api/v1/me.
type meJSON struct {
	User        *store.User            `json:"user"`
	Memberships []store.MembershipView `json:"memberships"`
}
