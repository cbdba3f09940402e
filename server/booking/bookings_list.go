package booking

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/scope"
	"cardhour/store"
	"cardhour/web"
)

// The list's state filter: live (pending, confirmed, active; the default,
// soonest first), every state, or one state (newest first: a history).
const stateAll = "all"

// bookingList is one page of the bookings of the viewer's teams (admins:
// every team), as the query filters them: ?q= (task, team, user, card uuid
// or host, #number), ?state=, ?team=, ?card_type=, ?from= and ?to= (dates
// in the portal's zone, both inclusive), ?mine=1, ?limit=, ?offset=.
// Values that do not parse filter nothing: they come from links and the
// form's own choices.
func (a *Area) bookingList(c echo.Context) (web.BookingListProps, error) {
	ctx := c.Request().Context()
	lang := request.Lang(c)
	q := c.QueryParams()
	var l web.BookingListProps
	teams, err := scope.Teams(c, a.Store)
	if err != nil {
		return l, err
	}
	f := store.BookingFilter{TeamIDs: teams, Query: strings.TrimSpace(q.Get("q"))}
	l.Filter = web.NewForm()
	l.Filter.Values["q"] = f.Query

	l.States = []web.Option{{Value: "", Label: web.T(lang, "bklist.live")}, {Value: stateAll, Label: web.T(lang, "bklist.all_states")}}
	for _, st := range bookingStates {
		l.States = append(l.States, web.Option{Value: st, Label: web.T(lang, "bkstate."+st)})
	}
	switch st := q.Get("state"); {
	case st == stateAll:
		f.Latest = true
		l.Filter.Values["state"] = st
	case slices.Contains(bookingStates, st):
		f.States, f.Latest = []string{st}, true
		l.Filter.Values["state"] = st
	default:
		f.States = liveStates // the "" choice
	}

	if l.Teams, err = a.teamOptions(c, teams); err != nil {
		return l, err
	}
	if id := request.ID(q.Get("team")); id > 0 && scope.Sees(teams, id) {
		f.TeamIDs = []int64{id}
		l.Filter.Values["team"] = strconv.FormatInt(id, 10)
	}
	types, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return l, err
	}
	for _, t := range types {
		l.CardTypes = append(l.CardTypes, web.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name})
		if strconv.FormatInt(t.ID, 10) == q.Get("card_type") {
			f.CardTypeID = t.ID
			l.Filter.Values["card_type"] = q.Get("card_type")
		}
	}
	if day, ok := a.listDay(q.Get("from")); ok {
		f.From = day
		l.Filter.Values["from"] = q.Get("from")
	}
	if day, ok := a.listDay(q.Get("to")); ok {
		f.To = day.AddDate(0, 0, 1) // the whole of the last day
		l.Filter.Values["to"] = q.Get("to")
	}
	if q.Get("mine") != "" {
		f.UserID = request.User(c).ID
		l.Filter.Values["mine"] = "1"
	}

	pg, err := a.Store.FindBookingPage(ctx, f, request.ListPage(c))
	if err != nil {
		return l, err
	}
	for _, b := range pg.Items {
		l.Rows = append(l.Rows, bookingItem(b))
	}
	l.Nav = web.NewPageNav("/booking", q, pg.Total, pg.Offset, pg.Limit)
	return l, nil
}

// listDay reads a list filter's date (an <input type="date">) as the start
// of that day in the portal's zone.
func (a *Area) listDay(raw string) (time.Time, bool) {
	t, err := time.ParseInLocation("2006-01-02", strings.TrimSpace(raw), a.Config.TZ)
	if err != nil || !request.InRange(t) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// teamOptions are the teams a reader sees (scope.Teams: nil is every
// team), by name, for a list's team filter.
func (a *Area) teamOptions(c echo.Context, teams []int64) ([]web.Option, error) {
	names, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return nil, err
	}
	var out []web.Option
	for id, name := range names {
		if scope.Sees(teams, id) {
			out = append(out, web.Option{Value: strconv.FormatInt(id, 10), Label: name})
		}
	}
	slices.SortFunc(out, func(x, y web.Option) int { return strings.Compare(x.Label, y.Label) })
	return out, nil
}

// bookingPageJSON answers GET /api/v1/bookings: one page of the bookings,
// with how many the filter selects in all and the page it is.
type bookingPageJSON struct {
	Bookings []bookingJSON `json:"bookings"`
	Total    int64         `json:"total"`
	Limit    int           `json:"limit"`
	Offset   int           `json:"offset"`
}

func (a *Area) apiListBookings(c echo.Context) error {
	v := errs.NewValidation("server.apiListBookings")
	teams, err := scope.Teams(c, a.Store)
	if err != nil {
		return err
	}
	f := store.BookingFilter{TeamIDs: teams, Query: c.QueryParam("q")}
	switch strings.ToLower(strings.TrimSpace(c.QueryParam("mine"))) {
	case "", "0", "false", "no":
	case "1", "true", "yes":
		f.UserID = request.User(c).ID
	default:
		v.Add("mine", "api.bool_invalid")
	}
	team, err := request.TeamID(c.Request().Context(), a.Store, request.QueryRef(c, "team"), "team", v)
	if err != nil {
		return err
	}
	if f.CardTypeID, err = request.CardTypeID(c.Request().Context(), a.Store, request.QueryRef(c, "card_type"), "card_type", v); err != nil {
		return err
	}
	f.TaskID = int64(request.QueryInt(c, "task_id", 0, 1, 1<<31-1, "error.id", v))
	if raw := strings.TrimSpace(c.QueryParam("state")); raw != "" {
		for _, st := range strings.Split(raw, ",") {
			st = strings.TrimSpace(st)
			v.Check(slices.Contains(bookingStates, st), "state", "api.state_invalid")
			f.States = append(f.States, st)
		}
	}
	f.From, f.To = request.QueryTime(c, "from", v), request.QueryTime(c, "to", v)
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		v.Add("to", "booking.end_before_start")
	}
	page := request.APIPage(c, 500, v)
	if err := v.Err(); err != nil {
		return err
	}
	out := bookingPageJSON{Bookings: []bookingJSON{}, Limit: page.Limit, Offset: page.Offset}
	if team != 0 {
		if !scope.Sees(teams, team) {
			return c.JSON(http.StatusOK, out) // another team's: as if it had none
		}
		f.TeamIDs = []int64{team}
	}
	pg, err := a.Store.FindBookingPage(c.Request().Context(), f, page)
	if err != nil {
		return err
	}
	for _, b := range pg.Items {
		out.Bookings = append(out.Bookings, toBookingJSON(request.Lang(c), b))
	}
	out.Total = pg.Total
	return c.JSON(http.StatusOK, out)
}
