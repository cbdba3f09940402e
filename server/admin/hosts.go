package admin

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

var hostFields = []string{"name", "zone"}

// hostCards counts every card of each host, retired ones too: any of them
// keeps the host from being deleted.
func (a *Area) hostCards(c echo.Context) (map[int64]int, error) {
	cards, err := a.Store.FindCards(c.Request().Context(), store.CardFilter{})
	if err != nil {
		return nil, err
	}
	n := map[int64]int{}
	for _, cd := range cards {
		n[cd.HostID]++
	}
	return n, nil
}

func (a *Area) hostRows(c echo.Context) ([]web.HostRow, error) {
	hosts, err := a.Store.FindHosts(c.Request().Context())
	if err != nil {
		return nil, err
	}
	counts, err := a.hostCards(c)
	if err != nil {
		return nil, err
	}
	rows := make([]web.HostRow, 0, len(hosts))
	for _, h := range hosts {
		rows = append(rows, web.HostRow{ID: h.ID, Name: h.Name, Zone: h.Zone, Cards: counts[h.ID]})
	}
	return rows, nil
}

func hostFromForm(f web.Form) store.HostInput {
	return store.HostInput{Name: f.Value("name"), Zone: f.Value("zone")}
}

func hostForm(h *store.Host) web.Form {
	f := web.NewForm()
	f.Values["name"] = h.Name
	f.Values["zone"] = h.Zone
	return f
}

func (a *Area) hostsPage(c echo.Context) error {
	return a.renderHosts(c, http.StatusOK, web.NewForm(), "")
}

func (a *Area) renderHosts(c echo.Context, status int, f web.Form, listErr string) error {
	rows, err := a.hostRows(c)
	if err != nil {
		return err
	}
	return response.Render(c, status, web.HostsPage(a.Pages.Page(c, "admin.hosts", "admin"), rows, response.Limited(f, store.HostLimits), listErr))
}

func (a *Area) createHostForm(c echo.Context) error {
	f := request.Form(c, hostFields...)
	h, err := a.Store.CreateHost(c.Request().Context(), hostFromForm(f))
	if err == nil {
		return a.Pages.RedirectWithFlash(c, "/admin/hosts", web.T(request.Lang(c), "admin.created", h.Name))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderHosts(c, response.StatusOf(err), f, "")
}

func (a *Area) editHostPage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	h, err := a.Store.FindHostByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return response.Render(c, http.StatusOK, web.HostEditPage(a.Pages.Page(c, "admin.hosts", "admin"), id, response.Limited(hostForm(h), store.HostLimits)))
}

func (a *Area) updateHostForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	f := request.Form(c, hostFields...)
	h, err := a.Store.UpdateHost(c.Request().Context(), id, hostFromForm(f))
	if err == nil {
		return a.Pages.RedirectWithFlash(c, "/admin/hosts", web.T(request.Lang(c), "admin.updated", h.Name))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return response.Render(c, response.StatusOf(err), web.HostEditPage(a.Pages.Page(c, "admin.hosts", "admin"), id, response.Limited(f, store.HostLimits)))
}

func (a *Area) deleteHostForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	h, err := a.Store.FindHostByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteHost(c.Request().Context(), id); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			return a.renderHosts(c, response.StatusOf(err), web.NewForm(), msg)
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/hosts", web.T(request.Lang(c), "admin.deleted", h.Name))
}

// hostJSON is a host in the API with the number of cards it carries.
type hostJSON struct {
	store.Host
	Cards int `json:"cards"`
}

func (a *Area) apiListHosts(c echo.Context) error {
	hosts, err := a.Store.FindHosts(c.Request().Context())
	if err != nil {
		return err
	}
	counts, err := a.hostCards(c)
	if err != nil {
		return err
	}
	out := make([]hostJSON, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, hostJSON{Host: h, Cards: counts[h.ID]})
	}
	return c.JSON(http.StatusOK, map[string]any{"hosts": out})
}

func (a *Area) apiGetHost(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	h, err := a.Store.FindHostByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	cards, err := a.Store.FindCards(c.Request().Context(), store.CardFilter{HostID: id})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, hostJSON{Host: *h, Cards: len(cards)})
}

func (a *Area) apiCreateHost(c echo.Context) error {
	var in store.HostInput
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	h, err := a.Store.CreateHost(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, hostJSON{Host: *h})
}

func (a *Area) apiUpdateHost(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	var in store.HostInput
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	h, err := a.Store.UpdateHost(c.Request().Context(), id, in)
	if err != nil {
		return err
	}
	cards, err := a.Store.FindCards(c.Request().Context(), store.CardFilter{HostID: id})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, hostJSON{Host: *h, Cards: len(cards)})
}

func (a *Area) apiDeleteHost(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteHost(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
