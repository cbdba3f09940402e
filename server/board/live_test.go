package board

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cardhour/config"
	"cardhour/schedule"
	"cardhour/server/area"
	"cardhour/store"
	"cardhour/store/storetest"
	"cardhour/telemetry"
)

// autoWorld is a store with one active booking of two cards, and a live
// side whose fleet believes the booking began two hours ago.
type autoWorld struct {
	st      *store.Store
	l       *live
	booking *store.Booking
	owner   *store.User
	cards   []string
}

func newAutoWorld(t *testing.T, limit time.Duration) *autoWorld {
	t.Helper()
	st := storetest.MustOpen(t, store.SQLite)
	bg := context.Background()
	sys := store.WithActor(bg, store.Actor{Username: "test"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	admin, err := st.CreateUser(sys, store.UserCreate{Username: "root", Password: "password-root", Role: store.RoleAdmin})
	must(err)
	owner, err := st.CreateUser(sys, store.UserCreate{Username: "dev", Password: "password-dev", Role: store.RoleMember})
	must(err)
	as := store.WithActor(bg, store.Actor{UserID: admin.ID, Username: "root"})
	team, err := st.CreateTeam(as, store.TeamInput{Name: "llm"})
	must(err)
	_, err = st.SetMembership(as, team.ID, owner.ID, store.TeamRoleMember)
	must(err)
	ct, err := st.CreateCardType(as, store.CardTypeInput{Name: "H800", VRAMGiB: 80, TFLOPSBF16: 989, PriceFen: 2200})
	must(err)
	host, err := st.CreateHost(as, store.HostInput{Name: "gpu-01"})
	must(err)
	for i := 0; i < 2; i++ {
		_, err := st.CreateCard(as, store.CardInput{UUID: fmt.Sprintf("GPU-0000000%d-aaaa-bbbb-cccc-00000000000%d", i, i), GPUIndex: i, HostID: host.ID, CardTypeID: ct.ID})
		must(err)
	}
	now := time.Now()
	_, err = st.CreateQuota(as, store.QuotaInput{TeamID: team.ID, CardTypeID: ct.ID, CardHours: 1000, ValidFrom: now.Add(-time.Hour), ExpiresAt: now.Add(30 * 24 * time.Hour)})
	must(err)
	asOwner := store.WithActor(bg, store.Actor{UserID: owner.ID, Username: "dev"})
	task, err := st.CreateTask(asOwner, store.TaskInput{TeamID: team.ID, Name: "pretrain", Priority: schedule.Normal, EstimateCardHours: 100, DataReadiness: schedule.DataReady, VRAMGiB: 40, Precision: "bf16"})
	must(err)
	res, err := st.CreateBooking(asOwner, store.BookingRequest{TaskID: task.ID, CardTypeID: ct.ID, Count: 2, Start: now, End: now.Add(4 * time.Hour)})
	must(err)

	cfg, err := config.Load("serve", nil, func(k string) string {
		return map[string]string{"CARDHOUR_AUTO_RELEASE_MINUTES": fmt.Sprint(int(limit.Minutes())), "CARDHOUR_SIMULATOR": "false"}[k]
	}, io.Discard)
	must(err)
	a := New(area.Deps{Store: st, Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, prometheus.NewRegistry())
	must(a.live.refreshInventory(bg))
	return &autoWorld{st: st, l: a.live, booking: res.Booking, owner: owner, cards: res.Cards}
}

// idle makes the fleet see the booking's cards quiet for d, as if the
// booking had begun two hours ago.
func (w *autoWorld) idle(d time.Duration) {
	now := time.Now()
	hold := telemetry.Hold{BookingID: w.booking.ID, UserID: w.owner.ID, Start: now.Add(-2 * time.Hour), End: w.booking.EndAt}
	w.l.fleet.SetHolds(map[string]telemetry.Hold{w.cards[0]: hold, w.cards[1]: hold})
	for at := now.Add(-d); !at.After(now); at = at.Add(30 * time.Second) {
		var batch []telemetry.Sample
		for _, u := range w.cards {
			util, mem, total := 1.0, 1000.0, 81559.0
			batch = append(batch, telemetry.Sample{UUID: u, At: at, UtilPct: &util, MemUsedMiB: &mem, MemTotalMiB: &total})
		}
		w.l.fleet.Ingest(batch, telemetry.SourceAgent, now)
	}
}

func (w *autoWorld) notes(t *testing.T) []string {
	t.Helper()
	ns, err := w.st.FindNotifications(context.Background(), w.owner.ID, false, 50)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, n := range ns {
		keys = append(keys, n.MessageKey)
	}
	return keys
}

func TestAutoReleaseWarnsThenReleasesAnIdleBooking(t *testing.T) {
	w := newAutoWorld(t, time.Hour)
	ctx := context.Background()
	// 50 quiet minutes of a 60-minute limit: past the warning (45), not the release.
	w.idle(50 * time.Minute)
	if err := w.l.autoRelease(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := w.st.FindBookingByID(ctx, w.booking.ID)
	if err != nil || b.State != store.BookingActive && b.State != store.BookingConfirmed {
		t.Fatalf("after 50 idle minutes the booking is %s (%v), want it still held", b.State, err)
	}
	if keys := w.notes(t); len(keys) != 1 || keys[0] != "notify.alert_release_warned" {
		t.Errorf("owner's notifications %v, want one warning", keys)
	}
	// Again a little later: no second warning.
	if err := w.l.autoRelease(ctx); err != nil {
		t.Fatal(err)
	}
	if keys := w.notes(t); len(keys) != 1 {
		t.Errorf("warned again: %v", keys)
	}
	// Another booking, quiet for 70 minutes: warned at once, released once
	// the warning has stood its 15 minutes and the cards are still quiet.
	w = newAutoWorld(t, time.Hour)
	w.idle(70 * time.Minute)
	if err := w.l.autoRelease(ctx); err != nil {
		t.Fatal(err)
	}
	w.l.warned[w.booking.ID] = time.Now().Add(-16 * time.Minute)
	w.idle(0) // the loop reloaded the real holds; put back the two-hour-old one
	if err := w.l.autoRelease(ctx); err != nil {
		t.Fatal(err)
	}
	b, _ = w.st.FindBookingByID(ctx, w.booking.ID)
	if b.State != store.BookingReleased {
		t.Errorf("after 70 idle minutes the booking is %s, want released", b.State)
	}
	if keys := w.notes(t); len(keys) != 2 || keys[0] != "notify.alert_released" || keys[1] != "notify.alert_release_warned" {
		t.Errorf("owner's notifications %v, want the warning, then the release", keys)
	}
}

func TestAutoReleaseNeverReleasesWithoutAWarningFirst(t *testing.T) {
	w := newAutoWorld(t, time.Hour)
	ctx := context.Background()
	// Found idle far past the limit (the portal was down): warned now, kept.
	w.idle(3 * time.Hour)
	if err := w.l.autoRelease(ctx); err != nil {
		t.Fatal(err)
	}
	if b, _ := w.st.FindBookingByID(ctx, w.booking.ID); b.State == store.BookingReleased {
		t.Error("released without a warning first")
	}
	if keys := w.notes(t); len(keys) != 1 || keys[0] != "notify.alert_release_warned" {
		t.Errorf("owner's notifications %v, want the warning", keys)
	}
}

func TestAutoReleaseLeavesWorkingOrSilentBookingsAlone(t *testing.T) {
	w := newAutoWorld(t, time.Hour)
	ctx := context.Background()
	w.idle(50 * time.Minute)
	if err := w.l.autoRelease(ctx); err != nil {
		t.Fatal(err)
	}
	// One card gets to work: the warning is withdrawn.
	util := 80.0
	w.l.fleet.Ingest([]telemetry.Sample{{UUID: w.cards[0], At: time.Now().Add(time.Second), UtilPct: &util}}, telemetry.SourceAgent, time.Now().Add(time.Second))
	if err := w.l.autoRelease(ctx); err != nil {
		t.Fatal(err)
	}
	alerts, err := w.st.FindBookingAlerts(ctx, w.booking.ID)
	if err != nil || len(alerts) != 1 || alerts[0].EndedAt == nil {
		t.Errorf("warning after work resumed: %+v %v, want it closed", alerts, err)
	}
	// Silence (no samples for the offline limit) is not idleness.
	w.l.fleet.Sweep(time.Now().Add(2 * time.Minute))
	if got := w.l.fleet.IdleBookings(time.Now().Add(2 * time.Minute)); len(got) != 0 {
		t.Errorf("offline cards counted as idle: %+v", got)
	}
	b, _ := w.st.FindBookingByID(ctx, w.booking.ID)
	if b.State == store.BookingReleased {
		t.Error("a working booking was released")
	}
}

func TestAutoReleaseWarnAt(t *testing.T) {
	for limit, want := range map[time.Duration]time.Duration{
		10 * time.Minute: 5 * time.Minute,  // half, when 15 minutes would be most of it
		time.Hour:        45 * time.Minute, // 15 minutes ahead
		4 * time.Hour:    225 * time.Minute,
	} {
		if got := autoReleaseWarnAt(limit); got != want {
			t.Errorf("limit %v: warn at %v, want %v", limit, got, want)
		}
	}
}
