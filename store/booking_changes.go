package store

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"gorm.io/gorm"
)

// The change log of the books. With several processes on one database,
// nearly every transaction of a card type finds its book a few generations
// behind (the others' transactions came in between), and reading the whole
// book again under the lock made three replicas slower than one. So a
// transaction that raises the generation also writes what it changed of
// the book, in book_changes; a process whose book is at g reads the rows
// past g and replays them.
//
// The log is complete or it says so: every generation has at least one
// row, written at the end of the transaction that made it (endTxLog, run
// by txOnce before the commit): its new assignments and quota moves, or
// "none". A transaction that cut, freed or moved a booking's assignments
// (release, cancel, extension, preemption, no-show, a wait for data) logs
// each such booking as "freed" followed by the "held" rows it still has,
// and the type's quota totals as they now are ("quota_total"): replaying
// them on any book gives the database's state. A change the log cannot
// replay (a card or quota edited, the type changed) writes "reset". A
// missing generation (pruned, or older than the log) or a reset reads the
// book whole.

const (
	changeHeld  = "held"        // an assignment was added
	changeQuota = "quota"       // a quota's total moved by delta
	changeNone  = "none"        // the generation changed nothing of the book
	changeFreed = "freed"       // a booking's held assignments were dropped (its remaining ones follow as held)
	changeTotal = "quota_total" // a quota's total is now delta
	changeReset = "reset"       // it changed what the log does not replay
)

// bookChangesKeep is how long the log keeps a generation: a process whose
// book is older reads it whole, which is rare enough at any age.
const bookChangesKeep = 10 * time.Minute

// pruneEvery is how many logged batches a process writes between prunes.
const pruneEvery = 512

type bookChange struct {
	CardTypeID int64
	Generation int64
	Seq        int
	Kind       string
	BookingID  int64
	CardID     int64
	TeamID     int64
	Priority   string
	StartAt    *time.Time
	EndAt      *time.Time
	QuotaID    int64
	Delta      int64
	CreatedAt  time.Time
}

func (bookChange) TableName() string { return "book_changes" }

// bookLogStats counts how books were brought up to date, for tests and
// figures.
type bookLogStats struct {
	fullReads   atomic.Int64 // books read whole
	logCatchUps atomic.Int64 // books brought up to date from the log
	logRows     atomic.Int64 // rows of the log read
	logged      atomic.Int64 // batches that wrote their changes
}

// logLocked records that tx took the type's lock at gen: what it changed
// is logged at its end (endTxLog).
func (s *Store) logLocked(tx *gorm.DB, tn *typeNote, typeID, gen int64) error {
	if tn != nil {
		tn.logAtEnd = true
	}
	return nil
}

// endTxLog writes what the transaction changed of each book it locked, in
// one statement (two when bookings moved: their held assignments and the
// quota totals are read first). Each type's rows are kept in its note for
// this process's own book (applyNotes).
func (s *Store) endTxLog(tx *gorm.DB) error {
	n := notesOf(tx)
	if n == nil {
		return nil
	}
	for typeID, tn := range n.types {
		if tn.bump {
			if err := raiseGen(tx, typeID, tn); err != nil {
				return err
			}
		}
	}
	if err := flushDeferred(tx); err != nil {
		return err
	}
	now := s.now()
	var rows []bookChange
	for typeID, tn := range n.types {
		if tn.gen == 0 || !tn.logAtEnd {
			continue
		}
		tn.logAtEnd = false
		first := len(rows)
		add := func(c bookChange) {
			c.CardTypeID, c.Generation, c.Seq, c.CreatedAt = typeID, tn.gen, len(rows)-first, now
			rows = append(rows, c)
		}
		switch {
		case tn.reset:
			add(bookChange{Kind: changeReset})
		case len(tn.moved) > 0:
			if err := s.logMoved(tx, typeID, tn, add); err != nil {
				return err
			}
		default:
			for _, r := range tn.inserted {
				add(heldChange(r))
			}
			ids := make([]int64, 0, len(tn.quotaUse))
			for id, d := range tn.quotaUse {
				if d != 0 {
					ids = append(ids, id)
				}
			}
			sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
			for _, id := range ids {
				add(bookChange{Kind: changeQuota, QuotaID: id, Delta: tn.quotaUse[id]})
			}
		}
		if len(rows) == first {
			add(bookChange{Kind: changeNone})
		}
		tn.logRows = rows[first:len(rows):len(rows)]
	}
	if len(rows) == 0 {
		return nil
	}
	s.books.stats.logged.Add(1)
	return tx.CreateInBatches(&rows, 500).Error
}

func heldChange(r heldRow) bookChange {
	start, end := r.StartAt.UTC(), r.EndAt.UTC()
	return bookChange{Kind: changeHeld, BookingID: r.BookingID, CardID: r.CardID, TeamID: r.TeamID,
		Priority: r.Priority, StartAt: &start, EndAt: &end}
}

// logMoved logs the bookings tx moved, and those it added, as they now are
// in the database: each freed, then its held assignments; and the type's
// quota totals.
func (s *Store) logMoved(tx *gorm.DB, typeID int64, tn *typeNote, add func(bookChange)) error {
	ids := make([]int64, 0, len(tn.moved)+len(tn.inserted))
	seen := map[int64]bool{}
	for id := range tn.moved {
		ids, seen[id] = append(ids, id), true
	}
	for _, r := range tn.inserted {
		if !seen[r.BookingID] {
			ids, seen[r.BookingID] = append(ids, r.BookingID), true
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var held []heldRow
	err := tx.Table("booking_cards bc").Select("bc.card_id, bc.booking_id, b.team_id, bc.start_at, bc.end_at, b.priority").
		Joins("JOIN bookings b ON b.id = bc.booking_id").
		Where("bc.booking_id IN ? AND bc.held = ?", ids, true).Order("bc.booking_id, bc.card_id").
		Scan(&held).Error
	if err != nil {
		return err
	}
	var totals []Quota
	if err := tx.Select("id, used_card_seconds").Where("card_type_id = ?", typeID).Order("id").Find(&totals).Error; err != nil {
		return err
	}
	for _, id := range ids {
		add(bookChange{Kind: changeFreed, BookingID: id})
	}
	for _, r := range held {
		add(heldChange(r))
	}
	for _, q := range totals {
		add(bookChange{Kind: changeTotal, QuotaID: q.ID, Delta: q.UsedCardSeconds})
	}
	return nil
}

// replay applies one generation's (or several in order) logged changes.
func (b *typeBook) replay(rows []bookChange) {
	for _, c := range rows {
		switch c.Kind {
		case changeHeld:
			b.insert(heldRow{CardID: c.CardID, BookingID: c.BookingID, TeamID: c.TeamID,
				StartAt: c.StartAt.UTC(), EndAt: c.EndAt.UTC(), Priority: c.Priority})
		case changeFreed:
			b.free(c.BookingID)
		case changeQuota:
			b.addQuotaUse(c.QuotaID, c.Delta)
		case changeTotal:
			b.setQuotaUse(c.QuotaID, c.Delta)
		}
	}
}

// catchUp brings b, the kept book of the type, from its generation to
// gen by replaying the log. It tells false, changing nothing, when the log
// does not reach back to the book's generation or holds a reset: the
// caller reads the book whole.
func (s *Store) catchUp(tx *gorm.DB, typeID int64, b *typeBook, gen int64) (bool, error) {
	s.books.mu.Lock()
	from := b.gen
	s.books.mu.Unlock()
	if from >= gen {
		return from == gen, nil
	}
	var rows []bookChange
	if tn := lockedNote(tx, typeID); tn != nil && tn.hasPrefetch && tn.prefetchFrom <= from {
		// The lock's read brought the log already (lockCardTypeMySQL).
		for _, c := range tn.prefetched {
			if c.Generation > from && c.Generation <= gen {
				rows = append(rows, c)
			}
		}
	} else {
		err := tx.Where("card_type_id = ? AND generation > ? AND generation <= ?", typeID, from, gen).
			Order("generation, seq").Find(&rows).Error
		if err != nil {
			return false, err
		}
	}
	s.books.stats.logRows.Add(int64(len(rows)))
	// Every generation from+1 … gen, in order, none a reset.
	next := from + 1
	for _, c := range rows {
		switch {
		case c.Kind == changeReset, c.Kind == changeHeld && (c.StartAt == nil || c.EndAt == nil):
			return false, nil
		case c.Generation == next:
			next++
		case c.Generation != next-1:
			return false, nil // a generation is missing
		}
	}
	if next != gen+1 {
		return false, nil
	}
	s.books.mu.Lock()
	defer s.books.mu.Unlock()
	if s.books.books[typeID] != b {
		return false, nil
	}
	// The last transaction of this process may have brought the book on
	// since it was looked at (applyNotes): replay only what it lacks.
	i := 0
	for i < len(rows) && rows[i].Generation <= b.gen {
		i++
	}
	b.replay(rows[i:])
	b.gen = gen
	s.books.stats.logCatchUps.Add(1)
	return true, nil
}

// pruneBookChanges drops the generations logged before the cut: each
// generation's rows share one created_at, so it goes whole.
func (s *Store) pruneBookChanges(ctx context.Context, before time.Time) error {
	return s.tx(ctx, "store.pruneBookChanges", func(tx *gorm.DB) error {
		return tx.Where("created_at < ?", before).Delete(&bookChange{}).Error
	})
}

// maybePruneBookChanges prunes the log once every pruneEvery batches this
// process logged, after their commit: out of the type's lock.
func (s *Store) maybePruneBookChanges(ctx context.Context) {
	n, due := s.books.stats.logged.Load(), s.books.nextPrune.Load()
	if n < due || !s.books.nextPrune.CompareAndSwap(due, n+pruneEvery) {
		return // not yet, or another batch prunes
	}
	if err := s.pruneBookChanges(context.WithoutCancel(ctx), s.now().Add(-bookChangesKeep)); err != nil {
		s.log.Warn("pruning the book change log", "err", err)
	}
}
