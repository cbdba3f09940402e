package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

func (s *Server) home(c echo.Context) error {
	ctx := c.Request().Context()
	cards, err := s.store.FindCards(ctx, store.CardFilter{})
	if err != nil {
		return err
	}
	types, err := s.cardTypeRows(c)
	if err != nil {
		return err
	}
	hosts, err := s.store.FindHosts(ctx)
	if err != nil {
		return err
	}
	teams, err := s.store.FindTeams(ctx)
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
	return response.Render(c, http.StatusOK, web.HomePage(s.pages.Page(c, "home.title", ""), h))
}

// section renders a main-navigation section whose module has not landed
// yet, showing the inventory by host meanwhile.
func (s *Server) section(titleKey, nav string) echo.HandlerFunc {
	return func(c echo.Context) error {
		cards, err := s.store.FindCards(c.Request().Context(), store.CardFilter{})
		if err != nil {
			return err
		}
		var groups []web.HostCards
		for _, cd := range cards {
			if len(groups) == 0 || groups[len(groups)-1].Name != cd.HostName {
				groups = append(groups, web.HostCards{Name: cd.HostName, Zone: cd.Zone})
			}
			g := &groups[len(groups)-1]
			g.Cards = append(g.Cards, cardRow(cd))
		}
		return response.Render(c, http.StatusOK, web.SectionPage(s.pages.Page(c, titleKey, nav), groups))
	}
}

func cardRow(cd store.CardView) web.CardRow {
	return web.CardRow{ID: cd.ID, UUID: cd.UUID, GPUIndex: cd.GPUIndex, HostID: cd.HostID, HostName: cd.HostName,
		Zone: cd.Zone, CardTypeID: cd.CardTypeID, CardTypeName: cd.CardTypeName, VRAMGiB: cd.VRAMGiB, Status: cd.Status}
}

func (s *Server) adminIndex(c echo.Context) error {
	ctx := c.Request().Context()
	counts := map[string]int{}
	types, err := s.store.FindCardTypes(ctx)
	if err != nil {
		return err
	}
	counts["cardtypes"] = len(types)
	hosts, err := s.store.FindHosts(ctx)
	if err != nil {
		return err
	}
	counts["hosts"] = len(hosts)
	cards, err := s.store.FindCards(ctx, store.CardFilter{})
	if err != nil {
		return err
	}
	counts["cards"] = len(cards)
	images, err := s.store.FindImages(ctx)
	if err != nil {
		return err
	}
	counts["images"] = len(images)
	teams, err := s.store.FindTeams(ctx)
	if err != nil {
		return err
	}
	counts["teams"] = len(teams)
	users, err := s.store.FindUsers(ctx, store.UserFilter{})
	if err != nil {
		return err
	}
	counts["users"] = len(users)
	return response.Render(c, http.StatusOK, web.AdminIndexPage(s.pages.Page(c, "admin.title", "admin"), counts))
}
