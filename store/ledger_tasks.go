package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// Task kinds: what sort of work a task is. The yearly baseline gives the
// card-hours per unit of output for each, to size next year's quota.
// TaskKindNone ("") is a task nobody classified yet.
const (
	TaskKindNone      = ""
	TaskKindPretrain  = "pretrain"
	TaskKindFinetune  = "finetune"
	TaskKindEval      = "eval"
	TaskKindInference = "inference"
	TaskKindData      = "data"
	TaskKindOther     = "other"
)

// TaskKinds are the kinds a task may be given, in the order forms list them.
var TaskKinds = []string{TaskKindPretrain, TaskKindFinetune, TaskKindEval, TaskKindInference, TaskKindData, TaskKindOther}

// DeviationIdleHeavy marks a task whose cards sat mostly idle while held.
const DeviationIdleHeavy = "idle_heavy"

// Deviation thresholds of the task ledger.
const (
	// OverPlanRatio: booked beyond this share of the estimate is "over".
	OverPlanRatio = 1.10
	// IdleHeavyBelow: a busy share of the observed held time below this is
	// "idle-heavy", once at least IdleHeavyMinSeconds were observed.
	IdleHeavyBelow      = 0.5
	IdleHeavyMinSeconds = 3600
)

// LedgerDeviation classes a task against its baseline: "over" when what it
// finished, holds and waits for passes the estimate by more than 10 %,
// "idle_heavy" when telemetry saw its cards busy less than half the held
// time; both may hold. Neither is "on_plan".
func LedgerDeviation(estimateCardSeconds int64, finished LedgerTotals, liveCardSeconds, waitingCardSeconds int64) []string {
	var out []string
	booked := finished.BookedCardSeconds + liveCardSeconds + waitingCardSeconds
	if estimateCardSeconds > 0 && float64(booked) > OverPlanRatio*float64(estimateCardSeconds) {
		out = append(out, DeviationOver)
	}
	if share, ok := finished.Utilisation(); ok && finished.SampledCardSeconds >= IdleHeavyMinSeconds && share < IdleHeavyBelow {
		out = append(out, DeviationIdleHeavy)
	}
	if len(out) == 0 {
		out = append(out, DeviationOnPlan)
	}
	return out
}

// UnitTotal sums the current outputs of one unit, with what the rounds that
// recorded them booked and cost.
type UnitTotal struct {
	Unit              string  `json:"unit"`
	Quantity          float64 `json:"quantity"`
	Entries           int     `json:"entries"`
	Rounds            int     `json:"rounds"`
	BookedCardSeconds int64   `json:"booked_card_seconds"`
	BusyCardSeconds   int64   `json:"used_card_seconds"`
	CostFen           int64   `json:"cost_fen"`
	// PerThousandYuan is the quantity per ¥1,000 those rounds cost; nil
	// when they cost nothing.
	PerThousandYuan *float64 `json:"per_1000_yuan"`
}

// roundQuantity drops the binary noise a sum of decimal quantities picks
// up (0.1 + 0.2 = 0.30000000000000004): outputs are recorded with far
// fewer than six decimals.
func roundQuantity(q float64) float64 { return math.Round(q*1e6) / 1e6 }

// PerThousandYuan is quantity per ¥1,000 of costFen; nil for no cost.
func PerThousandYuan(quantity float64, costFen int64) *float64 {
	if costFen <= 0 {
		return nil
	}
	v := quantity / (float64(costFen) / 100_000)
	return &v
}

// outputFact is one current output with its round's figures.
type outputFact struct {
	OutputID          int64
	BookingID         int64
	Unit              string
	Quantity          float64
	RoundBooked       int64
	RoundBusy         int64
	RoundCostFen      int64
	GroupKey          string // what the caller groups by besides the unit
	GroupID, SecondID int64
}

// unitTotals groups facts by unit; a round counts once per unit however
// many entries of that unit it has.
func unitTotals(facts []outputFact) []UnitTotal {
	by := map[string]*UnitTotal{}
	seen := map[string]bool{}
	var order []string
	for _, f := range facts {
		t := by[f.Unit]
		if t == nil {
			t = &UnitTotal{Unit: f.Unit}
			by[f.Unit] = t
			order = append(order, f.Unit)
		}
		t.Quantity += f.Quantity
		t.Entries++
		k := fmt.Sprintf("%s\x00%d", f.Unit, f.BookingID)
		if !seen[k] {
			seen[k] = true
			t.Rounds++
			t.BookedCardSeconds += f.RoundBooked
			t.BusyCardSeconds += f.RoundBusy
			t.CostFen += f.RoundCostFen
		}
	}
	out := make([]UnitTotal, 0, len(order))
	for _, u := range order {
		t := by[u]
		t.Quantity = roundQuantity(t.Quantity)
		t.PerThousandYuan = PerThousandYuan(t.Quantity, t.CostFen)
		out = append(out, *t)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Rounds != out[j].Rounds {
			return out[i].Rounds > out[j].Rounds
		}
		return out[i].Unit < out[j].Unit
	})
	return out
}

// TaskLedger is a task's baseline beside what its finished rounds booked,
// used and cost, what is still booked or waiting, and what it produced.
type TaskLedger struct {
	Task                Task              `json:"task"`
	TeamName            string            `json:"team"`
	Kind                string            `json:"kind"`
	EstimateCardSeconds int64             `json:"estimate_card_seconds"`
	Finished            LedgerTotals      `json:"finished"`
	LiveCardSeconds     int64             `json:"live_card_seconds"` // confirmed or running, not finished
	LiveCostFen         int64             `json:"live_cost_fen"`
	WaitingCardSeconds  int64             `json:"waiting_card_seconds"`
	Outputs             []UnitTotal       `json:"outputs"`
	Deviation           []string          `json:"deviation"`
	Rounds              []LedgerRoundView `json:"rounds"`
}

// FindTaskLedger builds a task's ledger, writing first the rounds of its
// finished bookings that the ledger pass has not reached (months cut in loc).
func (s *Store) FindTaskLedger(ctx context.Context, loc *time.Location, taskID int64) (*TaskLedger, error) {
	const op = "store.FindTaskLedger"
	t, err := s.FindTaskByID(ctx, taskID)
	if err != nil {
		return nil, err
	}
	var bs []Booking
	if err := s.read(ctx).Where("task_id = ? AND state NOT IN ?", taskID, withdrawnStates).Find(&bs).Error; err != nil {
		return nil, translate(op, err)
	}
	out := &TaskLedger{Task: *t, EstimateCardSeconds: t.EstimateCardSeconds, Outputs: []UnitTotal{}}
	var finished []int64
	for _, b := range bs {
		switch {
		case isFinished(b.State):
			finished = append(finished, b.ID)
		case b.State == BookingPending:
			out.WaitingCardSeconds += schedule.CardSeconds(b.CardCount, b.StartAt, b.EndAt)
		default:
			booked := b.BookedCardSeconds()
			out.LiveCardSeconds += booked
			out.LiveCostFen += schedule.CostFen(booked, b.PriceFen)
		}
	}
	if err := s.ensureRounds(ctx, op, loc, finished); err != nil {
		return nil, err
	}
	var names []struct {
		Kind string
		Team string
	}
	if err := s.read(ctx).Table("tasks t").Select("t.kind, tm.name AS team").Joins("JOIN teams tm ON tm.id = t.team_id").
		Where("t.id = ?", taskID).Scan(&names).Error; err != nil {
		return nil, translate(op, err)
	}
	if len(names) == 1 {
		out.Kind, out.TeamName = names[0].Kind, names[0].Team
	}
	if out.Rounds, err = s.FindLedgerRounds(ctx, LedgerFilter{TaskID: taskID, Limit: 1000}); err != nil {
		return nil, err
	}
	var facts []outputFact
	for _, r := range out.Rounds {
		out.Finished.Add(r.Totals())
		for _, o := range r.Outputs {
			facts = append(facts, outputFact{OutputID: o.ID, BookingID: r.BookingID, Unit: o.Unit, Quantity: o.Quantity,
				RoundBooked: r.BookedCardSeconds, RoundBusy: r.BusyCardSeconds, RoundCostFen: r.CostFen})
		}
	}
	if len(facts) > 0 {
		out.Outputs = unitTotals(facts)
	}
	out.Deviation = LedgerDeviation(t.EstimateCardSeconds, out.Finished, out.LiveCardSeconds, out.WaitingCardSeconds)
	return out, nil
}

// FindTaskKinds returns the kind of each task ("" when unclassified).
func (s *Store) FindTaskKinds(ctx context.Context, taskIDs []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(taskIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ID   int64
		Kind string
	}
	if err := s.read(ctx).Table("tasks").Select("id, kind").Where("id IN ?", taskIDs).Scan(&rows).Error; err != nil {
		return nil, translate("store.FindTaskKinds", err)
	}
	for _, r := range rows {
		out[r.ID] = r.Kind
	}
	return out, nil
}

// ValidTaskKind tells whether k is a kind a task may be given ("" clears it).
func ValidTaskKind(k string) bool {
	if k == TaskKindNone {
		return true
	}
	for _, x := range TaskKinds {
		if x == k {
			return true
		}
	}
	return false
}

// SetTaskKind classifies a task for the yearly baseline. The same people
// who may change the task's baseline may: its team's members and managers,
// and admins.
func (s *Store) SetTaskKind(ctx context.Context, taskID int64, kind string) error {
	const op = "store.SetTaskKind"
	if !ValidTaskKind(kind) {
		return fieldErr(op, "kind", "ledger.kind_invalid")
	}
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var t Task
		if err := tx.First(&t, taskID).Error; err != nil {
			return withKey(translate(op, err), "task.not_found")
		}
		if err := mayPlanFor(ctx, tx, op, t.TeamID); err != nil {
			if e, ok := errs.As(err); ok && e.Code == errs.Invalid {
				return errs.E(errs.Forbidden, op, "ledger.kind_not_yours")
			}
			return err
		}
		var old string
		if err := tx.Table("tasks").Select("kind").Where("id = ?", taskID).Row().Scan(&old); err != nil {
			return err
		}
		if old == kind {
			return nil
		}
		if err := tx.Table("tasks").Where("id = ?", taskID).Updates(map[string]any{"kind": kind, "updated_at": s.now()}).Error; err != nil {
			return err
		}
		return s.auditNoted(ctx, tx, "set_kind", "task", taskID, auditMsg("audit.sum.task_kind", argText(t.Name), argKey("lgkind."+cmp.Or(old, "none")), argKey("lgkind."+cmp.Or(kind, "none"))),
			map[string]any{"id": taskID, "kind": old}, map[string]any{"id": taskID, "kind": kind})
	})
}
