package planning_test

// Renewal and adjustment requests ("提前续或调") through the pages and the
// API: who sees the button, field errors in place, the pending list and
// the admin's decision, another team's quota not found.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"cardhour/schedule"
	"cardhour/server/servertest"
	"cardhour/store"
)

func qid(id int64) string { return strconv.FormatInt(id, 10) }

// giveMemberCoreTask makes the test member the author of a core task of
// the core team, which lets them ask.
func giveMemberCoreTask(t *testing.T, e *env, w *plnWorld) {
	t.Helper()
	m := e.Users[store.RoleMember]
	ctx := store.WithActor(context.Background(), store.Actor{UserID: m.ID, Username: m.Username})
	if _, err := e.St.CreateTask(ctx, store.TaskInput{TeamID: w.core.ID, Name: "长跑-70B", Priority: schedule.Core, EstimateCardHours: 100,
		DataReadiness: schedule.DataReady}); err != nil {
		t.Fatal(err)
	}
}

func TestQuotaRequestPagesMemberAsksAdminDecides(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	member := e.LoggedIn(store.RoleMember)
	reqPath := "/quotas/" + qid(w.coreQuota.ID) + "/request"

	// Without a core task of their own the member sees why, not a form.
	doc := member.Get("/quotas").Doc(t)
	row := doc.Find(`[data-testid=quota-row][data-id="` + qid(w.coreQuota.ID) + `"]`)
	if row.Find(`[data-testid=quota-request-button]`).Length() != 0 {
		t.Error("a member without a core task is offered the request button")
	}
	// Ten days left: highlighted as due.
	if u, _ := row.Attr("data-urgency"); u != "due" || row.Find(`[data-testid=quota-expiry-due]`).Length() != 1 {
		t.Errorf("row urgency %q, want due with its chip", u)
	}
	if pct := row.Find(`[data-testid=quota-used-pct]`).Text(); !strings.Contains(pct, "0") {
		t.Errorf("used %% = %q", pct)
	}
	page := member.Get(reqPath)
	plnStatus(t, page, http.StatusOK, "GET request page, not allowed")
	if page.Doc(t).Find(`[data-testid=quota-request-not-allowed]`).Length() != 1 {
		t.Error("the page does not say why the member may not ask")
	}

	giveMemberCoreTask(t, e, w)
	doc = member.Get("/quotas").Doc(t)
	if doc.Find(`[data-testid=quota-row][data-id="`+qid(w.coreQuota.ID)+`"] [data-testid=quota-request-button]`).Length() != 1 {
		t.Fatal("a member with a core task is not offered the request button")
	}
	form := member.Get(reqPath).Doc(t).Find(`[data-testid=quota-request-form]`)
	if form.Length() != 1 || form.Find(`input[name=_csrf]`).Length() != 1 {
		t.Fatal("no request form with a CSRF field")
	}

	// Field errors in place, nothing written.
	before := e.AuditTotal()
	bad := member.PostForm(reqPath, url.Values{"kind": {"renew"}, "card_hours": {"500"}, "max_cards": {"4"},
		"expires_at": {e.plnLocal(w.quotaExpires.Add(-48 * time.Hour))}, "reason": {"  "}}, true)
	plnStatus(t, bad, http.StatusUnprocessableEntity, "POST request with errors")
	bd := bad.Doc(t)
	if bd.Find(`[data-testid=error-reason]`).Length() != 1 || bd.Find(`[data-testid=error-expires_at]`).Length() != 1 {
		t.Errorf("want errors at reason and expires_at; form:\n%.1500s", bd.Find(`[data-testid=quota-request-form]`).Text())
	}
	if n := e.AuditTotal(); n != before {
		t.Errorf("a refused request wrote %d audit entries", n-before)
	}

	newExpiry := w.quotaExpires.Add(30 * 24 * time.Hour)
	ok := member.PostForm(reqPath, url.Values{"kind": {"renew"}, "card_hours": {"500"}, "max_cards": {"4"},
		"expires_at": {e.plnLocal(newExpiry)}, "reason": {"预训练还需一个月"}}, true)
	plnStatus(t, ok, http.StatusSeeOther, "POST request")
	doc = member.Get("/quotas").Doc(t)
	row = doc.Find(`[data-testid=quota-row][data-id="` + qid(w.coreQuota.ID) + `"]`)
	if row.Find(`[data-testid=quota-pending]`).Length() != 1 {
		t.Error("the quota's row does not show its pending request")
	}
	if doc.Find(`[data-testid=quota-request]`).Length() != 1 || doc.Find(`[data-testid=quota-request-approve]`).Length() != 0 {
		t.Error("the member should see the pending request without decision buttons")
	}
	// Another team's quota is not found, to look at or to ask about.
	other := "/quotas/" + qid(w.plainQuota.ID) + "/request"
	plnStatus(t, member.Get(other), http.StatusNotFound, "GET another team's request page")
	plnStatus(t, member.PostForm(other, url.Values{"kind": {"renew"}, "reason": {"x"}}, true), http.StatusNotFound, "POST another team's")

	// The admin: a badge, and a refusal without a note is shown at it.
	admin := e.LoggedIn(store.RoleAdmin)
	doc = admin.Get("/quotas").Doc(t)
	if got := strings.TrimSpace(doc.Find(`[data-testid=quota-requests-count]`).Text()); got != "1" {
		t.Errorf("pending badge %q, want 1", got)
	}
	item := doc.Find(`[data-testid=quota-request]`)
	rid, _ := item.Attr("data-id")
	if item.Find(`[data-testid=quota-request-refuse]`).Length() != 1 {
		t.Fatal("no refuse button for the admin")
	}
	refused := admin.PostForm("/quota-requests/"+rid+"/refuse", url.Values{"note": {""}}, true)
	plnStatus(t, refused, http.StatusUnprocessableEntity, "refuse without a note")
	if refused.Doc(t).Find(`[data-testid=quota-request][data-id="`+rid+`"] [data-testid=error-note]`).Length() != 1 {
		t.Error("the missing note is not reported at its request")
	}
	plnStatus(t, admin.PostForm("/quota-requests/"+rid+"/approve", url.Values{"note": {"同意"}}, true), http.StatusSeeOther, "approve")
	q, err := e.St.FindQuotaByID(context.Background(), w.coreQuota.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !q.ExpiresAt.Equal(newExpiry) {
		t.Errorf("expiry after approval %v, want %v", q.ExpiresAt, newExpiry)
	}
	ns, err := e.St.FindNotifications(context.Background(), e.Users[store.RoleMember].ID, true, 5)
	if err != nil || len(ns) != 1 || ns[0].Kind != "quota_request_decided" {
		t.Errorf("member notices %+v, %v", ns, err)
	}
	if admin.Get("/quotas").Doc(t).Find(`[data-testid=quota-request]`).Length() != 0 {
		t.Error("a decided request is still listed as pending")
	}
}

// The request page reads in both languages without raw keys or verbs.
func TestQuotaRequestPageBothLanguages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	c := e.LoggedIn(store.RoleManager)
	for _, lang := range []string{"zh-CN", "en"} {
		body := c.Get("/quotas/" + qid(w.coreQuota.ID) + "/request?lang=" + lang).String()
		for _, bad := range []string{"qreq.", "quota_request.", "%!"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s page contains %q", lang, bad)
			}
		}
		want := map[string]string{"zh-CN": "申请理由", "en": "Reason"}[lang]
		if !strings.Contains(body, want) {
			t.Errorf("%s page lacks %q", lang, want)
		}
	}
}

func TestQuotaRequestAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	giveMemberCoreTask(t, e, w)
	c := e.Client()
	member, manager, admin := e.Users[store.RoleMember].Token, e.Users[store.RoleManager].Token, e.Users[store.RoleAdmin].Token
	type view struct {
		ID        int64    `json:"id"`
		QuotaID   int64    `json:"quota_id"`
		Kind      string   `json:"kind"`
		State     string   `json:"state"`
		CardHours *float64 `json:"card_hours"`
		Team      string   `json:"team"`
		Note      string   `json:"decision_note"`
	}
	path := "/api/v1/quotas/" + qid(w.coreQuota.ID) + "/requests"
	servertest.MustAPIError(t, c.APICall(http.MethodPost, path, member, `{"kind":"adjust","reason":"x"}`), http.StatusUnprocessableEntity, "invalid")
	r := servertest.Decode[view](t, c.APICall(http.MethodPost, path, member, `{"kind":"adjust","card_hours":800,"reason":"多一轮消融"}`), http.StatusCreated)
	if r.Kind != "adjust" || r.State != "pending" || r.CardHours == nil || *r.CardHours != 800 || r.Team != w.core.Name {
		t.Errorf("created %+v", r)
	}
	servertest.MustAPIError(t, c.APICall(http.MethodPost, path, manager, `{"kind":"adjust","max_cards":8,"reason":"y"}`), http.StatusConflict, "conflict")
	// Another team's quota is not found.
	servertest.MustAPIError(t, c.APICall(http.MethodPost, "/api/v1/quotas/"+qid(w.plainQuota.ID)+"/requests", member,
		`{"kind":"adjust","card_hours":80,"reason":"z"}`), http.StatusNotFound, "not_found")

	list := servertest.Decode[struct {
		QuotaRequests []view `json:"quota_requests"`
	}](t, c.APICall(http.MethodGet, "/api/v1/quota-requests?state=pending", manager, ""), http.StatusOK)
	if len(list.QuotaRequests) != 1 || list.QuotaRequests[0].ID != r.ID {
		t.Errorf("manager's list %+v", list)
	}
	servertest.MustAPIError(t, c.APICall(http.MethodGet, "/api/v1/quota-requests?state=maybe", manager, ""), http.StatusUnprocessableEntity, "invalid")

	decide := fmt.Sprintf("/api/v1/quota-requests/%d/", r.ID)
	servertest.MustAPIError(t, c.APICall(http.MethodPost, decide+"approve", manager, `{}`), http.StatusForbidden, "forbidden")
	servertest.MustAPIError(t, c.APICall(http.MethodPost, decide+"refuse", admin, `{"note":" "}`), http.StatusUnprocessableEntity, "invalid")
	got := servertest.Decode[view](t, c.APICall(http.MethodPost, decide+"refuse", admin, `{"note":"本期还剩 90%"}`), http.StatusOK)
	if got.State != "refused" || got.Note != "本期还剩 90%" {
		t.Errorf("refused %+v", got)
	}
	servertest.MustAPIError(t, c.APICall(http.MethodPost, decide+"approve", admin, `{}`), http.StatusConflict, "conflict")

	// A new request, approved: the quota takes the asked hours.
	r2 := servertest.Decode[view](t, c.APICall(http.MethodPost, path, manager, `{"kind":"adjust","card_hours":650,"reason":"扩一轮"}`), http.StatusCreated)
	servertest.Decode[view](t, c.APICall(http.MethodPost, fmt.Sprintf("/api/v1/quota-requests/%d/approve", r2.ID), admin, `{"note":""}`), http.StatusOK)
	q, err := e.St.FindQuotaByID(context.Background(), w.coreQuota.ID)
	if err != nil || q.GrantedHours != 650 {
		t.Errorf("quota after approval %+v, %v", q, err)
	}
}
