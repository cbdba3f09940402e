package account_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// homeFleet is servertest's fleet with, for the member, a running booking
// (an alert open on it), one ahead, and one waiting for approval; and an
// hour and a half its cards held idle today.
type homeFleet struct {
	*servertest.Fleet
	running, ahead, waiting int64
}

func newHomeFleet(t *testing.T) *homeFleet {
	t.Helper()
	f := &homeFleet{Fleet: servertest.NewFleet(t, servertest.Options{}, 4, 1000)}
	st := f.E.St
	member := f.E.ActorCtx(f.E.Users[store.RoleMember])
	book := func(count int, start, end time.Time) int64 {
		t.Helper()
		r, err := st.CreateBooking(member, store.BookingRequest{TaskID: f.Normal.ID, CardTypeID: f.CT.ID, Count: count, Start: start, End: end})
		if err != nil {
			t.Fatal(err)
		}
		return r.Booking.ID
	}
	now := time.Now()
	f.running = book(2, now, now.Add(2*time.Hour))
	f.ahead = book(1, f.Base.Add(24*time.Hour), f.Base.Add(27*time.Hour))
	if _, err := st.UpdateTeam(f.E.AdminCtx(), f.LLM.ID, store.TeamInput{Name: "llm", RequiresApproval: true}); err != nil {
		t.Fatal(err)
	}
	f.waiting = book(1, f.Base.Add(48*time.Hour), f.Base.Add(50*time.Hour))
	b, err := st.FindBookingByID(context.Background(), f.running)
	if err != nil {
		t.Fatal(err)
	}
	card := f.Cards[0].ID
	for _, cd := range f.Cards {
		if cd.UUID == b.Cards[0] {
			card = cd.ID
		}
	}
	if _, _, err := st.OpenAlert(context.Background(), store.AlertInput{Kind: store.AlertHeldIdle, CardID: card, BookingID: f.running, Value: 35, At: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec("INSERT INTO telemetry_booking_hours (booking_id, hour_at, sampled_seconds, busy_seconds, held_idle_seconds) VALUES (?, ?, ?, ?, ?)",
		f.running, now.UTC().Truncate(time.Hour), 7200, 1800, 5400); err != nil {
		t.Fatal(err)
	}
	return f
}

func homeDoc(t *testing.T, c *servertest.Client, path string) *goquery.Document {
	t.Helper()
	r := c.Get(path)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d\n%.2000s", path, r.StatusCode, r)
	}
	return r.Doc(t)
}

// TestHomeShowsMyBookingsQuotasAndAlerts: the member's home lists their
// running and upcoming bookings with the time left, each with the one
// action the rules allow now — release for the running one, cancel for
// those not started — as a POST form with the CSRF token; their team's
// quota left and its expiry; the alert open on their booking. A member
// sees no manager's figures. The release from the home page comes back
// to it.
func TestHomeShowsMyBookingsQuotasAndAlerts(t *testing.T) {
	t.Parallel()
	f := newHomeFleet(t)
	c := f.E.LoggedIn(store.RoleMember)
	doc := homeDoc(t, c, "/")
	row := func(id int64) *goquery.Selection {
		return doc.Find(`[data-testid=home-booking][data-id="` + strconv.FormatInt(id, 10) + `"]`)
	}
	if n := doc.Find(`[data-testid=home-booking]`).Length(); n != 3 {
		t.Errorf("%d bookings on the home page, want the running, the ahead and the waiting one", n)
	}
	zh := func(key string, args ...any) string { return web.T(web.LangZH, key, args...) }
	left := regexp.MustCompile(`^` + regexp.QuoteMeta(zh("home.ends_in", "")) + `(1 小时 5\d 分|2 小时 0 分)$`)
	if got := strings.TrimSpace(row(f.running).Find(`[data-testid=home-left]`).Text()); !left.MatchString(got) {
		t.Errorf("the running booking says %q, want about 2 hours left", got)
	}
	if got := strings.TrimSpace(row(f.ahead).Find(`[data-testid=home-left]`).Text()); !strings.HasSuffix(got, zh("home.starts_in", "")) {
		t.Errorf("the booking ahead says %q, want when it starts", got)
	}
	for _, c := range []struct {
		id     int64
		action string // "" for none
	}{{f.running, "release"}, {f.ahead, "cancel"}, {f.waiting, "cancel"}} {
		r := row(c.id)
		for _, a := range []string{"release", "cancel"} {
			btn := r.Find(`[data-testid=home-` + a + `]`)
			if (a == c.action) != (btn.Length() == 1) {
				t.Errorf("booking #%d offers %s: %v, want %v", c.id, a, btn.Length() == 1, a == c.action)
				continue
			}
			if btn.Length() == 0 {
				continue
			}
			form := btn.Closest("form")
			want := "/bookings/" + strconv.FormatInt(c.id, 10) + "/" + a
			if form.AttrOr("method", "") != "post" || form.AttrOr("action", "") != want || form.Find(`input[name=_csrf]`).AttrOr("value", "") == "" {
				t.Errorf("booking #%d's %s is not a POST form to %s with the CSRF token", c.id, a, want)
			}
		}
	}
	if got := row(f.running).Find(`[data-testid=home-cards]`).Text(); !regexp.MustCompile(`^gpu-01 #\d,\d$`).MatchString(got) {
		t.Errorf("the running booking's cards %q, want them by host and index (gpu-01 #i,j)", got)
	}
	quota := doc.Find(`[data-testid=home-quota]`)
	if quota.Length() != 1 {
		t.Fatalf("%d quotas on the home page, want the llm team's", quota.Length())
	}
	if got := quota.Text(); !strings.Contains(got, "llm") || !strings.Contains(got, "H800") {
		t.Errorf("the quota reads %q", got)
	}
	if got, want := quota.Find(`[data-testid=home-quota-expires]`).Text(), f.Quota.ExpiresAt.In(f.E.Cfg.TZ).Format("2006-01-02 15:04"); !strings.Contains(got, want) {
		t.Errorf("the quota's expiry reads %q, want %s", got, want)
	}
	if !strings.Contains(quota.Find(`[data-testid=home-quota-left]`).Text(), "/ 1000.0") {
		t.Errorf("the quota left reads %q, want it out of 1000.0", quota.Find(`[data-testid=home-quota-left]`).Text())
	}
	alert := doc.Find(`[data-testid=home-alert]`)
	if alert.Length() != 1 || alert.AttrOr("data-kind", "") != store.AlertHeldIdle || !strings.Contains(alert.Text(), zh("bkusage.alert.held_idle")) ||
		alert.Find(`a[href="/bookings/`+strconv.FormatInt(f.running, 10)+`"]`).Length() != 1 {
		t.Errorf("the home's alerts: %d, %q", alert.Length(), alert.Text())
	}
	if doc.Find(`[data-testid=home-manager]`).Length() != 0 {
		t.Errorf("a member is shown a manager's figures")
	}

	// One click: the release posts to the booking's release and comes home.
	r := c.PostForm("/bookings/"+strconv.FormatInt(f.running, 10)+"/release", map[string][]string{"next": {"/"}}, true)
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Fatalf("release from the home page: %d to %q, want 303 to /", r.StatusCode, r.Header.Get("Location"))
	}
	doc = homeDoc(t, c, "/")
	if got := strings.TrimSpace(doc.Find(`[data-testid=flash]`).Text()); !strings.Contains(got, "#"+strconv.FormatInt(f.running, 10)) {
		t.Errorf("after the release the home says %q", got)
	}
	if row(f.running).Length() != 0 {
		t.Errorf("the released booking is still listed")
	}
}

// TestHomeShowsAManagerTheApprovalsAndTodaysIdleHours: a manager's home
// adds the bookings waiting for their approval (with the link to them) and
// the card-hours their teams held idle today.
func TestHomeShowsAManagerTheApprovalsAndTodaysIdleHours(t *testing.T) {
	t.Parallel()
	f := newHomeFleet(t)
	doc := homeDoc(t, f.E.LoggedIn(store.RoleManager), "/")
	a := doc.Find(`[data-testid=home-approvals]`)
	if a.AttrOr("href", "") != "/approvals" || a.AttrOr("data-count", "") != "1" {
		t.Errorf("approvals on the manager's home: href %q, count %q; want /approvals, 1", a.AttrOr("href", ""), a.AttrOr("data-count", ""))
	}
	if got := doc.Find(`[data-testid=home-idle]`).AttrOr("data-hours", ""); got != "1.50" {
		t.Errorf("idle card-hours today %q, want 1.50", got)
	}
	en := homeDoc(t, f.E.LoggedIn(store.RoleManager), "/?lang=en")
	if got := en.Find(`[data-testid=home-idle] .stat-label`).Text(); got != web.T(web.LangEN, "home.idle_today") {
		t.Errorf("in English the idle figure is labelled %q", got)
	}
}
