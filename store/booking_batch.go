package store

import (
	"context"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Group commit. Every booking of a card type takes the type's lock, so
// under load the requests of one type form a queue and each paid for a
// whole transaction of its own: begin, the lock, the commit (a WAL write on
// SQLite, a log flush on MySQL), with the next request waiting through all
// of it. Instead, the requests that queue while a transaction runs go
// together in the next one: one lock and one commit for all of them, each
// still placed against what the ones before it took, since they see the
// transaction's own rows and notes. A refused request (no capacity, over
// quota) writes nothing and the others go on; a transaction the server
// rolled back for a deadlock or, on Galera, a certification failure runs
// again whole (tx retries: writeJobs sets every job's result afresh on each
// run); if it still fails, each request is tried again alone, so one bad
// request never fails its neighbours.
//
// No goroutine is kept: the first request to find its type idle starts
// one that runs the waiting requests as batches until none wait, then
// ends. Each request waits for its result or its deadline, whichever comes
// first, so a database that stops answering holds no client past its
// request's deadline: a request that gives up before its batch began is
// withdrawn and nothing of it is written; one that gives up while its
// batch runs is told the database did not answer, and its booking is
// written whole or not at all with the batch. The batch's transaction
// lives until the last deadline of the clients it serves: one client
// leaving must not cancel the others' bookings, but once all have given
// up nobody waits for the answer, and a database that wakes minutes later
// must not then commit bookings their clients were told had failed.
//
// Requests that arrive while the batch waits for the type's lock join it
// once the lock is held (join): with several processes the lock is mostly
// held by another one, and a batch closed before the wait would leave
// those requests for a transaction of their own after it.

// maxBatch bounds one transaction, so that the row lock and SQLite's write
// lock are never held long for other writers.
const maxBatch = 64

type bookingJob struct {
	ctx context.Context
	req BookingRequest
	// party is read with the others of the batch (readParties) unless the
	// caller gives it; partyErr is the request's refusal found there.
	party    *bookingParty
	partyErr error
	res      *BookingResult
	err      error
	// done is closed when res and err are set; only then may the client
	// read them.
	done chan struct{}
}

// bookingBatches holds one queue per card type, as the requests give it:
// by id, or by name (its id is read with the batch's parties), so that
// one query reads the parties of a batch.
type bookingBatches struct {
	mu     sync.Mutex
	byType map[queueKey]*bookingQueue
}

type queueKey struct {
	id   int64
	name string // when id is 0
}

func queueKeyOf(req BookingRequest) queueKey {
	if req.CardTypeID != 0 {
		return queueKey{id: req.CardTypeID}
	}
	return queueKey{name: req.CardTypeName}
}

type bookingQueue struct {
	mu      sync.Mutex
	waiting []*bookingJob
	leading bool // a job is running a batch of this type
}

func (bb *bookingBatches) queue(key queueKey) *bookingQueue {
	bb.mu.Lock()
	defer bb.mu.Unlock()
	if bb.byType == nil {
		bb.byType = map[queueKey]*bookingQueue{}
	}
	q := bb.byType[key]
	if q == nil {
		q = &bookingQueue{}
		bb.byType[key] = q
	}
	return q
}

// submit returns j's result when it has one, or an unavailable error when
// j's context ends first.
func (bb *bookingBatches) submit(s *Store, j *bookingJob) (*BookingResult, error) {
	q := bb.queue(queueKeyOf(j.req))
	q.mu.Lock()
	q.waiting = append(q.waiting, j)
	idle := !q.leading
	q.leading = true
	q.mu.Unlock()
	if idle {
		go q.lead(s)
	}
	select {
	case <-j.done:
		return j.res, j.err
	case <-j.ctx.Done():
	}
	select {
	case <-j.done: // both at once: the result is there
		return j.res, j.err
	default:
	}
	// Withdrawn, nothing of it is written; else its batch runs on and
	// writes it whole or not at all. Either way j's fields are the batch's
	// from here on.
	q.withdraw(j)
	return nil, translate(createBookingOp, j.ctx.Err())
}

// lead runs q's waiting requests as batches until none wait.
func (q *bookingQueue) lead(s *Store) {
	for {
		q.mu.Lock()
		n := min(len(q.waiting), maxBatch)
		if n == 0 {
			q.leading = false
			q.mu.Unlock()
			return
		}
		batch := append([]*bookingJob(nil), q.waiting[:n]...)
		q.waiting = append(q.waiting[:0], q.waiting[n:]...)
		q.mu.Unlock()
		s.runBookingBatch(q, batch)
	}
}

// withdraw takes j out of the queue if no batch has taken it yet.
func (q *bookingQueue) withdraw(j *bookingJob) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.waiting, j)
	if i < 0 {
		return false
	}
	q.waiting = slices.Delete(q.waiting, i, i+1)
	return true
}

// join takes the requests of q that queued since batch was formed, up to
// maxBatch in all, and appends them to batch.
func (q *bookingQueue) join(batch *[]*bookingJob) []*bookingJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.waiting), maxBatch-len(*batch))
	if n <= 0 {
		return nil
	}
	joined := append([]*bookingJob(nil), q.waiting[:n]...)
	q.waiting = append(q.waiting[:0], q.waiting[n:]...)
	*batch = append(*batch, joined...)
	return joined
}

// runBookingBatch writes the jobs in one transaction, with those of q that
// join it, and gives each its result.
func (s *Store) runBookingBatch(q *bookingQueue, batch []*bookingJob) {
	defer func() {
		// A panic is a bug: every request of the batch gets an internal
		// error with the stack for the log, instead of one of them taking
		// the process's recovery and the others no answer.
		if p := recover(); p != nil {
			for _, j := range batch {
				j.res, j.err = nil, errs.Internalf(createBookingOp, "panic in a booking batch: %v\n%s", p, debug.Stack())
			}
		}
		for _, j := range batch {
			close(j.done)
		}
	}()
	live := liveJobs(batch[:0:0], batch)
	if len(live) == 0 {
		return
	}
	// The transaction belongs to no single client (see the top of the
	// file). A run again after a deadlock writes the jobs that joined the
	// one before too.
	ctx, cancel := batchContext(live)
	defer cancel()
	// The parties, before the lock as each request's own read was: one
	// query for the batch. Those that join it have theirs read under the
	// lock, again one query (writeJobs).
	if err := s.readParties(s.read(ctx), createBookingOp, live); err != nil {
		for _, j := range live {
			j.res, j.err = nil, err
		}
		return
	}
	if live = withParties(live); len(live) == 0 {
		return
	}
	// The cards of every booking placed are named in one query after the
	// commit, whichever way it went.
	defer s.nameJobs(ctx, &live)
	err := s.tx(ctx, createBookingOp, func(tx *gorm.DB) error {
		return s.writeJobs(tx, &live, func(more *[]*bookingJob) {
			for _, j := range q.join(&batch) {
				*more = liveJobs(*more, []*bookingJob{j})
			}
		})
	})
	if err == nil {
		s.maybePruneBookChanges(live[0].ctx)
		return
	}
	if len(live) == 1 {
		live[0].res, live[0].err = nil, err
		return
	}
	for _, j := range live {
		one := []*bookingJob{j}
		err := s.tx(j.ctx, createBookingOp, func(tx *gorm.DB) error { return s.writeJobs(tx, &one, nil) })
		if err != nil {
			j.res, j.err = nil, err
		}
	}
}

// nameJobs names the cards of the jobs' bookings, one query for all.
func (s *Store) nameJobs(ctx context.Context, jobs *[]*bookingJob) {
	var views []*BookingView
	for _, j := range *jobs {
		if j.err == nil && j.res != nil {
			views = append(views, j.res.View)
		}
	}
	s.nameAssigned(ctx, views...)
}

// batchContext is the context of a batch's transaction: no client's
// cancellation, the latest of their deadlines (none if one has none), and
// the first client's values (the others' are set per job: writeBookingAs).
func batchContext(live []*bookingJob) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(live[0].ctx)
	var last time.Time
	for _, j := range live {
		d, ok := j.ctx.Deadline()
		if !ok {
			return ctx, func() {}
		}
		if d.After(last) {
			last = d
		}
	}
	return context.WithDeadline(ctx, last)
}

// liveJobs appends to live the jobs whose clients still wait, and gives the
// others their error.
func liveJobs(live, jobs []*bookingJob) []*bookingJob {
	for _, j := range jobs {
		if err := j.ctx.Err(); err != nil {
			j.err = translate(createBookingOp, err) // its client left while it waited
			continue
		}
		live = append(live, j)
	}
	return live
}

// writeJobs writes the jobs in tx, their inserts deferred to the end, and
// gives each its result: a refusal, or the booking with its real ids. join,
// when given, appends to the jobs those that queued meanwhile; they are
// written too, under the lock the first ones took.
func (s *Store) writeJobs(tx *gorm.DB, jobs *[]*bookingJob, join func(*[]*bookingJob)) error {
	notesOf(tx).deferred = &deferredRows{bookingsToo: s.consecutiveIDs}
	for i := 0; ; i++ {
		if i == len(*jobs) && join != nil {
			join(jobs)
		}
		if i >= len(*jobs) {
			break
		}
		j := (*jobs)[i]
		if j.party == nil && j.partyErr == nil {
			// Joined, or alone after its batch failed: an earlier job's,
			// or read with the others still without one.
			reuseParties((*jobs)[:i], (*jobs)[i:])
			if j.party == nil {
				if err := s.readParties(tx, createBookingOp, (*jobs)[i:]); err != nil {
					return err
				}
			}
		}
		if j.partyErr != nil {
			j.res, j.err = nil, j.partyErr
			continue
		}
		res, refused, err := s.writeBookingAs(tx, j)
		if err != nil {
			return err
		}
		j.res, j.err = res, refused
	}
	if err := s.endTxLog(tx); err != nil {
		return err
	}
	for _, j := range *jobs {
		j.settle(deferredWrites(tx))
	}
	// Now that every booking has its id: the managers of those that wait
	// for approval are told.
	for _, j := range *jobs {
		if j.err != nil || j.res == nil || j.res.Booking == nil {
			continue
		}
		if b := j.res.Booking; b.State == BookingPending && b.WaitReason == WaitApproval {
			if err := s.noticeApprovalWaiting(tx, b, j.party.user.Username, j.party.task.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeBookingAs runs writeBooking in tx on behalf of j's client: its actor
// and request for the audit log, the transaction's notes for the books.
// Its statements end with the transaction's context, not the client's: a
// statement that outlived the transaction's deadline would hold up its
// rollback (database/sql waits for running statements) until the driver's
// read timeout.
func (s *Store) writeBookingAs(tx *gorm.DB, j *bookingJob) (*BookingResult, error, error) {
	ctx := context.WithValue(valuesOf{Context: tx.Statement.Context, values: j.ctx}, txNotesKey{}, notesOf(tx))
	return s.writeBooking(ctx, tx.WithContext(ctx), j.req, j.party)
}

// valuesOf is Context's deadline and cancellation with the values of
// another context.
type valuesOf struct {
	context.Context
	values context.Context
}

func (v valuesOf) Value(key any) any { return v.values.Value(key) }

// settle gives j's result the ids its deferred inserts received.
func (j *bookingJob) settle(w *deferredRows) {
	if j.res == nil || j.res.Booking == nil {
		return
	}
	for i, id := range j.res.Preempted {
		j.res.Preempted[i] = w.realID(id)
	}
	if j.res.View != nil {
		j.res.View.Booking = *j.res.Booking
	}
}

// deferredRows are a batch's writes made together at its end (or before
// the transaction reads the database instead of the book): the held cards
// and audit entries in one insert each, one update per quota total and, on
// MySQL when ids are consecutive, the bookings in one insert. On MySQL each
// statement is a round trip made while the type's lock is held.
//
// A deferred booking has a temporary negative id until it is written; the
// rows that point at it (its held cards, the book's notes, its audit entry)
// are given the real one then.
type deferredRows struct {
	bookingsToo bool
	bookings    []*Booking
	cards       []bookingCard
	audits      []deferredAudit
	quotaUse    map[int64]int64 // quota id → card-seconds to add
	nextTemp    int64
	real        map[int64]int64 // temporary id → id
}

type deferredAudit struct {
	entry AuditEntry
	after any // marshalled when written, for a deferred booking
}

func (w *deferredRows) deferBooking(b *Booking) {
	w.nextTemp--
	b.ID = w.nextTemp
	w.bookings = append(w.bookings, b)
}

// realID is the id a temporary one became; other ids are themselves.
func (w *deferredRows) realID(id int64) int64 {
	if w != nil && id < 0 {
		if r, ok := w.real[id]; ok {
			return r
		}
	}
	return id
}

// deferredWrites is where tx defers its writes, nil when it writes at once.
func deferredWrites(tx *gorm.DB) *deferredRows {
	if n := notesOf(tx); n != nil {
		return n.deferred
	}
	return nil
}

// flushDeferred makes the writes tx deferred.
func flushDeferred(tx *gorm.DB) error {
	w := deferredWrites(tx)
	if w == nil {
		return nil
	}
	if len(w.bookings) > 0 {
		temps := make([]int64, len(w.bookings))
		for i, b := range w.bookings {
			temps[i], b.ID = b.ID, 0
		}
		if err := tx.Create(&w.bookings).Error; err != nil {
			return err
		}
		// The ids are consecutive, in the order of the rows (see
		// consecutiveIDs); SQLite's RETURNING does not promise that order.
		first := w.bookings[0].ID
		for _, b := range w.bookings {
			first = min(first, b.ID)
		}
		for i, b := range w.bookings {
			b.ID = first + int64(i)
		}
		if w.real == nil {
			w.real = map[int64]int64{}
		}
		for i, b := range w.bookings {
			w.real[temps[i]] = b.ID
		}
		w.bookings = nil
		for i := range w.cards {
			w.cards[i].BookingID = w.realID(w.cards[i].BookingID)
		}
		for _, tn := range notesOf(tx).types {
			for i := range tn.inserted {
				tn.inserted[i].BookingID = w.realID(tn.inserted[i].BookingID)
			}
		}
	}
	if len(w.cards) > 0 {
		if err := tx.Create(&w.cards).Error; err != nil {
			return err
		}
		w.cards = nil
	}
	if len(w.audits) > 0 {
		entries := make([]AuditEntry, len(w.audits))
		for i, a := range w.audits {
			entries[i] = a.entry
			if a.after != nil {
				entries[i].EntityID = w.realID(a.entry.EntityID)
				entries[i].AfterJSON = jsonOrNil(a.after)
			}
		}
		if err := tx.Create(&entries).Error; err != nil {
			return err
		}
		w.audits = nil
	}
	ids := make([]int64, 0, len(w.quotaUse))
	for id := range w.quotaUse {
		ids = append(ids, id)
	}
	slices.Sort(ids) // one order of row locks for every transaction
	for _, id := range ids {
		if d := w.quotaUse[id]; d != 0 {
			if err := tx.Exec("UPDATE quotas SET used_card_seconds = used_card_seconds + ? WHERE id = ?", d, id).Error; err != nil {
				return err
			}
		}
		delete(w.quotaUse, id)
	}
	return nil
}
