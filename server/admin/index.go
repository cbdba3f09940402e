package admin

import (
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
	"net/http"

	"github.com/labstack/echo/v4"
)

func cardRow(cd store.CardView) web.CardRow {
	return web.CardRow{ID: cd.ID, UUID: cd.UUID, GPUIndex: cd.GPUIndex, HostID: cd.HostID, HostName: cd.HostName,
		Zone: cd.Zone, CardTypeID: cd.CardTypeID, CardTypeName: cd.CardTypeName, VRAMGiB: cd.VRAMGiB, Status: cd.Status, FaultReason: cd.FaultReason}
}

func (a *Area) adminIndex(c echo.Context) error {
	ctx := c.Request().Context()
	counts := map[string]int{}
	types, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return err
	}
	counts["cardtypes"] = len(types)
	hosts, err := a.Store.FindHosts(ctx)
	if err != nil {
		return err
	}
	counts["hosts"] = len(hosts)
	cards, err := a.Store.FindCards(ctx, store.CardFilter{})
	if err != nil {
		return err
	}
	counts["cards"] = len(cards)
	images, err := a.Store.FindImages(ctx)
	if err != nil {
		return err
	}
	counts["images"] = len(images)
	teams, err := a.Store.FindTeams(ctx)
	if err != nil {
		return err
	}
	counts["teams"] = len(teams)
	users, err := a.Store.FindUsers(ctx, store.UserFilter{})
	if err != nil {
		return err
	}
	counts["users"] = len(users)
	return response.Render(c, http.StatusOK, web.AdminIndexPage(a.Pages.Page(c, "admin.title", "admin"), counts))
}
