package booking_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"cardhour/money"
	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// apRequests makes the team require approval and has the member ask for n
// bookings (one card, an hour each, a few hours ahead); their ids, oldest
// first.
func apRequests(t *testing.T, w *bkpWorld, n int) []int64 {
	t.Helper()
	ctx := store.WithActor(context.Background(), store.Actor{UserID: w.e.Users[store.RoleAdmin].ID, Username: "admin"})
	if _, err := w.e.St.UpdateTeam(ctx, w.teamID, store.TeamInput{Name: "llm", RequiresApproval: true}); err != nil {
		t.Fatal(err)
	}
	m := w.e.LoggedIn(store.RoleMember)
	start := time.Now().Add(3 * time.Hour).Truncate(time.Minute)
	for i := 0; i < n; i++ {
		s := start.Add(time.Duration(i) * time.Hour)
		bkpWant(t, m.PostForm("/booking", w.window(w.taskID, 1, s, s.Add(time.Hour)), true), http.StatusSeeOther, "member books")
	}
	var ids []int64
	for _, b := range w.bookings(t) {
		ids = append(ids, b.ID)
	}
	if len(ids) != n {
		t.Fatalf("%d bookings, want %d", len(ids), n)
	}
	return ids
}

func apID(id int64) string { return strconv.FormatInt(id, 10) }

func TestApprovalsInboxApprovesAndRejects(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	ids := apRequests(t, w, 3)
	mg := w.e.LoggedIn(store.RoleManager)

	doc := mg.Get("/approvals").Doc(t)
	rows := doc.Find("[data-testid=approval-row]")
	if rows.Length() != 3 {
		t.Fatalf("inbox rows %d, want 3", rows.Length())
	}
	first := rows.First()
	if id, _ := first.Attr("data-id"); id != apID(ids[0]) {
		t.Errorf("first row #%s, want the oldest #%d", id, ids[0])
	}
	if got := strings.TrimSpace(first.Find("[data-testid=approval-user]").Text()); got != "t-member" {
		t.Errorf("requester %q", got)
	}
	if first.Find("[data-testid=approval-baseline] [data-testid=task-priority]").Length() != 1 ||
		first.Find("[data-testid=approval-baseline] [data-testid=task-readiness]").Length() != 1 ||
		!strings.Contains(first.Find("[data-testid=approval-estimate]").Text(), "100.0") {
		t.Errorf("baseline cell %q", first.Find("[data-testid=approval-baseline]").Text())
	}
	// One card for an hour at the card type's price.
	if got := strings.TrimSpace(first.Find("[data-testid=approval-cost]").Text()); got != "¥"+money.Fen(bkpPriceFen).Yuan() {
		t.Errorf("cost %q", got)
	}
	if got := first.Find("[data-testid=approval-quota-effect]").Text(); !strings.Contains(got, "998.0 → 997.0") {
		t.Errorf("quota effect %q, want 998.0 → 997.0 (the other two requests draw)", got)
	}
	if doc.Find("[data-testid=approval-over-quota]").Length() != 0 {
		t.Errorf("over-quota chip within the quota")
	}
	if doc.Find("form#approvals-bulk input[name=_csrf]").Length() != 1 {
		t.Errorf("the bulk form carries no CSRF token")
	}

	// Not for members; a manager of no team sees an empty inbox.
	if r := w.e.LoggedIn(store.RoleMember).Get("/approvals"); r.StatusCode != http.StatusForbidden {
		t.Errorf("member GET /approvals: %d", r.StatusCode)
	}

	// Reject without a reason: the page again with the field error, nothing decided.
	r := mg.PostForm("/approvals", url.Values{"ids": {apID(ids[0]), apID(ids[1])}, "decision": {"reject"}, "reason": {"  "}}, true)
	bkpWant(t, r, http.StatusUnprocessableEntity, "bulk reject without a reason")
	rd := r.Doc(t)
	if got := bkpText(rd, "[data-testid=error-reason]"); got != bkpZH("approval.reason_required") {
		t.Errorf("reason error %q", got)
	}
	if rd.Find("[data-testid=approval-select][checked]").Length() != 2 {
		t.Errorf("the selection is not kept")
	}
	r = mg.PostForm("/approvals", url.Values{"ids": {apID(ids[2])}, "row": {apID(ids[2])}, "decision": {"reject"}, "reason": {""}}, true)
	bkpWant(t, r, http.StatusUnprocessableEntity, "row reject without a reason")
	if got := bkpText(r.Doc(t), "[data-testid=error-reason_"+apID(ids[2])+"]"); got != bkpZH("approval.reason_required") {
		t.Errorf("row reason error %q", got)
	}
	for _, b := range w.bookings(t) {
		if b.State != store.BookingPending {
			t.Fatalf("#%d decided by a refused form: %s", b.ID, b.State)
		}
	}

	// Approve two and an id that does not exist: the flash counts the two
	// and names the failure.
	r = mg.PostForm("/approvals", url.Values{"ids": {apID(ids[0]), "999999", apID(ids[1])}, "decision": {"approve"}}, true)
	bkpWant(t, r, http.StatusSeeOther, "approve selected")
	flash := bkpText(mg.Get("/approvals").Doc(t), "[data-testid=flash]")
	if !strings.Contains(flash, bkpZH("approvals.flash_approved", 2)) || !strings.Contains(flash, "#999999") {
		t.Errorf("flash %q", flash)
	}

	// Reject the last from its row.
	r = mg.PostForm("/approvals", url.Values{"ids": {apID(ids[2])}, "row": {apID(ids[2])}, "decision": {"reject"}, "reason": {"下周再排"}}, true)
	bkpWant(t, r, http.StatusSeeOther, "row reject")
	empty := mg.Get("/approvals").Doc(t)
	if empty.Find("[data-testid=approvals-empty]").Length() != 1 || empty.Find("[data-testid=approval-row]").Length() != 0 {
		t.Errorf("inbox after deciding all is not empty")
	}
	if got := bkpText(empty, "[data-testid=flash]"); got != bkpZH("approvals.flash_rejected", 1) {
		t.Errorf("reject flash %q", got)
	}

	// The booking page shows the rejected state, who decided and why.
	m := w.e.LoggedIn(store.RoleMember)
	page := m.Get("/bookings/" + apID(ids[2])).Doc(t)
	if st, _ := page.Find("[data-testid=booking-detail] [data-testid=booking-state]").Attr("data-state"); st != store.BookingRejected {
		t.Errorf("state chip %q", st)
	}
	if got := bkpText(page, "[data-testid=booking-detail] [data-testid=booking-state]"); got != bkpZH("bkstate.rejected") {
		t.Errorf("state chip text %q", got)
	}
	if got := bkpText(page, "[data-testid=booking-reject-reason]"); got != "下周再排" {
		t.Errorf("reason %q", got)
	}
	if got := bkpText(page, "[data-testid=booking-decided]"); !strings.Contains(got, "manager") {
		t.Errorf("decided %q", got)
	}
	if page.Find("[data-testid=booking-cancel]").Length() != 0 {
		t.Errorf("a rejected booking is offered to cancel")
	}
	approved := m.Get("/bookings/" + apID(ids[0])).Doc(t)
	if got := bkpText(approved, "[data-testid=booking-decided]"); !strings.Contains(got, "manager") {
		t.Errorf("approved decided %q", got)
	}
	// The member's notices: approved twice, rejected once with the reason; never "placed".
	home := m.Get("/booking").Doc(t).Find("[data-testid=notification]").Text()
	if !strings.Contains(home, "下周再排") || strings.Contains(home, bkpZH("notify.placed", ids[0])) ||
		!strings.Contains(home, bkpZH("notify.approved", ids[0], 1)) {
		t.Errorf("member's notices %q", home)
	}
	// In English too, without raw keys.
	m.Get("/lang?to=en&next=/")
	en := m.Get("/bookings/" + apID(ids[2]))
	if body := en.String(); !strings.Contains(body, web.T(web.LangEN, "bkstate.rejected")) || strings.Contains(body, "approvals.") || strings.Contains(body, "%!") {
		t.Errorf("English booking page lacks the rejected state or shows a raw key")
	}
}

func TestApprovalsInboxWarnsOverQuotaAndReadsInEnglish(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	ids := apRequests(t, w, 1)
	ctx := store.WithActor(context.Background(), store.Actor{UserID: w.e.Users[store.RoleAdmin].ID, Username: "admin"})
	qs, err := w.e.St.FindQuotas(ctx, store.QuotaFilter{TeamIDs: []int64{w.teamID}})
	if err != nil || len(qs) != 1 {
		t.Fatalf("quotas %v %v", qs, err)
	}
	q := qs[0]
	// The grant shrinks below what the request needs.
	if _, err := w.e.St.UpdateQuota(ctx, q.ID, store.QuotaInput{TeamID: q.TeamID, CardTypeID: q.CardTypeID, CardHours: 0.5,
		ValidFrom: q.ValidFrom, ExpiresAt: q.ExpiresAt}); err != nil {
		t.Fatal(err)
	}
	mg := w.e.LoggedIn(store.RoleManager)
	mg.Get("/lang?to=en&next=/")
	r := mg.Get("/approvals")
	doc := r.Doc(t)
	row := doc.Find("[data-testid=approval-row][data-id='" + apID(ids[0]) + "']")
	if got := strings.TrimSpace(row.Find("[data-testid=approval-over-quota]").Text()); got != web.T(web.LangEN, "approvals.limit.hours") {
		t.Errorf("over-quota chip %q", got)
	}
	if body := r.String(); strings.Contains(body, "approvals.") || strings.Contains(body, "%!") || strings.Contains(body, bkpZH("approvals.title")) {
		t.Errorf("English inbox shows a raw key or Chinese")
	}
	// The admin, who manages every team, sees it too.
	if n := w.e.LoggedIn(store.RoleAdmin).Get("/approvals").Doc(t).Find("[data-testid=approval-row]").Length(); n != 1 {
		t.Errorf("admin's inbox rows %d", n)
	}
}

func TestApprovalsAPI(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 1000)
	if _, err := f.E.St.UpdateTeam(f.E.AdminCtx(), f.LLM.ID, store.TeamInput{Name: "llm", RequiresApproval: true}); err != nil {
		t.Fatal(err)
	}
	member, manager := f.Token(store.RoleMember), f.Token(store.RoleManager)
	var ids []int64
	for i := 0; i < 3; i++ {
		b := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 1, float64(2+i), float64(3+i))), http.StatusCreated)
		ids = append(ids, b.ID)
	}
	type approval struct {
		ID        int64   `json:"id"`
		CardHours float64 `json:"card_hours"`
		CostFen   int64   `json:"cost_fen"`
		Quota     struct {
			HasQuota bool    `json:"has_quota"`
			Before   float64 `json:"remaining_before_card_hours"`
			After    float64 `json:"remaining_after_card_hours"`
			Over     bool    `json:"over"`
		} `json:"quota"`
	}
	list := servertest.Decode[struct {
		Approvals []approval `json:"approvals"`
	}](t, f.Call(http.MethodGet, "/api/v1/approvals", manager, ""), http.StatusOK)
	if len(list.Approvals) != 3 || list.Approvals[0].ID != ids[0] || list.Approvals[0].CardHours != 1 ||
		!list.Approvals[0].Quota.HasQuota || list.Approvals[0].Quota.After != list.Approvals[0].Quota.Before-1 {
		t.Fatalf("approvals %+v", list.Approvals)
	}
	servertest.MustAPIError(t, f.Call(http.MethodGet, "/api/v1/approvals", member, ""), http.StatusForbidden, "forbidden")

	// Reject one: the reason is required.
	got := servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings/"+apID(ids[0])+"/reject", manager, `{"reason":"  "}`), http.StatusUnprocessableEntity, "invalid")
	if got.Error.Fields["reason"] == "" {
		t.Errorf("reject without a reason: %+v", got)
	}
	rej := servertest.Decode[struct {
		State        string `json:"state"`
		RejectReason string `json:"reject_reason"`
	}](t, f.Call(http.MethodPost, "/api/v1/bookings/"+apID(ids[0])+"/reject", manager, `{"reason":"not now"}`), http.StatusOK)
	if rej.State != store.BookingRejected || rej.RejectReason != "not now" {
		t.Errorf("rejected %+v", rej)
	}
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings/"+apID(ids[0])+"/reject", manager, `{"reason":"again"}`), http.StatusConflict, "conflict")

	// Decide several: the rejected one is refused, the others approved.
	type result struct {
		ID    int64  `json:"id"`
		OK    bool   `json:"ok"`
		State string `json:"state"`
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/approvals", manager, `{"ids":[1],"decision":"maybe"}`), http.StatusUnprocessableEntity, "invalid")
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/approvals", manager, fmt.Sprintf(`{"ids":[%d],"decision":"reject"}`, ids[1])), http.StatusUnprocessableEntity, "invalid")
	res := servertest.Decode[struct {
		Results []result `json:"results"`
	}](t, f.Call(http.MethodPost, "/api/v1/approvals", manager, fmt.Sprintf(`{"ids":[%d,%d,%d],"decision":"approve"}`, ids[1], ids[0], ids[2])), http.StatusOK)
	if len(res.Results) != 3 || !res.Results[0].OK || res.Results[1].OK || res.Results[1].Error == nil || res.Results[1].Error.Code != "conflict" || !res.Results[2].OK ||
		res.Results[0].State != store.BookingConfirmed {
		t.Errorf("results %+v", res.Results)
	}
	// rejected is a state the list filters on.
	type listed struct {
		Bookings []servertest.Booking `json:"bookings"`
	}
	l := servertest.Decode[listed](t, f.Call(http.MethodGet, "/api/v1/bookings?state=rejected", member, ""), http.StatusOK)
	if len(l.Bookings) != 1 || l.Bookings[0].ID != ids[0] {
		t.Errorf("?state=rejected: %+v", l.Bookings)
	}
}

// TestEveryApprovalNoticeReadsInBothLanguages: each notice of a decision
// has its messages, which take the arguments the store gives.
func TestEveryApprovalNoticeReadsInBothLanguages(t *testing.T) {
	t.Parallel()
	args := map[string][]any{
		store.NoticeApprovalWaiting: {int64(12), "dev", "7B"},
		store.NoticeApproved:        {int64(12), 2},
		store.NoticeApprovedQueued:  {int64(12)},
		store.NoticeApprovedData:    {int64(12)},
		store.NoticeRejected:        {int64(12), "不急"},
	}
	for _, k := range store.ApprovalNoticeKeys() {
		a, ok := args[k]
		if !ok || !web.HasKey(k) {
			t.Errorf("notice %q: no messages or unknown arguments", k)
			continue
		}
		for _, lang := range []string{web.LangZH, web.LangEN} {
			if msg := web.T(lang, k, a...); strings.Contains(msg, "%!") || !strings.Contains(msg, "12") {
				t.Errorf("notice %q in %s: %q", k, lang, msg)
			}
		}
	}
}

// TestBookingPageRejectsWithAReason: a manager rejects from the booking's
// own page; the reason is required there too, and the booking then shows
// its state and reason.
func TestBookingPageRejectsWithAReason(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	id := apRequests(t, w, 1)[0]
	mg := w.e.LoggedIn(store.RoleManager)
	page := mg.Get("/bookings/" + apID(id)).Doc(t)
	if page.Find("[data-testid=booking-reject-form] input[name=_csrf]").Length() != 1 {
		t.Fatal("the booking page offers its manager no reject form with a CSRF token")
	}
	if page.Find("[data-testid=approvals-select]:checked, input[name=ids][type=checkbox]:checked").Length() != 0 {
		t.Error("a box is ticked before anything was chosen")
	}
	post := func(reason string) servertest.Response {
		return mg.PostForm("/approvals", url.Values{"ids": {apID(id)}, "row": {apID(id)}, "decision": {"reject"}, "reason": {reason}}, true)
	}
	r := post("  ")
	if r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("empty reason: %d, want 422", r.StatusCode)
	}
	if n := r.Doc(t).Find("input[name=ids][type=checkbox]:checked").Length(); n != 0 {
		t.Errorf("a row's refused reject ticked %d bulk boxes", n)
	}
	bkpWant(t, post("data not ready yet"), http.StatusSeeOther, "reject with a reason")
	detail := mg.Get("/bookings/" + apID(id)).String()
	if !strings.Contains(detail, "data not ready yet") {
		t.Error("the rejected booking's page does not show the reason")
	}
	if strings.Contains(detail, `data-testid="booking-reject-form"`) {
		t.Error("a rejected booking still offers to be rejected")
	}
}
