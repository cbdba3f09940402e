package planning

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/money"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

// How much of the calendar a feed carries: recent history and what is
// booked ahead.
const (
	icalPast   = 30 * 24 * time.Hour
	icalFuture = 90 * 24 * time.Hour
)

func (a *Area) calendarPage(c echo.Context) error {
	return a.renderCalendar(c, http.StatusOK, nil, "")
}

func (a *Area) renderCalendar(c echo.Context, status int, feed *web.CalendarFeedShown, msg string) error {
	props, err := a.calendarProps(c)
	if err != nil {
		return err
	}
	props.Feed, props.Error = feed, msg
	return response.Render(c, status, web.CalendarPage(a.Pages.Page(c, "plan.cal.title", "booking"), props))
}

// calendarProps lists the teams whose feed the user may take: their own
// teams, every team for admins (the store decides again on issue).
func (a *Area) calendarProps(c echo.Context) (web.CalendarProps, error) {
	var props web.CalendarProps
	u := request.User(c)
	teams, err := a.Store.FindTeams(c.Request().Context())
	if err != nil {
		return props, err
	}
	names := make(map[int64]string, len(teams))
	for _, t := range teams {
		names[t.ID] = t.Name
	}
	if u.Role == store.RoleAdmin {
		for _, t := range teams {
			props.Teams = append(props.Teams, web.Option{Value: strconv.FormatInt(t.ID, 10), Label: t.Name})
		}
		return props, nil
	}
	ids, err := a.Store.TeamIDsOf(c.Request().Context(), u.ID)
	if err != nil {
		return props, err
	}
	for _, id := range ids {
		props.Teams = append(props.Teams, web.Option{Value: strconv.FormatInt(id, 10), Label: names[id]})
	}
	return props, nil
}

// createCalendarFeedForm issues a feed URL and shows it once, on this very
// response: only its hash is kept, so a redirect could not show it again.
func (a *Area) createCalendarFeedForm(c echo.Context) error {
	u := request.User(c)
	lang := request.Lang(c)
	teamID := request.ID(c.FormValue("team"))
	label := web.T(lang, "plan.cal.mine")
	if teamID != 0 {
		t, err := a.Store.FindTeamByID(c.Request().Context(), teamID)
		if err != nil {
			return err
		}
		label = web.T(lang, "plan.cal.team") + " · " + t.Name
	}
	secret, err := a.Store.CreateCalendarFeed(c.Request().Context(), u.ID, teamID)
	if err != nil {
		if errs.Is(err, errs.Forbidden) || errs.Is(err, errs.Invalid) {
			_, _, msg, _ := response.Describe(err, lang)
			return a.renderCalendar(c, response.StatusOf(err), nil, msg)
		}
		return err
	}
	feed := feedURLs(a.Config.BaseURL, secret)
	feed.Label = label
	return a.renderCalendar(c, http.StatusOK, feed, "")
}

// feedURLs are where a calendar app fetches the feed: under the
// configured public URL, never the request's Host header — that is the
// client's word, and a feed URL built from it would hand the secret to
// whichever host a crafted request or a proxy named. Without
// CARDHOUR_BASE_URL the page shows the path and says what to put before it.
func feedURLs(base, secret string) *web.CalendarFeedShown {
	path := "/ical/" + secret
	if base == "" {
		return &web.CalendarFeedShown{URL: path, NeedsBase: true}
	}
	webcal := "webcal://" + strings.TrimPrefix(strings.TrimPrefix(base, "https://"), "http://") + path
	return &web.CalendarFeedShown{URL: base + path, Webcal: webcal}
}

// icalFeed serves a feed as text/calendar. The secret in the URL is the
// credential; an unknown or replaced one is not found.
func (a *Area) icalFeed(c echo.Context) error {
	ctx := c.Request().Context()
	lang := request.Lang(c)
	feed, err := a.Store.FindCalendarFeed(ctx, c.Param("token"))
	if err != nil {
		return err
	}
	now := a.Store.Now()
	filter := store.BookingFilter{From: now.Add(-icalPast), To: now.Add(icalFuture), Limit: 1000}
	name := web.T(lang, "app.name") + " · "
	switch {
	case feed.TeamID != nil:
		t, err := a.Store.FindTeamByID(ctx, *feed.TeamID)
		if err != nil {
			return err
		}
		filter.TeamIDs = []int64{t.ID}
		name += web.T(lang, "plan.cal.team") + " · " + t.Name
	case feed.UserID != nil:
		u, err := a.Store.FindUserByID(ctx, *feed.UserID)
		if err != nil {
			return err
		}
		// A disabled account's feed stops with its sign-in.
		if u.Disabled {
			return errs.E(errs.NotFound, "server.icalFeed", "feed.not_found")
		}
		filter.UserID = u.ID
		name += web.T(lang, "plan.cal.mine") + " · " + u.Username
	default:
		return errs.E(errs.NotFound, "server.icalFeed", "feed.not_found")
	}
	bookings, err := a.Store.FindBookings(ctx, filter)
	if err != nil {
		return err
	}
	cal := icalCalendar(lang, name, now, bookings)
	h := c.Response().Header()
	h.Set("Cache-Control", "private, max-age=300")
	h.Set("Content-Disposition", `inline; filename="cardhour.ics"`)
	return c.Blob(http.StatusOK, "text/calendar; charset=utf-8", cal)
}

// icalStatus maps a booking state onto VEVENT STATUS: waiting is
// tentative, displaced or called off is cancelled, the rest happened or
// will.
func icalStatus(state string) string {
	switch state {
	case store.BookingPending:
		return "TENTATIVE"
	case store.BookingCancelled, store.BookingPreempted:
		return "CANCELLED"
	}
	return "CONFIRMED"
}

const icalTime = "20060102T150405Z"

// icalCalendar writes an RFC 5545 calendar with one VEVENT per booking.
func icalCalendar(lang, name string, now time.Time, bookings []store.BookingView) []byte {
	var w icalWriter
	w.line("BEGIN", "VCALENDAR")
	w.line("VERSION", "2.0")
	w.line("PRODID", "-//cardhour//cardhour booking calendar//ZH")
	w.line("CALSCALE", "GREGORIAN")
	w.line("METHOD", "PUBLISH")
	w.line("X-WR-CALNAME", icalEscape(name))
	w.line("X-PUBLISHED-TTL", "PT15M")
	stamp := now.UTC().Format(icalTime)
	for _, b := range bookings {
		end := b.EndAt
		if b.EndedAt != nil && b.EndedAt.Before(end) && b.EndedAt.After(b.StartAt) {
			end = *b.EndedAt
		}
		w.line("BEGIN", "VEVENT")
		w.line("UID", "booking-"+strconv.FormatInt(b.ID, 10)+"@cardhour")
		w.line("DTSTAMP", stamp)
		w.line("DTSTART", b.StartAt.UTC().Format(icalTime))
		w.line("DTEND", end.UTC().Format(icalTime))
		if !b.UpdatedAt.IsZero() {
			w.line("LAST-MODIFIED", b.UpdatedAt.UTC().Format(icalTime))
		}
		w.line("SUMMARY", icalEscape(b.TaskName+" · "+b.CardTypeName+" ×"+strconv.Itoa(b.CardCount)))
		desc := web.T(lang, "plan.cal.event", web.T(lang, web.PlanStateKey(b.State)), b.TeamName, b.Username, money.Fen(b.CostFen).Yuan())
		if note := web.Note(lang, b.NoteKey, b.NoteArgs); note != "" {
			desc += "\n" + note
		}
		if len(b.Cards) > 0 {
			desc += "\n" + strings.Join(b.Cards, "\n")
		}
		w.line("DESCRIPTION", icalEscape(desc))
		w.line("STATUS", icalStatus(b.State))
		w.line("TRANSP", "OPAQUE")
		w.line("END", "VEVENT")
	}
	w.line("END", "VCALENDAR")
	return w.buf.Bytes()
}

// icalWriter emits content lines with CRLF endings, folded at 75 octets.
type icalWriter struct{ buf bytes.Buffer }

func (w *icalWriter) line(name, value string) {
	w.buf.WriteString(icalFold(name + ":" + value))
}

// icalEscape escapes TEXT values (RFC 5545 3.3.11): backslash, semicolon,
// comma and newline.
func icalEscape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '\\':
			b.WriteString(`\\`)
		case ';':
			b.WriteString(`\;`)
		case ',':
			b.WriteString(`\,`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			// CRLF becomes one \n; a lone CR is dropped.
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// icalFold splits a content line into lines of at most 75 octets, each
// continuation starting with a space (RFC 5545 3.1), never inside a UTF-8
// sequence, and ends every line with CRLF.
func icalFold(line string) string {
	const limit = 75
	var b strings.Builder
	first := true
	for len(line) > 0 {
		room := limit
		if !first {
			b.WriteByte(' ')
			room--
		}
		n := len(line)
		if n > room {
			n = room
			for n > 0 && !utf8.RuneStart(line[n]) {
				n--
			}
		}
		b.WriteString(line[:n])
		b.WriteString("\r\n")
		line = line[n:]
		first = false
	}
	if first {
		b.WriteString("\r\n")
	}
	return b.String()
}
