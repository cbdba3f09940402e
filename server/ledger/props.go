package ledger

import (
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/store"
	"cardhour/web"
)

// totalsRow is a ledger sum as the pages show it.
func totalsRow(t store.LedgerTotals) web.LedgerTotalsRow {
	util, ok := t.Utilisation()
	return web.LedgerTotalsRow{Rounds: t.Rounds, BookedHours: schedule.CardHours(t.BookedCardSeconds), UsedHours: schedule.CardHours(t.BusyCardSeconds),
		HeldIdleHours: schedule.CardHours(t.HeldIdleCardSeconds), SampledHours: schedule.CardHours(t.SampledCardSeconds), Util: util, Measured: ok,
		CostFen: t.CostFen}
}

// roundRow is a round in a list.
func roundRow(r store.LedgerRoundView, canRecord bool) web.LedgerRoundRow {
	row := web.LedgerRoundRow{BookingID: r.BookingID, TaskID: r.TaskID, TaskName: r.TaskName, TeamName: r.TeamName, Username: r.Username,
		CardTypeName: r.CardTypeName, Cards: r.CardCount, Start: r.StartAt, End: r.EndAt, PlannedEnd: r.PlannedEndAt, State: r.State,
		PriceFen: r.PriceFen, T: totalsRow(r.Totals()), CanRecord: canRecord}
	for _, o := range r.Outputs {
		row.Outputs = append(row.Outputs, web.LedgerOutputItem{Quantity: o.Quantity, Unit: o.Unit, Note: o.Note})
	}
	return row
}

// unitRows are unit totals as the pages show them.
func unitRows(us []store.UnitTotal) []web.LedgerUnitRow {
	out := make([]web.LedgerUnitRow, 0, len(us))
	for _, u := range us {
		out = append(out, web.LedgerUnitRow{Unit: u.Unit, Quantity: u.Quantity, Rounds: u.Rounds, BookedHours: schedule.CardHours(u.BookedCardSeconds),
			CostFen: u.CostFen, PerThousand: u.PerThousandYuan})
	}
	return out
}

// thisMonth is the current month in the portal's zone.
func (a *Area) thisMonth() string { return store.MonthOf(time.Now(), a.Config.TZ) }

// recorder tells, per round, whether the viewer may record its outputs:
// its owner (a member or above) and the managers of its team.
type recorder struct {
	user    *store.User
	managed map[int64]bool
}

func (a *Area) recorderFor(c echo.Context) (recorder, error) {
	u := request.User(c)
	r := recorder{user: u, managed: map[int64]bool{}}
	ids, err := a.Store.ManagedTeamIDs(c.Request().Context(), u)
	for _, id := range ids {
		r.managed[id] = true
	}
	return r, err
}

func (r recorder) may(ownerID, teamID int64) bool {
	if store.RoleRank(r.user.Role) < store.RoleRank(store.RoleMember) {
		return false
	}
	return r.user.ID == ownerID || r.managed[teamID]
}
