package account

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

func (a *Area) home(c echo.Context) error {
	ctx := c.Request().Context()
	cards, err := a.Store.FindCards(ctx, store.CardFilter{})
	if err != nil {
		return err
	}
	cardTypes, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return err
	}
	perType := store.CardsPerType(cards)
	types := make([]web.CardTypeRow, 0, len(cardTypes))
	for _, t := range cardTypes {
		types = append(types, web.CardTypeRow{ID: t.ID, Name: t.Name, VRAMGiB: t.VRAMGiB, TFLOPS: t.TFLOPSByPrecision(), PriceFen: t.PriceFen, Cards: perType[t.ID]})
	}
	hosts, err := a.Store.FindHosts(ctx)
	if err != nil {
		return err
	}
	teams, err := a.Store.FindTeams(ctx)
	if err != nil {
		return err
	}
	h := web.HomeProps{Cards: len(cards), CardTypes: len(types), Hosts: len(hosts), Teams: len(teams), Types: types}
	for _, cd := range cards {
		switch cd.Status {
		case store.CardActive:
			h.Active++
		case store.CardMaintenance:
			h.Maintenance++
		case store.CardRetired:
			h.Retired++
		}
	}
	return response.Render(c, http.StatusOK, web.HomePage(a.Pages.Page(c, "home.title", ""), h))
}
