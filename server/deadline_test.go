package server_test

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// quotaUsed is the card-seconds the quota's running total says are drawn.
func quotaUsed(t *testing.T, f *servertest.Fleet) int64 {
	t.Helper()
	var used int64
	if err := f.E.St.DB().QueryRow("SELECT used_card_seconds FROM quotas WHERE id = ?", f.Quota.ID).Scan(&used); err != nil {
		t.Fatal(err)
	}
	return used
}

// TestBookingAnswers503WhenTheDatabaseHangs: a booking whose transaction
// cannot start (here another process holds SQLite's write lock, as a stuck
// writer or a frozen database would) answers 503 at the request's deadline
// — not when the lock goes, with 201 — and, its client gone, writes
// nothing when the database comes back; the next booking goes through.
func TestBookingAnswers503WhenTheDatabaseHangs(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{Vars: map[string]string{"CARDHOUR_REQUEST_TIMEOUT": "1s"}}, 4, 1000)
	member := f.Token(store.RoleMember)
	before, used := f.Counts(), quotaUsed(t, f)

	other, err := sql.Open("sqlite", "file:"+filepath.Join(f.E.Cfg.DataDir, "cardhour.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	lock, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(4 * time.Second)
		_, _ = lock.ExecContext(ctx, "ROLLBACK")
	}()

	// Others book meanwhile: every one is refused at its deadline, and the
	// log says so once, not once each.
	var wg sync.WaitGroup
	statuses := make([]int, 20)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := f.E.Client()
			statuses[i] = c.APICall(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 1, float64(10+i), float64(11+i))).StatusCode
		}()
	}
	start := time.Now()
	r := f.C.APICall(http.MethodPost, "/api/v1/bookings?lang=en", member, f.BookingBody(f.Normal.ID, "H800", 2, 0, 2))
	took := time.Since(start)
	e := servertest.MustAPIError(t, r, http.StatusServiceUnavailable, "unavailable")
	if want := web.T(web.LangEN, "error.timeout_write", 1); e.Error.Message != want {
		t.Errorf("message %q, want %q", e.Error.Message, want)
	}
	if took > 3*time.Second {
		t.Errorf("the booking answered after %s, want about the 1 s deadline: it waited for the database", took.Round(time.Millisecond))
	}
	if r.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusServiceUnavailable {
			t.Errorf("concurrent booking %d: %d, want 503", i, s)
		}
	}
	if n := strings.Count(f.E.Logs.String(), "msg=unavailable"); n != 1 {
		t.Errorf("21 refused bookings logged %d refusal lines, want 1 (the rest are summed up every 10 s)", n)
	}
	<-released

	// The booking's batch ends once the lock goes, before the next write of
	// the card type can start; whatever it did, it did whole. Its client
	// was told it failed, so it must have done nothing: after the next
	// booking of two cards there is one booking more, not two.
	ok := f.C.APICall(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 2, 3, 5))
	b := servertest.Decode[servertest.Booking](t, ok, http.StatusCreated)
	got := f.Counts()
	if got.Bookings != before.Bookings+1 || got.BookingCards != before.BookingCards+2 {
		t.Errorf("rows after the timed-out booking and one more of two cards: %+v → %+v, want one booking more", before, got)
	}
	if want := used + 2*2*3600; quotaUsed(t, f) != want {
		t.Errorf("quota used %d → %d, want %d (the second booking's 4 card-hours only)", used, quotaUsed(t, f), want)
	}
	if b.Start != f.At(3) {
		t.Errorf("the booking written is %s–%s, want the second one", b.Start, b.End)
	}
}
