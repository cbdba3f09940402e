package notify

// Inside the package: drain, the sender loop the portal runs every second,
// is not reachable from outside it, and these measure it as it runs.

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"cardhour/config"
	nt "cardhour/notify"
	"cardhour/notify/notifytest"
	"cardhour/server/area"
	"cardhour/store"
	"cardhour/store/storetest"
)

// BenchmarkDeliver1000 enqueues 1,000 notices for one webhook channel of
// 6,000 a minute and times drain — ClaimOutbox, notify.Sender.Send to a
// local receiver, FinishOutbox — until every one is marked sent (issue 13:
// within 10 s). After each run the receiver must have had each notice
// once, and no rolling minute more than the channel's rate.
func BenchmarkDeliver1000(b *testing.B) {
	const n, rate = 1000, 6000
	for _, dialect := range storetest.Dialects(b) {
		b.Run(dialect, func(b *testing.B) {
			w := newDeliverWorld(b, dialect, rate)
			w.hook.Limit(rate) // the vendor's own limit: a 429 would fail a notice's first try
			ctx := context.Background()
			sent := 0
			for b.Loop() {
				b.StopTimer()
				// A store minute apart: each run's notices have the channel's
				// whole rate to themselves.
				w.clock.Advance(2 * time.Minute)
				w.enqueue(b, w.channel, sent, n)
				b.StartTimer()
				if err := w.area.Drain(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				sent += n
				w.assertDelivered(b, sent, rate)
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "notices/s")
		})
	}
}

// TestDrainKeepsChannelRate: a channel of 20 a minute with 31 notices due
// gets 20 from one drain, which then returns rather than spinning on the
// rest; none more within the minute, the 11 left a minute later.
func TestDrainKeepsChannelRate(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newDeliverWorld(t, dialect, 20)
		w.enqueue(t, w.channel, 0, 31)
		ctx := context.Background()
		drain := func(want int) {
			t.Helper()
			done := make(chan error, 1)
			go func() { done <- w.area.Drain(ctx) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("drain did not return: it spins on notices the rate holds back")
			}
			if got := len(w.hook.Received()); got != want {
				t.Fatalf("receiver has %d notices, want %d", got, want)
			}
		}
		drain(20)
		drain(20)
		w.clock.Advance(61 * time.Second)
		drain(31)
		// The minutes here are the store's clock, not the receiver's.
		w.assertDelivered(t, 31, 0)
	})
}

// TestDrainLooksPastAFullChannel: 250 notices due on a channel of 20 a
// minute, queued before 5 for another channel, fill more than a claim's
// batch; once the first channel's minute is spent, the other's still go.
func TestDrainLooksPastAFullChannel(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newDeliverWorld(t, dialect, 20)
		w.enqueue(t, w.channel, 0, 250)
		w.clock.Advance(time.Second)
		other, id := w.addChannel(t, "other hook", 6000)
		w.enqueue(t, id, 1000, 5)
		if err := w.area.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if a, b := len(w.hook.Received()), len(other.Received()); a != 20 || b != 5 {
			t.Fatalf("delivered %d on the full channel and %d on the other, want 20 and 5", a, b)
		}
	})
}

// TestDeliverLeavesANoticeWhoseLeaseRunsOut: a notice claimed so long ago
// that its lease would end during a try is not sent (whoever claims it
// next sends it); one with time left is.
func TestDeliverLeavesANoticeWhoseLeaseRunsOut(t *testing.T) {
	w := newDeliverWorld(t, store.SQLite, 20)
	w.enqueue(t, w.channel, 0, 2)
	ctx := context.Background()
	rows, err := w.st.ClaimOutbox(ctx, 10, claimLease)
	if err != nil || len(rows) != 2 {
		t.Fatalf("claimed %d, %v; want 2", len(rows), err)
	}
	if err := w.area.deliver(ctx, rows[0]); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(claimLease - sendTimeout/2)
	if err := w.area.deliver(ctx, rows[1]); err != nil {
		t.Fatal(err)
	}
	if got := w.hook.Received(); len(got) != 1 || !strings.HasSuffix(got[0].Link, rows[0].Link) {
		t.Fatalf("receiver has %d notices, want only the first", len(got))
	}
	if counts, _ := w.st.CountOutbox(ctx); counts[store.OutboxSent] != 1 || counts[store.OutboxPending] != 1 {
		t.Fatalf("outbox %v, want 1 sent and 1 pending", counts)
	}
}

// deliverWorld is a store with one system-wide webhook channel whose
// receiver runs in the test, and the notify area that sends to it.
type deliverWorld struct {
	st      *store.Store
	clock   *storetest.Clock
	area    *Area
	hook    *notifytest.Webhook
	channel int64
	admin   context.Context // the admin's, for the store calls
}

func newDeliverWorld(tb testing.TB, dialect string, rate int) *deliverWorld {
	tb.Helper()
	clock := storetest.NewClock(time.Now())
	st := storetest.MustOpenWith(tb, dialect, store.Options{Now: clock.Now})
	admin, err := st.CreateUser(store.WithActor(context.Background(), store.Actor{UserID: 1, Username: "setup"}),
		store.UserCreate{Username: "root", Password: "correct horse", Role: store.RoleAdmin})
	if err != nil {
		tb.Fatal(err)
	}
	ctx := store.WithActor(context.Background(), store.Actor{UserID: admin.ID, Username: admin.Username, Role: admin.Role})
	a := New(area.Deps{Store: st, Log: slog.New(slog.DiscardHandler),
		Config: config.Config{Addr: ":8080", Lang: "zh-CN", TZ: time.UTC, NoticeTries: 5, NoticeBackoff: time.Minute}})
	w := &deliverWorld{st: st, clock: clock, area: a, admin: ctx}
	w.hook, w.channel = w.addChannel(tb, "ops hook", rate)
	return w
}

// addChannel adds a system-wide webhook channel of rate a minute for
// booking starts, with a receiver of its own.
func (w *deliverWorld) addChannel(tb testing.TB, name string, rate int) (*notifytest.Webhook, int64) {
	tb.Helper()
	hook := notifytest.NewWebhook(tb, "s3cret")
	ch, err := w.st.CreateNotifyChannel(w.admin, store.NotifyChannelInput{Kind: string(nt.Webhook), Name: name, URL: hook.URL(),
		Secret: "s3cret", Events: []string{nt.BookingStarts}, RatePerMinute: rate, Enabled: true})
	if err != nil {
		tb.Fatal(err)
	}
	return hook, ch.ID
}

// enqueue puts n booking-start notices for channel in the outbox, as
// ScanReminders leaves them, numbered from first (the number is in each
// link, for the receiver's side of the count).
func (w *deliverWorld) enqueue(tb testing.TB, channel int64, first, n int) {
	tb.Helper()
	now := w.clock.Now()
	tx, err := w.st.DB().Begin()
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for i := first; i < first+n; i++ {
		_, err := tx.Exec(`INSERT INTO notify_outbox (dedup_key, kind, message_key, args_json, link, channel_id, channel, lang, state, next_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			fmt.Sprintf("bench:%d", i), nt.BookingStarts, "notify.booking_starts", fmt.Sprintf(`[%d,"task-%d",10]`, i, i),
			fmt.Sprintf("/bookings/%d", i), channel, string(nt.Webhook), "zh-CN", store.OutboxPending, now, now)
		if err != nil {
			tb.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// assertDelivered checks both ends after want notices: the outbox has
// them all sent, the receiver each exactly once and, unless rate is 0,
// never more than rate in a rolling minute.
func (w *deliverWorld) assertDelivered(tb testing.TB, want, rate int) {
	tb.Helper()
	counts, err := w.st.CountOutbox(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if counts[store.OutboxSent] != want || counts[store.OutboxPending] != 0 || counts[store.OutboxFailed] != 0 {
		tb.Fatalf("outbox %v, want %d sent", counts, want)
	}
	got := w.hook.Received()
	seen := map[string]bool{}
	var at []time.Time
	for _, r := range got {
		if seen[r.Link] {
			tb.Fatalf("%s arrived twice", r.Link)
		}
		seen[r.Link] = true
		at = append(at, r.At)
	}
	if len(seen) != want {
		tb.Fatalf("receiver has %d notices, want %d", len(seen), want)
	}
	if most := mostInAMinute(at); rate > 0 && most > rate {
		tb.Fatalf("%d notices arrived within one minute, the channel's rate is %d", most, rate)
	}
}

// mostInAMinute is the largest number of times within any 60 seconds.
func mostInAMinute(at []time.Time) int {
	slices.SortFunc(at, time.Time.Compare)
	most, lo := 0, 0
	for hi := range at {
		for at[hi].Sub(at[lo]) >= time.Minute {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}
