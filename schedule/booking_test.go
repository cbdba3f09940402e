package schedule_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"cardhour/schedule"
)

// The window of the bookings below: [t0+2h, t0+6h).
var (
	bkStart  = t0.Add(2 * time.Hour)
	bkEnd    = t0.Add(6 * time.Hour)
	bkBefore = t0
	bkMid    = t0.Add(4 * time.Hour)
	bkAfter  = t0.Add(8 * time.Hour)
)

func TestCheckAction(t *testing.T) {
	const (
		pending   = schedule.StatePending
		confirmed = schedule.StateConfirmed
		active    = schedule.StateActive
		completed = schedule.StateCompleted
		released  = schedule.StateReleased
		cancelled = schedule.StateCancelled
		preempted = schedule.StatePreempted
		noShow    = schedule.StateNoShow
		rejected  = schedule.StateRejected
	)
	cases := []struct {
		name   string
		action schedule.Action
		state  string
		wait   string
		now    time.Time
		want   schedule.Refusal
	}{
		// Release: confirmed or active, while the window lasts.
		{"release of a waiting booking is refused by its state", schedule.Release, pending, schedule.WaitCapacity, bkMid, schedule.RefusedState},
		{"release of a confirmed booking before its start is refused as not started: it is cancelled", schedule.Release, confirmed, "", bkBefore, schedule.RefusedNotStarted},
		{"release of a confirmed booking at its start is allowed", schedule.Release, confirmed, "", bkStart, schedule.Allowed},
		{"release of a confirmed booking whose start passed is allowed", schedule.Release, confirmed, "", bkMid, schedule.Allowed},
		{"release of an active booking is allowed", schedule.Release, active, "", bkMid, schedule.Allowed},
		{"release of an active booking at its start is allowed", schedule.Release, active, "", bkStart, schedule.Allowed},
		{"release of an active booking at its end is refused as over", schedule.Release, active, "", bkEnd, schedule.RefusedOver},
		{"release of a confirmed booking at its end is refused as over", schedule.Release, confirmed, "", bkEnd, schedule.RefusedOver},
		{"release of an active booking after its end is refused as over", schedule.Release, active, "", bkAfter, schedule.RefusedOver},
		{"release of a completed booking is refused by its state", schedule.Release, completed, "", bkMid, schedule.RefusedState},
		{"release of a released booking is refused by its state", schedule.Release, released, "", bkMid, schedule.RefusedState},
		{"release of a cancelled booking is refused by its state", schedule.Release, cancelled, "", bkMid, schedule.RefusedState},
		{"release of a preempted booking is refused by its state", schedule.Release, preempted, "", bkMid, schedule.RefusedState},
		{"release of a no-show is refused by its state", schedule.Release, noShow, "", bkMid, schedule.RefusedState},
		{"release of an ended booking is refused by its state before the clock", schedule.Release, completed, "", bkAfter, schedule.RefusedState},

		// Cancel: waiting, or confirmed and not begun.
		{"cancel of a waiting booking is allowed", schedule.Cancel, pending, schedule.WaitApproval, bkBefore, schedule.Allowed},
		{"cancel of a booking waiting for data after its start is allowed", schedule.Cancel, pending, schedule.WaitData, bkMid, schedule.Allowed},
		{"cancel of a waiting booking whose window passed is allowed", schedule.Cancel, pending, schedule.WaitCapacity, bkAfter, schedule.Allowed},
		{"cancel of a confirmed booking before its start is allowed", schedule.Cancel, confirmed, "", bkBefore, schedule.Allowed},
		{"cancel of a confirmed booking a moment before its start is allowed", schedule.Cancel, confirmed, "", bkStart.Add(-time.Nanosecond), schedule.Allowed},
		{"cancel of a confirmed booking at its start is refused as running", schedule.Cancel, confirmed, "", bkStart, schedule.RefusedRunning},
		{"cancel of a confirmed booking whose start passed is refused as running", schedule.Cancel, confirmed, "", bkMid, schedule.RefusedRunning},
		{"cancel of an active booking is refused as running", schedule.Cancel, active, "", bkMid, schedule.RefusedRunning},
		{"cancel of an active booking at its start is refused as running", schedule.Cancel, active, "", bkStart, schedule.RefusedRunning},
		{"cancel of a completed booking is refused by its state", schedule.Cancel, completed, "", bkMid, schedule.RefusedState},
		{"cancel of a released booking is refused by its state", schedule.Cancel, released, "", bkMid, schedule.RefusedState},
		{"cancel of a cancelled booking is refused by its state", schedule.Cancel, cancelled, "", bkBefore, schedule.RefusedState},
		{"cancel of a preempted booking is refused by its state", schedule.Cancel, preempted, "", bkMid, schedule.RefusedState},
		{"cancel of a no-show is refused by its state", schedule.Cancel, noShow, "", bkMid, schedule.RefusedState},

		// Extend: live, while the window lasts.
		{"extend of a waiting booking is allowed", schedule.Extend, pending, schedule.WaitCapacity, bkMid, schedule.Allowed},
		{"extend of a booking waiting for data is allowed", schedule.Extend, pending, schedule.WaitData, bkBefore, schedule.Allowed},
		{"extend of a booking waiting for approval is refused: the manager approves what they saw", schedule.Extend, pending, schedule.WaitApproval, bkBefore, schedule.RefusedAwaitingApproval},
		{"extend of a booking waiting for approval after its window is refused as awaiting approval", schedule.Extend, pending, schedule.WaitApproval, bkAfter, schedule.RefusedAwaitingApproval},
		{"extend of a confirmed booking is allowed", schedule.Extend, confirmed, "", bkBefore, schedule.Allowed},
		{"extend of an active booking is allowed", schedule.Extend, active, "", bkMid, schedule.Allowed},
		{"extend of an active booking at its start is allowed", schedule.Extend, active, "", bkStart, schedule.Allowed},
		{"extend of an active booking a moment before its end is allowed", schedule.Extend, active, "", bkEnd.Add(-time.Nanosecond), schedule.Allowed},
		{"extend of an active booking at its end is refused as over", schedule.Extend, active, "", bkEnd, schedule.RefusedOver},
		{"extend of a waiting booking whose window passed is refused as over", schedule.Extend, pending, schedule.WaitData, bkAfter, schedule.RefusedOver},
		{"extend of a completed booking is refused by its state", schedule.Extend, completed, "", bkMid, schedule.RefusedState},
		{"extend of a released booking is refused by its state", schedule.Extend, released, "", bkMid, schedule.RefusedState},
		{"extend of a cancelled booking is refused by its state", schedule.Extend, cancelled, "", bkMid, schedule.RefusedState},
		{"extend of a preempted booking is refused by its state", schedule.Extend, preempted, "", bkMid, schedule.RefusedState},
		{"extend of a no-show is refused by its state", schedule.Extend, noShow, "", bkMid, schedule.RefusedState},
		{"extend of an ended booking is refused by its state before the clock", schedule.Extend, completed, "", bkAfter, schedule.RefusedState},

		// Approve: only a booking waiting for approval, whatever the clock.
		{"approve of a booking waiting for approval is allowed", schedule.Approve, pending, schedule.WaitApproval, bkBefore, schedule.Allowed},
		{"approve of a booking waiting for approval after its window is allowed", schedule.Approve, pending, schedule.WaitApproval, bkAfter, schedule.Allowed},
		{"approve of a booking queued for capacity is refused", schedule.Approve, pending, schedule.WaitCapacity, bkBefore, schedule.RefusedNotAwaitingApproval},
		{"approve of a booking waiting for data is refused", schedule.Approve, pending, schedule.WaitData, bkBefore, schedule.RefusedNotAwaitingApproval},
		{"approve of a confirmed booking is refused", schedule.Approve, confirmed, "", bkBefore, schedule.RefusedNotAwaitingApproval},
		{"approve of an active booking is refused", schedule.Approve, active, "", bkMid, schedule.RefusedNotAwaitingApproval},
		{"approve of a completed booking is refused", schedule.Approve, completed, "", bkMid, schedule.RefusedNotAwaitingApproval},
		{"approve of a released booking is refused", schedule.Approve, released, "", bkMid, schedule.RefusedNotAwaitingApproval},
		{"approve of a cancelled booking is refused even with its old wait reason", schedule.Approve, cancelled, schedule.WaitApproval, bkMid, schedule.RefusedNotAwaitingApproval},
		{"approve of a preempted booking is refused", schedule.Approve, preempted, "", bkMid, schedule.RefusedNotAwaitingApproval},
		{"approve of a no-show is refused", schedule.Approve, noShow, "", bkMid, schedule.RefusedNotAwaitingApproval},

		{"approve of a rejected booking is refused even with its old wait reason", schedule.Approve, rejected, schedule.WaitApproval, bkBefore, schedule.RefusedNotAwaitingApproval},

		// Reject: as approve, only a booking waiting for approval.
		{"reject of a booking waiting for approval is allowed", schedule.Reject, pending, schedule.WaitApproval, bkBefore, schedule.Allowed},
		{"reject of a booking waiting for approval after its window is allowed", schedule.Reject, pending, schedule.WaitApproval, bkAfter, schedule.Allowed},
		{"reject of a booking queued for capacity is refused", schedule.Reject, pending, schedule.WaitCapacity, bkBefore, schedule.RefusedNotAwaitingApproval},
		{"reject of a booking waiting for data is refused", schedule.Reject, pending, schedule.WaitData, bkBefore, schedule.RefusedNotAwaitingApproval},
		{"reject of a confirmed booking is refused", schedule.Reject, confirmed, "", bkBefore, schedule.RefusedNotAwaitingApproval},
		{"reject of an active booking is refused", schedule.Reject, active, "", bkMid, schedule.RefusedNotAwaitingApproval},
		{"reject of a completed booking is refused", schedule.Reject, completed, "", bkMid, schedule.RefusedNotAwaitingApproval},
		{"reject of a released booking is refused", schedule.Reject, released, "", bkMid, schedule.RefusedNotAwaitingApproval},
		{"reject of a cancelled booking is refused even with its old wait reason", schedule.Reject, cancelled, schedule.WaitApproval, bkMid, schedule.RefusedNotAwaitingApproval},
		{"reject of a preempted booking is refused", schedule.Reject, preempted, "", bkMid, schedule.RefusedNotAwaitingApproval},
		{"reject of a no-show is refused", schedule.Reject, noShow, "", bkMid, schedule.RefusedNotAwaitingApproval},
		{"reject of a rejected booking is refused: rejected is terminal", schedule.Reject, rejected, schedule.WaitApproval, bkBefore, schedule.RefusedNotAwaitingApproval},

		// Rejected is terminal for every other action too.
		{"release of a rejected booking is refused by its state", schedule.Release, rejected, "", bkMid, schedule.RefusedState},
		{"cancel of a rejected booking is refused by its state", schedule.Cancel, rejected, "", bkBefore, schedule.RefusedState},
		{"extend of a rejected booking is refused by its state", schedule.Extend, rejected, "", bkBefore, schedule.RefusedState},

		{"an unknown action is refused", schedule.Action("rename"), active, "", bkMid, schedule.RefusedState},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[string(c.action)+"/"+c.state] = true
		t.Run(c.name, func(t *testing.T) {
			f := schedule.Facts{State: c.state, WaitReason: c.wait, Start: bkStart, End: bkEnd}
			got := schedule.CheckAction(c.action, f, c.now)
			if got != c.want {
				t.Errorf("CheckAction(%s, %s/%s, now %v) = %q, want %q", c.action, c.state, c.wait, c.now.Sub(t0), got, c.want)
			}
			if got.OK() != (c.want == schedule.Allowed) {
				t.Errorf("OK() = %v", got.OK())
			}
		})
	}
	for _, a := range schedule.Actions {
		for _, st := range schedule.States {
			if !seen[string(a)+"/"+st] {
				t.Errorf("no case for %s of a %s booking", a, st)
			}
		}
	}
}

func TestReleasedState(t *testing.T) {
	f := schedule.Facts{State: schedule.StateActive, Start: bkStart, End: bkEnd}
	cases := []struct {
		name string
		now  time.Time
		want string
	}{
		{"released before its start it is cancelled", bkBefore, schedule.StateCancelled},
		{"released at its start it is cancelled: nothing was used", bkStart, schedule.StateCancelled},
		{"released a moment after its start it is released", bkStart.Add(time.Nanosecond), schedule.StateReleased},
		{"released mid-window it is released", bkMid, schedule.StateReleased},
	}
	for _, c := range cases {
		if got := schedule.ReleasedState(f, c.now); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

// TestCanTransition walks every pair of states: the ones listed (each a
// change the store makes, and why) are allowed, every other one refused.
func TestCanTransition(t *testing.T) {
	allowed := map[[2]string]string{
		{"", schedule.StatePending}:   "created waiting for approval, data or capacity",
		{"", schedule.StateConfirmed}: "created and placed ahead",
		{"", schedule.StateActive}:    "created and placed now",

		{schedule.StatePending, schedule.StatePending}:   "approved (now waits for capacity), or extended while waiting for capacity or data",
		{schedule.StatePending, schedule.StateConfirmed}: "placed from the queue ahead of its start",
		{schedule.StatePending, schedule.StateActive}:    "placed from the queue within its window",
		{schedule.StatePending, schedule.StateCancelled}: "cancelled, or expired while waiting",
		{schedule.StatePending, schedule.StateRejected}:  "rejected by a manager while it waited for approval",

		{schedule.StateConfirmed, schedule.StateConfirmed}: "extended",
		{schedule.StateConfirmed, schedule.StateActive}:    "activated at its start",
		{schedule.StateConfirmed, schedule.StatePending}:   "back to waiting: its data is not ready at the start",
		{schedule.StateConfirmed, schedule.StateCompleted}: "completed by a tick that came after its end",
		{schedule.StateConfirmed, schedule.StateReleased}:  "released after its start, before a tick activated it",
		{schedule.StateConfirmed, schedule.StateCancelled}: "cancelled before its start, or released at its very first instant",
		{schedule.StateConfirmed, schedule.StatePreempted}: "preempted before it began",

		{schedule.StateActive, schedule.StateActive}:    "extended",
		{schedule.StateActive, schedule.StateCompleted}: "completed",
		{schedule.StateActive, schedule.StateReleased}:  "released early",
		{schedule.StateActive, schedule.StateCancelled}: "released at the instant it began",
		{schedule.StateActive, schedule.StatePreempted}: "preempted",
		{schedule.StateActive, schedule.StateNoShow}:    "nothing ran on its cards",
	}
	froms := append([]string{""}, schedule.States...)
	for _, from := range froms {
		for _, to := range schedule.States {
			why, want := allowed[[2]string{from, to}]
			name := fmt.Sprintf("%s → %s is refused", label(from), to)
			if want {
				name = fmt.Sprintf("%s → %s is allowed: %s", label(from), to, why)
			}
			t.Run(name, func(t *testing.T) {
				if got := schedule.CanTransition(from, to); got != want {
					t.Errorf("CanTransition(%q, %q) = %v, want %v", from, to, got, want)
				}
			})
		}
	}
	for _, st := range schedule.States {
		if !schedule.Live(st) && slices.ContainsFunc(schedule.States, func(to string) bool { return schedule.CanTransition(st, to) }) {
			t.Errorf("terminal state %s allows a transition", st)
		}
	}
	if schedule.CanTransition(schedule.StateActive, "") || schedule.CanTransition("gone", schedule.StatePending) {
		t.Error("an unknown state takes part in a transition")
	}
}

func label(state string) string {
	if state == "" {
		return "new"
	}
	return state
}

func TestWithdrawn(t *testing.T) {
	for _, st := range schedule.States {
		want := st == schedule.StateCancelled || st == schedule.StateRejected
		if got := schedule.Withdrawn(st); got != want {
			t.Errorf("Withdrawn(%s) = %v, want %v", st, got, want)
		}
	}
}

func TestLiveStates(t *testing.T) {
	var live []string
	for _, st := range schedule.States {
		if schedule.Live(st) {
			live = append(live, st)
		}
	}
	if want := []string{schedule.StatePending, schedule.StateConfirmed, schedule.StateActive}; !slices.Equal(live, want) {
		t.Errorf("live states %v, want %v", live, want)
	}
}
