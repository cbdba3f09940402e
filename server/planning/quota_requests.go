package planning

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/server/scope"
	"cardhour/store"
	"cardhour/web"
)

// Renewal and adjustment requests ("提前续或调"): a manager, or a member
// with a core task, asks from the quota page; admins decide on it. Who may
// ask and what a request may ask are the store's rules; these handlers only
// read forms and show answers.

var quotaRequestFields = []string{"kind", "card_hours", "max_cards", "expires_at", "reason"}

// requestRow is a store request as the pages show it.
func requestRow(v store.QuotaRequestView) web.QuotaRequestRow {
	return web.QuotaRequestRow{ID: v.ID, QuotaID: v.QuotaID, Team: v.TeamName, CardType: v.CardTypeName, Kind: v.Kind, State: v.State,
		Reason: v.Reason, Requester: v.RequesterName, DecisionNote: v.DecisionNote, AskedHours: v.AskedCardHours, AskedMaxCards: v.MaxCards,
		AskedExpiresAt: v.ExpiresAt, QuotaHours: v.QuotaHours, QuotaMaxCards: v.QuotaMaxCards, QuotaExpiresAt: v.QuotaExpiresAt, CreatedAt: v.CreatedAt}
}

// annotateRequests marks on rows which quotas the viewer may ask about and
// which have a request pending, and returns the pending requests the
// viewer sees (the store scopes them to the viewer's teams).
func (a *Area) annotateRequests(c echo.Context, rows []web.QuotaListRow) ([]web.QuotaRequestRow, error) {
	ctx := c.Request().Context()
	pending, err := a.Store.FindQuotaRequests(ctx, store.QuotaRequestFilter{State: store.QuotaRequestPending})
	if err != nil {
		return nil, err
	}
	requestable, err := a.Store.RequestableTeamIDs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]web.QuotaRequestRow, 0, len(pending))
	byQuota := map[int64]*web.QuotaRequestRow{}
	for _, v := range pending {
		out = append(out, requestRow(v))
	}
	for i := range out {
		byQuota[out[i].QuotaID] = &out[i]
	}
	teamOf := map[int64]int64{}
	views, err := a.Store.FindQuotas(ctx, store.QuotaFilter{TeamIDs: requestable})
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		teamOf[v.ID] = v.TeamID
	}
	for i := range rows {
		_, ok := teamOf[rows[i].ID]
		rows[i].CanRequest = ok
		rows[i].Pending = byQuota[rows[i].ID]
	}
	return out, nil
}

// quotaRequestForm starts the form from the quota's values; a renewal
// proposes the same length again from the current expiry.
func (a *Area) quotaRequestForm(q store.QuotaView) web.Form {
	f := web.NewForm()
	f.Values["kind"] = store.QuotaRequestRenew
	f.Values["card_hours"] = strconv.FormatFloat(q.GrantedHours, 'f', -1, 64)
	f.Values["max_cards"] = strconv.Itoa(q.MaxCards)
	next := q.ExpiresAt.Add(q.ExpiresAt.Sub(q.ValidFrom))
	if now := a.Store.Now(); next.Before(now) {
		next = now.Add(q.ExpiresAt.Sub(q.ValidFrom))
	}
	f.Values["expires_at"] = request.LocalValue(next, a.Config.TZ)
	return f
}

// quotaRequestFromForm parses the request form: what does not parse is
// reported beside its input, the rest is the store's to judge. An empty
// value asks nothing.
func (a *Area) quotaRequestFromForm(ctx context.Context, quotaID int64, f web.Form) (store.QuotaRequestInput, error) {
	v := errs.NewValidation("server.quotaRequestFromForm")
	in := store.QuotaRequestInput{QuotaID: quotaID, Kind: f.Value("kind"), Reason: f.Value("reason")}
	if raw := strings.TrimSpace(f.Value("card_hours")); raw != "" {
		h, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(h) || math.IsInf(h, 0) {
			v.Add("card_hours", "field.number")
		}
		in.CardHours = &h
	}
	if raw := strings.TrimSpace(f.Value("max_cards")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			v.Add("max_cards", "field.integer")
		}
		in.MaxCards = &n
	}
	if raw := strings.TrimSpace(f.Value("expires_at")); raw != "" {
		t, ok := request.ParseLocal(raw, a.Config.TZ)
		if !ok {
			v.Add("expires_at", "plan.bad_time")
		}
		in.ExpiresAt = &t
	}
	// A field that did not parse does not hide what is wrong with the others.
	if v.Err() != nil {
		if err := v.Merge(a.Store.CheckQuotaRequest(ctx, in)); err != nil {
			return in, err
		}
	}
	return in, v.Err()
}

func (a *Area) quotaRequestKinds(c echo.Context) []web.Option {
	lang := request.Lang(c)
	out := make([]web.Option, 0, len(store.QuotaRequestKinds))
	for _, k := range store.QuotaRequestKinds {
		out = append(out, web.Option{Value: k, Label: web.T(lang, web.QuotaRequestKindKey(k))})
	}
	return out
}

func (a *Area) quotaRequestPage(c echo.Context) error {
	q, err := a.visibleQuota(c)
	if err != nil {
		return err
	}
	return a.renderQuotaRequest(c, http.StatusOK, q, a.quotaRequestForm(*q))
}

// visibleQuota is the :id quota when the viewer's teams hold it.
func (a *Area) visibleQuota(c echo.Context) (*store.QuotaView, error) {
	id, err := request.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	return scope.Quota(c, a.Store, id)
}

func (a *Area) renderQuotaRequest(c echo.Context, status int, q *store.QuotaView, f web.Form) error {
	ctx := c.Request().Context()
	props := web.QuotaRequestProps{Kinds: a.quotaRequestKinds(c)}
	switch err := a.Store.MayRequestQuota(ctx, q.ID); {
	case err == nil:
		props.Allowed = true
	case errs.Is(err, errs.Forbidden):
	default:
		return err
	}
	rows, err := a.quotaRows(c, []store.QuotaView{*q}, nil, a.Store.Now())
	if err != nil {
		return err
	}
	props.Quota = rows[0]
	pending, err := a.Store.FindQuotaRequests(ctx, store.QuotaRequestFilter{QuotaID: q.ID, State: store.QuotaRequestPending})
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		r := requestRow(pending[0])
		props.Pending = &r
	}
	return response.Render(c, status, web.QuotaRequestPage(a.Pages.Page(c, "qreq.title", "booking"), props, f))
}

func (a *Area) createQuotaRequestForm(c echo.Context) error {
	q, err := a.visibleQuota(c)
	if err != nil {
		return err
	}
	f := request.Form(c, quotaRequestFields...)
	in, err := a.quotaRequestFromForm(c.Request().Context(), q.ID, f)
	if err == nil {
		if _, err = a.Store.CreateQuotaRequest(c.Request().Context(), in); err == nil {
			msg := web.T(request.Lang(c), "qreq.sent", q.TeamName+" · "+q.CardTypeName)
			return a.Pages.RedirectWithFlash(c, "/quotas#quota-"+strconv.FormatInt(q.ID, 10), msg)
		}
	}
	if !response.FormRefused(request.Lang(c), err, &f) {
		return err
	}
	return a.renderQuotaRequest(c, quotaStatus(err), q, f)
}

func (a *Area) approveQuotaRequestForm(c echo.Context) error {
	return a.decideQuotaRequestForm(c, true)
}
func (a *Area) refuseQuotaRequestForm(c echo.Context) error {
	return a.decideQuotaRequestForm(c, false)
}

// decideQuotaRequestForm approves or refuses from the quota page; a
// refused decision (no note, or asked values the quota rules no longer
// allow) shows its messages at the request.
func (a *Area) decideQuotaRequestForm(c echo.Context, approve bool) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	f := request.Form(c, "note")
	r, err := a.Store.DecideQuotaRequest(c.Request().Context(), id, approve, f.Value("note"))
	if err == nil {
		key := "qreq.refused"
		if approve {
			key = "qreq.approved"
		}
		name := "#" + strconv.FormatInt(r.QuotaID, 10)
		if v, err := a.Store.FindQuotaByID(c.Request().Context(), r.QuotaID); err == nil {
			name = v.TeamName + " · " + v.CardTypeName
		}
		return a.Pages.RedirectWithFlash(c, "/quotas#quota-"+strconv.FormatInt(r.QuotaID, 10), web.T(request.Lang(c), key, name))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderQuotasDeciding(c, quotaStatus(err), a.defaultQuotaForm(), id, f)
}
