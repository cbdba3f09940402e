package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"cardhour/schedule"
)

// QuotaUseBoth runs quotaUse and quotaUseSQL on the same data, for the test
// that they agree.
func (s *Store) QuotaUseBoth(ctx context.Context, teamID, cardTypeID int64, quotaWindow, w schedule.Interval, except int64) (used, peak, usedSQL, peakSQL int64, err error) {
	tx := s.read(ctx)
	u, p, err := quotaUse(tx, teamID, cardTypeID, quotaWindow, w, except)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	u2, p2, err := quotaUseSQL(tx, s.dialect, teamID, cardTypeID, quotaWindow, w, except)
	return u, int64(p), u2, int64(p2), err
}

// HeldBoth runs heldAssignments and heldAssignmentsIndexed on the same data.
func (s *Store) HeldBoth(ctx context.Context, cardTypeID int64, w schedule.Interval, except int64) (scan, indexed []schedule.Assignment, err error) {
	tx := s.read(ctx)
	if scan, err = heldAssignments(tx, cardTypeID, w, except); err != nil {
		return nil, nil, err
	}
	indexed, err = heldAssignmentsIndexed(tx, cardTypeID, w, except)
	return scan, indexed, err
}

// QuotaLedgerDrift lists each quota whose running total differs from the
// oracle's count of its bookings, as "quota id: total vs counted".
func (s *Store) QuotaLedgerDrift(ctx context.Context) ([]string, error) {
	tx := s.read(ctx)
	var qs []Quota
	if err := tx.Find(&qs).Error; err != nil {
		return nil, err
	}
	var out []string
	for _, q := range qs {
		used, _, err := quotaUse(tx, q.TeamID, q.CardTypeID, q.window(), q.window(), 0)
		if err != nil {
			return nil, err
		}
		if used != q.UsedCardSeconds {
			out = append(out, fmt.Sprintf("quota %d: total %d vs counted %d", q.ID, q.UsedCardSeconds, used))
		}
	}
	return out, nil
}

// MigrateInTurn is Migrate, telling turn when this store's turn through
// the migrate lease begins and ends; it reports how many migrations it
// applied.
func (s *Store) MigrateInTurn(ctx context.Context, turn func(begin bool)) (int, error) {
	return s.migrate(ctx, turn)
}

// MigrateDownTo rolls migrations back to version v.
func (s *Store) MigrateDownTo(ctx context.Context, v int64) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, v)
	return err
}

// BookDrift compares, under the card type's lock, what its placement book
// says holds cards during w with the plain query, as "card/booking" lists.
func (s *Store) BookDrift(ctx context.Context, typeID int64, w schedule.Interval) (book, scan []string, err error) {
	err = s.tx(ctx, "test.BookDrift", func(tx *gorm.DB) error {
		book, scan = nil, nil
		var ct CardType
		if err := s.lockCardType(tx, typeID, &ct); err != nil {
			return err
		}
		b, err := s.currentBook(tx, typeID)
		if err != nil {
			return err
		}
		if b == nil {
			return fmt.Errorf("no current book under the lock")
		}
		for _, r := range b.during(w, 0, nil) {
			book = append(book, fmt.Sprintf("%d/%d %s–%s", r.CardID, r.BookingID, r.StartAt.Format(time.RFC3339), r.EndAt.Format(time.RFC3339)))
		}
		rows, err := heldAssignments(tx, typeID, w, 0)
		for _, r := range rows {
			scan = append(scan, fmt.Sprintf("%d/%d %s–%s", r.CardID, r.BookingID, r.Start.Format(time.RFC3339), r.End.Format(time.RFC3339)))
		}
		if err != nil {
			return err
		}
		// The quotas' totals too.
		for _, qs := range b.quotas {
			for _, q := range qs {
				book = append(book, fmt.Sprintf("quota %d: %d", q.ID, q.UsedCardSeconds))
			}
		}
		var qs []Quota
		if err := tx.Where("card_type_id = ?", typeID).Find(&qs).Error; err != nil {
			return err
		}
		for _, q := range qs {
			scan = append(scan, fmt.Sprintf("quota %d: %d", q.ID, q.UsedCardSeconds))
		}
		return nil
	})
	slices.Sort(book)
	slices.Sort(scan)
	return book, scan, err
}

// CreateBookingsTogether places the requests as one batch, in one
// transaction, as concurrent CreateBooking calls of one card type would be;
// between runs after every request was checked and its party read.
func (s *Store) CreateBookingsTogether(ctxs []context.Context, reqs []BookingRequest, between func()) ([]*BookingResult, []error) {
	res, errs := make([]*BookingResult, len(reqs)), make([]error, len(reqs))
	var batch []*bookingJob
	var index []int
	for i, req := range reqs {
		if errs[i] = s.checkBookingRequest(createBookingOp, &req); errs[i] != nil {
			continue
		}
		party, err := s.readBookingParty(ctxs[i], s.read(ctxs[i]), createBookingOp, &req)
		if errs[i] = err; err != nil {
			continue
		}
		batch = append(batch, &bookingJob{ctx: ctxs[i], req: req, party: party, done: make(chan struct{})})
		index = append(index, i)
	}
	if between != nil {
		between()
	}
	s.runBookingBatch(&bookingQueue{}, batch)
	for k, j := range batch {
		res[index[k]], errs[index[k]] = j.res, j.err
	}
	return res, errs
}

// CreateBookingsJoining runs the first request as a batch while the others
// wait in its card type's queue, as requests that arrived while the batch
// waited for the lock would; it returns what each got and the requests
// still waiting afterwards.
func (s *Store) CreateBookingsJoining(ctxs []context.Context, reqs []BookingRequest) ([]*BookingResult, []error, int) {
	res, errl := make([]*BookingResult, len(reqs)), make([]error, len(reqs))
	jobs := make([]*bookingJob, len(reqs))
	for i, req := range reqs {
		if errl[i] = s.checkBookingRequest(createBookingOp, &req); errl[i] != nil {
			panic(errl[i])
		}
		party, err := s.readBookingParty(ctxs[i], s.read(ctxs[i]), createBookingOp, &req)
		if err != nil {
			panic(err)
		}
		jobs[i] = &bookingJob{ctx: ctxs[i], req: req, party: party, done: make(chan struct{})}
	}
	q := &bookingQueue{waiting: append([]*bookingJob(nil), jobs[1:]...), leading: true}
	s.runBookingBatch(q, jobs[:1])
	for i, j := range jobs {
		res[i], errl[i] = j.res, j.err
	}
	return res, errl, len(q.waiting)
}

// CreateBookingsAsBatch runs the first first requests as one batch, as
// concurrent CreateBooking calls would, with the others waiting in the
// queue to join it under the lock; no party is read beforehand. It
// returns what each got, and how many queries read parties and how many
// named cards meanwhile.
func (s *Store) CreateBookingsAsBatch(ctxs []context.Context, reqs []BookingRequest, first int) (res []*BookingResult, errl []error, partyReads, namings int) {
	res, errl = make([]*BookingResult, len(reqs)), make([]error, len(reqs))
	jobs := make([]*bookingJob, len(reqs))
	for i, req := range reqs {
		if errl[i] = s.checkBookingRequest(createBookingOp, &req); errl[i] != nil {
			panic(errl[i])
		}
		jobs[i] = &bookingJob{ctx: ctxs[i], req: req, done: make(chan struct{})}
	}
	var parties, names atomic.Int64
	name := fmt.Sprintf("test:count%p", jobs)
	count := func(db *gorm.DB) {
		switch sql := db.Statement.SQL.String(); {
		case strings.Contains(sql, "team_role"):
			parties.Add(1)
		case strings.Contains(sql, "host_name"):
			names.Add(1)
		}
	}
	// Find goes through the query callbacks, Scan through the row ones.
	if err := s.db.Callback().Query().After("gorm:query").Register(name, count); err != nil {
		panic(err)
	}
	defer func() { _ = s.db.Callback().Query().Remove(name) }()
	if err := s.db.Callback().Row().After("gorm:row").Register(name, count); err != nil {
		panic(err)
	}
	defer func() { _ = s.db.Callback().Row().Remove(name) }()
	q := &bookingQueue{waiting: append([]*bookingJob(nil), jobs[first:]...), leading: true}
	s.runBookingBatch(q, jobs[:first])
	for i, j := range jobs {
		res[i], errl[i] = j.res, j.err
	}
	return res, errl, int(parties.Load()), int(names.Load())
}

// The straightforward versions of the held-assignment and quota-use
// queries: they load every row and work in Go. Production uses the indexed
// and SQL versions; these stay as the oracles the agreement tests compare
// them with.

// heldAssignments lists the cards of a type held during w, with the class of
// the booking that holds each; except skips one booking (itself, when
// re-placing).
func heldAssignments(tx *gorm.DB, cardTypeID int64, w schedule.Interval, except int64) ([]schedule.Assignment, error) {
	type row struct {
		CardID, BookingID int64
		StartAt, EndAt    time.Time
		Priority          string
	}
	var rows []row
	err := tx.Table("booking_cards bc").Select("bc.card_id, bc.booking_id, bc.start_at, bc.end_at, b.priority").
		Joins("JOIN bookings b ON b.id = bc.booking_id").
		Where("bc.card_type_id = ? AND bc.held = ? AND bc.start_at < ? AND bc.end_at > ? AND bc.booking_id <> ?", cardTypeID, true, w.End, w.Start, except).
		Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]schedule.Assignment, len(rows))
	for i, r := range rows {
		out[i] = schedule.Assignment{CardID: r.CardID, BookingID: r.BookingID, Interval: schedule.Interval{Start: r.StartAt.UTC(), End: r.EndAt.UTC()}, Priority: r.Priority}
	}
	return out, nil
}

// quotaUse sums the card-seconds the team's bookings of the type commit
// inside the quota window, and the most cards they hold at once during w.
func quotaUse(tx *gorm.DB, teamID, cardTypeID int64, quotaWindow, w schedule.Interval, except int64) (int64, int, error) {
	var bs []Booking
	err := tx.Where("team_id = ? AND card_type_id = ? AND state <> ? AND id <> ? AND start_at < ? AND end_at > ?",
		teamID, cardTypeID, BookingCancelled, except, quotaWindow.End, quotaWindow.Start).Find(&bs).Error
	if err != nil {
		return 0, 0, err
	}
	var used int64
	var spans []schedule.Span
	for _, b := range bs {
		start, end := b.StartAt, b.EndAt
		if b.EndedAt != nil && b.EndedAt.Before(end) && !b.Live() {
			end = *b.EndedAt
		}
		if start.Before(quotaWindow.Start) {
			start = quotaWindow.Start
		}
		if end.After(quotaWindow.End) {
			end = quotaWindow.End
		}
		used += schedule.CardSeconds(b.CardCount, start, end)
		if b.State == BookingConfirmed || b.State == BookingActive {
			spans = append(spans, schedule.Span{Interval: b.Window(), N: b.CardCount})
		}
	}
	return used, schedule.PeakCards(spans, w), nil
}

// SaveBookingState writes booking id in state through saveBooking, under
// its card type's lock, as a new code path changing its state would.
func (s *Store) SaveBookingState(ctx context.Context, id int64, state string) error {
	return s.tx(ctx, "test.SaveBookingState", func(tx *gorm.DB) error {
		var b Booking
		if err := tx.First(&b, id).Error; err != nil {
			return err
		}
		var ct CardType
		if err := s.lockCardType(tx, b.CardTypeID, &ct); err != nil {
			return err
		}
		before := b
		b.State = state
		return s.saveBooking(tx, &before, &b)
	})
}

// LockRowsCrosswise runs a transaction that locks card type first, calls
// between (given the try, from 1), then locks second: two of them run
// with opposite orders deadlock. With retry it runs as every transaction
// does (tx), else once. It reports the tries and whether each try began
// with fresh notes, holding no type mutex.
func (s *Store) LockRowsCrosswise(ctx context.Context, retry bool, first, second int64, between func(try int)) (tries int, freshNotes bool, err error) {
	limit := 1
	if retry {
		limit = maxTxTries
	}
	freshNotes = true
	var seen []*txNotes
	err = s.runTx(ctx, "store.LockRowsCrosswise", func(tx *gorm.DB) error {
		tries++
		n := notesOf(tx)
		if n == nil || len(n.types) != 0 || len(n.held) != 0 || slices.Contains(seen, n) {
			freshNotes = false
		}
		seen = append(seen, n)
		// A note of this try, which only a commit may apply.
		noteBookChanged(tx, first)
		var id int64
		if err := tx.Raw("SELECT id FROM card_types WHERE id = ? FOR UPDATE", first).Scan(&id).Error; err != nil {
			return err
		}
		between(tries)
		return tx.Raw("SELECT id FROM card_types WHERE id = ? FOR UPDATE", second).Scan(&id).Error
	}, limit)
	return tries, freshNotes, err
}

// TxRetries is how many transactions this store ran again after a
// collision.
func (s *Store) TxRetries() int64 { return s.txRetries.Load() }

// ConsecutiveIDs says whether the store trusts a multi-row insert's ids to
// be consecutive (decided at Open).
func (s *Store) ConsecutiveIDs() bool { return s.consecutiveIDs }

// BookReads counts how this store brought its placement books up to date:
// books read whole, books caught up from the change log, and the log rows
// it read.
func (s *Store) BookReads() (full, fromLog, logRows int64) {
	st := &s.books.stats
	return st.fullReads.Load(), st.logCatchUps.Load(), st.logRows.Load()
}

// PruneBookChanges drops the change log's generations written before t.
func (s *Store) PruneBookChanges(ctx context.Context, t time.Time) error {
	return s.pruneBookChanges(ctx, t)
}

// BookQuotaDrift lists each quota of the type whose total in this store's
// kept book differs from the database's, as "quota id: book vs db"; none
// when the store keeps no book of the type.
func (s *Store) BookQuotaDrift(ctx context.Context, typeID int64) ([]string, error) {
	s.books.mu.Lock()
	b := s.books.books[typeID]
	var inBook []Quota
	if b != nil {
		for _, qs := range b.quotas {
			inBook = append(inBook, qs...)
		}
	}
	s.books.mu.Unlock()
	var out []string
	for _, q := range inBook {
		var db Quota
		if err := s.read(ctx).First(&db, q.ID).Error; err != nil {
			return nil, err
		}
		if db.UsedCardSeconds != q.UsedCardSeconds {
			out = append(out, fmt.Sprintf("%d: %d vs %d", q.ID, q.UsedCardSeconds, db.UsedCardSeconds))
		}
	}
	return out, nil
}

// SessionReadCommitted tells whether the store's MySQL connections open in
// read committed (mysqlSession).
func SessionReadCommitted(s *Store) bool { return s.sessionReadCommitted }
