package planning

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

// availabilityDays is how far the availability calendar looks ahead.
const availabilityDays = 14

// availabilityPage shows the free cards of each card type per hour for the
// coming 14 days, from midnight today in the portal's zone.
func (a *Area) availabilityPage(c echo.Context) error {
	loc := a.Config.TZ
	now := a.Store.Now()
	ln := now.In(loc)
	day0 := time.Date(ln.Year(), ln.Month(), ln.Day(), 0, 0, 0, 0, loc)
	hours := int(day0.AddDate(0, 0, availabilityDays).Sub(day0) / time.Hour)
	avail, err := a.Store.FindAvailability(c.Request().Context(), day0, hours)
	if err != nil {
		return err
	}
	filter := request.ID(c.QueryParam("card_type"))
	props := availabilityProps(request.Lang(c), loc, day0, now, avail, filter)
	return response.Render(c, http.StatusOK, web.AvailabilityPage(a.Pages.Page(c, "plan.avail.title", "booking"), props))
}

// availShade picks the shade class of an hour: darker as fewer cards are
// free; pl-h0 when none is, pl-h5 when all are.
func availShade(free, total int) string {
	switch {
	case free <= 0 || total <= 0:
		return "pl-h0"
	case free >= total:
		return "pl-h5"
	}
	// Quarters of the pool: up to ¼ free is pl-h1, up to ½ pl-h2, …
	return availShadeClasses[(4*free+total-1)/total]
}

var availShadeClasses = [...]string{"pl-h0", "pl-h1", "pl-h2", "pl-h3", "pl-h4", "pl-h5"}

// availabilityProps lays the store's hourly counts onto days × hours in
// loc. Each hour's tooltip gives the exact count. Labels are built once per
// hour slot and shared by every card type, so twenty types × 14 days stay
// cheap.
func availabilityProps(lang string, loc *time.Location, day0, now time.Time, avail []store.Availability, filter int64) web.AvailabilityProps {
	props := web.AvailabilityProps{Hours: make([]string, 24)}
	for h := range props.Hours {
		props.Hours[h] = fmt.Sprintf("%02d", h)
	}
	last := day0.AddDate(0, 0, availabilityDays-1)
	props.Range = day0.Format("2006-01-02") + " – " + last.Format("2006-01-02")
	if filter > 0 {
		props.Filter = strconv.FormatInt(filter, 10)
	}
	dayLabels := make([]string, availabilityDays)
	weekend := make([]bool, availabilityDays)
	for d := range dayLabels {
		t := day0.AddDate(0, 0, d)
		dayLabels[d] = t.Format("01-02") + " " + web.T(lang, web.PlanWeekdayKey(int(t.Weekday())))
		weekend[d] = t.Weekday() == time.Saturday || t.Weekday() == time.Sunday
	}
	cellFormat := web.T(lang, "plan.avail.cell")
	// Tooltips end in "N free of M": one per count, not one Sprintf a cell.
	tails := map[[2]int]string{}
	tail := func(free, total int) string {
		k := [2]int{free, total}
		t, ok := tails[k]
		if !ok {
			t = fmt.Sprintf(cellFormat, free, total)
			tails[k] = t
		}
		return t
	}
	// Where each hour of the store's window lands, and its label; the same
	// for every card type.
	type slot struct {
		day, hour int
		past      bool
		label     string
	}
	var slots []slot
	y0, m0, d0 := day0.Date()
	base := time.Date(y0, m0, d0, 0, 0, 0, 0, time.UTC)
	slotsFor := func(from time.Time, n int) []slot {
		out := make([]slot, n)
		for i := range out {
			t := from.Add(time.Duration(i) * time.Hour)
			lt := t.In(loc)
			y, m, d := lt.Date()
			day := int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Sub(base) / (24 * time.Hour))
			end := lt.Add(time.Hour)
			out[i] = slot{day: day, hour: lt.Hour(), past: !end.After(now),
				label: dayLabels[max(min(day, availabilityDays-1), 0)] + " " + lt.Format("15:04") + "–" + end.Format("15:04")}
		}
		return out
	}
	for _, a := range avail {
		props.Types = append(props.Types, web.Option{Value: strconv.FormatInt(a.CardTypeID, 10), Label: a.Name})
		if filter > 0 && a.CardTypeID != filter {
			continue
		}
		if len(slots) != len(a.Free) {
			slots = slotsFor(a.From, len(a.Free))
		}
		g := web.AvailGrid{CardTypeID: a.CardTypeID, Name: a.Name, Total: a.Total, MinFree: a.Total, Days: make([]web.AvailDay, availabilityDays)}
		for d := range g.Days {
			cells := make([]web.AvailCell, 24)
			for h := range cells {
				cells[h] = web.AvailCell{Class: "pl-none"}
			}
			g.Days[d] = web.AvailDay{Label: dayLabels[d], Weekend: weekend[d], Cells: cells}
		}
		for i, free := range a.Free {
			sl := slots[i]
			if sl.day < 0 || sl.day >= availabilityDays {
				continue
			}
			cell := &g.Days[sl.day].Cells[sl.hour]
			// Where a clock change repeats an hour, the scarcer one shows.
			if cell.Class != "pl-none" && cell.Free <= free {
				continue
			}
			cell.Free = free
			cell.Title = sl.label + " · " + tail(free, a.Total)
			if sl.past {
				cell.Class = "pl-past"
				continue
			}
			cell.Class = availShade(free, a.Total)
			g.MinFree = min(g.MinFree, free)
		}
		props.Grids = append(props.Grids, g)
	}
	return props
}
