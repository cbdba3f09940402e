package booking

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/money"
	"cardhour/schedule"
	"cardhour/server/request"
	"cardhour/server/scope"
	"cardhour/store"
	"cardhour/web"
)

// bookingRequest is the body of POST /api/v1/bookings. Times are read as
// text and parsed here, so a malformed one is a field message (422).
type bookingRequest struct {
	TaskID        int64       `json:"task_id"`
	CardType      request.Ref `json:"card_type"`
	Count         int         `json:"count"`
	Start         *string     `json:"start" format:"date-time"`
	End           *string     `json:"end" format:"date-time"`
	Queue         bool        `json:"queue"`
	OverrideQuota bool        `json:"override_quota"`
}

// extendRequest is the body of POST /api/v1/bookings/{id}/extend.
type extendRequest struct {
	End *string `json:"end" format:"date-time"`
}

// bookingJSON is a booking in the API: its window, state, cards (uuids,
// and in assigned_cards by host and index as well),
// price and cost, why it is in its state (note in the caller's language,
// and note_key and note_args for scripts) and on creation the bookings it
// displaced.
type bookingJSON struct {
	store.BookingView
	Note      string  `json:"note,omitempty"`
	CostYuan  string  `json:"cost_yuan"`
	Preempted []int64 `json:"preempted,omitzero"`
}

// releaseJSON is a released booking with what it gave back.
type releaseJSON struct {
	bookingJSON
	ReturnedCardHours float64 `json:"returned_card_hours"`
	ReturnedFen       int64   `json:"returned_fen"`
	ReturnedYuan      string  `json:"returned_yuan"`
}

func toBookingJSON(lang string, v store.BookingView) bookingJSON {
	if v.Cards == nil {
		v.Cards = []string{}
	}
	if v.Assigned == nil {
		v.Assigned = []store.AssignedCard{}
	}
	return bookingJSON{BookingView: v, CostYuan: money.Fen(v.CostFen).Plain(), Note: web.Note(lang, v.NoteKey, v.NoteArgs)}
}

// bookingStates are the states ?state= accepts: every one schedule knows.
var bookingStates = schedule.States

func (a *Area) apiListBookings(c echo.Context) error {
	v := errs.NewValidation("server.apiListBookings")
	teams, err := scope.Teams(c, a.Store)
	if err != nil {
		return err
	}
	f := store.BookingFilter{TeamIDs: teams}
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
	if team != 0 {
		if !scope.Sees(teams, team) {
			return c.JSON(http.StatusOK, map[string]any{"bookings": []bookingJSON{}})
		}
		f.TeamIDs = []int64{team}
	}
	if f.CardTypeID, err = request.CardTypeID(c.Request().Context(), a.Store, request.QueryRef(c, "card_type"), "card_type", v); err != nil {
		return err
	}
	f.TaskID = int64(request.QueryInt(c, "task_id", 0, 1, 1<<31-1, "error.id", v))
	if raw := strings.TrimSpace(c.QueryParam("state")); raw != "" {
		for _, st := range strings.Split(raw, ",") {
			st = strings.TrimSpace(st)
			known := false
			for _, k := range bookingStates {
				known = known || st == k
			}
			v.Check(known, "state", "api.state_invalid")
			f.States = append(f.States, st)
		}
	}
	f.From, f.To = request.QueryTime(c, "from", v), request.QueryTime(c, "to", v)
	if !f.From.IsZero() && !f.To.IsZero() && !f.To.After(f.From) {
		v.Add("to", "booking.end_before_start")
	}
	f.Limit = request.QueryInt(c, "limit", 500, 1, 1000, "api.limit_range", v)
	if err := v.Err(); err != nil {
		return err
	}
	views, err := a.Store.FindBookings(c.Request().Context(), f)
	if err != nil {
		return err
	}
	out := make([]bookingJSON, 0, len(views))
	for _, b := range views {
		out = append(out, toBookingJSON(request.Lang(c), b))
	}
	return c.JSON(http.StatusOK, map[string]any{"bookings": out})
}

func (a *Area) apiGetBooking(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	b, err := scope.Booking(c, a.Store, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toBookingJSON(request.Lang(c), *b))
}

func (a *Area) apiCreateBooking(c echo.Context) error {
	var req bookingRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	v := errs.NewValidation("server.apiCreateBooking")
	// A name is looked up by the store with the task, in one query.
	in := store.BookingRequest{TaskID: req.TaskID, CardTypeID: req.CardType.ID(), CardTypeName: req.CardType.Name(), Count: req.Count,
		Start: request.Time(req.Start, "start", v), End: request.Time(req.End, "end", v),
		Queue: req.Queue, OverrideQuota: req.OverrideQuota}
	v.Check(req.CardType.Set() && (req.CardType.Name() != "" || req.CardType.ID() > 0), "card_type", "cardtype.not_found")
	if err := v.Err(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	res, err := a.Store.CreateBooking(ctx, in)
	if err != nil {
		return err
	}
	out := toBookingJSON(request.Lang(c), *res.View)
	out.Preempted = res.Preempted
	if out.Preempted == nil {
		out.Preempted = []int64{}
	}
	return c.JSON(http.StatusCreated, out)
}

// bookingView answers a changed booking as GET would show it.
func (a *Area) bookingView(c echo.Context, id int64) (bookingJSON, error) {
	view, err := a.Store.FindBookingByID(c.Request().Context(), id)
	if err != nil {
		return bookingJSON{}, err
	}
	return toBookingJSON(request.Lang(c), *view), nil
}

func (a *Area) apiReleaseBooking(c echo.Context) error {
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	res, err := a.Store.ReleaseBooking(c.Request().Context(), id)
	if err != nil {
		return err
	}
	b, err := a.bookingView(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, releaseJSON{bookingJSON: b, ReturnedCardHours: schedule.CardHours(res.ReturnedCardSeconds),
		ReturnedFen: res.ReturnedFen, ReturnedYuan: money.Fen(res.ReturnedFen).Plain()})
}

func (a *Area) apiCancelBooking(c echo.Context) error {
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	if _, err := a.Store.CancelBooking(c.Request().Context(), id); err != nil {
		return err
	}
	b, err := a.bookingView(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}

func (a *Area) apiExtendBooking(c echo.Context) error {
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	var req extendRequest
	if err := request.DecodeJSON(c, &req); err != nil {
		return err
	}
	v := errs.NewValidation("server.apiExtendBooking")
	end := request.Time(req.End, "end", v)
	if req.End == nil || strings.TrimSpace(*req.End) == "" {
		v.Add("end", "booking.end_required")
	}
	if err := v.Err(); err != nil {
		return err
	}
	if _, err := a.Store.ExtendBooking(c.Request().Context(), id, end); err != nil {
		return err
	}
	b, err := a.bookingView(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}

func (a *Area) apiApproveBooking(c echo.Context) error {
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	if _, err := a.Store.ApproveBooking(c.Request().Context(), id); err != nil {
		return err
	}
	b, err := a.bookingView(c, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}
