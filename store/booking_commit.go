package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// commitPlacement writes a placed booking: the booking row, one row per
// assigned card, and the preemption of displaced backfill bookings. before
// is the stored booking when a waiting one is placed, nil for a new one.
func (s *Store) commitPlacement(ctx context.Context, tx *gorm.DB, before, b *Booking, res *BookingResult) error {
	p := b.pending
	if p == nil {
		return errs.Internalf("store.commitPlacement", "booking %d has no placement", b.ID)
	}
	now := s.now()
	b.ConfirmedAt = &now
	b.UpdatedAt = now
	if err := s.saveBooking(tx, before, b); err != nil {
		return err
	}
	w := deferredWrites(tx)
	for _, cardID := range p.cards {
		bc := bookingCard{BookingID: b.ID, CardID: cardID, CardTypeID: b.CardTypeID, StartAt: b.StartAt, EndAt: b.EndAt, Held: true}
		if w != nil {
			w.cards = append(w.cards, bc)
		} else if err := tx.Create(&bc).Error; err != nil {
			return err
		}
		noteInserted(tx, b.CardTypeID, heldRow{CardID: cardID, BookingID: b.ID, TeamID: b.TeamID,
			StartAt: b.StartAt.UTC(), EndAt: b.EndAt.UTC(), Priority: b.Priority})
	}
	for _, id := range p.preempt {
		if err := s.preempt(ctx, tx, id, b); err != nil {
			return err
		}
	}
	res.Cards = p.uuids
	b.pending = nil
	return nil
}

// preempt cuts a backfill booking short where a core booking needs its
// cards: it ends when the core booking starts (or now), and its owner is
// told why.
func (s *Store) preempt(ctx context.Context, tx *gorm.DB, id int64, by *Booking) error {
	// The victim's held rows, even the victim, may be among the writes
	// still deferred.
	if err := flushDeferred(tx); err != nil {
		return err
	}
	id = deferredWrites(tx).realID(id)
	var victim Booking
	if err := tx.First(&victim, id).Error; err != nil {
		return err
	}
	before := victim
	cut := by.StartAt
	if now := s.now(); cut.Before(now) {
		cut = now
	}
	if cut.Before(victim.StartAt) {
		cut = victim.StartAt
	}
	victim.State = BookingPreempted
	victim.EndedAt = &cut
	victim.StateNote = fmt.Sprintf("booking #%d", by.ID)
	victim.UpdatedAt = s.now()
	if err := s.saveBooking(tx, &before, &victim); err != nil {
		return err
	}
	noteBookChanged(tx, victim.CardTypeID)
	held := tx.Model(&bookingCard{}).Where("booking_id = ?", id)
	if cut.After(victim.StartAt) {
		if err := held.Update("end_at", cut).Error; err != nil {
			return err
		}
	} else if err := held.Update("held", false).Error; err != nil {
		return err
	}
	var task Task
	if err := tx.First(&task, by.TaskID).Error; err != nil {
		return err
	}
	if err := s.notify(tx, victim.UserID, "preempted", "notify.preempted", fmt.Sprintf("/bookings/%d", victim.ID), victim.ID, task.Name); err != nil {
		return err
	}
	return s.audit(ctx, tx, "preempt", "booking", victim.ID, fmt.Sprintf("by booking #%d (%s)", by.ID, task.Name), before, victim)
}

// Notification is an in-app message to one user.
type Notification struct {
	ID         int64      `json:"id"`
	UserID     int64      `json:"user_id"`
	Kind       string     `json:"kind"`
	MessageKey string     `json:"message_key"`
	ArgsJSON   string     `json:"-"`
	Link       string     `json:"link"`
	CreatedAt  time.Time  `json:"created_at"`
	ReadAt     *time.Time `json:"read_at"`
}

// Args decodes the message arguments.
func (n Notification) Args() []any {
	var out []any
	_ = json.Unmarshal([]byte(n.ArgsJSON), &out)
	return out
}

func (s *Store) notify(tx *gorm.DB, userID int64, kind, key, link string, args ...any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return tx.Create(&Notification{UserID: userID, Kind: kind, MessageKey: key, ArgsJSON: string(b), Link: link, CreatedAt: s.now()}).Error
}

// FindNotifications lists a user's newest notifications.
func (s *Store) FindNotifications(ctx context.Context, userID int64, unreadOnly bool, limit int) ([]Notification, error) {
	q := s.read(ctx).Where("user_id = ?", userID)
	if unreadOnly {
		q = q.Where("read_at IS NULL")
	}
	var out []Notification
	if err := q.Order("id DESC").Limit(limitOr(limit, 20)).Find(&out).Error; err != nil {
		return nil, translate("store.FindNotifications", err)
	}
	return out, nil
}

// MarkNotificationsRead marks all of a user's notifications read.
func (s *Store) MarkNotificationsRead(ctx context.Context, userID int64) error {
	err := s.read(ctx).Model(&Notification{}).Where("user_id = ? AND read_at IS NULL", userID).Update("read_at", s.now()).Error
	return translate("store.MarkNotificationsRead", err)
}

// checkQuota tests cards over w against the team's quota for the card type,
// counting every live or finished booking but except (nil for none): the
// quota's running total, less what except draws, and the peak of cards held
// during w.
func (s *Store) checkQuota(tx *gorm.DB, teamID, cardTypeID int64, cards int, w schedule.Interval, except *Booking) (schedule.QuotaVerdict, *Quota, error) {
	q, err := s.quotaFor(tx, teamID, cardTypeID, w.Start)
	if err != nil || q == nil {
		return schedule.CheckQuota(nil, cards, w, 0, 0), nil, err
	}
	sq := q.policy()
	var exceptID int64
	if except != nil {
		exceptID = except.ID
	}
	// The cap on cards at once needs the peak only when there is a cap and
	// w lies inside the quota (outside it the verdict is already no).
	var peak int
	if q.MaxCards > 0 && !w.Start.Before(sq.ValidFrom) && !w.End.After(sq.ExpiresAt) {
		if peak, err = s.teamHeldPeak(tx, teamID, cardTypeID, w, exceptID); err != nil {
			return schedule.QuotaVerdict{}, nil, err
		}
	}
	used := q.UsedCardSeconds - drawnCardSeconds(except, q.window())
	return schedule.CheckQuota(&sq, cards, w, used, peak), q, nil
}

func fieldErr(op, field, key string) error {
	return &errs.Error{Code: errs.Invalid, Op: op, Key: key, Fields: map[string]string{field: key}}
}

func hours(seconds int64) string {
	return fmt.Sprintf("%.1f", float64(seconds)/3600)
}

func quotaErr(op string, v schedule.QuotaVerdict) error {
	switch v.Limit {
	case schedule.LimitHours:
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.over_hours", Args: []any{hours(v.OverBy)}}
	case schedule.LimitCards:
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.over_cards", Args: []any{v.OverBy}}
	case schedule.LimitExpiry:
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.past_expiry", Args: []any{hours(v.OverBy)}}
	case schedule.LimitNotYet:
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.not_yet_valid", Args: []any{hours(v.OverBy)}}
	}
	return &errs.Error{Code: errs.Conflict, Op: op, Key: "quota.none"}
}

func quotaSummary(v schedule.QuotaVerdict) string {
	return fmt.Sprintf("quota %s exceeded by %d", v.Limit, v.OverBy)
}

func noCapacityErr(op string, s *schedule.Shortfall) error {
	if s.Reserved {
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "booking.no_capacity_reserved", Args: []any{s.Wanted, s.Free}}
	}
	return &errs.Error{Code: errs.Conflict, Op: op, Key: "booking.no_capacity", Args: []any{s.Wanted, s.Free}}
}
