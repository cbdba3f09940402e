package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cardhour/notify"
	"cardhour/store"
)

func scan(t *testing.T, st *store.Store) store.ScanResult {
	t.Helper()
	r, err := st.ScanReminders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBookingRemindedBeforeItStartsAndEnds: 15 minutes before its start
// and 30 before its end, once each; an extension is reminded again before
// its new end, with the link to extend.
func TestBookingRemindedBeforeItStartsAndEnds(t *testing.T) {
	w, _ := notifyWorld(t, "sqlite", 2)
	b := w.mustBook(t, w.member, w.normal, 1, 1, 3).Booking
	if r := scan(t, w.st); r.BookingStarts != 0 {
		t.Fatalf("an hour ahead: %d start reminders", r.BookingStarts)
	}
	w.clock.Advance(50 * time.Minute)
	if r := scan(t, w.st); r.BookingStarts != 1 {
		t.Fatalf("10 minutes ahead: %+v, want one start reminder", r)
	}
	w.clock.Advance(5 * time.Minute)
	if r := scan(t, w.st); r.BookingStarts != 0 {
		t.Fatalf("again: %d start reminders", r.BookingStarts)
	}
	w.clock.Advance(100 * time.Minute) // 25 minutes before the end
	if r := scan(t, w.st); r.BookingEnds != 1 {
		t.Fatalf("25 minutes before the end: %+v, want one end reminder", r)
	}
	if _, err := w.st.ExtendBooking(as(w.member), b.ID, b.EndAt.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if r := scan(t, w.st); r.BookingEnds != 0 {
		t.Fatalf("just extended by an hour: %d end reminders", r.BookingEnds)
	}
	w.clock.Advance(time.Hour)
	if r := scan(t, w.st); r.BookingEnds != 1 {
		t.Fatalf("25 minutes before the new end: %+v, want one more", r)
	}
	ends := bells(t, w.st, w.member, notify.BookingEnds)
	if len(ends) != 2 || !strings.HasSuffix(ends[0].Link, "#extend") {
		t.Errorf("end reminders %+v, want two linking to the extend form", ends)
	}
	if n := len(bells(t, w.st, w.member, notify.BookingStarts)); n != 1 {
		t.Errorf("%d start reminders in the bell, want 1", n)
	}
}

// TestQuotaUseRemindedAt80And95: the team hears once when its quota is 80 %
// used and once at 95 %.
func TestQuotaUseRemindedAt80And95(t *testing.T) {
	w, _ := notifyWorld(t, "sqlite", 2)
	// 1000 card-hours: 2 cards × 410 h = 82 %.
	w.mustBook(t, w.member, w.normal, 2, 1, 411)
	if r := scan(t, w.st); r.QuotaLow != 1 {
		t.Fatalf("at 82 %%: %+v, want one use reminder", r)
	}
	if r := scan(t, w.st); r.QuotaLow != 0 {
		t.Fatalf("again at 82 %%: %d", r.QuotaLow)
	}
	w.mustBook(t, w.member, w.normal, 2, 411, 481) // 96 %
	if r := scan(t, w.st); r.QuotaLow != 1 {
		t.Fatalf("at 96 %%: %+v, want the 95 %% reminder", r)
	}
	var stages []any
	for _, n := range bells(t, w.st, w.manager, notify.QuotaLow) {
		stages = append(stages, n.Args()[2])
	}
	if len(stages) != 2 || stages[0] != float64(95) || stages[1] != float64(80) {
		t.Errorf("manager's use reminders at %v, want 95 then 80 (newest first)", stages)
	}
}

// TestOutputReminderADayAfterTheRound: a round without output is reminded
// a day after it ended; one with output is not.
func TestOutputReminderADayAfterTheRound(t *testing.T) {
	w, _ := notifyWorld(t, "sqlite", 2)
	silent := w.mustBook(t, w.member, w.normal, 1, 1, 2).Booking
	recorded := w.mustBook(t, w.member, w.normal, 1, 1, 2).Booking
	w.clock.Advance(3 * time.Hour)
	if _, err := w.st.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := w.st.CatchUpLedger(context.Background(), time.UTC); err != nil {
		t.Fatal(err)
	}
	q := 3.0
	if _, err := w.st.RecordOutput(as(w.member), time.UTC, recorded.ID, store.OutputInput{Quantity: &q, Unit: "epochs"}); err != nil {
		t.Fatal(err)
	}
	if r := scan(t, w.st); r.RecordOutput != 0 {
		t.Fatalf("an hour after: %d output reminders", r.RecordOutput)
	}
	w.clock.Advance(24 * time.Hour)
	if r := scan(t, w.st); r.RecordOutput != 1 {
		t.Fatalf("a day after: %+v, want one output reminder", r)
	}
	got := bells(t, w.st, w.member, notify.RecordOutput)
	if len(got) != 1 || int64(got[0].Args()[0].(float64)) != silent.ID {
		t.Errorf("output reminders %+v, want one for booking %d", got, silent.ID)
	}
}

// TestDigestOnceADayAtTheManagersMinute: the digest waits for the minute
// the manager picked, comes once a day, and counts yesterday's booked
// card-hours per task.
func TestDigestOnceADayAtTheManagersMinute(t *testing.T) {
	w, _ := notifyWorld(t, "sqlite", 2) // 08:00 UTC, the store's zone UTC; digests at 09:00
	w.mustBook(t, w.member, w.core, 2, 1, 3)
	if r := scan(t, w.st); r.Digests != 0 {
		t.Fatalf("before 09:00: %d digests", r.Digests)
	}
	w.clock.Advance(25 * time.Hour) // 09:00 the next day
	if r := scan(t, w.st); r.Digests != 1 {
		t.Fatalf("at 09:00: %+v, want the manager's digest", r)
	}
	if r := scan(t, w.st); r.Digests != 0 {
		t.Fatalf("again: %d", r.Digests)
	}
	got := bells(t, w.st, w.manager, notify.Digest)
	if len(got) != 1 {
		t.Fatalf("manager's digests %d", len(got))
	}
	args := got[0].Args()
	if args[0] != "2026-12-01" || args[1] != float64(4) || !strings.Contains(args[6].(string), `"task":"pretrain"`) {
		t.Errorf("digest args %v, want 2026-12-01 with 4 booked card-hours of pretrain", args)
	}
	w.clock.Advance(24 * time.Hour)
	if r := scan(t, w.st); r.Digests != 1 {
		t.Fatalf("the day after: %+v, want the next digest", r)
	}
	if n := len(bells(t, w.st, w.member, notify.Digest)); n != 0 {
		t.Errorf("a member got %d digests", n)
	}
}
