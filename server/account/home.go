package account

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

// homeStates are the bookings the home page lists: running and upcoming.
var homeStates = []string{store.BookingActive, store.BookingConfirmed, store.BookingPending}

// home is the person's start page: their running and upcoming bookings
// with the time left and the one action each allows, their teams' quotas,
// the alerts open on their bookings; for managers the approvals waiting
// and today's held-but-idle card-hours of their teams; then the fleet.
func (a *Area) home(c echo.Context) error {
	ctx := c.Request().Context()
	u := request.User(c)
	p := a.Pages.Page(c, "home.title", "")
	now := time.Now()
	h := web.HomeProps{CanBook: store.RoleRank(u.Role) >= store.RoleRank(store.RoleMember)}

	mine, err := a.Store.FindBookings(ctx, store.BookingFilter{UserID: u.ID, States: homeStates})
	if err != nil {
		return err
	}
	for _, b := range mine {
		h.Mine = append(h.Mine, homeBooking(b, now, h.CanBook))
	}

	teams, err := a.Store.TeamIDsOf(ctx, u.ID)
	if err != nil {
		return err
	}
	quotas, err := a.Store.FindQuotas(ctx, store.QuotaFilter{TeamIDs: teams, ActiveAt: &now})
	if err != nil {
		return err
	}
	for _, q := range quotas {
		h.Quotas = append(h.Quotas, web.HomeQuota{Team: q.TeamName, CardType: q.CardTypeName, LeftHours: q.RemainingHour,
			GrantedHours: q.GrantedHours, Expires: q.ExpiresAt, DaysLeft: int(math.Ceil(q.ExpiresAt.Sub(now).Hours() / 24)),
			Urgency: schedule.QuotaUrgency(q.ExpiresAt, now), HighUse: schedule.HighUse(q.UsedCardSeconds, q.CardSeconds)})
	}

	alerts, err := a.Store.FindOpenAlertsOfUser(ctx, u.ID)
	if err != nil {
		return err
	}
	for _, al := range alerts {
		row := web.HomeAlert{Kind: al.Kind, TaskName: al.TaskName, Since: al.StartedAt}
		if al.BookingID != nil {
			row.BookingID = *al.BookingID
		}
		if al.HostName != "" {
			row.Card = fmt.Sprintf("%s #%d", al.HostName, al.GPUIndex)
		}
		h.Alerts = append(h.Alerts, row)
	}

	if store.RoleRank(u.Role) >= store.RoleRank(store.RoleManager) {
		managed, err := a.Store.ManagedTeamIDs(ctx, u)
		if err != nil {
			return err
		}
		y, m, d := now.In(a.Config.TZ).Date()
		idle, err := a.Store.TeamsHeldIdleSeconds(ctx, managed, time.Date(y, m, d, 0, 0, 0, 0, a.Config.TZ))
		if err != nil {
			return err
		}
		// The approvals are the header's count (the same query), so the two
		// never disagree.
		h.Manager = &web.HomeManager{Approvals: p.Approvals, IdleHoursToday: schedule.Hours(idle), Teams: len(managed)}
	}

	if err := a.fleet(c, &h); err != nil {
		return err
	}
	return response.Render(c, http.StatusOK, web.HomePage(p, h))
}

// homeBooking is one of my bookings with the time left and the action
// schedule's rules allow it now: release once it runs, cancel before.
func homeBooking(b store.BookingView, now time.Time, mayAct bool) web.HomeBooking {
	hb := web.HomeBooking{ID: b.ID, TaskID: b.TaskID, TaskName: b.TaskName, TeamName: b.TeamName, CardTypeName: b.CardTypeName,
		Count: b.CardCount, Start: b.StartAt, End: b.EndAt, State: b.State, WaitReason: b.WaitReason}
	if hb.Running = b.State == store.BookingActive || (b.State == store.BookingConfirmed && !now.Before(b.StartAt)); hb.Running {
		hb.Left = b.EndAt.Sub(now)
	} else {
		hb.Left = b.StartAt.Sub(now)
	}
	hb.Left = max(hb.Left, 0)
	facts := b.Facts()
	hb.CanRelease = mayAct && schedule.CheckAction(schedule.Release, facts, now).OK()
	hb.CanCancel = mayAct && schedule.CheckAction(schedule.Cancel, facts, now).OK()
	hb.Cards = cardsByHost(b.Assigned)
	return hb
}

// cardsByHost names a booking's cards compactly, one entry per host with
// its indexes ("gpu-bj-h800-01 #0,1,2"), hosts in the booking's order:
// eight cards on one host read as one line, not eight.
func cardsByHost(cards []store.AssignedCard) []string {
	var hosts []string
	idx := map[string][]string{}
	for _, c := range cards {
		if _, ok := idx[c.Host]; !ok {
			hosts = append(hosts, c.Host)
		}
		idx[c.Host] = append(idx[c.Host], strconv.Itoa(c.GPUIndex))
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = h + " #" + strings.Join(idx[h], ",")
	}
	return out
}

// fleet adds the inventory at a glance: cards by status, types with prices.
func (a *Area) fleet(c echo.Context, h *web.HomeProps) error {
	ctx := c.Request().Context()
	cards, err := a.Store.FindCards(ctx, store.CardFilter{})
	if err != nil {
		return err
	}
	cardTypes, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return err
	}
	perType := store.CardsPerType(cards)
	for _, t := range cardTypes {
		h.Types = append(h.Types, web.CardTypeRow{ID: t.ID, Name: t.Name, VRAMGiB: t.VRAMGiB, TFLOPS: t.TFLOPSByPrecision(), PriceFen: t.PriceFen, Cards: perType[t.ID]})
	}
	hosts, err := a.Store.FindHosts(ctx)
	if err != nil {
		return err
	}
	teams, err := a.Store.FindTeams(ctx)
	if err != nil {
		return err
	}
	h.Cards, h.CardTypes, h.Hosts, h.Teams = len(cards), len(cardTypes), len(hosts), len(teams)
	for _, cd := range cards {
		switch cd.Status {
		case store.CardActive:
			h.Active++
		case store.CardMaintenance:
			h.Maintenance++
		case store.CardRetired:
			h.Retired++
		}
	}
	return nil
}
