// Package dataset builds a synthetic year of use in a cardhour database, to
// measure the ledger and the reports at scale. It lives beside the command
// that runs it (e2e/genledger), out of the product: it writes through the
// store's exported methods and, for the bulk, plain SQL on st.DB().
package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"cardhour/errs"
	"cardhour/store"
)

// Spec describes a synthetic year of use, built to measure the ledger and
// the reports at scale: a fleet, teams with tasks, bookings that never
// overlap on a card (some released early, preempted, extended or
// cancelled), an hour rollup for every card and hour, per-booking hours,
// the ledger rounds the ledger pass derives from them, and outputs.
type Spec struct {
	Cards        int       // cards in the fleet (default 500)
	Bookings     int       // bookings to place (default 50,000)
	From         time.Time // first instant of the data (default 12 months before this month, in Zone)
	Days         int       // length in days (default 365)
	Teams        int       // default 10
	TasksPerTeam int       // default 20
	Seed         uint64    // the same seed builds the same data
	Zone         *time.Location
	// Progress, when set, hears each stage's progress.
	Progress func(stage string, done, total int)
}

// Stats is what Generate wrote and how long each stage took.
type Stats struct {
	Cards           int               `json:"cards"`
	Bookings        int               `json:"bookings"`
	BookingCards    int               `json:"booking_cards"`
	HourRows        int               `json:"telemetry_hours"`
	BookingHourRows int               `json:"telemetry_booking_hours"`
	Rounds          int               `json:"ledger_rounds"`
	Outputs         int               `json:"outputs"`
	From            time.Time         `json:"from"`
	To              time.Time         `json:"to"`
	Stages          map[string]string `json:"stages"` // stage → duration
}

func (sp *Spec) defaults(now time.Time) {
	if sp.Cards <= 0 {
		sp.Cards = 500
	}
	if sp.Bookings <= 0 {
		sp.Bookings = 50_000
	}
	if sp.Days <= 0 {
		sp.Days = 365
	}
	if sp.Teams <= 0 {
		sp.Teams = 10
	}
	if sp.TasksPerTeam <= 0 {
		sp.TasksPerTeam = 20
	}
	if sp.Zone == nil {
		sp.Zone = time.UTC
	}
	if sp.From.IsZero() {
		l := now.In(sp.Zone)
		sp.From = time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, sp.Zone).AddDate(0, -12, 0)
	}
	sp.From = sp.From.UTC().Truncate(time.Hour)
	if sp.Progress == nil {
		sp.Progress = func(string, int, int) {}
	}
}

const op = "dataset.Generate"

// generator carries one run's state from stage to stage.
type generator struct {
	st    *store.Store
	spec  Spec
	stats *Stats
	rng   *rand.Rand
	actx  context.Context // as the admin
	stamp string          // tells a second data set's names apart

	typeIDs  []int64   // per genTypes entry
	cardsOf  [][]int64 // per genTypes entry
	tasks    []genTask
	bookings []genBooking
	ins      *bulkInserter
}

// Generate builds the synthetic year described by spec in st's database,
// next to whatever it holds, then runs the ledger pass over it. The
// inventory, people, tasks and quotas go through the store's own methods
// (audited, as an operator's would); the bulk — bookings, their cards, hour
// rollups, booking hours, outputs — through multi-row inserts in large
// transactions. An admin must exist; the changes are made as it.
func Generate(ctx context.Context, st *store.Store, spec Spec) (*Stats, error) {
	spec.defaults(st.Now())
	g := &generator{st: st, spec: spec,
		stats: &Stats{From: spec.From, To: spec.From.AddDate(0, 0, spec.Days), Stages: map[string]string{}},
		rng:   rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x5eed))}
	admin, err := st.FindUserByUsername(ctx, "admin")
	if err != nil {
		return nil, fmt.Errorf("%s: the admin account: %w", op, err)
	}
	g.actx = store.WithActor(ctx, store.Actor{UserID: admin.ID, Username: admin.Username})
	g.stamp = st.Now().Format("0102-1504")

	if err := g.timed("inventory", g.inventory); err != nil {
		return nil, err
	}
	if err := g.timed("teams", func() error { return g.teams(ctx) }); err != nil {
		return nil, err
	}
	// The bookings stage plans them, opens the bulk connection the later
	// stages share, and writes the bookings and their cards.
	t0 := time.Now()
	if err := g.planBookings(ctx); err != nil {
		return nil, err
	}
	ins, done, err := openBulk(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer done()
	g.ins = ins
	if err := g.writeBookings(); err != nil {
		return nil, err
	}
	g.stage("bookings", t0)
	for _, s := range []struct {
		name string
		run  func() error
	}{
		{"booking hours", g.writeBookingHours},
		{"hour rollups", g.writeHourRollups},
		{"quotas", g.createQuotas},
		{"ledger pass", func() error { return g.settleLedger(ctx) }},
		{"outputs", func() error { return g.writeOutputs(ctx) }},
	} {
		if err := g.timed(s.name, s.run); err != nil {
			return nil, err
		}
	}
	return g.stats, nil
}

// timed runs one stage and records how long it took.
func (g *generator) timed(name string, run func() error) error {
	t0 := time.Now()
	if err := run(); err != nil {
		return err
	}
	g.stage(name, t0)
	return nil
}

func (g *generator) stage(name string, start time.Time) {
	g.stats.Stages[name] = time.Since(start).Round(time.Millisecond).String()
}

// named creates a record under base, or under base+suffix when base is
// taken (a second data set in the same database).
func named[T any](base, suffix string, create func(string) (T, error)) (T, error) {
	v, err := create(base)
	if errs.Is(err, errs.Conflict) || errs.Is(err, errs.Invalid) {
		return create(base + suffix)
	}
	return v, err
}
