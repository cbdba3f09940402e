package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"cardhour/errs"
	"cardhour/schedule"
)

// DatasetSpec describes a synthetic year of use, built to measure the
// ledger and the reports at scale: a fleet, teams with tasks, bookings that
// never overlap on a card (some released early, preempted, extended or
// cancelled), an hour rollup for every card and hour, per-booking hours,
// the ledger rounds the ledger pass derives from them, and outputs.
type DatasetSpec struct {
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

// DatasetStats is what GenerateLedgerDataset wrote and how long each stage
// took.
type DatasetStats struct {
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

func (sp *DatasetSpec) defaults(now time.Time) {
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

// genType is a card type of the synthetic fleet.
type genType struct {
	name     string
	vram     int
	priceFen int64
	share    float64 // of the fleet's cards
}

var genTypes = []genType{
	{"H800 80GB", 80, 2200, 0.4},
	{"A800 80GB", 80, 1200, 0.3},
	{"L40S 48GB", 48, 700, 0.2},
	{"RTX 4090 24GB", 24, 350, 0.1},
}

// genUnits are the output units of each task kind, with a plausible amount
// per booked card-hour.
var genUnits = map[string]struct {
	unit    string
	perHour float64
}{
	TaskKindPretrain:  {"B tokens", 0.012},
	TaskKindFinetune:  {"epochs", 0.05},
	TaskKindEval:      {"eval runs", 0.4},
	TaskKindInference: {"M requests", 0.9},
	TaskKindData:      {"TB processed", 0.02},
	TaskKindOther:     {"experiments", 0.1},
}

// genBooking is a booking of the synthetic year.
type genBooking struct {
	id, task, team, user, cardType int64
	priority, state                string
	cards                          []int64
	start, end                     time.Time // the window (extensions included)
	actualEnd                      time.Time
	price                          int64
	busy, idle                     float64 // shares of held time
	submitted                      time.Time
}

// GenerateLedgerDataset builds the synthetic year described by spec in this
// database, next to whatever it holds, then runs the ledger pass over it.
// The inventory, people, tasks and quotas go through the store's own
// methods (audited, as an operator's would); the bulk — bookings, their
// cards, hour rollups, booking hours, outputs — through multi-row inserts
// in large transactions. An admin must exist; the changes are made as it.
func (s *Store) GenerateLedgerDataset(ctx context.Context, spec DatasetSpec) (*DatasetStats, error) {
	const op = "store.GenerateLedgerDataset"
	spec.defaults(s.now())
	st := &DatasetStats{From: spec.From, To: spec.From.AddDate(0, 0, spec.Days), Stages: map[string]string{}}
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x5eed))
	stage := func(name string, start time.Time) {
		st.Stages[name] = time.Since(start).Round(time.Millisecond).String()
	}

	admin, err := s.FindUserByUsername(ctx, "admin")
	if err != nil {
		return nil, fmt.Errorf("%s: the admin account: %w", op, err)
	}
	actx := WithActor(ctx, Actor{UserID: admin.ID, Username: admin.Username})
	stamp := s.now().Format("0102-1504")

	// Inventory.
	t0 := time.Now()
	typeIDs := make([]int64, len(genTypes))
	cardsOf := make([][]int64, len(genTypes))
	for i, g := range genTypes {
		ct, err := named(g.name, " "+stamp, func(name string) (*CardType, error) {
			return s.CreateCardType(actx, CardTypeInput{Name: name, VRAMGiB: g.vram, TFLOPSBF16: 300, PriceFen: g.priceFen})
		})
		if err != nil {
			return nil, fmt.Errorf("%s: card type: %w", op, err)
		}
		typeIDs[i] = ct.ID
	}
	var host *Host
	for n := 0; n < spec.Cards; n++ {
		if n%8 == 0 {
			host, err = named(fmt.Sprintf("gen-%03d", n/8+1), "-"+stamp, func(name string) (*Host, error) {
				return s.CreateHost(actx, HostInput{Name: name, Zone: "gen"})
			})
			if err != nil {
				return nil, fmt.Errorf("%s: host: %w", op, err)
			}
		}
		ti := pickType(float64(n) / float64(spec.Cards))
		c, err := s.CreateCard(actx, CardInput{UUID: fmt.Sprintf("GPU-%08x-%04x-4000-8000-%012x", spec.Seed&0xffffffff, n, s.now().UnixNano()&0xffffffffffff+int64(n)),
			GPUIndex: n % 8, HostID: host.ID, CardTypeID: typeIDs[ti], Status: CardActive})
		if err != nil {
			return nil, fmt.Errorf("%s: card: %w", op, err)
		}
		cardsOf[ti] = append(cardsOf[ti], c.ID)
		spec.Progress("inventory", n+1, spec.Cards)
	}
	st.Cards = spec.Cards
	stage("inventory", t0)

	// Teams, people, tasks.
	t0 = time.Now()
	type genTask struct {
		id, team int64
		kind     string
		priority string
		users    []int64
		types    []int
	}
	var tasks []genTask
	for ti := 0; ti < spec.Teams; ti++ {
		team, err := named(fmt.Sprintf("GEN 团队 %02d", ti+1), " "+stamp, func(name string) (*Team, error) {
			return s.CreateTeam(actx, TeamInput{Name: name})
		})
		if err != nil {
			return nil, fmt.Errorf("%s: team: %w", op, err)
		}
		var members []*User
		for ui, role := range []string{RoleManager, RoleMember, RoleMember} {
			u, err := named(fmt.Sprintf("gen-t%02d-%d", ti+1, ui), "-"+stamp, func(name string) (*User, error) {
				return s.CreateUser(actx, UserCreate{Username: name, DisplayName: fmt.Sprintf("GEN 用户 %02d-%d", ti+1, ui),
					Password: "cardhour-gen", Role: role})
			})
			if err != nil {
				return nil, fmt.Errorf("%s: user: %w", op, err)
			}
			teamRole := TeamRoleMember
			if role == RoleManager {
				teamRole = TeamRoleManager
			}
			if _, err := s.SetMembership(actx, team.ID, u.ID, teamRole); err != nil {
				return nil, fmt.Errorf("%s: membership: %w", op, err)
			}
			members = append(members, u)
		}
		types := []int{ti % len(genTypes), (ti + 1) % len(genTypes)}
		for k := 0; k < spec.TasksPerTeam; k++ {
			kind := TaskKinds[k%len(TaskKinds)]
			prio := schedule.Normal
			switch k % 5 {
			case 0:
				prio = schedule.Core
			case 4:
				prio = schedule.Backfill
			}
			author := members[1+k%2]
			t, err := s.CreateTask(WithActor(ctx, Actor{UserID: author.ID, Username: author.Username}), TaskInput{TeamID: team.ID,
				Name: fmt.Sprintf("GEN %s 任务 %02d", kind, k+1), Priority: prio, EstimateCardHours: 1000, DataReadiness: schedule.DataReady})
			if err != nil {
				return nil, fmt.Errorf("%s: task: %w", op, err)
			}
			if err := s.read(ctx).Exec("UPDATE tasks SET kind = ? WHERE id = ?", kind, t.ID).Error; err != nil {
				return nil, translate(op, err)
			}
			tasks = append(tasks, genTask{id: t.ID, team: team.ID, kind: kind, priority: prio,
				users: []int64{members[0].ID, members[1].ID, members[2].ID}, types: types})
		}
		spec.Progress("teams", ti+1, spec.Teams)
	}
	stage("teams", t0)

	// Bookings, placed in start order on free cards of their type.
	t0 = time.Now()
	var nextID int64
	if err := s.read(ctx).Raw("SELECT COALESCE(MAX(id), 0) FROM bookings").Row().Scan(&nextID); err != nil {
		return nil, translate(op, err)
	}
	yearEnd := st.To
	span := yearEnd.Sub(spec.From)
	// Some bookings would run past the end: draw more starts than needed,
	// place them all, then drop the surplus at random (dropping a booking
	// never makes two overlap), so the whole year stays evenly covered.
	starts := make([]time.Time, spec.Bookings+spec.Bookings/20+10)
	for i := range starts {
		starts[i] = spec.From.Add(time.Duration(rng.Int64N(int64(span - 2*time.Hour)))).Truncate(time.Minute)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	freeAt := make([]map[int64]time.Time, len(genTypes))
	for i := range freeAt {
		freeAt[i] = map[int64]time.Time{}
		for _, c := range cardsOf[i] {
			freeAt[i][c] = spec.From
		}
	}
	bookings := make([]genBooking, 0, spec.Bookings)
	for i, start := range starts {
		task := tasks[rng.IntN(len(tasks))]
		ti := task.types[rng.IntN(len(task.types))]
		if len(cardsOf[ti]) == 0 {
			continue
		}
		count := []int{1, 1, 2, 2, 4, 8}[rng.IntN(6)]
		count = min(count, len(cardsOf[ti]))
		hours := math.Min(72, math.Max(1, math.Exp(rng.NormFloat64()*0.8+2.6)))
		dur := time.Duration(hours * float64(time.Hour)).Truncate(time.Minute)
		// The count cards free soonest; the booking waits for the last.
		pool := cardsOf[ti]
		order := make([]int64, len(pool))
		copy(order, pool)
		sort.Slice(order, func(a, b int) bool {
			fa, fb := freeAt[ti][order[a]], freeAt[ti][order[b]]
			if !fa.Equal(fb) {
				return fa.Before(fb)
			}
			return order[a] < order[b]
		})
		chosen := order[:count]
		if last := freeAt[ti][chosen[count-1]]; last.After(start) {
			start = last
		}
		end := start.Add(dur)
		if !end.Before(yearEnd) {
			continue
		}
		nextID++
		b := genBooking{id: nextID, task: task.id, team: task.team, user: task.users[rng.IntN(3)], cardType: typeIDs[ti],
			priority: task.priority, state: BookingCompleted, cards: append([]int64(nil), chosen...), start: start, end: end,
			actualEnd: end, price: genTypes[ti].priceFen, submitted: start.Add(-time.Duration(rng.IntN(72*60)) * time.Minute)}
		switch x := rng.Float64(); {
		case x < 0.12: // released early
			b.state = BookingReleased
			b.actualEnd = start.Add(time.Duration(float64(dur) * (0.2 + 0.7*rng.Float64()))).Truncate(time.Second)
		case x < 0.16 && task.priority == schedule.Backfill: // preempted by a core booking
			b.state = BookingPreempted
			b.actualEnd = start.Add(time.Duration(float64(dur) * (0.1 + 0.8*rng.Float64()))).Truncate(time.Minute)
		case x < 0.24: // extended: a longer window, completed
			b.end = end.Add(time.Duration(1+rng.IntN(8)) * time.Hour)
			if !b.end.Before(yearEnd) {
				b.end = end
			}
			b.actualEnd = b.end
		case x < 0.28: // cancelled before it began: held nothing
			b.state = BookingCancelled
			b.actualEnd = start
		}
		if rng.Float64() < 0.15 {
			b.busy = 0.05 + 0.35*rng.Float64() // an idle-heavy round ("空转")
		} else {
			b.busy = 0.6 + 0.38*rng.Float64()
		}
		b.idle = (1 - b.busy) * (0.5 + 0.4*rng.Float64())
		if b.state != BookingCancelled {
			for _, c := range b.cards {
				freeAt[ti][c] = b.actualEnd
			}
		}
		bookings = append(bookings, b)
		if i%1000 == 0 {
			spec.Progress("plan", i, len(starts))
		}
	}
	if surplus := len(bookings) - spec.Bookings; surplus > 0 {
		drop := map[int]bool{}
		for _, i := range rng.Perm(len(bookings))[:surplus] {
			drop[i] = true
		}
		kept := bookings[:0]
		for i, b := range bookings {
			if !drop[i] {
				kept = append(kept, b)
			}
		}
		bookings = kept
	}

	conn, err := s.sqlDB.Conn(ctx)
	if err != nil {
		return nil, translate(op, err)
	}
	defer conn.Close()
	if s.dialect == SQLite {
		// The indexes of 4.4 M hour rows outgrow SQLite's default page cache
		// (2 MB) and every insert would then reread pages: give this
		// connection room for them while it loads, and take it back after.
		if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = -524288"); err != nil {
			return nil, translate(op, err)
		}
		defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA cache_size = -2000") }()
	}
	ins := &bulkInserter{ctx: ctx, conn: conn, mysql: s.dialect == MySQL}

	// Bookings and their cards.
	bookingCols := []string{"id", "task_id", "team_id", "user_id", "card_type_id", "card_count", "start_at", "end_at", "state",
		"wait_reason", "kind", "priority", "price_fen", "submitted_at", "confirmed_at", "ended_at", "state_note", "created_at", "updated_at"}
	if err := ins.begin("bookings", bookingCols); err != nil {
		return nil, translate(op, err)
	}
	for i, b := range bookings {
		kind := KindAdvance
		if b.submitted.After(b.start.Add(-5 * time.Minute)) {
			kind = KindOnDemand
		}
		var ended any = b.actualEnd
		note := ""
		if b.state == BookingPreempted {
			note = "booking #0 (generated)"
		}
		if err := ins.add(b.id, b.task, b.team, b.user, b.cardType, len(b.cards), b.start, b.end, b.state, "", kind, b.priority,
			b.price, b.submitted, b.submitted, ended, note, b.submitted, b.actualEnd); err != nil {
			return nil, translate(op, err)
		}
		if i%5000 == 0 {
			spec.Progress("bookings", i, len(bookings))
		}
	}
	if err := ins.end(); err != nil {
		return nil, translate(op, err)
	}
	if err := ins.begin("booking_cards", []string{"booking_id", "card_id", "card_type_id", "start_at", "end_at", "held"}); err != nil {
		return nil, translate(op, err)
	}
	for _, b := range bookings {
		held := b.state != BookingCancelled
		end := b.end
		if b.state == BookingReleased || b.state == BookingPreempted {
			end = b.actualEnd
		}
		for _, c := range b.cards {
			if err := ins.add(b.id, c, b.cardType, b.start, end, held); err != nil {
				return nil, translate(op, err)
			}
			st.BookingCards++
		}
	}
	if err := ins.end(); err != nil {
		return nil, translate(op, err)
	}
	st.Bookings = len(bookings)
	stage("bookings", t0)

	// Booking hours and usage totals.
	t0 = time.Now()
	if err := ins.begin("telemetry_booking_hours", []string{"booking_id", "hour_at", "sampled_seconds", "busy_seconds", "held_idle_seconds"}); err != nil {
		return nil, translate(op, err)
	}
	type usage struct{ sampled, busy, idle float64 }
	totals := make([]usage, len(bookings))
	for i, b := range bookings {
		if b.state == BookingCancelled {
			continue
		}
		n := float64(len(b.cards))
		for h := b.start.Truncate(time.Hour); h.Before(b.actualEnd); h = h.Add(time.Hour) {
			held := overlapSeconds(b.start, b.actualEnd, h, h.Add(time.Hour))
			if held <= 0 {
				continue
			}
			busy, idle := genShares(b, h)
			u := usage{held * n, held * n * busy, held * n * idle}
			totals[i].sampled += u.sampled
			totals[i].busy += u.busy
			totals[i].idle += u.idle
			if err := ins.add(b.id, h, u.sampled, u.busy, u.idle); err != nil {
				return nil, translate(op, err)
			}
			st.BookingHourRows++
		}
		if i%5000 == 0 {
			spec.Progress("booking hours", i, len(bookings))
		}
	}
	if err := ins.end(); err != nil {
		return nil, translate(op, err)
	}
	if err := ins.begin("telemetry_booking_usage", []string{"booking_id", "sampled_seconds", "busy_seconds", "held_idle_seconds", "updated_at"}); err != nil {
		return nil, translate(op, err)
	}
	for i, b := range bookings {
		if b.state == BookingCancelled {
			continue
		}
		if err := ins.add(b.id, totals[i].sampled, totals[i].busy, totals[i].idle, b.actualEnd); err != nil {
			return nil, translate(op, err)
		}
	}
	if err := ins.end(); err != nil {
		return nil, translate(op, err)
	}
	stage("booking hours", t0)

	// An hour rollup for every card and hour, consistent with the bookings,
	// written hour by hour as telemetry arrives: the hour index then grows
	// at its end, and the (card, hour) key in one short run per card,
	// which keeps the pages either touches few enough to stay cached.
	t0 = time.Now()
	type cardState struct {
		id       int64
		memTotal float64
		list     []int // its bookings, in start order
		next     int
	}
	var cards []*cardState
	at := map[int64]*cardState{}
	for ti, cs := range cardsOf {
		for _, c := range cs {
			cs := &cardState{id: c, memTotal: float64(genTypes[ti].vram) * 1024}
			cards = append(cards, cs)
			at[c] = cs
		}
	}
	for i, b := range bookings {
		if b.state == BookingCancelled {
			continue
		}
		for _, c := range b.cards {
			at[c].list = append(at[c].list, i)
		}
	}
	if err := ins.begin("telemetry_hours", append([]string{"card_id", "hour_at"}, rollupCols...)); err != nil {
		return nil, translate(op, err)
	}
	hoursN := int(span / time.Hour)
	for h := 0; h < hoursN; h++ {
		from := spec.From.Add(time.Duration(h) * time.Hour)
		to := from.Add(time.Hour)
		for _, cs := range cards {
			var held, busy, idle float64
			for cs.next < len(cs.list) && !bookings[cs.list[cs.next]].actualEnd.After(from) {
				cs.next++
			}
			for k := cs.next; k < len(cs.list); k++ {
				b := bookings[cs.list[k]]
				if !b.start.Before(to) {
					break
				}
				o := overlapSeconds(b.start, b.actualEnd, from, to)
				if o <= 0 {
					continue
				}
				bs, is := genShares(b, from)
				held += o
				busy += o * bs
				idle += o * is
			}
			const samples = 720 // one every 5 s
			util := 100 * busy / 3600
			memMax := cs.memTotal * math.Min(0.95, 0.05+0.9*busy/3600+0.3*held/3600)
			if err := ins.add(cs.id, from, samples, util*samples, samples, math.Min(100, util*1.4), memMax, cs.memTotal,
				3600.0, busy, 0.0, held, idle); err != nil {
				return nil, translate(op, err)
			}
			st.HourRows++
		}
		if h%24 == 0 {
			spec.Progress("hour rollups", h, hoursN)
		}
	}
	if err := ins.end(); err != nil {
		return nil, translate(op, err)
	}
	stage("hour rollups", t0)

	// Quotas: each team's card types, per calendar quarter in the zone, a
	// fifth over what it booked.
	t0 = time.Now()
	type qKey struct {
		team, cardType int64
		quarter        time.Time
	}
	quarterOf := func(t time.Time) time.Time {
		l := t.In(spec.Zone)
		return time.Date(l.Year(), l.Month()-(l.Month()-1)%3, 1, 0, 0, 0, 0, spec.Zone)
	}
	used := map[qKey]int64{}
	for _, b := range bookings {
		if b.state == BookingCancelled {
			continue
		}
		used[qKey{b.team, b.cardType, quarterOf(b.start)}] += schedule.CardSeconds(len(b.cards), b.start, b.actualEnd)
	}
	keys := make([]qKey, 0, len(used))
	for k := range used {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.team != b.team {
			return a.team < b.team
		}
		if a.cardType != b.cardType {
			return a.cardType < b.cardType
		}
		return a.quarter.Before(b.quarter)
	})
	for _, k := range keys {
		if _, err := s.CreateQuota(actx, QuotaInput{TeamID: k.team, CardTypeID: k.cardType, CardHours: math.Ceil(float64(used[k]) * 1.2 / 3600),
			ValidFrom: k.quarter, ExpiresAt: k.quarter.AddDate(0, 3, 0), Note: "generated"}); err != nil {
			return nil, fmt.Errorf("%s: quota: %w", op, err)
		}
	}
	stage("quotas", t0)

	// The ledger pass, as the server's ticker runs it.
	t0 = time.Now()
	pass, err := s.SettleLedger(ctx, LedgerPassOptions{Zone: spec.Zone, Batch: 1000})
	if err != nil {
		return nil, err
	}
	st.Rounds = pass.Added
	stage("ledger pass", t0)

	// Outputs for three rounds in five, a few corrected.
	t0 = time.Now()
	var nextOut int64
	if err := s.read(ctx).Raw("SELECT COALESCE(MAX(id), 0) FROM ledger_outputs").Row().Scan(&nextOut); err != nil {
		return nil, translate(op, err)
	}
	kindOf := map[int64]string{}
	for _, t := range tasks {
		kindOf[t.id] = t.kind
	}
	if err := ins.begin("ledger_outputs", []string{"id", "booking_id", "quantity", "unit", "note", "corrects_id", "created_by", "created_at"}); err != nil {
		return nil, translate(op, err)
	}
	for _, b := range bookings {
		if b.state == BookingCancelled || !b.actualEnd.After(b.start) || rng.Float64() >= 0.6 {
			continue
		}
		u := genUnits[kindOf[b.task]]
		hours := float64(schedule.CardSeconds(len(b.cards), b.start, b.actualEnd)) / 3600
		q := math.Round(hours*u.perHour*b.busy*(0.6+0.8*rng.Float64())*100) / 100
		nextOut++
		at := b.actualEnd.Add(10 * time.Minute)
		if err := ins.add(nextOut, b.id, q, u.unit, "generated", nil, b.user, at); err != nil {
			return nil, translate(op, err)
		}
		st.Outputs++
		if rng.Float64() < 0.03 {
			first := nextOut
			nextOut++
			if err := ins.add(nextOut, b.id, math.Round(q*0.9*100)/100, u.unit, "corrected: counted a warm-up run", first, b.user, at.Add(time.Hour)); err != nil {
				return nil, translate(op, err)
			}
			st.Outputs++
		}
	}
	if err := ins.end(); err != nil {
		return nil, translate(op, err)
	}
	stage("outputs", t0)
	return st, nil
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

// pickType chooses a card type by the fleet shares, at position x (0–1).
func pickType(x float64) int {
	acc := 0.0
	for i, g := range genTypes {
		acc += g.share
		if x < acc {
			return i
		}
	}
	return len(genTypes) - 1
}

// genShares are the busy and held-idle shares of a booking's hour: its own
// level, varied from hour to hour but the same for every card and on every
// run, so the card rollups and the booking hours agree.
func genShares(b genBooking, hour time.Time) (busy, idle float64) {
	x := uint64(b.id)*0x9e3779b97f4a7c15 ^ uint64(hour.Unix())
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	j := float64(x%1000)/1000*0.2 - 0.1
	busy = math.Max(0, math.Min(1, b.busy+j))
	idle = math.Max(0, math.Min(1-busy, b.idle-j/2))
	return busy, idle
}

// overlapSeconds is the length of [a0, a1) ∩ [b0, b1) in seconds.
func overlapSeconds(a0, a1, b0, b1 time.Time) float64 {
	s, e := a0, a1
	if b0.After(s) {
		s = b0
	}
	if b1.Before(e) {
		e = b1
	}
	if !e.After(s) {
		return 0
	}
	return e.Sub(s).Seconds()
}

// bulkInserter writes rows of one table as multi-row INSERTs on one
// connection, committing every few tens of thousands of rows: far faster
// than a statement or a transaction per row, and bounded in memory. MySQL's
// driver interpolates the arguments; for SQLite the rows are written as
// literals (see sqlLiteral).
type bulkInserter struct {
	ctx   context.Context
	conn  *sql.Conn
	mysql bool
	table string
	cols  []string
	args  []any
	text  strings.Builder // SQLite: the rows as literals
	rows  int
	inTx  int
	tx    *sql.Tx
}

// bulkCommit is how many rows one transaction writes.
const bulkCommit = 40_000

// batchRows is how many rows one statement inserts.
const batchRows = 500

// sqlLiteral writes a value the generator made (numbers, times, its own
// strings) as an SQLite literal, formatted as the driver would bind it.
// SQLite's pure-Go driver looks each bound parameter up among all of a
// statement's arguments, so binding costs the square of a statement's
// parameters; literals cost only their parsing.
func sqlLiteral(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "NULL", nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("no literal for %v", x)
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		if x {
			return "1", nil
		}
		return "0", nil
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", nil
	case time.Time:
		return "'" + x.UTC().Format("2006-01-02 15:04:05.999999999-07:00") + "'", nil
	}
	return "", fmt.Errorf("no literal for %T", v)
}

func (b *bulkInserter) begin(table string, cols []string) error {
	b.table, b.cols, b.args, b.rows = table, cols, b.args[:0], 0
	b.text.Reset()
	return nil
}

func (b *bulkInserter) add(vals ...any) error {
	if len(vals) != len(b.cols) {
		return fmt.Errorf("bulk insert into %s: %d values for %d columns", b.table, len(vals), len(b.cols))
	}
	if b.mysql {
		for i, v := range vals {
			if t, ok := v.(time.Time); ok {
				vals[i] = t.UTC()
			}
		}
		b.args = append(b.args, vals...)
	} else {
		if b.rows > 0 {
			b.text.WriteByte(',')
		}
		b.text.WriteByte('(')
		for i, v := range vals {
			lit, err := sqlLiteral(v)
			if err != nil {
				return fmt.Errorf("bulk insert into %s: %w", b.table, err)
			}
			if i > 0 {
				b.text.WriteByte(',')
			}
			b.text.WriteString(lit)
		}
		b.text.WriteByte(')')
	}
	b.rows++
	if b.rows >= batchRows {
		return b.flush()
	}
	return nil
}

func (b *bulkInserter) flush() error {
	if b.rows == 0 {
		return nil
	}
	if b.tx == nil {
		tx, err := b.conn.BeginTx(b.ctx, nil)
		if err != nil {
			return err
		}
		b.tx = tx
	}
	head := "INSERT INTO " + b.table + " (" + strings.Join(b.cols, ", ") + ") VALUES "
	var err error
	if b.mysql {
		ph := "(" + strings.TrimSuffix(strings.Repeat("?,", len(b.cols)), ",") + ")"
		_, err = b.tx.ExecContext(b.ctx, head+strings.TrimSuffix(strings.Repeat(ph+",", b.rows), ","), b.args...)
	} else {
		_, err = b.tx.ExecContext(b.ctx, head+b.text.String())
	}
	if err != nil {
		_ = b.tx.Rollback()
		b.tx = nil
		return fmt.Errorf("bulk insert into %s: %w", b.table, err)
	}
	b.inTx += b.rows
	b.args, b.rows = b.args[:0], 0
	b.text.Reset()
	if b.inTx >= bulkCommit {
		return b.commit()
	}
	return nil
}

func (b *bulkInserter) commit() error {
	if b.tx == nil {
		return nil
	}
	err := b.tx.Commit()
	b.tx, b.inTx = nil, 0
	return err
}

// end writes what is left and commits.
func (b *bulkInserter) end() error {
	if err := b.flush(); err != nil {
		return err
	}
	return b.commit()
}
