package booking

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/money"
	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/server/scope"
	"cardhour/store"
)

// rejectRequest is the body of POST /api/v1/bookings/{id}/reject.
type rejectRequest struct {
	Reason string `json:"reason"`
}

// decideRequest is the body of POST /api/v1/approvals.
type decideRequest struct {
	IDs      []int64 `json:"ids"`
	Decision string  `json:"decision"`
	Reason   string  `json:"reason"`
}

// approvalJSON is one booking of the inbox: the booking, its task's
// baseline, card-hours and cost, and what approving it does to the quota.
type approvalJSON struct {
	bookingJSON
	TaskPriority      string          `json:"task_priority"`
	TaskEstimateHours float64         `json:"task_estimate_card_hours"`
	DataReadiness     string          `json:"data_readiness"`
	CardHours         float64         `json:"card_hours"`
	Quota             quotaEffectJSON `json:"quota"`
}

// quotaEffectJSON is the team's quota for the card type before and after
// the booking; has_quota false when the team has none at its start.
type quotaEffectJSON struct {
	HasQuota     bool    `json:"has_quota"`
	GrantedHours float64 `json:"granted_card_hours"`
	BeforeHours  float64 `json:"remaining_before_card_hours"`
	AfterHours   float64 `json:"remaining_after_card_hours"`
	Over         bool    `json:"over"`
	// Limit is the limit broken ("hours", "cards", "expiry", "no_quota",
	// "not_yet_valid"), "" when it fits.
	Limit string `json:"limit"`
}

// decisionJSON is one booking's outcome of POST /api/v1/approvals.
type decisionJSON struct {
	ID    int64                  `json:"id"`
	OK    bool                   `json:"ok"`
	State string                 `json:"state,omitempty"`
	Error *response.APIErrorBody `json:"error,omitempty"`
}

// decisionsJSON is the answer of POST /api/v1/approvals.
type decisionsJSON struct {
	Results []decisionJSON `json:"results"`
}

func toApprovalJSON(lang string, r store.ApprovalRow) approvalJSON {
	q := r.Quota
	out := approvalJSON{
		bookingJSON: toBookingJSON(lang, r.BookingView), TaskPriority: r.Task.Priority, TaskEstimateHours: r.Task.EstimateCardHours(),
		DataReadiness: r.Task.DataReadiness, CardHours: schedule.CardHours(r.CardSeconds),
		Quota: quotaEffectJSON{HasQuota: q.QuotaID != 0, Over: q.Over(), Limit: q.Verdict.Limit},
	}
	if out.Quota.HasQuota {
		out.Quota.GrantedHours = schedule.CardHours(q.GrantedCardSeconds)
		out.Quota.BeforeHours = schedule.CardHours(q.BeforeCardSeconds)
		out.Quota.AfterHours = schedule.CardHours(q.AfterCardSeconds)
	}
	out.CostYuan = money.Fen(r.CostFen).Plain()
	return out
}

func (a *Area) apiListApprovals(c echo.Context) error {
	rows, err := a.Store.FindAwaitingApproval(c.Request().Context(), request.User(c))
	if err != nil {
		return err
	}
	lang := request.Lang(c)
	out := make([]approvalJSON, len(rows))
	for i, r := range rows {
		out[i] = toApprovalJSON(lang, r)
	}
	return c.JSON(http.StatusOK, map[string]any{"approvals": out})
}

func (a *Area) apiRejectBooking(c echo.Context) error {
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	var req rejectRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	if _, err := a.Store.RejectBooking(c.Request().Context(), id, req.Reason); err != nil {
		return err
	}
	b, err := a.bookingView(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}

func (a *Area) apiDecideApprovals(c echo.Context) error {
	var req decideRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	decision := strings.ToLower(strings.TrimSpace(req.Decision))
	if decision != "approve" && decision != "reject" {
		return &errs.Error{Code: errs.Invalid, Op: "server.apiDecideApprovals", Key: "approvals.decision_invalid",
			Fields: map[string]string{"decision": "approvals.decision_invalid"}}
	}
	ds, err := a.Store.DecideBookings(c.Request().Context(), req.IDs, decision == "approve", req.Reason)
	if err != nil {
		return err
	}
	lang := request.Lang(c)
	out := decisionsJSON{Results: make([]decisionJSON, len(ds))}
	for i, d := range ds {
		r := decisionJSON{ID: d.ID, OK: d.OK()}
		if d.OK() {
			r.State = d.Booking.State
		} else {
			if errs.Is(d.Err, errs.Internal) {
				a.Log.Error("approvals: decision failed", "booking", d.ID, "err", d.Err)
			}
			_, code, msg, fields := response.Describe(d.Err, lang)
			r.Error = &response.APIErrorBody{Code: string(code), Message: msg, Fields: fields}
		}
		out.Results[i] = r
	}
	return c.JSON(http.StatusOK, out)
}
