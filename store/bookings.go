package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// Booking states and wait reasons: schedule defines them, with the
// transitions between them and the rules of the actions on a booking.
const (
	BookingPending   = schedule.StatePending
	BookingConfirmed = schedule.StateConfirmed
	BookingActive    = schedule.StateActive
	BookingCompleted = schedule.StateCompleted
	BookingReleased  = schedule.StateReleased
	BookingCancelled = schedule.StateCancelled
	BookingPreempted = schedule.StatePreempted
	BookingNoShow    = schedule.StateNoShow
	BookingRejected  = schedule.StateRejected
)

// withdrawnStates are the states of bookings that draw nothing
// (schedule.Withdrawn), for queries that leave them out.
var withdrawnStates = []string{BookingCancelled, BookingRejected}

// Why a pending booking waits.
const (
	WaitApproval = schedule.WaitApproval
	WaitCapacity = schedule.WaitCapacity
	WaitData     = schedule.WaitData
)

// Booking kinds.
const (
	KindOnDemand = "on_demand"
	KindAdvance  = "advance"
)

// Booking asks for cards of one type over a window, for a task. NoteKey
// and NoteArgs say why it is in its state, for pages to render in the
// reader's language.
type Booking struct {
	ID              int64      `json:"id"`
	TaskID          int64      `json:"task_id"`
	TeamID          int64      `json:"team_id"`
	UserID          int64      `json:"user_id"`
	CardTypeID      int64      `json:"card_type_id"`
	CardCount       int        `json:"count"`
	StartAt         time.Time  `json:"start"`
	EndAt           time.Time  `json:"end"`
	State           string     `json:"state"`
	WaitReason      string     `json:"wait_reason,omitempty"`
	Kind            string     `json:"kind"`
	Priority        string     `json:"priority"`
	PriceFen        int64      `json:"price_fen"`
	SubmittedAt     time.Time  `json:"submitted_at"`
	ConfirmedAt     *time.Time `json:"confirmed_at,omitempty"`
	EndedAt         *time.Time `json:"ended_at,omitempty"`
	NoteKey         string     `json:"note_key,omitempty" gorm:"column:state_note"`
	NoteArgs        NoteArgs   `json:"note_args,omitempty" gorm:"column:state_note_args"`
	QuotaOverrideBy *int64     `json:"quota_override_by,omitempty"`
	// DecidedBy and DecidedAt are the manager's decision on a booking that
	// waited for approval; RejectReason says why a rejected one was refused.
	DecidedBy    *int64     `json:"decided_by,omitempty"`
	DecidedAt    *time.Time `json:"decided_at,omitempty"`
	RejectReason string     `json:"reject_reason,omitempty"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`

	pending *pendingPlacement
	// quota is the quota the request was checked against, when it covers
	// the whole window: saving a new booking then moves that total alone.
	quota *Quota
}

// Window is the booking's [start, end).
func (b Booking) Window() schedule.Interval { return schedule.Interval{Start: b.StartAt, End: b.EndAt} }

// Live tells whether the booking still holds or waits for cards.
func (b Booking) Live() bool { return schedule.Live(b.State) }

// Facts are what schedule's action rules read of the booking.
func (b Booking) Facts() schedule.Facts {
	return schedule.Facts{State: b.State, WaitReason: b.WaitReason, Start: b.StartAt, End: b.EndAt}
}

// BookedCardSeconds is what the booking committed: cards × its window, or
// up to when it ended early.
func (b Booking) BookedCardSeconds() int64 {
	end := b.EndAt
	switch b.State {
	case BookingReleased, BookingPreempted, BookingNoShow:
		if b.EndedAt != nil && b.EndedAt.Before(end) {
			end = *b.EndedAt
		}
	case BookingCancelled, BookingRejected:
		return 0
	}
	return schedule.CardSeconds(b.CardCount, b.StartAt, end)
}

type bookingCard struct {
	ID         int64
	BookingID  int64
	CardID     int64
	CardTypeID int64
	StartAt    time.Time
	EndAt      time.Time
	Held       bool
}

func (bookingCard) TableName() string { return "booking_cards" }

// BookingPolicy holds the settings of the booking rules.
type BookingPolicy struct {
	// Horizon is how far ahead a booking may end.
	Horizon time.Duration
	// CoreReserveShare is the share of each card type's active cards that
	// only core tasks may book.
	CoreReserveShare float64
	// MaxCards caps one booking's card count.
	MaxCards int
	// MinDuration is the shortest booking.
	MinDuration time.Duration
	// PastSlack accepts a start this far in the past as "now" (clocks differ).
	PastSlack time.Duration
	// NoShowAfter ends a booking as a no-show when telemetry saw nothing
	// run on its cards this long from its start (booking_no_show.go); 0 = off.
	NoShowAfter time.Duration
}

// DefaultBookingPolicy is used until SetBookingPolicy is called.
func DefaultBookingPolicy() BookingPolicy {
	return BookingPolicy{Horizon: 90 * 24 * time.Hour, MaxCards: 64, MinDuration: 5 * time.Minute, PastSlack: 5 * time.Minute,
		NoShowAfter: 30 * time.Minute}
}

// SetBookingPolicy replaces the booking rules' settings; call before serving.
func (s *Store) SetBookingPolicy(p BookingPolicy) { s.policy = p }

// BookingPolicy returns the settings in force.
func (s *Store) BookingPolicy() BookingPolicy { return s.policy }

// BookingRequest is the input of CreateBooking.
type BookingRequest struct {
	TaskID     int64
	CardTypeID int64
	// CardTypeName names the card type when CardTypeID is 0. A name no type
	// bears that is a number is read as the type's id.
	CardTypeName string
	Count        int
	Start, End   time.Time
	// Queue waits for capacity instead of failing with a conflict.
	Queue bool
	// OverrideQuota lets a team manager or admin book past the quota; the
	// override is recorded in the audit log.
	OverrideQuota bool
}

// BookingResult is a booking with what the caller should show about it.
type BookingResult struct {
	Booking   *Booking
	Cards     []string // uuids of the assigned cards
	Preempted []int64  // bookings this one displaced
	// View is the booking as FindBookingByID shows it, when CreateBooking
	// made it: the caller need not read it back.
	View *BookingView
}

// lockCardType serialises every change to one card type's bookings. On MySQL
// the row lock holds across server processes; SQLite's immediate
// transactions already admit one writer at a time.
//
// Taking the lock raises the type's booking generation: the update is what
// locks the row on MySQL, and the new generation tells this transaction
// whether the placement book it keeps in memory is current (see
// booking_books.go).
func (s *Store) lockCardType(tx *gorm.DB, id int64, ct *CardType) error {
	const op = "store.lockCardType"
	if tn := lockedNote(tx, id); tn != nil {
		// This transaction holds the lock already (several bookings in one
		// transaction, see booking_batch.go): no second generation.
		if tn.cardType != nil && !tn.dirty {
			*ct = *tn.cardType
			return nil
		}
		if err := tx.First(ct, id).Error; err != nil {
			return withKey(translate(op, err), "cardtype.not_found")
		}
		return nil
	}
	if s.dialect == SQLite {
		// One statement: SQLite returns the updated row.
		var row struct {
			CardType
			BookingGen int64
		}
		if err := tx.Raw("UPDATE card_types SET booking_gen = booking_gen + 1 WHERE id = ? RETURNING *", id).Scan(&row).Error; err != nil {
			return err
		}
		if row.ID == 0 {
			return errs.E(errs.NotFound, op, "cardtype.not_found")
		}
		*ct = row.CardType
		tn := noteLocked(tx, id, row.BookingGen)
		if tn != nil {
			tn.cardType = &row.CardType
		}
		return s.logLocked(tx, tn, id, row.BookingGen)
	}
	// Within one process, transactions of a type queue on a Go mutex
	// first, so that at most one per process waits for the row lock:
	// InnoDB handles a crowd waiting on one row badly (every release wakes
	// and re-checks the queue, deadlock detection included).
	if n := notesOf(tx); n != nil && !n.holds(id) {
		m := s.books.typeMutex(id)
		m.Lock()
		n.held = append(n.held, m)
		n.heldTypes[id] = true
	}
	if notesOf(tx) != nil {
		return s.lockCardTypeMySQL(tx, id, ct) // one round trip: the lock, the type, the log
	}
	// Without notes (no txOnce to write the generation at the end): MySQL
	// has no UPDATE … RETURNING, but LAST_INSERT_ID(expr) hands the
	// new generation back in the update's own reply, and the type's row
	// comes from the placement book when that is current: no second round
	// trip while every booking of the type waits.
	res, err := tx.Statement.ConnPool.ExecContext(tx.Statement.Context,
		"UPDATE card_types SET booking_gen = LAST_INSERT_ID(booking_gen + 1) WHERE id = ?", id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errs.E(errs.NotFound, op, "cardtype.not_found")
	}
	gen, err := res.LastInsertId()
	if err != nil {
		return err
	}
	tn := noteLocked(tx, id, gen)
	if err := s.logLocked(tx, tn, id, gen); err != nil {
		return err
	}
	b, err := s.currentBook(tx, id)
	if err != nil {
		return err
	}
	if b != nil {
		*ct = b.cardType
	} else if err := tx.First(ct, id).Error; err != nil {
		return withKey(translate(op, err), "cardtype.not_found")
	}
	if tn != nil {
		c := *ct
		tn.cardType = &c
	}
	return nil
}

// actorUser loads the acting user inside tx.
func actorUser(ctx context.Context, tx *gorm.DB, op string) (*User, error) {
	a := ActorFrom(ctx)
	if a.UserID == 0 {
		return nil, errs.E(errs.Unauthorized, op, "auth.required")
	}
	if a.Role != "" {
		return &User{ID: a.UserID, Username: a.Username, Role: a.Role}, nil
	}
	var u User
	if err := tx.First(&u, a.UserID).Error; err != nil {
		return nil, errs.E(errs.Unauthorized, op, "auth.required")
	}
	return &u, nil
}

// teamRole returns the user's role in the team, "" when not a member.
func teamRole(tx *gorm.DB, teamID, userID int64) (string, error) {
	var m Membership
	err := tx.Where("team_id = ? AND user_id = ?", teamID, userID).First(&m).Error
	if err != nil {
		if errs.Is(translate("", err), errs.NotFound) {
			return "", nil
		}
		return "", err
	}
	return m.Role, nil
}

// mayBookFor: site admins anywhere; team managers and members in their team.
func mayBookFor(tx *gorm.DB, u *User, teamID int64) (bool, error) {
	if u.Role == RoleAdmin || RoleRank(u.Role) < RoleRank(RoleMember) {
		return mayBookAs(u, ""), nil
	}
	r, err := teamRole(tx, teamID, u.ID)
	return mayBookAs(u, r), err
}

// managesTeam: site admins, and managers of that team.
func managesTeam(tx *gorm.DB, u *User, teamID int64) (bool, error) {
	if u.Role == RoleAdmin || RoleRank(u.Role) < RoleRank(RoleManager) {
		return managesAs(u, ""), nil
	}
	r, err := teamRole(tx, teamID, u.ID)
	return managesAs(u, r), err
}

// mayBookAs is mayBookFor's rule for a user whose role in the team
// (teamRole) is known.
func mayBookAs(u *User, teamRole string) bool {
	return u.Role == RoleAdmin || (RoleRank(u.Role) >= RoleRank(RoleMember) && (teamRole == TeamRoleManager || teamRole == TeamRoleMember))
}

// managesAs is managesTeam's rule for a user whose role in the team is known.
func managesAs(u *User, teamRole string) bool {
	return u.Role == RoleAdmin || (RoleRank(u.Role) >= RoleRank(RoleManager) && teamRole == TeamRoleManager)
}

func (s *Store) validateWindow(op string, start, end time.Time, v *errs.Validation) (time.Time, time.Time) {
	now := s.now()
	start, end = start.UTC(), end.UTC()
	p := s.policy
	switch {
	case start.IsZero():
		v.Add("start", "booking.start_required")
	case end.IsZero():
		v.Add("end", "booking.end_required")
	case !end.After(start):
		v.Add("end", "booking.end_before_start")
	case start.Before(now.Add(-p.PastSlack)):
		v.Add("start", "booking.start_past")
	case end.Sub(start) < p.MinDuration:
		v.Add("end", "booking.too_short")
	case end.After(now.Add(p.Horizon)):
		v.Add("end", "booking.past_horizon")
	}
	if start.Before(now) && !end.Before(now) {
		// A start a moment ago ("now" from a form or a client whose clock is
		// behind) becomes now, and the booking keeps the length asked for.
		end = end.Add(now.Sub(start))
		start = now
	}
	return start, end
}

// bookingPlan is what a request would become: the booking row with its
// state (and placement, when placed), and what was decided on the way.
// CreateBooking writes it; PreviewBooking shows it.
type bookingPlan struct {
	booking   *Booking
	task      Task
	cardType  CardType
	manager   bool
	verdict   schedule.QuotaVerdict
	quota     *Quota // the quota checked; nil when the team has none
	preempted []int64
}

// checkBookingRequest validates the request's own fields and settles its
// window (a start a moment ago becomes now).
func (s *Store) checkBookingRequest(op string, req *BookingRequest) error {
	v := errs.NewValidation(op)
	v.Check(req.TaskID > 0, "task_id", "task.not_found")
	v.Check(req.CardTypeID > 0 || req.CardTypeName != "", "card_type", "cardtype.not_found")
	s.checkBookingShape(op, req, v)
	return v.Err()
}

// CheckBookingRequest runs the request's own checks (count, window) without
// the database: a form that could not parse every field still reports
// what is wrong with the others at once.
func (s *Store) CheckBookingRequest(req BookingRequest) error {
	return s.checkBookingRequest(createBookingOp, &req)
}

// checkBookingShape checks the count and settles the window, the part of
// checkBookingRequest a template's use (whose task is made later) shares.
func (s *Store) checkBookingShape(op string, req *BookingRequest, v *errs.Validation) {
	v.Check(s.BookingLimits()["count"].Allows(float64(req.Count)), "count", "booking.count_range", s.policy.MaxCards)
	req.Start, req.End = s.validateWindow(op, req.Start, req.End, v)
}

// planBooking applies every booking rule to a checked request — who may book
// for the task's team, the quota, approval, data readiness, capacity — and
// writes nothing. With lock, it takes the card type's lock first, as a
// change must; a preview reads without it.
// bookingParty is who books for which task: read before the card type's
// lock is taken, as the request arriving a moment earlier would have seen
// it, so the locked part of a booking is only what must be.
type bookingParty struct {
	user             *User
	task             Task
	teamName         string
	requiresApproval bool
	// teamRole is the actor's role in the task's team ("" for none), from
	// which mayBook and manager follow.
	teamRole         string
	mayBook, manager bool
}

// readBookingParty reads the actor, the task, its team's approval rule and
// the actor's role in the team, in one query; and, when the request names
// its card type, the type's id. A booking's own request has its party read
// with the others of its batch (readParties).
func (s *Store) readBookingParty(ctx context.Context, db *gorm.DB, op string, req *BookingRequest) (*bookingParty, error) {
	j := &bookingJob{ctx: ctx, req: *req}
	if err := s.readParties(db, op, []*bookingJob{j}); err != nil {
		return nil, err
	}
	if j.partyErr != nil {
		return nil, j.partyErr
	}
	*req = j.req
	return j.party, nil
}

func (s *Store) planBooking(ctx context.Context, tx *gorm.DB, op string, req BookingRequest, party *bookingParty, lock bool) (*bookingPlan, error) {
	var err error
	u := party.user
	p := &bookingPlan{task: party.task, manager: party.manager}
	if !party.mayBook {
		return nil, fieldErr(op, "task_id", "booking.not_your_team")
	}
	if lock {
		err = s.lockCardType(tx, req.CardTypeID, &p.cardType)
	} else {
		err = tx.First(&p.cardType, req.CardTypeID).Error
	}
	if err != nil {
		if !errs.Is(translate(op, err), errs.NotFound) {
			return nil, err // the database failed; the type may well exist
		}
		return nil, fieldErr(op, "card_type", "cardtype.not_found")
	}
	w := schedule.Interval{Start: req.Start, End: req.End}
	if p.verdict, p.quota, err = s.checkQuota(tx, p.task.TeamID, p.cardType.ID, req.Count, w, nil); err != nil {
		return nil, err
	}
	now := s.now()
	b := &Booking{
		TaskID: p.task.ID, TeamID: p.task.TeamID, UserID: u.ID, CardTypeID: p.cardType.ID, CardCount: req.Count,
		StartAt: req.Start, EndAt: req.End, Kind: KindAdvance, Priority: p.task.Priority, PriceFen: p.cardType.PriceFen,
		SubmittedAt: now, CreatedAt: now, UpdatedAt: now,
	}
	p.booking = b
	if p.quota != nil && !b.StartAt.Before(p.quota.ValidFrom) && !b.EndAt.After(p.quota.ExpiresAt) {
		b.quota = p.quota
	}
	if !req.Start.After(now.Add(time.Minute)) {
		b.Kind = KindOnDemand
	}
	if !p.verdict.OK() {
		if !(req.OverrideQuota && p.manager) {
			return nil, quotaErr(op, p.verdict)
		}
		b.QuotaOverrideBy = &u.ID
	}
	switch {
	case party.requiresApproval && !p.manager:
		b.State, b.WaitReason = BookingPending, WaitApproval
		return p, nil
	case p.task.DataReadiness == schedule.DataNotReady && !req.Start.After(now):
		b.State, b.WaitReason = BookingPending, WaitData
		return p, nil
	}
	placed, short, err := s.place(tx, &p.cardType, b)
	if err != nil {
		return nil, err
	}
	if short != nil {
		if !req.Queue {
			return nil, noCapacityErr(op, short)
		}
		b.State, b.WaitReason = BookingPending, WaitCapacity
		return p, nil
	}
	p.preempted = placed.Preempt
	return p, nil
}

// CreateBooking places a request: checks who may book for the task's team,
// the quota, approval and data readiness, then assigns cards — all in one
// transaction holding the card type's lock, so no card is ever assigned to
// two overlapping bookings, whatever the number of server processes.
// Requests for one card type that arrive together share that transaction
// (see booking_batch.go).
func (s *Store) CreateBooking(ctx context.Context, req BookingRequest) (*BookingResult, error) {
	if err := s.checkBookingRequest(createBookingOp, &req); err != nil {
		return nil, err
	}
	// Its party (who books for which task) is read with those of its
	// batch, and its cards named with theirs after the commit.
	return s.batches.submit(s, &bookingJob{ctx: ctx, req: req, done: make(chan struct{})})
}

const createBookingOp = "store.CreateBooking"

// writeBooking plans one checked request in tx, which holds or takes the
// card type's lock, and writes it. refused is the request's own refusal (no
// capacity, over quota, not your team): nothing of it was written and the
// transaction may go on. err is a failure of the transaction itself, which
// must roll back.
func (s *Store) writeBooking(ctx context.Context, tx *gorm.DB, req BookingRequest, party *bookingParty) (res *BookingResult, refused, err error) {
	const op = createBookingOp
	p, err := s.planBooking(ctx, tx, op, req, party, true)
	if err != nil {
		if isRefusal(err) {
			return nil, err, nil
		}
		return nil, nil, err
	}
	res = &BookingResult{}
	b := p.booking
	if b.State == BookingPending {
		if err := s.saveBooking(tx, nil, b); err != nil {
			return nil, nil, err
		}
	} else if err := s.commitPlacement(ctx, tx, nil, b, res); err != nil {
		return nil, nil, err
	}
	res.Booking, res.Preempted = b, p.preempted
	res.View = &BookingView{Booking: *b, TaskName: p.task.Name, TeamName: party.teamName, Username: party.user.Username,
		CardTypeName: p.cardType.Name, Cards: res.Cards, CostFen: schedule.CostFen(b.BookedCardSeconds(), b.PriceFen)}
	if b.QuotaOverrideBy != nil {
		if err := s.auditNoted(ctx, tx, "quota_override", "booking", b.ID, quotaSummary(p.verdict), nil, b); err != nil {
			return nil, nil, err
		}
	}
	if err := s.auditNoted(ctx, tx, "create", "booking", b.ID, auditMsg("audit.sum.booked", argText(p.cardType.Name), argText(b.CardCount), argKey("bkstate."+b.State)), nil, b); err != nil {
		return nil, nil, err
	}
	return res, nil, nil
}

// isRefusal tells a booking rule's answer (built by the store, wrapping no
// database error) from a failure of the database.
func isRefusal(err error) bool {
	e, ok := errs.As(err)
	return ok && e.Err == nil && e.Code != errs.Internal && e.Code != errs.Unavailable
}

// pendingPlacement carries a computed placement from place to commit.
type pendingPlacement struct {
	cards   []int64
	uuids   []string // of cards, in order
	preempt []int64
}

// place computes a placement for b without writing; b.State becomes
// confirmed or active when it fits.
func (s *Store) place(tx *gorm.DB, ct *CardType, b *Booking) (schedule.Placement, *schedule.Shortfall, error) {
	active, err := s.activeCards(tx, ct.ID)
	if err != nil {
		return schedule.Placement{}, nil, err
	}
	cards := make([]int64, len(active))
	uuidOf := make(map[int64]string, len(active))
	for i, c := range active {
		cards[i], uuidOf[c.ID] = c.ID, c.UUID
	}
	rows, err := s.heldRows(tx, ct.ID, b.Window(), b.ID)
	if err != nil {
		return schedule.Placement{}, nil, err
	}
	busy := make([]schedule.Assignment, len(rows))
	for i, r := range rows {
		busy[i] = schedule.Assignment{CardID: r.CardID, BookingID: r.BookingID,
			Interval: schedule.Interval{Start: r.StartAt.UTC(), End: r.EndAt.UTC()}, Priority: r.Priority}
	}
	pool := schedule.Pool{Cards: cards, Busy: busy, CoreReserve: int(s.policy.CoreReserveShare * float64(len(cards)))}
	req := schedule.Request{Count: b.CardCount, Interval: b.Window(), Priority: b.Priority, MayPreempt: b.Priority == schedule.Core}
	placed, short := schedule.Place(pool, req)
	if short != nil {
		return placed, short, nil
	}
	b.pending = &pendingPlacement{cards: placed.Cards, preempt: placed.Preempt}
	for _, id := range placed.Cards {
		b.pending.uuids = append(b.pending.uuids, uuidOf[id])
	}
	if b.StartAt.After(s.now()) {
		b.State = BookingConfirmed
	} else {
		b.State = BookingActive
	}
	b.WaitReason = ""
	return placed, nil, nil
}

func (Booking) TableName() string { return "bookings" }
