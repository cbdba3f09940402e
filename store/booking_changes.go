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
// row, written in the transaction that made it. A batch of bookings (the
// only transactions that keep the book replayable) writes its assignments
// and quota moves at its end, or "none"; any other transaction that takes
// the lock writes "reset" when it takes it, as does a batch whose change
// cannot be replayed. A missing generation (pruned, or older than the log)
// or a reset reads the book whole.

const (
	changeHeld  = "held"  // an assignment was added
	changeQuota = "quota" // a quota's total moved by delta
	changeNone  = "none"  // the generation changed nothing of the book
	changeReset = "reset" // it changed what the log does not replay
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

// logLocked records in the log that tx took the type's lock at gen: at the
// end of a batch (endBatchLog), or now as a reset for any other
// transaction, whose changes the book does not replay.
func (s *Store) logLocked(tx *gorm.DB, tn *typeNote, typeID, gen int64) error {
	if tn == nil {
		return nil
	}
	if deferredWrites(tx) != nil {
		tn.logAtEnd = true
		return nil
	}
	return tx.Create(&bookChange{CardTypeID: typeID, Generation: gen, Kind: changeReset, CreatedAt: s.now()}).Error
}

// endBatchLog writes what a batch changed of each book it locked, in one
// statement: its assignments and quota moves, reset when it made a change
// the log cannot replay, none when it made no change.
func (s *Store) endBatchLog(tx *gorm.DB) error {
	n := notesOf(tx)
	if n == nil {
		return nil
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
		if tn.dirty {
			add(bookChange{Kind: changeReset})
			continue
		}
		for _, r := range tn.inserted {
			start, end := r.StartAt.UTC(), r.EndAt.UTC()
			add(bookChange{Kind: changeHeld, BookingID: r.BookingID, CardID: r.CardID, TeamID: r.TeamID,
				Priority: r.Priority, StartAt: &start, EndAt: &end})
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
		if len(rows) == first {
			add(bookChange{Kind: changeNone})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	s.books.stats.logged.Add(1)
	return tx.CreateInBatches(&rows, 500).Error
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
	err := tx.Where("card_type_id = ? AND generation > ? AND generation <= ?", typeID, from, gen).
		Order("generation, seq").Find(&rows).Error
	if err != nil {
		return false, err
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
	for _, c := range rows {
		if c.Generation <= b.gen {
			continue
		}
		switch c.Kind {
		case changeHeld:
			b.insert(heldRow{CardID: c.CardID, BookingID: c.BookingID, TeamID: c.TeamID,
				StartAt: c.StartAt.UTC(), EndAt: c.EndAt.UTC(), Priority: c.Priority})
		case changeQuota:
			b.addQuotaUse(c.QuotaID, c.Delta)
		}
	}
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
