package planning

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/store"
)

// quotaRequestBody is the body of POST /api/v1/quotas/:id/requests: the
// values to change (left out: unchanged), the expiry as RFC 3339 text.
type quotaRequestBody struct {
	Kind      string   `json:"kind"`
	CardHours *float64 `json:"card_hours"`
	MaxCards  *int     `json:"max_cards"`
	ExpiresAt *string  `json:"expires_at" format:"date-time"`
	Reason    string   `json:"reason"`
}

// decisionBody is the body of the approve and refuse operations.
type decisionBody struct {
	Note string `json:"note"`
}

func (a *Area) apiCreateQuotaRequest(c echo.Context) error {
	q, err := a.visibleQuota(c)
	if err != nil {
		return err
	}
	var body quotaRequestBody
	if err := request.DecodeJSON(c, &body); err != nil {
		return err
	}
	v := errs.NewValidation("server.apiCreateQuotaRequest")
	in := store.QuotaRequestInput{QuotaID: q.ID, Kind: body.Kind, CardHours: body.CardHours, MaxCards: body.MaxCards, Reason: body.Reason}
	if body.ExpiresAt != nil && strings.TrimSpace(*body.ExpiresAt) != "" {
		t := request.Time(body.ExpiresAt, "expires_at", v)
		in.ExpiresAt = &t
	}
	if err := v.Err(); err != nil {
		return err
	}
	r, err := a.Store.CreateQuotaRequest(c.Request().Context(), in)
	if err != nil {
		return err
	}
	view, err := a.Store.FindQuotaRequestByID(c.Request().Context(), r.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, view)
}

func (a *Area) apiListQuotaRequests(c echo.Context) error {
	v := errs.NewValidation("server.apiListQuotaRequests")
	f := store.QuotaRequestFilter{State: c.QueryParam("state"), QuotaID: request.ID(c.QueryParam("quota"))}
	switch f.State {
	case "", store.QuotaRequestPending, store.QuotaRequestApproved, store.QuotaRequestRefused:
	default:
		v.Add("state", "quota_request.state_invalid")
	}
	if raw := c.QueryParam("quota"); raw != "" && f.QuotaID == 0 {
		v.Add("quota", "quota.not_found")
	}
	if err := v.Err(); err != nil {
		return err
	}
	out, err := a.Store.FindQuotaRequests(c.Request().Context(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"quota_requests": out})
}

func (a *Area) apiApproveQuotaRequest(c echo.Context) error { return a.apiDecideQuotaRequest(c, true) }
func (a *Area) apiRefuseQuotaRequest(c echo.Context) error  { return a.apiDecideQuotaRequest(c, false) }

func (a *Area) apiDecideQuotaRequest(c echo.Context, approve bool) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	var body decisionBody
	if err := request.DecodeJSON(c, &body); err != nil {
		return err
	}
	if _, err := a.Store.DecideQuotaRequest(c.Request().Context(), id, approve, body.Note); err != nil {
		return err
	}
	view, err := a.Store.FindQuotaRequestByID(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, view)
}
