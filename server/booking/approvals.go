package booking

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

func approvalItem(r store.ApprovalRow) web.ApprovalItem {
	it := web.ApprovalItem{
		ID: r.ID, TaskID: r.TaskID, TaskName: r.TaskName, TeamName: r.TeamName, Username: r.Username,
		Priority: r.Task.Priority, Readiness: r.Task.DataReadiness, ReadyAt: r.Task.DataReadyAt, EstimateHours: r.Task.EstimateCardHours(),
		CardTypeName: r.CardTypeName, Count: r.CardCount, Start: r.StartAt, End: r.EndAt, SubmittedAt: r.SubmittedAt,
		CardHours: schedule.CardHours(r.CardSeconds), CostFen: r.CostFen,
		HasQuota: r.Quota.QuotaID != 0, QuotaOver: r.Quota.Over(), QuotaLimit: r.Quota.Verdict.Limit,
	}
	if it.HasQuota {
		it.QuotaBeforeHours = schedule.CardHours(r.Quota.BeforeCardSeconds)
		it.QuotaAfterHours = schedule.CardHours(r.Quota.AfterCardSeconds)
	}
	return it
}

// approvalsPage is "待审批": the bookings waiting for the viewer's decision.
func (a *Area) approvalsPage(c echo.Context) error {
	return a.renderApprovals(c, http.StatusOK, web.NewForm())
}

func (a *Area) renderApprovals(c echo.Context, status int, f web.Form) error {
	rows, err := a.Store.FindAwaitingApproval(c.Request().Context(), request.User(c))
	if err != nil {
		return err
	}
	d := web.ApprovalsProps{Form: f}
	for _, r := range rows {
		d.Rows = append(d.Rows, approvalItem(r))
	}
	return response.Render(c, status, web.ApprovalsPage(a.Pages.Page(c, "approvals.title", "booking"), d))
}

// decideApprovalsForm approves or rejects the bookings posted (one row's
// buttons post its id and row; the bulk form the ids checked). A refused
// input — no reason to reject, nothing selected — shows the inbox again
// with its message and decides nothing; otherwise each booking is decided
// on its own and the flash says what became of each.
func (a *Area) decideApprovalsForm(c echo.Context) error {
	const op = "server.decideApprovalsForm"
	lang := request.Lang(c)
	form, err := c.FormParams()
	if err != nil {
		return errs.Wrap(errs.Invalid, op, err)
	}
	var ids []int64
	for _, raw := range form["ids"] {
		if id := request.ID(raw); id > 0 {
			ids = append(ids, id)
		}
	}
	decision, reason, row := form.Get("decision"), form.Get("reason"), request.ID(form.Get("row"))
	f := web.NewForm()
	idText := make([]string, len(ids))
	for i, id := range ids {
		idText[i] = strconv.FormatInt(id, 10)
	}
	// A row's own buttons post its id: the bulk checkboxes stay as they
	// were, unticked, when its reason is refused.
	if row == 0 {
		f.Values["ids"] = strings.Join(idText, ",")
	}
	reasonField := "reason"
	if row > 0 {
		reasonField = "reason_" + strconv.FormatInt(row, 10)
	}
	f.Values[reasonField] = reason
	var ds []store.Decision
	switch decision {
	case "approve", "reject":
		ds, err = a.Store.DecideBookings(c.Request().Context(), ids, decision == "approve", reason)
	default:
		err = &errs.Error{Code: errs.Invalid, Op: op, Key: "approvals.decision_invalid"}
	}
	if err != nil {
		if !response.FormFailed(lang, err, &f) {
			return err
		}
		if msg, ok := f.Errors["reason"]; ok && row > 0 {
			delete(f.Errors, "reason")
			f.Errors[reasonField] = msg
		}
		return a.renderApprovals(c, response.StatusOf(err), f)
	}
	return a.Pages.RedirectWithFlash(c, "/approvals", a.decisionsFlash(c, decision == "approve", ds))
}

// decisionsFlash says how many were decided and which were not, and why.
func (a *Area) decisionsFlash(c echo.Context, approve bool, ds []store.Decision) string {
	lang := request.Lang(c)
	done := 0
	var failed []string
	for _, d := range ds {
		if d.OK() {
			done++
			continue
		}
		if errs.Is(d.Err, errs.Internal) {
			a.Log.Error("approvals: decision failed", "booking", d.ID, "err", d.Err)
		}
		_, _, msg, _ := response.Describe(d.Err, lang)
		failed = append(failed, web.T(lang, "approvals.flash_item", d.ID, msg))
	}
	key := "approvals.flash_rejected"
	if approve {
		key = "approvals.flash_approved"
	}
	msg := web.T(lang, key, done)
	if len(failed) > 0 {
		msg += " " + web.T(lang, "approvals.flash_failed", strings.Join(failed, "；"))
	}
	return msg
}
