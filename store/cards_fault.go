package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// faultReasonWidth is what cards.fault_reason holds.
const faultReasonWidth = 200

// MarkCardFault takes an active card out of service because its telemetry
// reports it unhealthy (a reset-required or unknown-error reading, XID
// errors): it becomes faulty with the reason and the time, and no booking is
// placed on it until an admin clears it. A card under maintenance, retired
// or faulty already is left as it is (changed is false; nothing is written
// or audited), so the caller may report every faulty sample. Bookings
// already on the card are not touched. The change is audited as made by the
// telemetry unless ctx names an actor.
//
// It is written as UpdateCard writes a status: under the card type's lock,
// whose generation tells every process's placement book to read the cards
// again.
func (s *Store) MarkCardFault(ctx context.Context, cardID int64, reason string, at time.Time) (changed bool, err error) {
	const op = "store.MarkCardFault"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	reason = truncate(strings.TrimSpace(reason), faultReasonWidth)
	at = at.UTC().Truncate(time.Microsecond)
	if at.IsZero() {
		at = s.now()
	}
	ctx = orTelemetry(ctx)
	// Read first, outside any lock: a card that is not active changes
	// nothing, and a sample of a card faulty already must not take the
	// type's lock (and make every book be read again).
	var found Card
	if err := s.read(ctx).First(&found, cardID).Error; err != nil {
		return false, withKey(translate(op, err), "card.not_found")
	}
	if found.Status != CardActive {
		return false, nil
	}
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		// From the card as read above on every run: a failed run read it
		// back faulty.
		c := found
		changed = false
		if err := s.changeCardsOf(tx, c.CardTypeID); err != nil {
			return err
		}
		before := c
		// Only an active card of the type just locked: one changed
		// meanwhile (retired, moved, faulty through another process) is
		// left as the other change made it.
		res := tx.Model(&Card{}).Where("id = ? AND card_type_id = ? AND status = ?", cardID, c.CardTypeID, CardActive).
			Updates(map[string]any{"status": CardFault, "fault_reason": reason, "fault_at": at, "updated_at": s.now()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return nil
		}
		changed = true
		if err := tx.First(&c, cardID).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "fault", "card", c.ID, truncate(c.UUID+": "+reason, 255), before, c)
	})
	if err != nil {
		return false, err
	}
	return changed, nil
}

// ClearCardFault returns a faulty card to service; only admins may. A card
// that is not faulty is a conflict (card.not_faulty). Its open fault
// alert ends with it.
func (s *Store) ClearCardFault(ctx context.Context, cardID int64) (*Card, error) {
	const op = "store.ClearCardFault"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	var c Card
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		c = Card{}
		if _, err := requireAdmin(ctx, tx, op); err != nil {
			return err
		}
		if err := tx.First(&c, cardID).Error; err != nil {
			return withKey(translate(op, err), "card.not_found")
		}
		if err := s.changeCardsOf(tx, c.CardTypeID); err != nil {
			return err
		}
		// Read again under the lock: the card may have changed since.
		if err := tx.First(&c, cardID).Error; err != nil {
			return withKey(translate(op, err), "card.not_found")
		}
		if c.Status != CardFault {
			return errs.E(errs.Conflict, op, "card.not_faulty")
		}
		before := c
		now := s.now()
		c.Status, c.UpdatedAt = CardActive, now
		if err := endFault(tx, &c, now); err != nil {
			return err
		}
		if err := tx.Save(&c).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "clear_fault", "card", c.ID, c.UUID, before, c)
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// endFault forgets a card's fault reading and ends its open fault alert:
// the episode ends with an admin's word (cleared, sent to maintenance,
// retired), not with the next healthy-looking sample. The caller saves c.
func endFault(tx *gorm.DB, c *Card, now time.Time) error {
	c.FaultReason, c.FaultAt = "", nil
	return tx.Model(&Alert{}).Where("kind = ? AND card_id = ? AND ended_at IS NULL", AlertFault, c.ID).
		Updates(map[string]any{"ended_at": now, "open_key": nil}).Error
}
