package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cardhour/notify"
	"cardhour/store"
	"cardhour/store/storetest"
)

// notifyWorld is a booking world whose manager and member have mail
// addresses and whose team has a group robot.
func notifyWorld(t *testing.T, dialect string, cards int) (*bookingWorld, *store.NotifyChannel) {
	t.Helper()
	w := newBookingWorld(t, dialect, cards)
	w.st.SetDelivery(store.Delivery{Mail: true, Lang: "zh-CN", TZ: time.UTC})
	for _, u := range []*store.User{w.manager, w.member} {
		if _, err := w.st.UpdateUser(as(w.admin), u.ID, store.UserUpdate{Email: ptr(u.Username + "@example.com")}); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := w.st.CreateNotifyChannel(as(w.manager), store.NotifyChannelInput{TeamID: &w.team.ID, Kind: string(notify.DingTalk),
		Name: "llm robot", URL: "https://oapi.dingtalk.com/robot/send?access_token=abc", Secret: "SEC123", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	return w, ch
}

// outbox lists every outbox row of kind, oldest first.
func outbox(t *testing.T, st *store.Store, kind string) []store.OutboxRow {
	t.Helper()
	rows, err := st.FindOutbox(context.Background(), store.OutboxFilter{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.OutboxRow
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Kind == kind {
			out = append(out, rows[i])
		}
	}
	return out
}

func bells(t *testing.T, st *store.Store, u *store.User, kind string) []store.Notification {
	t.Helper()
	ns, err := st.FindNotifications(context.Background(), u.ID, false, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Notification
	for _, n := range ns {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

// TestQuotaExpiryTellsEachStageOnce moves the clock through a quota's last
// 30 days, scanning twice every six hours: the manager hears at 30, 15, 7
// and 1 days, the member with a core task from 15 days on, the team's robot
// once per stage — and nothing twice.
func TestQuotaExpiryTellsEachStageOnce(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w, ch := notifyWorld(t, dialect, 2)
		end := w.quota.ExpiresAt
		for w.clock.Now().Before(end.Add(24 * time.Hour)) {
			for range 2 {
				if _, err := w.st.ScanReminders(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			w.clock.Advance(6 * time.Hour)
		}
		stages := func(rows []store.OutboxRow, match func(store.OutboxRow) bool) []int {
			var out []int
			for _, r := range rows {
				if match(r) {
					out = append(out, int(r.Args()[2].(float64)))
				}
			}
			return out
		}
		rows := outbox(t, w.st, notify.QuotaExpiring)
		robot := stages(rows, func(r store.OutboxRow) bool { return r.ChannelID != nil && *r.ChannelID == ch.ID })
		mgrMail := stages(rows, func(r store.OutboxRow) bool { return r.UserID != nil && *r.UserID == w.manager.ID })
		memMail := stages(rows, func(r store.OutboxRow) bool { return r.UserID != nil && *r.UserID == w.member.ID })
		for name, got := range map[string][]int{"robot": robot, "manager's mail": mgrMail} {
			if fmt.Sprint(got) != "[30 15 7 1]" {
				t.Errorf("%s: stages %v, want [30 15 7 1]", name, got)
			}
		}
		if fmt.Sprint(memMail) != "[15 7 1]" {
			t.Errorf("core member's mail: stages %v, want [15 7 1]", memMail)
		}
		if n := len(bells(t, w.st, w.manager, notify.QuotaExpiring)); n != 4 {
			t.Errorf("manager's bell: %d quota notices, want 4", n)
		}
		if n := len(bells(t, w.st, w.member, notify.QuotaExpiring)); n != 3 {
			t.Errorf("member's bell: %d quota notices, want 3", n)
		}
		if n := len(bells(t, w.st, w.outsider, notify.QuotaExpiring)); n != 0 {
			t.Errorf("another team's member heard of this quota %d times", n)
		}
	})
}

// TestRenewedQuotaIsRemindedAgain: a quota renewed after its 7-day notice
// is reminded again at 30 days before its new end.
func TestRenewedQuotaIsRemindedAgain(t *testing.T) {
	w, _ := notifyWorld(t, "sqlite", 2)
	w.clock.Advance(24 * 24 * time.Hour) // 6 days left
	if r, err := w.st.ScanReminders(context.Background()); err != nil || r.QuotaExpiring != 2 {
		t.Fatalf("scan at 6 days left: %+v, %v; want the notices of both teams' quotas", r, err)
	}
	q := w.quota
	in := store.QuotaInput{TeamID: q.TeamID, CardTypeID: q.CardTypeID, CardHours: q.CardHours(), ValidFrom: q.ValidFrom, ExpiresAt: q.ExpiresAt.AddDate(0, 0, 30)}
	if _, err := w.st.UpdateQuota(as(w.admin), q.ID, in); err != nil {
		t.Fatal(err)
	}
	if r, err := w.st.ScanReminders(context.Background()); err != nil || r.QuotaExpiring != 0 {
		t.Fatalf("scan after renewal, 36 days left: %+v, %v; want none", r, err)
	}
	w.clock.Advance(6*24*time.Hour + time.Hour)
	if r, err := w.st.ScanReminders(context.Background()); err != nil || r.QuotaExpiring != 1 {
		t.Fatalf("scan 30 days before the new end: %+v, %v; want its 30-day notice", r, err)
	}
	if r, _ := w.st.ScanReminders(context.Background()); r.QuotaExpiring != 0 {
		t.Fatalf("second scan after renewal told %d again", r.QuotaExpiring)
	}
}

// TestQuietHoursHoldMailAndChat: a notice during the member's quiet hours
// waits for their end on mail and chat; the bell has it at once.
func TestQuietHoursHoldMailAndChat(t *testing.T) {
	w, _ := notifyWorld(t, "sqlite", 2)
	// 08:00 UTC now; quiet 07:00–09:30.
	set, err := w.st.FindNotifySettings(context.Background(), w.member.ID)
	if err != nil {
		t.Fatal(err)
	}
	set.QuietFrom, set.QuietTo = 7*60, 9*60+30
	if _, err := w.st.UpdateNotifySettings(as(w.member), w.member.ID, *set); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(15*24*time.Hour + time.Hour) // into the 15-day stage
	if _, err := w.st.ScanReminders(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := time.Date(w.clock.Now().Year(), w.clock.Now().Month(), w.clock.Now().Day(), 9, 30, 0, 0, time.UTC)
	for _, r := range outbox(t, w.st, notify.QuotaExpiring) {
		if r.UserID != nil && *r.UserID == w.member.ID && int(r.Args()[2].(float64)) == 15 && !r.NextAt.Equal(want) {
			t.Errorf("member's 15-day mail goes at %v, want %v (end of quiet hours)", r.NextAt, want)
		}
	}
	if n := len(bells(t, w.st, w.member, notify.QuotaExpiring)); n != 1 {
		t.Errorf("member's bell: %d notices, want 1 at once", n)
	}
}

// TestSwitchedOffMailIsNotSent: a user who switched an event's mail off
// gets it in the bell only.
func TestSwitchedOffMailIsNotSent(t *testing.T) {
	w, _ := notifyWorld(t, "sqlite", 2)
	set, _ := w.st.FindNotifySettings(context.Background(), w.manager.ID)
	for i := range set.Events {
		if set.Events[i].Event == notify.QuotaExpiring {
			set.Events[i].Mail = false
		}
	}
	if _, err := w.st.UpdateNotifySettings(as(w.manager), w.manager.ID, *set); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.ScanReminders(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range outbox(t, w.st, notify.QuotaExpiring) {
		if r.Channel == string(notify.Mail) {
			t.Errorf("mail to %s enqueued though switched off", r.Address)
		}
	}
	if n := len(bells(t, w.st, w.manager, notify.QuotaExpiring)); n != 1 {
		t.Errorf("manager's bell: %d notices, want 1", n)
	}
}

// TestClaimKeepsChannelRateAndLeases: a channel of 20 a minute gives out
// 20 of 31 due notices, none while they are leased or within the minute
// they were sent, the rest a minute later; a failure after the last try
// is marked failed and admins hear of it.
func TestClaimKeepsChannelRateAndLeases(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w, _ := notifyWorld(t, dialect, 30)
		// 30 bookings starting within 15 minutes: 30 notices for the robot.
		for i := range 30 {
			w.mustBook(t, w.member, w.normal, 1, 0.1+float64(i)*0.005, 2)
		}
		w.clock.Advance(5 * time.Minute)
		if _, err := w.st.ScanReminders(context.Background()); err != nil {
			t.Fatal(err)
		}
		claim := func() []store.OutboxRow {
			rows, err := w.st.ClaimOutbox(context.Background(), 500, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			var robot []store.OutboxRow
			for _, r := range rows {
				if r.ChannelID != nil {
					robot = append(robot, r)
				}
			}
			return robot
		}
		// The robot also has the quota's 30-day notice.
		robotRows := 0
		for _, r := range append(outbox(t, w.st, notify.BookingStarts), outbox(t, w.st, notify.QuotaExpiring)...) {
			if r.ChannelID != nil {
				robotRows++
			}
		}
		if robotRows != 31 {
			t.Fatalf("%d robot notices due, want 31", robotRows)
		}
		first := claim()
		if len(first) != 20 {
			t.Fatalf("first claim: %d robot notices, want the channel's 20 a minute", len(first))
		}
		if again := claim(); len(again) != 0 {
			t.Fatalf("second claim while leased: %d, want 0", len(again))
		}
		for _, r := range first {
			if err := w.st.FinishOutbox(context.Background(), r, store.Outcome{Sent: true, Status: 200}); err != nil {
				t.Fatal(err)
			}
		}
		if again := claim(); len(again) != 0 {
			t.Fatalf("claim within the minute: %d, want 0", len(again))
		}
		w.clock.Advance(61 * time.Second)
		rest := claim()
		if len(rest) != 11 {
			t.Fatalf("claim a minute later: %d, want the 11 left", len(rest))
		}
		if err := w.st.FinishOutbox(context.Background(), rest[0], store.Outcome{Status: 200, Answer: `{"errcode":310000}`}); err != nil {
			t.Fatal(err)
		}
		failed, _ := w.st.FindOutbox(context.Background(), store.OutboxFilter{State: store.OutboxFailed})
		if len(failed) != 1 || failed[0].LastAnswer != `{"errcode":310000}` {
			t.Fatalf("failed notices %+v, want the one with its answer", failed)
		}
		if n := len(bells(t, w.st, w.admin, notify.DeliveryFailed)); n != 1 {
			t.Errorf("admin heard of the failure %d times, want 1", n)
		}
	})
}

// TestTwoStoresScanningAtOnceTellOnce: two processes (two stores on one
// database) scanning at the same moments tell each reminder once: the
// mark is taken in the transaction that tells, so the loser of a race
// tells nothing.
func TestTwoStoresScanningAtOnceTellOnce(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
		one, two := twoStores(t, dialect, clock)
		w := buildBookingWorld(t, one, clock, 1)
		for _, st := range []*store.Store{one, two} {
			st.SetDelivery(store.Delivery{Mail: true, Lang: "zh-CN", TZ: time.UTC})
		}
		if _, err := one.UpdateUser(as(w.admin), w.manager.ID, store.UserUpdate{Email: ptr("boss@example.com")}); err != nil {
			t.Fatal(err)
		}
		for w.clock.Now().Before(w.quota.ExpiresAt) {
			var wg sync.WaitGroup
			for _, st := range []*store.Store{one, two, one, two} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := st.ScanReminders(context.Background()); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			w.clock.Advance(12 * time.Hour)
		}
		if n := len(bells(t, one, w.manager, notify.QuotaExpiring)); n != 4 {
			t.Errorf("manager's bell: %d quota notices from two scanning stores, want 4", n)
		}
		mails := 0
		for _, r := range outbox(t, one, notify.QuotaExpiring) {
			if r.Channel == string(notify.Mail) {
				mails++
			}
		}
		if mails != 4 {
			t.Errorf("%d mails enqueued, want 4", mails)
		}
	})
}
