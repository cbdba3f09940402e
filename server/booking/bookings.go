package booking

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/money"
	"cardhour/schedule"
	"cardhour/server/bookingview"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/server/scope"
	"cardhour/store"
	"cardhour/web"
)

func bookingItem(b store.BookingView) web.BookingItem {
	return web.BookingItem{
		ID: b.ID, TaskID: b.TaskID, TaskName: b.TaskName, TeamName: b.TeamName, Username: b.Username,
		CardTypeName: b.CardTypeName, Count: b.CardCount, Start: b.StartAt, End: b.EndAt, State: b.State,
		WaitReason: b.WaitReason, Kind: b.Kind, Priority: b.Priority, CostFen: b.CostFen,
		BookedHours: schedule.CardHours(b.BookedCardSeconds()),
	}
}

var liveStates = []string{store.BookingPending, store.BookingConfirmed, store.BookingActive}

// bookingHome is "预约": unread notifications, my live bookings, the list
// of my teams' bookings (searched, filtered and paged), and the way to
// book more.
func (a *Area) bookingHome(c echo.Context) error {
	ctx := c.Request().Context()
	u := request.User(c)
	lang := request.Lang(c)
	h := web.BookingHomeProps{CanBook: store.RoleRank(u.Role) >= store.RoleRank(store.RoleMember)}
	notes, err := a.Store.FindNotifications(ctx, u.ID, true, 20)
	if err != nil {
		return err
	}
	for _, n := range notes {
		h.Notices = append(h.Notices, web.NoticeItem{Message: web.T(lang, n.MessageKey, n.Args()...), Link: n.Link, At: n.CreatedAt})
	}
	mine, err := a.Store.FindBookings(ctx, store.BookingFilter{UserID: u.ID, States: liveStates})
	if err != nil {
		return err
	}
	for _, b := range mine {
		h.Mine = append(h.Mine, bookingItem(b))
	}
	if h.List, err = a.bookingList(c); err != nil {
		return err
	}
	return response.Render(c, http.StatusOK, web.BookingHomePage(a.Pages.Page(c, "bkhome.title", "booking"), h))
}

var bookingFormFields = []string{"task_id", "card_type", "count", "mode", "start", "end", "duration_hours", "queue", "override_quota"}

// minNeedGiB stands in for a task that gave no VRAM need: any card carries
// it, one card each.
const minNeedGiB = 1e-6

// cardFits measures every card type against a need: the ones that carry it
// with headroom, cheapest first, then the rest.
func (a *Area) cardFits(types []store.CardType, need float64, precision string, preferred []int64, maxCards int) (fits, unfit []web.CardFitItem) {
	specs := make([]schedule.CardSpec, len(types))
	for i, t := range types {
		tf := map[string]float64{}
		for _, p := range store.Precisions {
			tf[p] = t.TFLOPS(p)
		}
		if precision == "" {
			tf[""] = 1 // no precision asked: every type qualifies
		}
		specs[i] = schedule.CardSpec{ID: t.ID, Name: t.Name, VRAMGiB: t.VRAMGiB, TFLOPS: tf, PriceFen: t.PriceFen}
	}
	n := need
	if n <= 0 {
		n = minNeedGiB
	}
	fitted := map[int64]bool{}
	for i, x := range schedule.FitCardTypes(n, precision, specs, a.Config.Headroom, maxCards) {
		fitted[x.Spec.ID] = true
		item := web.CardFitItem{ID: x.Spec.ID, Name: x.Spec.Name, VRAMGiB: x.Spec.VRAMGiB, Cards: x.Cards, PriceFen: x.Spec.PriceFen,
			HourlyFen: x.HourlyFen, TFLOPS: x.TFLOPS, Preferred: slices.Contains(preferred, x.Spec.ID),
			HeadroomPct: int(x.HeadroomShare*100 + 0.5), Cheapest: i == 0}
		if precision == "" {
			item.TFLOPS = 0
		}
		fits = append(fits, item)
	}
	for _, t := range types {
		if !fitted[t.ID] {
			unfit = append(unfit, web.CardFitItem{ID: t.ID, Name: t.Name, VRAMGiB: t.VRAMGiB, PriceFen: t.PriceFen,
				TFLOPS: t.TFLOPS(precision), Preferred: slices.Contains(preferred, t.ID)})
		}
	}
	return fits, unfit
}

// taskBrief recalls a task's baseline and how much of its estimate is left.
func taskBrief(t store.Task, u store.TaskUsage, teamName string) web.TaskBrief {
	left := t.EstimateCardSeconds - u.BookedCardSeconds - u.WaitingCardSeconds
	return web.TaskBrief{ID: t.ID, Name: t.Name, TeamName: teamName, Priority: t.Priority, Readiness: t.DataReadiness,
		ReadyAt: t.DataReadyAt, VRAMGiB: t.VRAMGiB, Precision: t.Precision, EstimateHours: t.EstimateCardHours(),
		RemainingHours: schedule.CardHours(max(left, 0))}
}

// bookingFormPage shows the booking form; the query preselects the task
// (?task=) and, coming back from the preview, every field.
func (a *Area) bookingFormPage(c echo.Context) error {
	f := web.NewForm()
	q := c.QueryParams()
	for _, k := range bookingFormFields {
		f.Values[k] = q.Get(k)
	}
	if t := q.Get("task"); t != "" {
		f.Values["task_id"] = t
	}
	if f.Value("mode") == "" {
		f.Values["mode"] = "now"
	}
	if f.Value("duration_hours") == "" {
		f.Values["duration_hours"] = "2"
	}
	if f.Value("start") == "" && f.Value("end") == "" {
		start := time.Now().Truncate(time.Hour).Add(time.Hour)
		f.Values["start"] = request.LocalValue(start, a.Config.TZ)
		f.Values["end"] = request.LocalValue(start.Add(4*time.Hour), a.Config.TZ)
	}
	return a.renderBookingForm(c, http.StatusOK, f)
}

func (a *Area) renderBookingForm(c echo.Context, status int, f web.Form) error {
	ctx := c.Request().Context()
	u := request.User(c)
	lang := request.Lang(c)
	bookable, err := a.Store.BookableTeamIDs(ctx, u)
	if err != nil {
		return err
	}
	tasks, err := a.Store.FindTasks(ctx, store.TaskFilter{TeamIDs: bookable})
	if err != nil {
		return err
	}
	teams, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return err
	}
	props := web.BookingFormProps{
		CanOverride: store.RoleRank(u.Role) >= store.RoleRank(store.RoleManager),
		HorizonDays: int(a.Config.Horizon / (24 * time.Hour)),
		HeadroomPct: int(a.Config.Headroom*100 + 0.5),
	}
	var sel *store.Task
	want := request.ID(f.Value("task_id"))
	for i, t := range tasks {
		props.Tasks = append(props.Tasks, web.Option{Value: web.I64(t.ID), Label: t.Name + " · " + teams[t.TeamID]})
		if t.ID == want {
			sel = &tasks[i]
		}
	}
	switch {
	case sel == nil && strings.TrimSpace(f.Value("task_id")) == "" && len(tasks) > 0:
		sel = &tasks[0]
		f.Values["task_id"] = web.I64(sel.ID)
	case sel == nil && len(tasks) > 0 && f.FieldError("task_id") == "":
		f.Errors["task_id"] = web.T(lang, "bkform.task_not_bookable")
	}
	types, err := a.Store.FindCardTypes(ctx)
	if err != nil {
		return err
	}
	need, precision, preferred := 0.0, "", []int64(nil)
	if sel != nil {
		usage, err := a.Store.FindTaskUsage(ctx, []int64{sel.ID})
		if err != nil {
			return err
		}
		brief := taskBrief(*sel, usage[sel.ID], teams[sel.TeamID])
		props.Task = &brief
		need, precision, preferred = sel.VRAMGiB, sel.Precision, sel.CardTypeIDs
	}
	props.Fits, props.Unfit = a.cardFits(types, need, precision, preferred, a.Store.BookingPolicy().MaxCards)
	if sel != nil {
		now := time.Now()
		quotas, err := a.Store.FindQuotas(ctx, store.QuotaFilter{TeamIDs: []int64{sel.TeamID}, ActiveAt: &now})
		if err != nil {
			return err
		}
		left := map[int64]float64{}
		for _, q := range quotas {
			left[q.CardTypeID] = q.RemainingHour
		}
		for _, list := range [][]web.CardFitItem{props.Fits, props.Unfit} {
			for i := range list {
				list[i].QuotaLeftHours, list[i].HasQuota = left[list[i].ID]
			}
		}
	}
	if sel != nil {
		markCheapest(props.Fits)
	}
	if f.Value("card_type") == "" && len(props.Fits) > 0 {
		f.Values["card_type"] = web.I64(preselectFit(props.Fits, preferred).ID)
	}
	if f.Value("count") == "" {
		f.Values["count"] = "1"
		for _, x := range props.Fits {
			if web.I64(x.ID) == f.Value("card_type") {
				f.Values["count"] = strconv.Itoa(x.Cards)
			}
		}
	}
	// Each fitting type warns when the count is below what carries the
	// task's VRAM; the chosen one's warning shows (booking.js follows the
	// choice as it changes).
	props.NeedGiB = need
	count, _ := strconv.Atoi(strings.TrimSpace(f.Value("count")))
	for i := range props.Fits {
		x := &props.Fits[i]
		ok, _ := schedule.HoldsVRAM(need, x.VRAMGiB, count, a.Config.Headroom)
		x.VRAMShort = !ok && web.I64(x.ID) == f.Value("card_type")
	}
	return response.Render(c, status, web.BookingFormPage(a.Pages.Page(c, "bkform.title", "booking"), props, response.Limited(f, a.Store.BookingLimits())))
}

// markCheapest badges the cheapest fit the team holds a quota for (fits
// come cheapest first): a type without one cannot be booked, so calling it
// the cheapest would send the member to a refusal.
func markCheapest(fits []web.CardFitItem) {
	for i := range fits {
		fits[i].Cheapest = false
	}
	for i := range fits {
		if fits[i].HasQuota {
			fits[i].Cheapest = true
			return
		}
	}
}

// preselectFit is the fit the form starts on: the task's preferred type
// first (in the order the task lists them), then the cheapest — each one
// the team holds a quota for before one it does not, which would be
// refused. fits is not empty.
func preselectFit(fits []web.CardFitItem, preferred []int64) web.CardFitItem {
	byID := map[int64]web.CardFitItem{}
	for _, x := range fits {
		byID[x.ID] = x
	}
	var order []web.CardFitItem
	for _, id := range preferred {
		if x, ok := byID[id]; ok {
			order = append(order, x)
		}
	}
	order = append(order, fits...)
	for _, x := range order {
		if x.HasQuota {
			return x
		}
	}
	return order[0]
}

// bookingRequestFromForm parses the form into a request: "book now" starts
// now for the given hours, otherwise start and end are read in the portal's
// zone. What does not parse is a field message; the rest is the store's to
// check.
func (a *Area) bookingRequestFromForm(f web.Form) (store.BookingRequest, error) {
	v := errs.NewValidation("server.bookingRequestFromForm")
	req := store.BookingRequest{Queue: f.Value("queue") != "", OverrideQuota: f.Value("override_quota") != ""}
	if req.TaskID = request.ID(f.Value("task_id")); req.TaskID == 0 {
		v.Add("task_id", "bkform.task_required")
	}
	if req.CardTypeID = request.ID(f.Value("card_type")); req.CardTypeID == 0 {
		v.Add("card_type", "bkform.card_type_required")
	}
	switch raw := strings.TrimSpace(f.Value("count")); {
	case raw == "":
		v.Add("count", "field.required")
	default:
		n, err := strconv.Atoi(raw)
		if err != nil {
			v.Add("count", "field.integer")
		}
		req.Count = n
	}
	if f.Value("mode") == "now" {
		hours, ok := request.Float(f.Value("duration_hours"), v, "duration_hours")
		if !ok && strings.TrimSpace(f.Value("duration_hours")) == "" {
			v.Add("duration_hours", "field.required")
		}
		// Cap absurd lengths before they overflow a Duration; the store
		// refuses them as past the horizon.
		hours = min(hours, 100*365*24)
		req.Start = time.Now()
		req.End = req.Start.Add(time.Duration(hours * float64(time.Hour)))
		return req, a.withStoreChecks(req, v)
	}
	for field, dst := range map[string]*time.Time{"start": &req.Start, "end": &req.End} {
		raw := strings.TrimSpace(f.Value(field))
		if raw == "" {
			continue // the store names a missing time
		}
		t, ok := request.ParseLocal(raw, a.Config.TZ)
		if !ok {
			v.Add(field, "bkform.time_invalid")
			continue
		}
		*dst = t
	}
	return req, a.withStoreChecks(req, v)
}

// withStoreChecks adds the store's own checks of req to what parsing the
// form found, for the fields parsing did not already refuse: every invalid
// field is reported at once, not the parse errors first and the rest after
// the next submit.
func (a *Area) withStoreChecks(req store.BookingRequest, v *errs.Validation) error {
	if v.Err() == nil {
		return nil // the store checks it in full when it books
	}
	if err := v.Merge(a.Store.CheckBookingRequest(req)); err != nil {
		return err
	}
	return v.Err()
}

// bookingFormFailed shows the form again with the reasons; in "book now"
// mode the window's messages belong to the duration.
func (a *Area) bookingFormFailed(c echo.Context, err error, f web.Form) error {
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	if f.Value("mode") == "now" {
		for _, k := range []string{"end", "start"} {
			if msg := f.Errors[k]; msg != "" {
				f.Errors["duration_hours"] = msg
				delete(f.Errors, k)
			}
		}
	}
	return a.renderBookingForm(c, response.StatusOf(err), f)
}

// previewBookingForm shows what the request costs and what it will do,
// without booking: card-hours × price, the quota left, free cards, and a
// warning when it books more than the task's estimate has left.
func (a *Area) previewBookingForm(c echo.Context) error {
	ctx := c.Request().Context()
	f := request.Form(c, bookingFormFields...)
	req, err := a.bookingRequestFromForm(f)
	var pv *store.BookingPreview
	if err == nil {
		pv, err = a.Store.PreviewBooking(ctx, req)
	}
	if err != nil {
		return a.bookingFormFailed(c, err, f)
	}
	usage, err := a.Store.FindTaskUsage(ctx, []int64{pv.Task.ID})
	if err != nil {
		return err
	}
	teams, err := a.Store.TeamNames(c.Request().Context())
	if err != nil {
		return err
	}
	v, err := bookingview.Preview(ctx, a.Store, pv, taskBrief(pv.Task, usage[pv.Task.ID], teams[pv.Task.TeamID]), req.Count, a.Config.Headroom, "/booking")
	if err != nil {
		return err
	}
	back := bookingview.KeepForm(&v, f, bookingFormFields)
	v.EditURL = "/booking/new?" + back.Encode()
	return response.Render(c, http.StatusOK, web.BookingPreviewPage(a.Pages.Page(c, "bkpreview.title", "booking"), v))
}

// createBookingForm makes the booking the preview showed.
func (a *Area) createBookingForm(c echo.Context) error {
	f := request.Form(c, bookingFormFields...)
	req, err := a.bookingRequestFromForm(f)
	var res *store.BookingResult
	if err == nil {
		res, err = a.Store.CreateBooking(c.Request().Context(), req)
	}
	if err != nil {
		return a.bookingFormFailed(c, err, f)
	}
	lang := request.Lang(c)
	b := res.Booking
	msg := web.T(lang, "bkflash.placed", b.ID, len(res.Cards))
	if b.State == store.BookingPending {
		msg = web.T(lang, "bkflash.waiting", b.ID, web.T(lang, "bkwait."+b.WaitReason))
	}
	if len(res.Preempted) > 0 {
		msg += " " + web.T(lang, "bkflash.preempted", len(res.Preempted))
	}
	return a.Pages.RedirectWithFlash(c, bookingPath(b.ID), msg)
}

func bookingPath(id int64) string { return "/bookings/" + strconv.FormatInt(id, 10) }

// actionNext is where a release or cancel sends the browser: back where
// the form was (the home page's one-click release says next=/), else the
// booking's page.
func actionNext(c echo.Context, id int64) string {
	if next := c.FormValue("next"); next != "" {
		return request.SafeNext(next)
	}
	return bookingPath(id)
}

func (a *Area) bookingDetail(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	return a.renderBookingDetail(c, http.StatusOK, id, "", web.NewForm())
}

// renderBookingDetail shows a booking to the same people as the API does:
// its owner, its team and admins (the board shows only which cards are
// held and by whom, not costs or purposes); the actions only to its owner,
// the team's managers and admins, who are also the ones the store allows.
func (a *Area) renderBookingDetail(c echo.Context, status int, id int64, actionErr string, extend web.Form) error {
	ctx := c.Request().Context()
	b, err := scope.Booking(c, a.Store, id)
	if err != nil {
		return err
	}
	u := request.User(c)
	managed, err := a.Store.ManagedTeamIDs(ctx, u)
	if err != nil {
		return err
	}
	manager := slices.Contains(managed, b.TeamID)
	mayAct := (b.UserID == u.ID || manager) && store.RoleRank(u.Role) >= store.RoleRank(store.RoleMember)
	// Who may act is the page's question; whether the booking's state and
	// window allow it is schedule's, the rule the store applies.
	now, facts := time.Now(), b.Facts()
	may := func(a schedule.Action) bool { return schedule.CheckAction(a, facts, now).OK() }
	d := web.BookingDetailProps{
		B: bookingItem(*b), Cards: cardLabels(b.Assigned), PriceFen: b.PriceFen, SubmittedAt: b.SubmittedAt, ConfirmedAt: b.ConfirmedAt,
		EndedAt: b.EndedAt, QuotaOverride: b.QuotaOverrideBy != nil, ActionErr: actionErr,
		DecidedBy: b.DecidedByName, DecidedAt: b.DecidedAt, RejectReason: b.RejectReason,
		CanRelease: mayAct && may(schedule.Release),
		CanCancel:  mayAct && may(schedule.Cancel),
		CanExtend:  mayAct && may(schedule.Extend),
		CanApprove: manager && store.RoleRank(u.Role) >= store.RoleRank(store.RoleManager) && may(schedule.Approve),
	}
	// A refused extension of a booking that offers none (its state forbids
	// it) is said above the page: the form it came from is not shown.
	if !d.CanExtend && d.ActionErr == "" {
		d.ActionErr = extend.Error
	}
	// The note in the reader's language; a preemption links its booking.
	if d.PreemptedBy = b.PreemptedBy(); d.PreemptedBy == 0 {
		d.StateNote = web.Note(request.Lang(c), b.NoteKey, b.NoteArgs)
	}
	if b.State == store.BookingReleased && b.EndedAt != nil && b.EndedAt.Before(b.EndAt) {
		full := schedule.CardSeconds(b.CardCount, b.StartAt, b.EndAt)
		kept := b.BookedCardSeconds()
		d.ReturnedHours, d.ReturnedFen = schedule.CardHours(full-kept), schedule.RefundFen(full, kept, b.PriceFen)
	}
	if err := a.bookingUsage(c, &d); err != nil {
		return err
	}
	if extend.Value("end") == "" && len(extend.Errors) == 0 {
		extend.Values["end"] = request.LocalValue(b.EndAt.Add(time.Hour), a.Config.TZ)
	}
	return response.Render(c, status, web.BookingDetailPage(a.Pages.Page(c, "bkdetail.page", "booking"), d, extend))
}

// cardLabels names a booking's cards by host and index, as people find
// them, keeping the uuid for those who need it.
func cardLabels(cards []store.AssignedCard) []web.CardLabel {
	out := make([]web.CardLabel, len(cards))
	for i, c := range cards {
		out[i] = web.CardLabel{Label: c.Label, UUID: c.UUID}
	}
	return out
}

// bookingActionFailed shows the booking again with why a release, cancel or
// approval was refused; other errors go to the error handler.
func (a *Area) bookingActionFailed(c echo.Context, id int64, err error) error {
	if msg, ok := response.Refusal(request.Lang(c), err); ok {
		return a.renderBookingDetail(c, response.StatusOf(err), id, msg, web.NewForm())
	}
	return err
}

func (a *Area) releaseBookingForm(c echo.Context) error {
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	res, err := a.Store.ReleaseBooking(c.Request().Context(), id)
	if err != nil {
		return a.bookingActionFailed(c, id, err)
	}
	msg := web.T(request.Lang(c), "bkflash.released", id, strconv.FormatFloat(schedule.CardHours(res.ReturnedCardSeconds), 'f', 1, 64),
		"¥"+money.Fen(res.ReturnedFen).Yuan())
	return a.Pages.RedirectWithFlash(c, actionNext(c, id), msg)
}

func (a *Area) cancelBookingForm(c echo.Context) error {
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	if _, err := a.Store.CancelBooking(c.Request().Context(), id); err != nil {
		return a.bookingActionFailed(c, id, err)
	}
	return a.Pages.RedirectWithFlash(c, actionNext(c, id), web.T(request.Lang(c), "bkflash.cancelled", id))
}

func (a *Area) approveBookingForm(c echo.Context) error {
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	res, err := a.Store.ApproveBooking(c.Request().Context(), id)
	if err != nil {
		return a.bookingActionFailed(c, id, err)
	}
	lang := request.Lang(c)
	msg := web.T(lang, "bkflash.approved_placed", id, len(res.Cards))
	if res.Booking.State == store.BookingPending {
		msg = web.T(lang, "bkflash.approved_waiting", id, web.T(lang, "bkwait."+res.Booking.WaitReason))
	}
	return a.Pages.RedirectWithFlash(c, bookingPath(id), msg)
}

// extendBookingForm moves the end later; the new end is read in the
// portal's zone.
func (a *Area) extendBookingForm(c echo.Context) error {
	id, err := scope.BookingID(c, a.Store)
	if err != nil {
		return err
	}
	f := request.Form(c, "end")
	const op = "server.extendBookingForm"
	raw := strings.TrimSpace(f.Value("end"))
	var end time.Time
	switch t, ok := request.ParseLocal(raw, a.Config.TZ); {
	case raw == "":
		err = &errs.Error{Code: errs.Invalid, Op: op, Key: "booking.end_required", Fields: map[string]string{"end": "booking.end_required"}}
	case !ok:
		err = &errs.Error{Code: errs.Invalid, Op: op, Key: "bkform.time_invalid", Fields: map[string]string{"end": "bkform.time_invalid"}}
	default:
		end = t
		_, err = a.Store.ExtendBooking(c.Request().Context(), id, end)
	}
	if err == nil {
		return a.Pages.RedirectWithFlash(c, bookingPath(id), web.T(request.Lang(c), "bkflash.extended", id, end.In(a.Config.TZ).Format("2006-01-02 15:04")))
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderBookingDetail(c, response.StatusOf(err), id, "", f)
}

// bookingUsage adds what telemetry saw of the booking: busy against idle
// card-hours, and the alerts raised on its cards.
func (a *Area) bookingUsage(c echo.Context, d *web.BookingDetailProps) error {
	ctx := c.Request().Context()
	u, err := a.Store.FindBookingUsage(ctx, d.B.ID)
	if err != nil {
		return err
	}
	if u.SampledSeconds > 0 {
		d.Usage = &web.BookingUsageRow{SampledHours: schedule.Hours(u.SampledSeconds), BusyHours: schedule.Hours(u.BusySeconds),
			IdleHours: schedule.Hours(u.IdleSeconds), HeldIdleHours: schedule.Hours(u.HeldIdleSeconds), UsedPct: int(u.UsedShare()*100 + 0.5)}
	}
	alerts, err := a.Store.FindBookingAlerts(ctx, d.B.ID)
	if err != nil {
		return err
	}
	p := a.Pages.Base(c)
	for _, al := range alerts {
		row := web.BookingAlertRow{Kind: al.Kind, Card: fmt.Sprintf("%s #%d", al.HostName, al.GPUIndex), Started: p.Time(al.StartedAt), Open: al.EndedAt == nil}
		if al.EndedAt != nil {
			row.Ended = p.Time(*al.EndedAt)
		} else {
			row.Ended = p.T("bkusage.ongoing")
		}
		d.Alerts = append(d.Alerts, row)
	}
	return nil
}
