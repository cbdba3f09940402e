package notify

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	nt "cardhour/notify"
	"cardhour/server/request"
	"cardhour/server/response"
	"cardhour/store"
	"cardhour/web"
)

// bell builds the bell's items in lang.
func (a *Area) bell(c echo.Context, ns []store.Notification) []web.BellItem {
	lang := request.Lang(c)
	pg := a.Pages.Base(c)
	out := make([]web.BellItem, len(ns))
	for i, n := range ns {
		subject, text, lines := web.NoticeText(lang, n.Kind, n.MessageKey, n.Args())
		out[i] = web.BellItem{ID: n.ID, Subject: subject, Text: text, Lines: lines, Link: n.Link, When: pg.Time(n.CreatedAt), Unread: n.ReadAt == nil}
	}
	return out
}

func (a *Area) notificationsPage(c echo.Context) error {
	u := request.User(c)
	unread := c.QueryParam("unread") == "1"
	ns, err := a.Store.FindNotifications(c.Request().Context(), u.ID, unread, 100)
	if err != nil {
		return err
	}
	return response.Render(c, http.StatusOK, web.NotificationsPage(a.Pages.Page(c, "ntf.title", ""), web.NoticesProps{Items: a.bell(c, ns), UnreadOnly: unread}))
}

// markAllReadForm marks every notice read and goes back where the form
// was (the bell's list, the booking home).
func (a *Area) markAllReadForm(c echo.Context) error {
	if err := a.Store.MarkNotificationsRead(c.Request().Context(), request.User(c).ID); err != nil {
		return err
	}
	next := request.SafeNext(c.FormValue("next"))
	if next == "/" {
		next = "/notifications"
	}
	return a.Pages.RedirectWithFlash(c, next, web.T(request.Lang(c), "ntf.marked"))
}

func (a *Area) markReadForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.MarkNotificationRead(c.Request().Context(), request.User(c).ID, id); err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/notifications", web.T(request.Lang(c), "ntf.marked"))
}

// dayMinutes are the choices of a time of day: every half hour.
func dayMinutes(lang string) []web.Option {
	out := make([]web.Option, 0, 48)
	for m := 0; m < 1440; m += 30 {
		out = append(out, web.Option{Value: strconv.Itoa(m), Label: fmt.Sprintf("%02d:%02d", m/60, m%60)})
	}
	return out
}

func (a *Area) settingsProps(c echo.Context, set *store.NotifySettings) web.NotifySettingsProps {
	u := request.User(c)
	lang := request.Lang(c)
	p := web.NotifySettingsProps{Minutes: dayMinutes(lang), NoEmail: u.Email == "", MailOff: a.Config.Mail.Addr == "",
		IsManager: u.Role == store.RoleManager || u.Role == store.RoleAdmin, TZName: a.Config.TZName}
	for _, e := range set.Events {
		if !reaches(u, e.Event) {
			continue
		}
		p.Events = append(p.Events, web.EventPrefRow{Event: e.Event, Label: web.T(lang, web.SubjectKey(e.Event)), Group: e.Group, Mail: e.Mail, Chat: e.Chat})
	}
	return p
}

func settingsForm(set *store.NotifySettings) web.Form {
	f := web.NewForm()
	f.Values["lang"] = set.Lang
	f.Values["quiet_from"] = strconv.Itoa(set.QuietFrom)
	f.Values["quiet_to"] = strconv.Itoa(set.QuietTo)
	f.Values["digest_minute"] = strconv.Itoa(set.DigestMinute)
	return f
}

func (a *Area) settingsPage(c echo.Context) error {
	set, err := a.Store.FindNotifySettings(c.Request().Context(), request.User(c).ID)
	if err != nil {
		return err
	}
	return response.Render(c, http.StatusOK, web.NotifySettingsPage(a.Pages.Page(c, "ntf.settings", "account"), a.settingsProps(c, set), settingsForm(set)))
}

func (a *Area) saveSettingsForm(c echo.Context) error {
	ctx := c.Request().Context()
	u := request.User(c)
	cur, err := a.Store.FindNotifySettings(ctx, u.ID)
	if err != nil {
		return err
	}
	in := store.NotifySettings{Lang: c.FormValue("lang")}
	v := errs.NewValidation("server.saveNotifySettings")
	in.QuietFrom = minuteField(c, "quiet_from", 0, v)
	in.QuietTo = minuteField(c, "quiet_to", 0, v)
	in.DigestMinute = minuteField(c, "digest_minute", cur.DigestMinute, v)
	// Only the events the page offered: the others keep their switches.
	for _, e := range cur.Events {
		if !reaches(u, e.Event) {
			continue
		}
		in.Events = append(in.Events, store.EventPref{Event: e.Event, Mail: c.FormValue("mail_"+e.Event) == "1", Chat: c.FormValue("chat_"+e.Event) == "1"})
	}
	err = v.Err()
	if err == nil {
		if _, err = a.Store.UpdateNotifySettings(ctx, u.ID, in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/account/notifications", web.T(request.Lang(c), "ntf.set.saved"))
		}
	}
	f := request.Form(c, "lang", "quiet_from", "quiet_to", "digest_minute")
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	cur.Events = in.Events
	return response.Render(c, response.StatusOf(err), web.NotifySettingsPage(a.Pages.Page(c, "ntf.settings", "account"), a.settingsProps(c, cur), f))
}

// reaches tells whether event can reach u at all: the settings page offers
// and saves only those.
func reaches(u *store.User, event string) bool {
	ev, ok := nt.Find(event)
	return !ok || ev.Reaches(u.Role == store.RoleManager || u.Role == store.RoleAdmin, u.Role == store.RoleAdmin)
}

// minuteField reads a minute of the day; absent is def.
func minuteField(c echo.Context, name string, def int, v *errs.Validation) int {
	raw := strings.TrimSpace(c.FormValue(name))
	if raw == "" {
		return def
	}
	m, err := strconv.Atoi(raw)
	v.Check(err == nil && m >= -1 && m < 1440, name, "notify.minute_invalid")
	return m
}

// channelsProps are the scopes the viewer may configure: system-wide for
// admins, and every team they manage.
func (a *Area) channelsProps(c echo.Context) (web.ChannelsProps, map[int64]string, error) {
	ctx := c.Request().Context()
	u := request.User(c)
	lang := request.Lang(c)
	var p web.ChannelsProps
	names := map[int64]string{}
	if u.Role == store.RoleAdmin {
		p.Scopes = append(p.Scopes, web.Option{Value: "", Label: web.T(lang, "ntf.ch.system")})
		teams, err := a.Store.FindTeams(ctx)
		if err != nil {
			return p, nil, err
		}
		for _, t := range teams {
			names[t.ID] = t.Name
		}
	} else {
		ms, err := a.Store.FindMemberships(ctx, store.MembershipFilter{UserID: u.ID})
		if err != nil {
			return p, nil, err
		}
		for _, m := range ms {
			if m.Role == store.TeamRoleManager {
				names[m.TeamID] = m.TeamName
			}
		}
	}
	for _, id := range sortedIDs(names) {
		p.Scopes = append(p.Scopes, web.Option{Value: strconv.FormatInt(id, 10), Label: web.T(lang, "ntf.ch.team", names[id])})
	}
	for _, k := range nt.RobotKinds {
		p.Kinds = append(p.Kinds, web.Option{Value: string(k), Label: web.T(lang, web.ChannelKindKey(string(k)))})
	}
	for _, e := range nt.Events {
		p.Events = append(p.Events, web.Option{Value: e.Name, Label: web.T(lang, web.SubjectKey(e.Name))})
	}
	return p, names, nil
}

// visibleChannels are the channels the viewer configures: the system-wide
// ones for admins, then each of names' teams'.
func (a *Area) visibleChannels(c echo.Context, names map[int64]string) ([]store.NotifyChannel, error) {
	ctx := c.Request().Context()
	var chans []store.NotifyChannel
	if request.User(c).Role == store.RoleAdmin {
		sys, err := a.Store.FindNotifyChannels(ctx, store.ChannelFilter{})
		if err != nil {
			return nil, err
		}
		chans = sys
	}
	for _, id := range sortedIDs(names) {
		cs, err := a.Store.FindNotifyChannels(ctx, store.ChannelFilter{TeamID: id})
		if err != nil {
			return nil, err
		}
		chans = append(chans, cs...)
	}
	return chans, nil
}

func (a *Area) channelRows(c echo.Context, names map[int64]string) ([]web.ChannelRow, error) {
	chans, err := a.visibleChannels(c, names)
	if err != nil {
		return nil, err
	}
	out := make([]web.ChannelRow, len(chans))
	for i, ch := range chans {
		out[i] = channelRow(request.Lang(c), ch, names)
	}
	return out, nil
}

func channelRow(lang string, ch store.NotifyChannel, names map[int64]string) web.ChannelRow {
	scope := web.T(lang, "ntf.ch.system")
	if ch.TeamID != nil {
		scope = web.T(lang, "ntf.ch.team", names[*ch.TeamID])
	}
	r := web.ChannelRow{ID: ch.ID, Scope: scope, Kind: ch.Kind, Name: ch.Name, URLHint: ch.URLHint(), HasSecret: ch.HasSecret(),
		Lang: ch.Lang, Rate: ch.RatePerMinute, Enabled: ch.Enabled}
	for _, e := range ch.Events {
		r.Events = append(r.Events, web.T(lang, web.SubjectKey(e)))
	}
	return r
}

func (a *Area) channelsPage(c echo.Context) error {
	f := web.NewForm()
	f.Values["enabled"] = "1"
	f.Values["lang"] = request.Lang(c)
	f.Values["rate_per_minute"] = strconv.Itoa(store.DefaultRobotRate)
	return a.renderChannels(c, http.StatusOK, f)
}

func (a *Area) renderChannels(c echo.Context, status int, f web.Form) error {
	props, names, err := a.channelsProps(c)
	if err != nil {
		return err
	}
	if props.Rows, err = a.channelRows(c, names); err != nil {
		return err
	}
	return response.Render(c, status, web.ChannelsPage(a.Pages.Page(c, "ntf.channels", ""), props, f))
}

var channelFields = []string{"name", "scope", "kind", "url", "secret", "lang", "rate_per_minute", "enabled", "clear_secret"}

// channelFromForm reads a channel's form; the events are checkboxes
// sharing one name.
// channelFromForm reads the channel form; a rate that does not parse is
// reported with whatever the store's own checks find in the other fields.
func channelFromForm(c echo.Context, create bool) (store.NotifyChannelInput, web.Form, error) {
	f := request.Form(c, channelFields...)
	f.Values["secret"] = "" // never sent back into the page
	form, _ := c.FormParams()
	events := form["events"]
	f.Values["events"] = strings.Join(events, ",")
	in := store.NotifyChannelInput{Kind: c.FormValue("kind"), Name: c.FormValue("name"), URL: c.FormValue("url"), Secret: c.FormValue("secret"),
		ClearSecret: c.FormValue("clear_secret") != "", Lang: c.FormValue("lang"), Events: events, Enabled: c.FormValue("enabled") != ""}
	v := errs.NewValidation("server.channelForm")
	if raw := strings.TrimSpace(c.FormValue("rate_per_minute")); raw != "" {
		n, err := strconv.Atoi(raw)
		v.Check(err == nil && n >= 1, "rate_per_minute", "channel.rate_invalid")
		in.RatePerMinute = n
	}
	if s := c.FormValue("scope"); s != "" {
		id := request.ID(s)
		in.TeamID = &id
	}
	if v.Err() != nil {
		if err := v.Merge(in.Check(create)); err != nil {
			return in, f, err
		}
	}
	return in, f, v.Err()
}

func (a *Area) createChannelForm(c echo.Context) error {
	in, f, err := channelFromForm(c, true)
	if err == nil {
		var ch *store.NotifyChannel
		if ch, err = a.Store.CreateNotifyChannel(c.Request().Context(), in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/channels", web.T(request.Lang(c), "ntf.ch.created", ch.Name))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderChannels(c, response.StatusOf(err), f)
}

func (a *Area) channel(c echo.Context) (*store.NotifyChannel, error) {
	id, err := request.PathID(c, "id")
	if err != nil {
		return nil, err
	}
	ch, err := a.Store.FindNotifyChannelByID(c.Request().Context(), id)
	if errs.Is(err, errs.Forbidden) {
		// Another team's channel is not there for this viewer.
		return nil, errs.E(errs.NotFound, "server.channel", "channel.not_found")
	}
	return ch, err
}

func (a *Area) editChannelPage(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	f := web.NewForm()
	f.Values["name"], f.Values["lang"], f.Values["rate_per_minute"] = ch.Name, ch.Lang, strconv.Itoa(ch.RatePerMinute)
	f.Values["events"] = strings.Join(ch.Events, ",")
	if ch.Enabled {
		f.Values["enabled"] = "1"
	}
	return a.renderEditChannel(c, http.StatusOK, ch, f)
}

func (a *Area) renderEditChannel(c echo.Context, status int, ch *store.NotifyChannel, f web.Form) error {
	props, names, err := a.channelsProps(c)
	if err != nil {
		return err
	}
	row := channelRow(request.Lang(c), *ch, names)
	return response.Render(c, status, web.ChannelEditPage(a.Pages.Page(c, "ntf.channels", ""), props, row, f))
}

func (a *Area) updateChannelForm(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	in, f, err := channelFromForm(c, false)
	if err == nil {
		var up *store.NotifyChannel
		if up, err = a.Store.UpdateNotifyChannel(c.Request().Context(), ch.ID, in); err == nil {
			return a.Pages.RedirectWithFlash(c, "/channels", web.T(request.Lang(c), "ntf.ch.updated", up.Name))
		}
	}
	if !response.FormFailed(request.Lang(c), err, &f) {
		return err
	}
	return a.renderEditChannel(c, response.StatusOf(err), ch, f)
}

func (a *Area) deleteChannelForm(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteNotifyChannel(c.Request().Context(), ch.ID); err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/channels", web.T(request.Lang(c), "ntf.ch.deleted", ch.Name))
}

// testChannel sends a test message now and returns the channel's answer.
func (a *Area) testChannel(c echo.Context, ch *store.NotifyChannel) (nt.Outcome, error) {
	m := a.message(ch.Lang, "test", "notify.test", "/notifications", nil)
	return a.sender.Send(c.Request().Context(), nt.Target{Kind: nt.Kind(ch.Kind), URL: ch.URL, Secret: ch.Secret}, m)
}

func (a *Area) testChannelForm(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	out, sendErr := a.testChannel(c, ch)
	lang := request.Lang(c)
	if sendErr != nil {
		return a.Pages.RedirectWithFlash(c, "/channels", web.T(lang, "ntf.ch.test_failed", out.Status, answerOf(out, sendErr)))
	}
	return a.Pages.RedirectWithFlash(c, "/channels", web.T(lang, "ntf.ch.test_ok", out.Status, out.Answer))
}

func (a *Area) outboxPage(c echo.Context) error {
	ctx := c.Request().Context()
	counts, err := a.Store.CountOutbox(ctx)
	if err != nil {
		return err
	}
	failed, err := a.Store.FindOutbox(ctx, store.OutboxFilter{State: store.OutboxFailed, Limit: 200})
	if err != nil {
		return err
	}
	lang := request.Lang(c)
	pg := a.Pages.Page(c, "ntf.outbox", "admin")
	o := web.OutboxProps{Pending: counts[store.OutboxPending], Sent: counts[store.OutboxSent], Failed: counts[store.OutboxFailed]}
	for _, r := range failed {
		subject, _, _ := web.NoticeText(lang, r.Kind, r.MessageKey, r.Args())
		o.Rows = append(o.Rows, web.OutboxRowView{ID: r.ID, Channel: web.T(lang, web.ChannelKindKey(r.Channel)), Subject: subject,
			Attempts: r.Attempts, Status: r.LastStatus, Answer: r.LastAnswer, When: pg.Time(r.CreatedAt)})
	}
	return response.Render(c, http.StatusOK, web.OutboxPage(pg, o))
}

func (a *Area) retryForm(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.RetryOutbox(c.Request().Context(), id); err != nil {
		return err
	}
	return a.Pages.RedirectWithFlash(c, "/admin/notify", web.T(request.Lang(c), "ntf.ob.retried", id))
}
