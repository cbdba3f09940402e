package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// loadOwnBooking locks the booking's card type, loads the booking and
// checks that the actor may change it: its owner, a manager of its team, or
// an admin.
func (s *Store) loadOwnBooking(ctx context.Context, tx *gorm.DB, op string, id int64, ct *CardType) (*Booking, *User, error) {
	var b Booking
	if err := tx.First(&b, id).Error; err != nil {
		return nil, nil, withKey(translate(op, err), "booking.not_found")
	}
	if err := s.lockCardType(tx, b.CardTypeID, ct); err != nil {
		return nil, nil, err
	}
	// Re-read under the lock: another process may have changed it.
	if err := tx.First(&b, id).Error; err != nil {
		return nil, nil, withKey(translate(op, err), "booking.not_found")
	}
	u, err := actorUser(ctx, tx, op)
	if err != nil {
		return nil, nil, err
	}
	if b.UserID != u.ID {
		ok, err := managesTeam(tx, u, b.TeamID)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return nil, nil, errs.E(errs.Forbidden, op, "booking.not_yours")
		}
	}
	return &b, u, nil
}

// refusalErr is the conflict a refusal of action on b answers, nil when
// the action is allowed; the keys and arguments are the messages people
// see.
func refusalErr(op string, a schedule.Action, b *Booking, r schedule.Refusal) error {
	switch r {
	case schedule.Allowed:
		return nil
	case schedule.RefusedOver:
		return errs.E(errs.Conflict, op, "booking.already_over")
	case schedule.RefusedRunning:
		return errs.E(errs.Conflict, op, "booking.cancel_running")
	case schedule.RefusedNotAwaitingApproval:
		return errs.E(errs.Conflict, op, "booking.not_awaiting_approval")
	case schedule.RefusedNotStarted:
		return errs.E(errs.Conflict, op, "booking.release_not_started")
	case schedule.RefusedAwaitingApproval:
		return errs.E(errs.Conflict, op, "booking.extend_awaiting_approval")
	case schedule.RefusedState:
		switch a {
		case schedule.Release:
			return errs.E(errs.Conflict, op, "booking.not_releasable", b.State)
		case schedule.Cancel:
			return errs.E(errs.Conflict, op, "booking.not_cancellable", b.State)
		case schedule.Extend:
			return errs.E(errs.Conflict, op, "booking.not_extendable", b.State)
		}
	}
	return errs.Internalf(op, "no message for the refusal %q of %s", r, a)
}

// ReleaseResult tells how much a release gave back.
type ReleaseResult struct {
	Booking             *Booking
	ReturnedCardSeconds int64
	ReturnedFen         int64
}

// ReleaseBooking gives cards back early ("用完早释放"): the booking ends now,
// the unused card-hours return to the quota and the pool, and waiting
// requests are placed on the freed cards.
func (s *Store) ReleaseBooking(ctx context.Context, id int64) (*ReleaseResult, error) {
	const op = "store.ReleaseBooking"
	var res ReleaseResult
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		res = ReleaseResult{}
		var ct CardType
		b, _, err := s.loadOwnBooking(ctx, tx, op, id, &ct)
		if err != nil {
			return err
		}
		now := s.now()
		if err := refusalErr(op, schedule.Release, b, schedule.CheckAction(schedule.Release, b.Facts(), now)); err != nil {
			return err
		}
		before := *b
		b.State = schedule.ReleasedState(b.Facts(), now)
		noteBookingMoved(tx, b.CardTypeID, b.ID)
		if b.State == BookingReleased {
			res.ReturnedCardSeconds = schedule.CardSeconds(b.CardCount, now, b.EndAt)
			if err := tx.Model(&bookingCard{}).Where("booking_id = ?", b.ID).Update("end_at", now).Error; err != nil {
				return err
			}
		} else {
			// Released at the instant it began: nothing was used, everything returns.
			res.ReturnedCardSeconds = schedule.CardSeconds(b.CardCount, b.StartAt, b.EndAt)
			if err := tx.Model(&bookingCard{}).Where("booking_id = ?", b.ID).Update("held", false).Error; err != nil {
				return err
			}
		}
		full := schedule.CardSeconds(b.CardCount, b.StartAt, b.EndAt)
		res.ReturnedFen = schedule.RefundFen(full, full-res.ReturnedCardSeconds, b.PriceFen)
		b.EndedAt = &now
		b.UpdatedAt = now
		if err := s.saveBooking(tx, &before, b); err != nil {
			return err
		}
		if err := s.auditNoted(ctx, tx, "release", "booking", b.ID, auditMsg("audit.sum.returned", argText(schedule.HoursText(res.ReturnedCardSeconds))), before, b); err != nil {
			return err
		}
		res.Booking = b
		return s.placeWaiting(ctx, tx, &ct)
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// CancelBooking withdraws a booking that has not started.
func (s *Store) CancelBooking(ctx context.Context, id int64) (*Booking, error) {
	const op = "store.CancelBooking"
	var out *Booking
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		out = nil
		var ct CardType
		b, _, err := s.loadOwnBooking(ctx, tx, op, id, &ct)
		if err != nil {
			return err
		}
		now := s.now()
		if err := refusalErr(op, schedule.Cancel, b, schedule.CheckAction(schedule.Cancel, b.Facts(), now)); err != nil {
			return err
		}
		before := *b
		noteBookingMoved(tx, b.CardTypeID, b.ID)
		if err := tx.Model(&bookingCard{}).Where("booking_id = ?", b.ID).Update("held", false).Error; err != nil {
			return err
		}
		b.State, b.WaitReason, b.EndedAt, b.UpdatedAt = BookingCancelled, "", &now, now
		if err := s.saveBooking(tx, &before, b); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, "cancel", "booking", b.ID, "", before, b); err != nil {
			return err
		}
		out = b
		return s.placeWaiting(ctx, tx, &ct)
	})
	return out, err
}

// ExtendBooking moves a booking's end later when its cards are free for the
// extra time and the quota allows it.
func (s *Store) ExtendBooking(ctx context.Context, id int64, newEnd time.Time) (*Booking, error) {
	const op = "store.ExtendBooking"
	newEnd = newEnd.UTC()
	var out *Booking
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		out = nil
		var ct CardType
		b, u, err := s.loadOwnBooking(ctx, tx, op, id, &ct)
		if err != nil {
			return err
		}
		now := s.now()
		// The state first, then the new end, then the clock: a request for
		// an end no later than today's is told so even once the window is
		// over.
		refusal := schedule.CheckAction(schedule.Extend, b.Facts(), now)
		switch {
		case refusal == schedule.RefusedState:
			return refusalErr(op, schedule.Extend, b, refusal)
		case !newEnd.After(b.EndAt):
			return fieldErr(op, "end", "booking.extend_not_later")
		case newEnd.After(now.Add(s.policy.Horizon)):
			return fieldErr(op, "end", "booking.past_horizon")
		case !refusal.OK():
			return refusalErr(op, schedule.Extend, b, refusal)
		}
		extra := schedule.Interval{Start: b.EndAt, End: newEnd}
		verdict, _, err := s.checkQuota(tx, b.TeamID, b.CardTypeID, b.CardCount, schedule.Interval{Start: b.StartAt, End: newEnd}, b)
		if err != nil {
			return err
		}
		if !verdict.OK() {
			manager, err := managesTeam(tx, u, b.TeamID)
			if err != nil {
				return err
			}
			if !manager {
				return quotaErr(op, verdict)
			}
		}
		if b.State != BookingPending {
			var mine []int64
			if err := tx.Model(&bookingCard{}).Where("booking_id = ? AND held = ?", b.ID, true).Pluck("card_id", &mine).Error; err != nil {
				return err
			}
			busy, err := heldAssignmentsIndexed(tx, b.CardTypeID, extra, b.ID)
			if err != nil {
				return err
			}
			for _, a := range busy {
				for _, c := range mine {
					if a.CardID == c {
						return errs.E(errs.Conflict, op, "booking.extend_conflict", a.Start.Format(time.RFC3339))
					}
				}
			}
			noteBookingMoved(tx, b.CardTypeID, b.ID)
			if err := tx.Model(&bookingCard{}).Where("booking_id = ? AND held = ?", b.ID, true).Update("end_at", newEnd).Error; err != nil {
				return err
			}
		}
		before := *b
		b.EndAt, b.UpdatedAt = newEnd, now
		if err := s.saveBooking(tx, &before, b); err != nil {
			return err
		}
		out = b
		return s.auditNoted(ctx, tx, "extend", "booking", b.ID, auditMsg("audit.sum.extended", argTime(newEnd)), before, b)
	})
	return out, err
}

// ApproveBooking lets a team manager pass a booking that waits for approval;
// it is then placed, or queued for capacity. The decision is recorded and
// the requester told it was approved (not the queue's "placed" notice).
func (s *Store) ApproveBooking(ctx context.Context, id int64) (*BookingResult, error) {
	const op = "store.ApproveBooking"
	var res BookingResult
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		res = BookingResult{}
		var ct CardType
		b, u, err := s.loadOwnBooking(ctx, tx, op, id, &ct)
		if err != nil {
			return err
		}
		manager, err := managesTeam(tx, u, b.TeamID)
		if err != nil {
			return err
		}
		if !manager {
			return errs.E(errs.Forbidden, op, "booking.approve_managers")
		}
		if err := refusalErr(op, schedule.Approve, b, schedule.CheckAction(schedule.Approve, b.Facts(), s.now())); err != nil {
			return err
		}
		before := *b
		now := s.now()
		b.WaitReason, b.DecidedBy, b.DecidedAt, b.UpdatedAt = WaitCapacity, &u.ID, &now, now
		if err := s.saveBooking(tx, &before, b); err != nil {
			return err
		}
		if err := s.audit(ctx, tx, "approve", "booking", b.ID, "", before, b); err != nil {
			return err
		}
		if err := s.placeQueue(ctx, tx, &ct, b.ID); err != nil {
			return err
		}
		if err := tx.First(b, id).Error; err != nil {
			return err
		}
		res.Booking = b
		if err := tx.Table("booking_cards bc").Joins("JOIN cards c ON c.id = bc.card_id").
			Where("bc.booking_id = ? AND bc.held = ?", b.ID, true).Pluck("c.uuid", &res.Cards).Error; err != nil {
			return err
		}
		link := fmt.Sprintf("/bookings/%d", b.ID)
		switch {
		case b.State != BookingPending:
			return s.notifyTeam(tx, b.TeamID, b.UserID, "approved", NoticeApproved, link, b.ID, len(res.Cards))
		case b.WaitReason == WaitData:
			return s.notifyTeam(tx, b.TeamID, b.UserID, "approved", NoticeApprovedData, link, b.ID)
		default:
			return s.notifyTeam(tx, b.TeamID, b.UserID, "approved", NoticeApprovedQueued, link, b.ID)
		}
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// placeWaiting places the card type's waiting requests in queue order: core
// first, data-ready first, then first come ("就绪的先跑"). It runs inside
// the transaction that freed capacity, under the card type's lock.
func (s *Store) placeWaiting(ctx context.Context, tx *gorm.DB, ct *CardType) error {
	return s.placeQueue(ctx, tx, ct, 0)
}

// placeQueue is placeWaiting; the booking decided (just approved, 0 for
// none) gets no "placed" notice: its requester is told of the approval.
func (s *Store) placeQueue(ctx context.Context, tx *gorm.DB, ct *CardType, decided int64) error {
	now := s.now()
	type waitingRow struct {
		Booking
		Readiness string `gorm:"column:data_readiness"`
	}
	var rows []waitingRow
	err := tx.Table("bookings b").Select("b.*, t.data_readiness").
		Joins("JOIN tasks t ON t.id = b.task_id").
		Where("b.card_type_id = ? AND b.state = ? AND b.wait_reason IN ? AND b.end_at > ?", ct.ID, BookingPending, []string{WaitCapacity, WaitData}, now).
		Scan(&rows).Error
	if err != nil || len(rows) == 0 {
		return err
	}
	queue := make([]schedule.Waiting, len(rows))
	byID := map[int64]*waitingRow{}
	for i := range rows {
		r := &rows[i]
		queue[i] = schedule.Waiting{BookingID: r.ID, Priority: r.Priority, Readiness: r.Readiness, Submitted: r.SubmittedAt}
		byID[r.ID] = r
	}
	schedule.OrderQueue(queue)
	for _, w := range queue {
		r := byID[w.BookingID]
		b := r.Booking
		// A booking whose data is not ready keeps waiting once its window
		// has begun; its cards go to the next ready request.
		if r.Readiness == schedule.DataNotReady && !b.StartAt.After(now) {
			if b.WaitReason != WaitData {
				if err := tx.Model(&Booking{}).Where("id = ?", b.ID).Update("wait_reason", WaitData).Error; err != nil {
					return err
				}
			}
			continue
		}
		if b.StartAt.Before(now) {
			b.StartAt = now
		}
		before := b
		_, short, err := s.place(tx, ct, &b)
		if err != nil {
			return err
		}
		if short != nil {
			continue
		}
		var res BookingResult
		if err := s.commitPlacement(ctx, tx, &r.Booking, &b, &res); err != nil {
			return err
		}
		if b.ID != decided {
			if err := s.notifyTeam(tx, b.TeamID, b.UserID, "placed", "notify.placed", fmt.Sprintf("/bookings/%d", b.ID), b.ID); err != nil {
				return err
			}
		}
		if err := s.auditNoted(ctx, tx, "place", "booking", b.ID, auditMsg("audit.sum.placed"), before, b); err != nil {
			return err
		}
	}
	return nil
}

// TickResult counts what a tick changed.
type TickResult struct {
	Activated, Completed, Expired, BackToData, NoShows int
}

func (r *TickResult) add(o TickResult) {
	r.Activated += o.Activated
	r.Completed += o.Completed
	r.Expired += o.Expired
	r.BackToData += o.BackToData
	r.NoShows += o.NoShows
}

// Tick moves bookings along with the clock: confirmed ones whose window
// began become active (or go back to waiting when their data is not ready),
// finished ones complete, waiting ones whose window passed expire, and each
// touched card type's queue is placed again. The server calls it every few
// seconds; it is idempotent, so several processes may call it.
func (s *Store) Tick(ctx context.Context) (TickResult, error) {
	const op = "store.Tick"
	var out TickResult
	now := s.now()
	var typeIDs []int64
	// start_at <= now is implied by end_at <= now, and lets the (state,
	// start_at) index leave out the bookings still ahead, however many.
	err := s.read(ctx).Model(&Booking{}).Distinct("card_type_id").
		Where("(state IN ? AND start_at <= ?) OR (state IN ? AND start_at <= ? AND end_at <= ?) OR (state = ? AND wait_reason IN ?)",
			[]string{BookingConfirmed}, now, []string{BookingConfirmed, BookingActive, BookingPending}, now, now, BookingPending, []string{WaitCapacity, WaitData}).
		Pluck("card_type_id", &typeIDs).Error
	if err != nil {
		return out, translate(op, err)
	}
	noShows, err := s.findNoShows(ctx, now)
	if err != nil {
		return out, err
	}
	for _, b := range noShows {
		if !slices.Contains(typeIDs, b.CardTypeID) {
			typeIDs = append(typeIDs, b.CardTypeID)
		}
	}
	for _, typeID := range typeIDs {
		// The type's counts, set afresh by each run of the transaction and
		// added to out only once it committed: a run rolled back after a
		// collision changed nothing, and must count nothing.
		var n TickResult
		err := s.tx(ctx, op, func(tx *gorm.DB) error {
			n = TickResult{}
			var ct CardType
			if err := s.lockCardType(tx, typeID, &ct); err != nil {
				return err
			}
			var due []Booking
			// Started or ended: a booking ends after it starts.
			if err := tx.Where("card_type_id = ? AND state IN ? AND start_at <= ?", typeID,
				[]string{BookingConfirmed, BookingActive, BookingPending}, now).Find(&due).Error; err != nil {
				return err
			}
			for i := range due {
				b := &due[i]
				before := *b
				switch {
				case !now.Before(b.EndAt) && b.State == BookingPending:
					b.State, b.NoteKey, b.NoteArgs = BookingCancelled, NoteExpired(b.WaitReason), nil
					b.EndedAt = &b.EndAt
					n.Expired++
				case !now.Before(b.EndAt):
					b.State, b.EndedAt = BookingCompleted, &b.EndAt
					n.Completed++
				case b.State == BookingConfirmed:
					var task Task
					if err := tx.First(&task, b.TaskID).Error; err != nil {
						return err
					}
					if task.DataReadiness == schedule.DataNotReady {
						// Cards are not kept idle waiting for data (数据没备好就占位卡空着等数据).
						noteBookingMoved(tx, b.CardTypeID, b.ID)
						if err := tx.Model(&bookingCard{}).Where("booking_id = ?", b.ID).Update("held", false).Error; err != nil {
							return err
						}
						b.State, b.WaitReason = BookingPending, WaitData
						if err := s.notifyTeam(tx, b.TeamID, b.UserID, "data_wait", "notify.data_wait", fmt.Sprintf("/bookings/%d", b.ID), b.ID); err != nil {
							return err
						}
						n.BackToData++
					} else {
						b.State = BookingActive
						n.Activated++
					}
				case b.State == BookingActive && noShows[b.ID] != nil:
					if err := s.endNoShow(tx, b, now); err != nil {
						return err
					}
					n.NoShows++
				default:
					continue
				}
				b.UpdatedAt = now
				if err := s.saveBooking(tx, &before, b); err != nil {
					return err
				}
				if before.State != b.State {
					if err := s.auditNoted(ctx, tx, "transition", "booking", b.ID, auditMsg("audit.sum.transition", argKey("bkstate."+before.State), argKey("bkstate."+b.State)), nil, nil); err != nil {
						return err
					}
				}
			}
			return s.placeWaiting(ctx, tx, &ct)
		})
		if err != nil {
			return out, err
		}
		out.add(n)
	}
	return out, nil
}
