package store

import (
	"database/sql"
	"math"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// On MySQL the card type's lock was an UPDATE of its generation, and a
// process whose book was behind (with several replicas, nearly always)
// then read the change log in a second round trip while every booking of
// the type waited. Instead the lock is a locking read of the type's row
// joined with the log past the kept book's generation: one round trip
// brings the lock, the type and what changed. The new generation is
// written at the end of the transaction (raiseGen, from endTxLog), in the
// statement that moves the batch's first quota total when there is one;
// the row stays locked in between, so nobody else takes the generation.
// On Galera the update still puts the row in the write set, so two nodes'
// transactions of one type still fail certification against each other.

type lockedTypeRow struct {
	CardType
	BookingGen int64
	LGen       *int64     `gorm:"column:l_generation"`
	LSeq       *int       `gorm:"column:l_seq"`
	LKind      *string    `gorm:"column:l_kind"`
	LBooking   *int64     `gorm:"column:l_booking_id"`
	LCard      *int64     `gorm:"column:l_card_id"`
	LTeam      *int64     `gorm:"column:l_team_id"`
	LPriority  *string    `gorm:"column:l_priority"`
	LStart     *time.Time `gorm:"column:l_start_at"`
	LEnd       *time.Time `gorm:"column:l_end_at"`
	LQuota     *int64     `gorm:"column:l_quota_id"`
	LDelta     *int64     `gorm:"column:l_delta"`
}

const lockTypeSQL = `SELECT c.*, l.generation AS l_generation, l.seq AS l_seq, l.kind AS l_kind,
 l.booking_id AS l_booking_id, l.card_id AS l_card_id, l.team_id AS l_team_id, l.priority AS l_priority,
 l.start_at AS l_start_at, l.end_at AS l_end_at, l.quota_id AS l_quota_id, l.delta AS l_delta
FROM card_types c LEFT JOIN book_changes l ON l.card_type_id = c.id AND l.generation > ?
WHERE c.id = ? ORDER BY l.generation, l.seq FOR UPDATE`

// lockCardTypeMySQL is lockCardType's locking read, for a transaction with
// notes (txOnce: its end writes the generation).
func (s *Store) lockCardTypeMySQL(tx *gorm.DB, id int64, ct *CardType) error {
	const op = "store.lockCardType"
	from := int64(math.MaxInt64) // no book: no log wanted
	s.books.mu.Lock()
	if b := s.books.books[id]; b != nil {
		from = b.gen
	}
	s.books.mu.Unlock()
	rows, err := tx.Raw(lockTypeSQL, from, id).Rows()
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return errs.E(errs.NotFound, op, "cardtype.not_found")
	}
	var first lockedTypeRow
	if err := tx.ScanRows(rows, &first); err != nil {
		return err
	}
	gen := first.BookingGen + 1
	tn := noteLocked(tx, id, gen)
	tn.bump = true
	c := first.CardType
	*ct, tn.cardType = c, &c
	if from != math.MaxInt64 {
		tn.hasPrefetch, tn.prefetchFrom, tn.prefetched = true, from, nil
		r := &first
		dest, err := logColumns(rows, r)
		if err != nil {
			return err
		}
		for {
			if r.LGen != nil {
				tn.prefetched = append(tn.prefetched, bookChange{CardTypeID: id, Generation: *r.LGen, Seq: deref(r.LSeq),
					Kind: deref(r.LKind), BookingID: deref(r.LBooking), CardID: deref(r.LCard), TeamID: deref(r.LTeam),
					Priority: deref(r.LPriority), StartAt: r.LStart, EndAt: r.LEnd, QuotaID: deref(r.LQuota), Delta: deref(r.LDelta)})
			}
			if !rows.Next() {
				break
			}
			// The next rows repeat the type's columns: only the log's are
			// read (scanned by gorm, each row cost as much as the rest of
			// the lock with several replicas).
			*r = lockedTypeRow{}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return s.logLocked(tx, tn, id, gen)
}

// logColumns are the scan destinations of the lock's rows: r's log
// fields for the log's columns, a discarded value for the type's.
func logColumns(rows *sql.Rows, r *lockedTypeRow) ([]any, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	fields := map[string]any{"l_generation": &r.LGen, "l_seq": &r.LSeq, "l_kind": &r.LKind, "l_booking_id": &r.LBooking,
		"l_card_id": &r.LCard, "l_team_id": &r.LTeam, "l_priority": &r.LPriority, "l_start_at": &r.LStart,
		"l_end_at": &r.LEnd, "l_quota_id": &r.LQuota, "l_delta": &r.LDelta}
	dest := make([]any, len(cols))
	for i, c := range cols {
		if f, ok := fields[c]; ok {
			dest[i] = f
		} else {
			dest[i] = new(sql.RawBytes)
		}
	}
	return dest, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// raiseGen writes the generation tx made of a type it locked with a
// locking read: with the first of the type's quota totals the batch moves,
// when it moves one (one statement instead of two), else alone.
func raiseGen(tx *gorm.DB, typeID int64, tn *typeNote) error {
	tn.bump = false
	if w := deferredWrites(tx); w != nil {
		for qid := range tn.quotaUse {
			d := w.quotaUse[qid]
			if d == 0 {
				continue
			}
			res := tx.Exec("UPDATE card_types c, quotas q SET c.booking_gen = ?, q.used_card_seconds = q.used_card_seconds + ? WHERE c.id = ? AND q.id = ?",
				tn.gen, d, typeID, qid)
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected != 2 {
				return errs.Internalf("store.raiseGen", "card type %d, quota %d: %d rows changed, want 2", typeID, qid, res.RowsAffected)
			}
			delete(w.quotaUse, qid)
			return nil
		}
	}
	res := tx.Exec("UPDATE card_types SET booking_gen = ? WHERE id = ?", tn.gen, typeID)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != 1 {
		return errs.Internalf("store.raiseGen", "card type %d: %d rows changed, want 1", typeID, res.RowsAffected)
	}
	return nil
}
