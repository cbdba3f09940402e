package server

import (
	"net/http"
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
func (s *Server) cardChoices(c echo.Context) (web.CardsProps, error) {
	ctx := c.Request().Context()
	lang := request.Lang(c)
	var props web.CardsProps
	hosts, err := s.store.FindHosts(ctx)
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
	types, err := s.store.FindCardTypes(ctx)
	if err != nil {
		return props, err
	}
	for _, t := range types {
		props.Types = append(props.Types, web.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name})
	}
	for _, st := range store.CardStatuses {
		props.Statuses = append(props.Statuses, web.Option{Value: st, Label: web.T(lang, web.CardStatusKey(st))})
	}
	return props, nil
}

// cardFilterOf reads the list filter from the query. Values that do not
// parse filter nothing rather than failing the page: they come from links.
func cardFilterOf(c echo.Context) (store.CardFilter, web.Form) {
	f := web.NewForm()
	var cf store.CardFilter
	if id, err := strconv.ParseInt(c.QueryParam("host_id"), 10, 64); err == nil && id > 0 {
		cf.HostID = id
		f.Values["host_id"] = c.QueryParam("host_id")
	}
	if id, err := strconv.ParseInt(c.QueryParam("card_type_id"), 10, 64); err == nil && id > 0 {
		cf.CardTypeID = id
		f.Values["card_type_id"] = c.QueryParam("card_type_id")
	}
	for _, st := range store.CardStatuses {
		if c.QueryParam("status") == st {
			cf.Status = st
			f.Values["status"] = st
		}
	}
	return cf, f
}

// cardFromForm parses the form; numbers that do not parse are reported next
// to their inputs, the rest is left to the store's checks.
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

func (s *Server) cardsPage(c echo.Context) error {
	f := web.NewForm()
	f.Values["status"] = store.CardActive
	return s.renderCards(c, http.StatusOK, f, "")
}

func (s *Server) renderCards(c echo.Context, status int, f web.Form, listErr string) error {
	props, err := s.cardChoices(c)
	if err != nil {
		return err
	}
	cf, filter := cardFilterOf(c)
	cards, err := s.store.FindCards(c.Request().Context(), cf)
	if err != nil {
		return err
	}
	for _, cd := range cards {
		props.Rows = append(props.Rows, cardRow(cd))
	}
	props.Filter = filter
	props.ListErr = listErr
	return response.Render(c, status, web.CardsPage(s.pages.Page(c, "admin.cards", "admin"), props, f))
}

func (s *Server) createCardForm(c echo.Context) error {
	f := request.Form(c, cardFields...)
	in, err := cardFromForm(f)
	if err == nil {
		var cd *store.Card
		if cd, err = s.store.CreateCard(c.Request().Context(), in); err == nil {
			return s.pages.RedirectWithFlash(c, "/admin/cards", web.T(request.Lang(c), "admin.created", cd.UUID))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return s.renderCards(c, response.StatusOf(err), f, "")
}

func (s *Server) renderCardEdit(c echo.Context, status int, id int64, f web.Form) error {
	props, err := s.cardChoices(c)
	if err != nil {
		return err
	}
	return response.Render(c, status, web.CardEditPage(s.pages.Page(c, "admin.cards", "admin"), id, props, f))
}

func (s *Server) editCardPage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	cd, err := s.store.FindCardByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return s.renderCardEdit(c, http.StatusOK, id, cardForm(cd))
}

func (s *Server) updateCardForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	f := request.Form(c, cardFields...)
	in, err := cardFromForm(f)
	if err == nil {
		var cd *store.Card
		if cd, err = s.store.UpdateCard(c.Request().Context(), id, in); err == nil {
			return s.pages.RedirectWithFlash(c, "/admin/cards", web.T(request.Lang(c), "admin.updated", cd.UUID))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return s.renderCardEdit(c, response.StatusOf(err), id, f)
}

// retireCardForm is the one-click alternative to deleting a card that has
// bookings: the card stays in the ledger but can no longer be booked.
func (s *Server) retireCardForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cd, err := s.store.FindCardByID(ctx, id)
	if err != nil {
		return err
	}
	in := store.CardInput{UUID: cd.UUID, GPUIndex: cd.GPUIndex, HostID: cd.HostID, CardTypeID: cd.CardTypeID, Status: store.CardRetired}
	if _, err := s.store.UpdateCard(ctx, id, in); err != nil {
		return err
	}
	return s.pages.RedirectWithFlash(c, "/admin/cards", web.T(request.Lang(c), "card.retired_flash", cardLabel(cd)))
}

func (s *Server) deleteCardForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	cd, err := s.store.FindCardByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	if err := s.store.DeleteCard(c.Request().Context(), id); err != nil {
		if msg, ok := response.Refusal(request.Lang(c), err); ok {
			f := web.NewForm()
			f.Values["status"] = store.CardActive
			return s.renderCards(c, response.StatusOf(err), f, msg)
		}
		return err
	}
	return s.pages.RedirectWithFlash(c, "/admin/cards", web.T(request.Lang(c), "admin.deleted", cardLabel(cd)))
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
func (s *Server) cardInput(c echo.Context, r cardRequest) (store.CardInput, error) {
	const op = "server.cardRequest"
	ctx := c.Request().Context()
	in := r.CardInput
	v := errs.NewValidation(op)
	if r.Host != nil {
		h, err := s.store.FindHostByName(ctx, *r.Host)
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
		t, err := s.store.FindCardTypeByName(ctx, *r.CardType)
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

func (s *Server) apiListCards(c echo.Context) error {
	const op = "server.apiListCards"
	v := errs.NewValidation(op)
	var f store.CardFilter
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
		valid := false
		for _, known := range store.CardStatuses {
			valid = valid || st == known
		}
		v.Check(valid, "status", "card.status_invalid")
		f.Status = st
	}
	if err := v.Err(); err != nil {
		return err
	}
	cards, err := s.store.FindCards(c.Request().Context(), f)
	if err != nil {
		return err
	}
	if cards == nil {
		cards = []store.CardView{}
	}
	return c.JSON(http.StatusOK, map[string]any{"cards": cards})
}

func (s *Server) apiGetCard(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	cd, err := s.store.FindCardByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, cd)
}

func (s *Server) apiCreateCard(c echo.Context) error {
	var req cardRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := s.cardInput(c, req)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	cd, err := s.store.CreateCard(ctx, in)
	if err != nil {
		return err
	}
	view, err := s.store.FindCardByID(ctx, cd.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, view)
}

func (s *Server) apiUpdateCard(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	var req cardRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := s.cardInput(c, req)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.store.UpdateCard(ctx, id, in); err != nil {
		return err
	}
	view, err := s.store.FindCardByID(ctx, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, view)
}

func (s *Server) apiDeleteCard(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := s.store.DeleteCard(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
