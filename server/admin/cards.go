package admin

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

var cardFields = []string{"uuid", "index", "host_id", "card_type_id", "status"}

// cardChoices fills the selects of the card pages: hosts, types, statuses.
func (a *Area) cardChoices(c echo.Context) (web.CardsProps, error) {
	ctx := c.Request().Context()
	lang := request.Lang(c)
	var props web.CardsProps
	hosts, err := a.Store.FindHosts(ctx)
	if err != nil {
		return props, err
	}
	for _, h := range hosts {
		label := h.Name
		if h.Zone != "" {
			label += " (" + h.Zone + ")"
		}
		props.Hosts = append(props.Hosts, web.Option{Value: strconv.FormatInt(h.ID, 10), Label: label})
	}
	types, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return props, err
	}
	for _, t := range types {
		props.Types = append(props.Types, web.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name})
	}
	for _, st := range store.CardListStatuses {
		o := web.Option{Value: st, Label: web.T(lang, web.CardStatusKey(st))}
		if st != store.CardFault {
			props.Statuses = append(props.Statuses, o)
		}
		props.FilterStatuses = append(props.FilterStatuses, o)
	}
	return props, nil
}

// cardFilterOf reads the list filter from the query. Values that do not
// parse filter nothing rather than failing the page: they come from links.
func cardFilterOf(c echo.Context) (store.CardFilter, web.Form) {
	f := web.NewForm()
	cf := store.CardFilter{Query: strings.TrimSpace(c.QueryParam("q"))}
	f.Values["q"] = cf.Query
	if id, err := strconv.ParseInt(c.QueryParam("host_id"), 10, 64); err == nil && id > 0 {
		cf.HostID = id
		f.Values["host_id"] = c.QueryParam("host_id")
	}
	if id, err := strconv.ParseInt(c.QueryParam("card_type_id"), 10, 64); err == nil && id > 0 {
		cf.CardTypeID = id
		f.Values["card_type_id"] = c.QueryParam("card_type_id")
	}
	for _, st := range store.CardListStatuses {
		if c.QueryParam("status") == st {
			cf.Status = st
			f.Values["status"] = st
		}
	}
	return cf, f
}

// cardFromForm parses the form; numbers that do not parse are reported next
// to their inputs together with the store's own checks.
func cardFromForm(f web.Form) (store.CardInput, error) {
	v := errs.NewValidation("server.cardFromForm")
	in := store.CardInput{UUID: f.Value("uuid"), Status: f.Value("status")}
	if raw := strings.TrimSpace(f.Value("index")); raw == "" {
		v.Add("index", "field.required")
	} else if n, err := strconv.Atoi(raw); err != nil {
		v.Add("index", "field.integer")
	} else {
		in.GPUIndex = n
	}
	parseRef := func(field, missing string) int64 {
		raw := strings.TrimSpace(f.Value(field))
		if raw == "" {
			v.Add(field, "field.required")
			return 0
		}
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			v.Add(field, missing)
			return 0
		}
		return id
	}
	in.HostID = parseRef("host_id", "host.not_found")
	in.CardTypeID = parseRef("card_type_id", "cardtype.not_found")
	// What did not parse stops the store, so ask its checks here: the form
	// shows every problem at once, not the rest only on the next try.
	if v.Err() != nil {
		if err := v.Merge(in.Check()); err != nil {
			return in, err
		}
	}
	return in, v.Err()
}

func cardForm(cd *store.CardView) web.Form {
	f := web.NewForm()
	f.Values["uuid"] = cd.UUID
	f.Values["index"] = strconv.Itoa(cd.GPUIndex)
	f.Values["host_id"] = strconv.FormatInt(cd.HostID, 10)
	f.Values["card_type_id"] = strconv.FormatInt(cd.CardTypeID, 10)
	f.Values["status"] = cd.Status
	return f
}

// cardLabel names a card for people: host and index, as on the machine.
func cardLabel(cd *store.CardView) string {
	return cd.HostName + " #" + strconv.Itoa(cd.GPUIndex)
}

func (a *Area) cardsPage(c echo.Context) error {
	f := web.NewForm()
	f.Values["status"] = store.CardActive
	return a.renderCards(c, http.StatusOK, f, "")
}

func (a *Area) renderCards(c echo.Context, status int, f web.Form, listErr string) error {
	props, err := a.cardChoices(c)
	if err != nil {
		return err
	}
	cf, filter := cardFilterOf(c)
	pg, err := a.Store.FindCardPage(c.Request().Context(), cf, request.ListPage(c))
	if err != nil {
		return err
	}
	for _, cd := range pg.Items {
		props.Rows = append(props.Rows, cardRow(cd))
	}
	// After a refused post the page is drawn at the post's URL: the pager
	// links the list's own.
	props.Nav = web.NewPageNav("/admin/cards", c.QueryParams(), pg.Total, pg.Offset, pg.Limit)
	props.Filter = filter
	props.ListErr = listErr
	return response.Render(c, status, web.CardsPage(a.Pages.Page(c, "admin.cards", "admin"), props, response.Limited(f, store.CardLimits)))
}

func (a *Area) createCardForm(c echo.Context) error {
	f := request.Form(c, cardFields...)
	in, err := cardFromForm(f)
	if err == nil {
		var cd *store.Card
		if cd, err = a.Store.CreateCard(c.Request().Context(), in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/admin/cards", web.T(request.Lang(c), "admin.created", cd.UUID))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderCards(c, response.StatusOf(err), f, "")
}

// renderCardEdit shows the edit form. A faulty card's form offers the
// fault status first (saving it with its other fields changed keeps it
// faulty), maintenance and retired, but not active: Clear fault returns it
// to service, and the store refuses active for it.
func (a *Area) renderCardEdit(c echo.Context, status int, id int64, f web.Form) error {
	props, err := a.cardChoices(c)
	if err != nil {
		return err
	}
	cd, err := a.Store.FindCardByID(c.Request().Context(), id)
	if err != nil && !errs.Is(err, errs.NotFound) {
		return err
	}
	if err == nil && cd.Status == store.CardFault {
		fault := web.Option{Value: store.CardFault, Label: web.T(request.Lang(c), web.CardStatusKey(store.CardFault))}
		statuses := []web.Option{fault}
		for _, o := range props.Statuses {
			if o.Value != store.CardActive {
				statuses = append(statuses, o)
			}
		}
		props.Statuses = statuses
	}
	return response.Render(c, status, web.CardEditPage(a.Pages.Page(c, "admin.cards", "admin"), id, props, response.Limited(f, store.CardLimits)))
}

func (a *Area) editCardPage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	cd, err := a.Store.FindCardByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return a.renderCardEdit(c, http.StatusOK, id, cardForm(cd))
}

func (a *Area) updateCardForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	f := request.Form(c, cardFields...)
	in, err := cardFromForm(f)
	if err == nil {
		var cd *store.Card
		if cd, err = a.Store.UpdateCard(c.Request().Context(), id, in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/admin/cards", web.T(request.Lang(c), "admin.updated", cd.UUID))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderCardEdit(c, response.StatusOf(err), id, f)
}

// retireCardForm is the one-click alternative to deleting a card that has
// bookings: the card stays in the ledger but can no longer be booked.
func (a *Area) retireCardForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cd, err := a.Store.FindCardByID(ctx, id)
	if err != nil {
		return err
	}
	in := store.CardInput{UUID: cd.UUID, GPUIndex: cd.GPUIndex, HostID: cd.HostID, CardTypeID: cd.CardTypeID, Status: store.CardRetired}
	if _, err := a.Store.UpdateCard(ctx, id, in); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			return a.Pages.RedirectWithFlash(c, "/admin/cards", msg) // refused: the card changed meanwhile
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/cards", web.T(request.Lang(c), "card.retired_flash", cardLabel(cd)))
}

// clearFaultForm returns a faulty card to service.
func (a *Area) clearFaultForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	cd, err := a.Store.FindCardByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if _, err := a.Store.ClearCardFault(c.Request().Context(), id); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			return a.Pages.RedirectWithFlash(c, "/admin/cards", msg)
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/cards", web.T(request.Lang(c), "card.fault_cleared", cardLabel(cd)))
}

// apiClearFault returns a faulty card to service.
func (a *Area) apiClearFault(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := a.Store.ClearCardFault(c.Request().Context(), id); err != nil {
		return err
	}
	cd, err := a.Store.FindCardByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cd)
}

func (a *Area) deleteCardForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	cd, err := a.Store.FindCardByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteCard(c.Request().Context(), id); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			f := web.NewForm()
			f.Values["status"] = store.CardActive
			return a.renderCards(c, response.StatusOf(err), f, msg)
		}
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/cards", web.T(request.Lang(c), "admin.deleted", cardLabel(cd)))
}

// cardRequest accepts the host and card type by id or by name, so a script
// can register cards from nvidia-smi output without looking ids up first.
type cardRequest struct {
	store.CardInput
	Host     *string `json:"host"`
	CardType *string `json:"card_type"`
}

// cardInput resolves names to ids. A name that matches nothing, or that points
// elsewhere than an id given with it, is reported on the name's field.
func (a *Area) cardInput(c echo.Context, r cardRequest) (store.CardInput, error) {
	const op = "server.cardRequest"
	ctx := c.Request().Context()
	in := r.CardInput
	v := errs.NewValidation(op)
	if r.Host != nil {
		h, err := a.Store.FindHostByName(ctx, *r.Host)
		switch {
		case errs.Is(err, errs.NotFound):
			v.Add("host", "host.not_found")
		case err != nil:
			return in, err
		case in.HostID != 0 && in.HostID != h.ID:
			v.Add("host", "card.ref_conflict")
		default:
			in.HostID = h.ID
		}
	}
	if r.CardType != nil {
		t, err := a.Store.FindCardTypeByName(ctx, *r.CardType)
		switch {
		case errs.Is(err, errs.NotFound):
			v.Add("card_type", "cardtype.not_found")
		case err != nil:
			return in, err
		case in.CardTypeID != 0 && in.CardTypeID != t.ID:
			v.Add("card_type", "card.ref_conflict")
		default:
			in.CardTypeID = t.ID
		}
	}
	return in, v.Err()
}

// cardPageJSON answers GET /api/v1/cards: one page of the cards, with how
// many the filter selects in all and the page it is.
type cardPageJSON struct {
	Cards  []store.CardView `json:"cards"`
	Total  int64            `json:"total"`
	Limit  int              `json:"limit"`
	Offset int              `json:"offset"`
}

func (a *Area) apiListCards(c echo.Context) error {
	const op = "server.apiListCards"
	v := errs.NewValidation(op)
	f := store.CardFilter{Query: c.QueryParam("q")}
	queryID := func(name string) int64 {
		raw := c.QueryParam(name)
		if raw == "" {
			return 0
		}
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			v.Add(name, "field.integer")
			return 0
		}
		return id
	}
	f.HostID = queryID("host_id")
	f.CardTypeID = queryID("card_type_id")
	if st := c.QueryParam("status"); st != "" {
		v.Check(slices.Contains(store.CardListStatuses, st), "status", "card.status_filter_invalid")
		f.Status = st
	}
	page := request.APIPage(c, 500, v)
	if err := v.Err(); err != nil {
		return err
	}
	pg, err := a.Store.FindCardPage(c.Request().Context(), f, page)
	if err != nil {
		return err
	}
	if pg.Items == nil {
		pg.Items = []store.CardView{}
	}
	return c.JSON(http.StatusOK, cardPageJSON{Cards: pg.Items, Total: pg.Total, Limit: pg.Limit, Offset: pg.Offset})
}

func (a *Area) apiGetCard(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	cd, err := a.Store.FindCardByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cd)
}

func (a *Area) apiCreateCard(c echo.Context) error {
	var req cardRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := a.cardInput(c, req)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cd, err := a.Store.CreateCard(ctx, in)
	if err != nil {
		return err
	}
	view, err := a.Store.FindCardByID(ctx, cd.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, view)
}

func (a *Area) apiUpdateCard(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	var req cardRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := a.cardInput(c, req)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := a.Store.UpdateCard(ctx, id, in); err != nil {
		return err
	}
	view, err := a.Store.FindCardByID(ctx, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, view)
}

func (a *Area) apiDeleteCard(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.DeleteCard(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
