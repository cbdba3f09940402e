package store

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"gorm.io/gorm"

	"cardhour/schedule"
)

// Placing a booking needs the card type's active cards and what holds each
// of them during the window. Reading those from the database was a quarter
// of a booking's time under load, most of it spent parsing SQL, so each
// process keeps them in memory per card type: a book.
//
// A book is only trusted while it is current. card_types.booking_gen is
// raised by every transaction that takes the card type's lock (lockCardType,
// which every change to the type's cards or held assignments takes), so a
// transaction that holds the lock and reads generation G knows the book it
// has is current when the book was made at G-1: nobody, in this process or
// another, changed the type in between. Otherwise the book is read again.
// After the commit the transaction brings the book to G by adding the
// assignments it inserted; a change it cannot replay (a release, a cut, a
// card retired) drops the book instead, to be read again by the next user.

// bookKeep holds the books of one store.
type bookKeep struct {
	mu      sync.Mutex
	books   map[int64]*typeBook
	mutexes map[int64]*sync.Mutex // per card type, see lockCardType
	stats   bookLogStats
	// nextPrune is the count of logged batches at which the change log
	// is pruned next (booking_changes.go).
	nextPrune atomic.Int64
}

// typeBook is what one card type's placement needs.
type typeBook struct {
	gen      int64
	cardType CardType
	cards    []bookCard          // active cards, by id
	held     map[int64][]heldRow // per card, sorted by start; never overlapping
	quotas   map[int64][]Quota   // per team, by valid_from
}

type bookCard struct {
	ID   int64
	UUID string
}

// txNotes records, for one transaction, the card types it locked and what
// it changed of their books; store.tx applies them after the commit.
type txNotes struct {
	types map[int64]*typeNote
	// held are the process's per-type mutexes this transaction holds
	// (MySQL), released when it ends.
	held      []*sync.Mutex
	heldTypes map[int64]bool
	// deferred, when set, collects writes nothing in the transaction reads
	// back from the database while the book is current (booking_batch.go).
	deferred *deferredRows
}

// holds tells whether the transaction already holds the type's mutex (a
// transaction may lock one type more than once).
func (n *txNotes) holds(typeID int64) bool { return n.heldTypes[typeID] }

type typeNote struct {
	gen      int64           // the generation this transaction made
	inserted []heldRow       // held assignments it added
	quotaUse map[int64]int64 // quota id → card-seconds it added to the total
	dirty    bool            // its changes are not in the book it found: reads go to the database
	reset    bool            // it changed something the log cannot replay (dirty too)
	moved    map[int64]bool  // bookings whose held assignments it cut, freed or moved (dirty too)
	logRows  []bookChange    // what it logged, replayed on the kept book after the commit
	book     *typeBook       // the book it found current, if any
	cardType *CardType       // the type's row as the lock found it
	logAtEnd bool            // the batch writes its changes to the log at its end
	// bump: the lock was a locking read (MySQL); the generation is
	// written at the end (raiseGen).
	bump bool
	// prefetched holds the log rows past prefetchFrom that the lock's read
	// returned, for catchUp.
	prefetched   []bookChange
	prefetchFrom int64
	hasPrefetch  bool
}

// lockedNote is the type's note when tx holds the type's lock already.
func lockedNote(tx *gorm.DB, typeID int64) *typeNote {
	if n := notesOf(tx); n != nil {
		if tn := n.types[typeID]; tn != nil && tn.gen != 0 {
			return tn
		}
	}
	return nil
}

type txNotesKey struct{}

func notesOf(tx *gorm.DB) *txNotes {
	n, _ := tx.Statement.Context.Value(txNotesKey{}).(*txNotes)
	return n
}

// noteLocked records that tx locked the type and made generation gen.
func noteLocked(tx *gorm.DB, typeID, gen int64) *typeNote {
	n := notesOf(tx)
	if n == nil {
		return nil
	}
	tn := n.types[typeID]
	if tn == nil {
		tn = &typeNote{}
		n.types[typeID] = tn
	}
	tn.gen = gen
	return tn
}

// noteBookChanged marks the type's book as not replayable by tx: a card,
// the type or a quota changed.
func noteBookChanged(tx *gorm.DB, typeID int64) {
	if tn := dirtyNote(tx, typeID); tn != nil {
		tn.reset = true
	}
}

// noteBookingMoved records that tx cut, freed or moved the held
// assignments of one booking of the type (a release, cancel, extension,
// preemption, no-show, a wait for data). The rest of the transaction reads
// the database, as for any change to the book; at its end the booking's
// held assignments as they now are go to the log (booking_changes.go), so
// that the books of every process replay the change instead of being read
// whole.
func noteBookingMoved(tx *gorm.DB, typeID, bookingID int64) {
	if tn := dirtyNote(tx, typeID); tn != nil {
		if tn.moved == nil {
			tn.moved = map[int64]bool{}
		}
		tn.moved[bookingID] = true
	}
}

func dirtyNote(tx *gorm.DB, typeID int64) *typeNote {
	n := notesOf(tx)
	if n == nil {
		return nil
	}
	tn := n.types[typeID]
	if tn == nil {
		tn = &typeNote{}
		n.types[typeID] = tn
	}
	tn.dirty = true
	tn.book = nil
	return tn
}

// noteInserted records held assignments tx added.
func noteInserted(tx *gorm.DB, typeID int64, rows ...heldRow) {
	if n := notesOf(tx); n != nil {
		if tn := n.types[typeID]; tn != nil {
			tn.inserted = append(tn.inserted, rows...)
		}
	}
}

// withNotes gives a transaction its notes.
func withNotes(ctx context.Context) (context.Context, *txNotes) {
	n := &txNotes{types: map[int64]*typeNote{}, heldTypes: map[int64]bool{}}
	return context.WithValue(ctx, txNotesKey{}, n), n
}

// typeMutex is this process's mutex of one card type.
func (k *bookKeep) typeMutex(typeID int64) *sync.Mutex {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.mutexes == nil {
		k.mutexes = map[int64]*sync.Mutex{}
	}
	m := k.mutexes[typeID]
	if m == nil {
		m = &sync.Mutex{}
		k.mutexes[typeID] = m
	}
	return m
}

// releaseHeld unlocks the type mutexes a transaction took.
func (n *txNotes) releaseHeld() {
	for i := len(n.held) - 1; i >= 0; i-- {
		n.held[i].Unlock()
	}
	n.held = nil
}

// applyNotes brings the books up to date after a committed transaction.
func (k *bookKeep) applyNotes(n *txNotes) {
	if n == nil || len(n.types) == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for typeID, tn := range n.types {
		b := k.books[typeID]
		if b != nil && tn.gen != 0 && b.gen >= tn.gen {
			continue // brought past this generation from the log already
		}
		replayable := !tn.dirty || (!tn.reset && tn.logRows != nil)
		if !replayable || b == nil || tn.gen == 0 || b.gen != tn.gen-1 {
			delete(k.books, typeID)
			continue
		}
		if tn.logRows != nil {
			b.replay(tn.logRows)
		} else {
			for _, r := range tn.inserted {
				b.insert(r)
			}
			for id, delta := range tn.quotaUse {
				b.addQuotaUse(id, delta)
			}
		}
		b.gen = tn.gen
	}
}

// currentBook returns the type's book for a transaction holding the lock at
// generation gen, reading it when the kept one is not current. When it
// returns none, the caller reads the database: the writes the transaction
// deferred are made first.
func (s *Store) currentBook(tx *gorm.DB, typeID int64) (*typeBook, error) {
	b, err := s.keptBook(tx, typeID)
	if err == nil && b == nil {
		err = flushDeferred(tx)
	}
	return b, err
}

func (s *Store) keptBook(tx *gorm.DB, typeID int64) (*typeBook, error) {
	n := notesOf(tx)
	if n == nil {
		return nil, nil
	}
	tn := n.types[typeID]
	if tn == nil || tn.gen == 0 || tn.dirty {
		return nil, nil // not locked here, or changed in ways the book does not show
	}
	if tn.book != nil {
		return tn.book, nil
	}
	if len(tn.inserted) > 0 || len(tn.quotaUse) > 0 {
		// A book read now would hold this transaction's own uncommitted
		// changes, and count them twice; the database answers instead.
		return nil, nil
	}
	s.books.mu.Lock()
	b := s.books.books[typeID]
	s.books.mu.Unlock()
	if b != nil && b.gen != tn.gen-1 {
		// Another process changed the type since: its changes are in the
		// log, unless pruned.
		ok, err := s.catchUp(tx, typeID, b, tn.gen-1)
		if err != nil {
			return nil, err
		}
		if ok {
			tn.book = b
			return b, nil
		}
		b = nil
	}
	if b == nil {
		var err error
		if b, err = s.readBook(tx, typeID, tn.gen-1); err != nil {
			return nil, err
		}
		s.books.stats.fullReads.Add(1)
		s.books.mu.Lock()
		s.books.books[typeID] = b
		s.books.mu.Unlock()
	}
	tn.book = b
	return b, nil
}

// bookHorizon is how far back a book keeps assignments: nothing is placed
// before now (less the slack a start may have), so older ones never meet
// a window again.
const bookHorizon = 2 * time.Hour

// readBook reads the type's active cards and its held assignments that end
// after the book horizon.
func (s *Store) readBook(tx *gorm.DB, typeID, gen int64) (*typeBook, error) {
	b := &typeBook{gen: gen, held: map[int64][]heldRow{}}
	if err := tx.First(&b.cardType, typeID).Error; err != nil {
		return nil, err
	}
	var err error
	if b.cards, err = readActiveCards(tx, typeID); err != nil {
		return nil, err
	}
	var rows []heldRow
	err = tx.Table("booking_cards bc").Select("bc.card_id, bc.booking_id, b.team_id, bc.start_at, bc.end_at, b.priority").
		Joins("JOIN bookings b ON b.id = bc.booking_id").
		Where("bc.card_type_id = ? AND bc.held = ? AND bc.end_at > ?", typeID, true, s.now().Add(-bookHorizon)).
		Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		r.StartAt, r.EndAt = r.StartAt.UTC(), r.EndAt.UTC()
		b.held[r.CardID] = append(b.held[r.CardID], r)
	}
	for id := range b.held {
		rs := b.held[id]
		sort.Slice(rs, func(i, j int) bool { return rs[i].StartAt.Before(rs[j].StartAt) })
	}
	var qs []Quota
	if err := tx.Where("card_type_id = ?", typeID).Order("valid_from").Find(&qs).Error; err != nil {
		return nil, err
	}
	b.quotas = map[int64][]Quota{}
	for _, q := range qs {
		b.quotas[q.TeamID] = append(b.quotas[q.TeamID], q)
	}
	return b, nil
}

// addQuotaUse moves a quota's total in the book.
func (b *typeBook) addQuotaUse(quotaID, delta int64) {
	for _, qs := range b.quotas {
		for i := range qs {
			if qs[i].ID == quotaID {
				qs[i].UsedCardSeconds += delta
				return
			}
		}
	}
}

// setQuotaUse sets a quota's total in the book.
func (b *typeBook) setQuotaUse(quotaID, total int64) {
	for _, qs := range b.quotas {
		for i := range qs {
			if qs[i].ID == quotaID {
				qs[i].UsedCardSeconds = total
				return
			}
		}
	}
}

// free drops a booking's held assignments from the book.
func (b *typeBook) free(bookingID int64) {
	for card, rs := range b.held {
		kept := rs[:0]
		for _, r := range rs {
			if r.BookingID != bookingID {
				kept = append(kept, r)
			}
		}
		if len(kept) != len(rs) {
			clear(rs[len(kept):])
			b.held[card] = kept
		}
	}
}

// noteQuotaUse records what tx added to a quota's total, for the book.
func noteQuotaUse(tx *gorm.DB, typeID, quotaID, delta int64) {
	if n := notesOf(tx); n != nil {
		if tn := n.types[typeID]; tn != nil {
			if tn.quotaUse == nil {
				tn.quotaUse = map[int64]int64{}
			}
			tn.quotaUse[quotaID] += delta
		}
	}
}

// quotaFor is findQuotaFor from the book when tx holds the type's lock and
// the book is current, with what tx itself added to the totals.
func (s *Store) quotaFor(tx *gorm.DB, teamID, typeID int64, t time.Time) (*Quota, error) {
	b, err := s.currentBook(tx, typeID)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return findQuotaFor(tx, teamID, typeID, t)
	}
	for _, q := range b.quotas[teamID] {
		if q.ExpiresAt.After(t) {
			q.UsedCardSeconds += notesOf(tx).types[typeID].quotaUse[q.ID]
			return &q, nil
		}
	}
	return nil, nil
}

// insert adds a held assignment in start order.
func (b *typeBook) insert(r heldRow) {
	rs := b.held[r.CardID]
	i := sort.Search(len(rs), func(i int) bool { return !rs[i].StartAt.Before(r.StartAt) })
	rs = append(rs, heldRow{})
	copy(rs[i+1:], rs[i:])
	rs[i] = r
	b.held[r.CardID] = rs
}

// during lists the held assignments meeting w but except's, including
// extra ones (this transaction's own, not in the book yet).
func (b *typeBook) during(w schedule.Interval, except int64, extra []heldRow) []heldRow {
	var out []heldRow
	meets := func(r heldRow) bool {
		return r.BookingID != except && r.StartAt.Before(w.End) && r.EndAt.After(w.Start)
	}
	for _, rs := range b.held {
		// Assignments of one card never overlap, so those meeting w are the
		// last one starting before w and those starting inside it.
		i := sort.Search(len(rs), func(i int) bool { return !rs[i].StartAt.Before(w.Start) })
		if i > 0 && meets(rs[i-1]) {
			out = append(out, rs[i-1])
		}
		for ; i < len(rs) && rs[i].StartAt.Before(w.End); i++ {
			if meets(rs[i]) {
				out = append(out, rs[i])
			}
		}
	}
	for _, r := range extra {
		if meets(r) {
			out = append(out, r)
		}
	}
	return out
}

// heldRows lists the type's held assignments meeting w, but except's: from
// the book when tx holds the type's lock and the book is current, else from
// the database.
func (s *Store) heldRows(tx *gorm.DB, typeID int64, w schedule.Interval, except int64) ([]heldRow, error) {
	b, err := s.currentBook(tx, typeID)
	if err != nil || b == nil {
		if err == nil {
			return heldRowsIndexed(tx, typeID, w, except)
		}
		return nil, err
	}
	return b.during(schedule.Interval{Start: w.Start.UTC(), End: w.End.UTC()}, except, notesOf(tx).types[typeID].inserted), nil
}

// activeCards lists the type's active cards, by id: from the book when it
// is current, else from the database.
func (s *Store) activeCards(tx *gorm.DB, typeID int64) ([]bookCard, error) {
	b, err := s.currentBook(tx, typeID)
	if err != nil {
		return nil, err
	}
	if b != nil {
		return b.cards, nil
	}
	return readActiveCards(tx, typeID)
}

// readActiveCards reads the type's active cards, by id.
func readActiveCards(tx *gorm.DB, typeID int64) ([]bookCard, error) {
	var cards []bookCard
	err := tx.Model(&Card{}).Select("id, uuid").Where("card_type_id = ? AND status = ?", typeID, CardActive).Order("id").Scan(&cards).Error
	return cards, err
}
