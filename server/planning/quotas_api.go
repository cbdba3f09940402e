package planning

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/store"
)

// quotaRequest is the body of POST and PUT /api/v1/quotas: team and card
// type by name or id, times as RFC 3339 text.
type quotaRequest struct {
	Team      request.Ref `json:"team"`
	CardType  request.Ref `json:"card_type"`
	CardHours float64     `json:"card_hours"`
	MaxCards  int         `json:"max_cards"`
	ValidFrom *string     `json:"valid_from" format:"date-time"`
	ExpiresAt *string     `json:"expires_at" format:"date-time"`
	Note      string      `json:"note"`
}

func (a *Area) quotaInput(c echo.Context, r quotaRequest) (store.QuotaInput, error) {
	v := errs.NewValidation("server.quotaInput")
	in := store.QuotaInput{CardHours: r.CardHours, MaxCards: r.MaxCards, Note: r.Note,
		ValidFrom: request.Time(r.ValidFrom, "valid_from", v), ExpiresAt: request.Time(r.ExpiresAt, "expires_at", v)}
	var err error
	if in.TeamID, err = request.TeamID(c.Request().Context(), a.Store, r.Team, "team", v); err != nil {
		return in, err
	}
	if in.CardTypeID, err = request.CardTypeID(c.Request().Context(), a.Store, r.CardType, "card_type", v); err != nil {
		return in, err
	}
	return in, v.Err()
}

// managedQuotas lists the quotas of the teams the user manages (all for
// admins), narrowed by f.
func (a *Area) managedQuotas(c echo.Context, f store.QuotaFilter) ([]store.QuotaView, error) {
	ctx := c.Request().Context()
	teams, err := a.Store.ManagedTeamIDs(ctx, request.User(c))
	if err != nil {
		return nil, err
	}
	f.TeamIDs = teams
	if f.TeamIDs == nil {
		f.TeamIDs = []int64{}
	}
	return a.Store.FindQuotas(ctx, f)
}

// quotaView finds one quota the user manages; others are not found.
func (a *Area) quotaView(c echo.Context, id int64) (*store.QuotaView, error) {
	qs, err := a.managedQuotas(c, store.QuotaFilter{})
	if err != nil {
		return nil, err
	}
	for i := range qs {
		if qs[i].ID == id {
			return &qs[i], nil
		}
	}
	return nil, errs.E(errs.NotFound, "server.quotaView", "api.quota_not_found")
}

func (a *Area) apiListQuotas(c echo.Context) error {
	v := errs.NewValidation("server.apiListQuotas")
	var f store.QuotaFilter
	team, err := request.TeamID(c.Request().Context(), a.Store, request.QueryRef(c, "team"), "team", v)
	if err != nil {
		return err
	}
	if f.CardTypeID, err = request.CardTypeID(c.Request().Context(), a.Store, request.QueryRef(c, "card_type"), "card_type", v); err != nil {
		return err
	}
	if err := v.Err(); err != nil {
		return err
	}
	qs, err := a.managedQuotas(c, f)
	if err != nil {
		return err
	}
	out := make([]store.QuotaView, 0, len(qs))
	for _, q := range qs {
		if team == 0 || q.TeamID == team {
			out = append(out, q)
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"quotas": out})
}

func (a *Area) apiCreateQuota(c echo.Context) error {
	var req quotaRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := a.quotaInput(c, req)
	if err != nil {
		return err
	}
	q, err := a.Store.CreateQuota(c.Request().Context(), in)
	if err != nil {
		return err
	}
	view, err := a.quotaView(c, q.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, view)
}

func (a *Area) apiUpdateQuota(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	current, err := a.quotaView(c, id)
	if err != nil {
		return err
	}
	var req quotaRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	in, err := a.quotaInput(c, req)
	if err != nil {
		return err
	}
	// Team and card type identify a quota; a body may leave them out.
	if in.TeamID == 0 {
		in.TeamID = current.TeamID
	}
	if in.CardTypeID == 0 {
		in.CardTypeID = current.CardTypeID
	}
	if _, err := a.Store.UpdateQuota(c.Request().Context(), id, in); err != nil {
		return err
	}
	view, err := a.quotaView(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, view)
}
