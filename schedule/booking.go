package schedule

import (
	"slices"
	"time"
)

// Booking states. A booking waits (pending) for approval, capacity or its
// data; once cards are assigned it is confirmed, active while its window
// runs, and ends completed, released (early), cancelled, preempted or
// no_show. A manager may refuse a booking waiting for approval: it ends
// rejected, with the reason.
const (
	StatePending   = "pending"
	StateConfirmed = "confirmed"
	StateActive    = "active"
	StateCompleted = "completed"
	StateReleased  = "released"
	StateCancelled = "cancelled"
	StatePreempted = "preempted"
	StateNoShow    = "no_show"
	StateRejected  = "rejected"
)

// States lists every booking state, the live ones first.
var States = []string{StatePending, StateConfirmed, StateActive, StateCompleted, StateReleased, StateCancelled, StatePreempted, StateNoShow, StateRejected}

// Why a pending booking waits.
const (
	WaitApproval = "approval"
	WaitCapacity = "capacity"
	WaitData     = "data"
)

// WaitReasons lists every reason a pending booking waits.
var WaitReasons = []string{WaitApproval, WaitCapacity, WaitData}

// Live tells whether a booking in state still holds or waits for cards.
func Live(state string) bool {
	return state == StatePending || state == StateConfirmed || state == StateActive
}

// Withdrawn tells whether a booking in state never drew anything: it was
// cancelled before it began, or rejected. Quotas, costs and the ledger
// count nothing of it.
func Withdrawn(state string) bool {
	return state == StateCancelled || state == StateRejected
}

// transitions are the state changes a booking may make, each one a change
// the store really makes; "" is a booking not stored yet. A state changing
// to itself is a change of something else (an extension, an approval that
// turns the wait for approval into one for capacity). The terminal states
// allow nothing.
var transitions = map[string][]string{
	// Created waiting (approval, data, capacity) or placed at once.
	"": {StatePending, StateConfirmed, StateActive},
	// Approved, or extended while waiting for capacity or data; placed from the queue; cancelled
	// by its owner or expired unplaced, rejected by a manager.
	StatePending: {StatePending, StateConfirmed, StateActive, StateCancelled, StateRejected},
	// Extended; begun; back to waiting when its data is not ready at the
	// start; completed or released when the clock passed it before it was
	// activated; cancelled before it began; preempted.
	StateConfirmed: {StateConfirmed, StateActive, StatePending, StateCompleted, StateReleased, StateCancelled, StatePreempted},
	// Extended; completed; released (cancelled when released at the very
	// instant it began: nothing was used); preempted; ended as a no-show.
	StateActive: {StateActive, StateCompleted, StateReleased, StateCancelled, StatePreempted, StateNoShow},
}

// CanTransition tells whether a booking in state from may be stored in
// state to; from "" asks which states a new booking may be created in.
func CanTransition(from, to string) bool {
	return slices.Contains(transitions[from], to)
}

// Action is something a person asks of a booking.
type Action string

// Actions on a booking.
const (
	Release Action = "release"
	Cancel  Action = "cancel"
	Extend  Action = "extend"
	Approve Action = "approve"
	Reject  Action = "reject"
)

// Actions lists every action.
var Actions = []Action{Release, Cancel, Extend, Approve, Reject}

// Facts are what the action rules read of a booking.
type Facts struct {
	State, WaitReason string
	Start, End        time.Time
}

// Refusal says why an action is not allowed; Allowed when it is.
type Refusal string

// Why an action is refused.
const (
	Allowed Refusal = ""
	// RefusedState: the booking's state does not allow the action.
	RefusedState Refusal = "state"
	// RefusedOver: the booking's window has ended.
	RefusedOver Refusal = "over"
	// RefusedRunning: a cancel of a booking whose window has begun (it may
	// be released instead).
	RefusedRunning Refusal = "running"
	// RefusedNotAwaitingApproval: an approval or rejection of a booking
	// that does not wait for one.
	RefusedNotAwaitingApproval Refusal = "not_awaiting_approval"
	// RefusedNotStarted: a release of a booking whose window has not begun
	// (nothing was used: it is cancelled instead). Release and cancel never
	// both apply, so a page offers the one that does.
	RefusedNotStarted Refusal = "not_started"
	// RefusedAwaitingApproval: an extension of a booking still waiting for
	// its manager, who would otherwise approve a window other than the one
	// they were shown.
	RefusedAwaitingApproval Refusal = "awaiting_approval"
)

// OK tells whether the action is allowed.
func (r Refusal) OK() bool { return r == Allowed }

// CheckAction returns the first reason the booking described by f refuses
// action a at now, or Allowed. Who may act (the owner, the team's managers)
// is the caller's question; this is the part the booking's state and
// window decide. The checks run in a fixed order — the state before the
// clock — so that callers which interleave their own checks (an extension
// checks its new end after the state) refuse in a stable order.
func CheckAction(a Action, f Facts, now time.Time) Refusal {
	switch a {
	case Release:
		// Held cards may be given back while the window lasts, once it has
		// begun; before, the booking is cancelled.
		if f.State != StateConfirmed && f.State != StateActive {
			return RefusedState
		}
		if !now.Before(f.End) {
			return RefusedOver
		}
		if f.State == StateConfirmed && now.Before(f.Start) {
			return RefusedNotStarted
		}
	case Cancel:
		// Withdrawn before it begins; once begun it is released instead.
		if f.State == StateActive || (f.State == StateConfirmed && !now.Before(f.Start)) {
			return RefusedRunning
		}
		if f.State != StatePending && f.State != StateConfirmed {
			return RefusedState
		}
	case Extend:
		if !Live(f.State) {
			return RefusedState
		}
		if f.State == StatePending && f.WaitReason == WaitApproval {
			return RefusedAwaitingApproval
		}
		if !now.Before(f.End) {
			return RefusedOver
		}
	case Approve, Reject:
		// A decision is made while the booking waits for it, whatever the
		// clock: one whose window passed still waits until the tick.
		if f.State != StatePending || f.WaitReason != WaitApproval {
			return RefusedNotAwaitingApproval
		}
	default:
		return RefusedState
	}
	return Allowed
}

// ReleasedState is the state a release at now leaves the booking in:
// released once its window has begun, cancelled at its very first instant
// (nothing was used). Call it once CheckAction allowed the release.
func ReleasedState(f Facts, now time.Time) string {
	if now.After(f.Start) {
		return StateReleased
	}
	return StateCancelled
}
