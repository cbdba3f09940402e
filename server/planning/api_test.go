package planning_test

import (
	"cardhour/server/servertest"
	"cardhour/store"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestQuotaAPI: managers grant and renew quotas of the teams they manage,
// and see only those; names or ids name team and card type.
func TestQuotaAPI(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 2, 1000)
	manager := f.Token(store.RoleManager)
	ctx := f.E.AdminCtx()
	a100, err := f.E.St.CreateCardType(ctx, store.CardTypeInput{Name: "A100", VRAMGiB: 80, TFLOPSBF16: 312, PriceFen: 900})
	if err != nil {
		t.Fatal(err)
	}
	type quota struct {
		ID                 int64   `json:"id"`
		Team               string  `json:"team"`
		CardType           string  `json:"card_type"`
		CardHours          float64 `json:"card_hours"`
		MaxCards           int     `json:"max_cards"`
		UsedCardHours      float64 `json:"used_card_hours"`
		RemainingCardHours float64 `json:"remaining_card_hours"`
		ExpiresAt          string  `json:"expires_at"`
	}
	body := fmt.Sprintf(`{"team":"llm","card_type":%d,"card_hours":500,"max_cards":8,"valid_from":%q,"expires_at":%q}`, a100.ID, f.At(0), f.At(24*60))
	q := servertest.Decode[quota](t, f.Call(http.MethodPost, "/api/v1/quotas", manager, body), http.StatusCreated)
	if q.Team != "llm" || q.CardType != "A100" || q.CardHours != 500 || q.MaxCards != 8 || q.RemainingCardHours != 500 {
		t.Errorf("created quota: %+v", q)
	}
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/quotas", manager, body), http.StatusConflict, "conflict")
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/quotas", manager, strings.Replace(body, `"llm"`, `"vision"`, 1)), http.StatusForbidden, "forbidden")

	renewed := servertest.Decode[quota](t, f.Call(http.MethodPut, "/api/v1/quotas/"+strconv.FormatInt(q.ID, 10), manager,
		fmt.Sprintf(`{"card_hours":800,"max_cards":8,"valid_from":%q,"expires_at":%q}`, f.At(0), f.At(24*80))), http.StatusOK)
	if renewed.CardHours != 800 || renewed.ExpiresAt != f.At(24*80) {
		t.Errorf("renewed quota: %+v", renewed)
	}

	list := servertest.Decode[struct{ Quotas []quota }](t, f.Call(http.MethodGet, "/api/v1/quotas", manager, ""), http.StatusOK)
	for _, x := range list.Quotas {
		if x.Team != "llm" {
			t.Errorf("the manager of llm sees a quota of %s", x.Team)
		}
	}
	if len(list.Quotas) != 2 {
		t.Errorf("the manager sees %d quotas, want llm's 2", len(list.Quotas))
	}
	all := servertest.Decode[struct{ Quotas []quota }](t, f.Call(http.MethodGet, "/api/v1/quotas?card_type=H800", f.Token(store.RoleAdmin), ""), http.StatusOK)
	if len(all.Quotas) != 2 {
		t.Errorf("the admin sees %d H800 quotas, want 2", len(all.Quotas))
	}
	servertest.MustAPIError(t, f.Call(http.MethodPut, "/api/v1/quotas/"+strconv.FormatInt(all.Quotas[0].ID+1000, 10), manager, body), http.StatusNotFound, "not_found")
}

// TestQuotaCreationAsksTheRightFirst: a manager of llm asking for a quota
// of vision is refused (403) whether or not the window overlaps vision's
// quota — a 409 for the overlap would show another team's quota windows —
// on the API and the form alike; an admin is told of the overlap (409).
func TestQuotaCreationAsksTheRightFirst(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 2, 1000)
	manager := f.Token(store.RoleManager)
	c := f.E.LoggedIn(store.RoleManager)
	before := f.Counts()
	// vision's H800 quota runs from a day ago to Base + 30 days.
	overlapping := fmt.Sprintf(`{"team":"vision","card_type":"H800","card_hours":10,"valid_from":%q,"expires_at":%q}`, f.At(0), f.At(24))
	clear := fmt.Sprintf(`{"team":"vision","card_type":"H800","card_hours":10,"valid_from":%q,"expires_at":%q}`, f.At(24*40), f.At(24*41))
	for what, body := range map[string]string{"overlapping vision's quota": overlapping, "beside vision's quota": clear} {
		r := f.Call(http.MethodPost, "/api/v1/quotas", manager, body)
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("a manager of llm asks for a quota of vision %s: status %d, want 403; body: %s", what, r.StatusCode, r)
		}
	}
	local := func(h float64) string {
		return f.Base.Add(time.Duration(h * float64(time.Hour))).In(f.E.Cfg.TZ).Format("2006-01-02T15:04")
	}
	r := c.PostForm("/quotas/new", url.Values{"team": {strconv.FormatInt(f.Vision.ID, 10)}, "card_type": {strconv.FormatInt(f.CT.ID, 10)},
		"card_hours": {"10"}, "valid_from": {local(0)}, "expires_at": {local(24)}}, true)
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("the quota form for vision overlapping its quota: status %d, want 403", r.StatusCode)
	}
	if after := f.Counts(); after != before {
		t.Errorf("refused quotas changed the database: %+v → %+v", before, after)
	}
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/quotas", f.Token(store.RoleAdmin), overlapping), http.StatusConflict, "conflict")
}

// TestAvailabilityAPI: free cards per hour reflect the bookings.
func TestAvailabilityAPI(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 1000)
	servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", f.Token(store.RoleMember), f.BookingBody(f.Normal.ID, "H800", 3, 1, 3)), http.StatusCreated)
	type avail struct {
		From      time.Time `json:"from"`
		Hours     int       `json:"hours"`
		CardTypes []struct {
			Name  string `json:"card_type"`
			Total int    `json:"total"`
			Free  []int  `json:"free"`
		} `json:"card_types"`
	}
	q := url.Values{"from": {f.At(0)}, "hours": {"5"}, "card_type": {"H800"}}
	a := servertest.Decode[avail](t, f.Call(http.MethodGet, "/api/v1/availability?"+q.Encode(), f.Token(store.RoleViewer), ""), http.StatusOK)
	if a.Hours != 5 || len(a.CardTypes) != 1 || a.CardTypes[0].Total != 4 {
		t.Fatalf("availability: %+v", a)
	}
	if got := fmt.Sprint(a.CardTypes[0].Free); got != "[4 1 1 4 4]" {
		t.Errorf("free per hour %s, want [4 1 1 4 4]", got)
	}
	for _, bad := range []struct{ query, field string }{
		{"hours=0", "hours"}, {"hours=745", "hours"}, {"hours=x", "hours"}, {"from=today", "from"}, {"card_type=nope", "card_type"},
	} {
		got := servertest.MustAPIError(t, f.Call(http.MethodGet, "/api/v1/availability?"+bad.query, f.Token(store.RoleViewer), ""), http.StatusUnprocessableEntity, "invalid")
		if got.Error.Fields[bad.field] == "" {
			t.Errorf("?%s: no message on %s: %v", bad.query, bad.field, got.Error.Fields)
		}
	}
}
