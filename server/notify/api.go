package notify

import (
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/store"
	"cardhour/web"
)

type noticeJSON struct {
	ID        int64      `json:"id"`
	Kind      string     `json:"kind"`
	Subject   string     `json:"subject"`
	Text      string     `json:"text"`
	Lines     []string   `json:"lines"`
	Link      string     `json:"link"`
	CreatedAt time.Time  `json:"created_at"`
	ReadAt    *time.Time `json:"read_at"`
}

type markReadRequest struct {
	IDs []int64 `json:"ids,omitempty"`
}

type unreadJSON struct {
	Unread int `json:"unread"`
}

type settingsJSON struct {
	Lang         string            `json:"lang"`
	QuietFrom    int               `json:"quiet_from"`
	QuietTo      int               `json:"quiet_to"`
	DigestMinute int               `json:"digest_minute"`
	Events       []store.EventPref `json:"events"`
}

type channelRequest = store.NotifyChannelInput

type channelJSON struct {
	store.NotifyChannel
	URLHint   string `json:"url_hint"`
	HasSecret bool   `json:"has_secret"`
}

type testJSON struct {
	OK     bool   `json:"ok"`
	Status int    `json:"status"`
	Answer string `json:"answer"`
}

func (a *Area) apiListNotifications(c echo.Context) error {
	u := request.User(c)
	ns, err := a.Store.FindNotifications(c.Request().Context(), u.ID, c.QueryParam("unread") == "true" || c.QueryParam("unread") == "1", 100)
	if err != nil {
		return err
	}
	lang := request.Lang(c)
	out := make([]noticeJSON, len(ns))
	for i, n := range ns {
		subject, text, lines := web.NoticeText(lang, n.Kind, n.MessageKey, n.Args())
		if lines == nil {
			lines = []string{}
		}
		out[i] = noticeJSON{ID: n.ID, Kind: n.Kind, Subject: subject, Text: text, Lines: lines, Link: n.Link, CreatedAt: n.CreatedAt, ReadAt: n.ReadAt}
	}
	return c.JSON(http.StatusOK, map[string]any{"notifications": out})
}

func (a *Area) apiMarkRead(c echo.Context) error {
	var in markReadRequest
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	ctx := c.Request().Context()
	u := request.User(c)
	if len(in.IDs) == 0 {
		if err := a.Store.MarkNotificationsRead(ctx, u.ID); err != nil {
			return err
		}
	}
	for _, id := range in.IDs {
		if err := a.Store.MarkNotificationRead(ctx, u.ID, id); err != nil {
			return err
		}
	}
	n, err := a.Store.CountUnread(ctx, u.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, unreadJSON{Unread: n})
}

func toSettingsJSON(s *store.NotifySettings) settingsJSON {
	return settingsJSON{Lang: s.Lang, QuietFrom: s.QuietFrom, QuietTo: s.QuietTo, DigestMinute: s.DigestMinute, Events: s.Events}
}

func (a *Area) apiGetSettings(c echo.Context) error {
	s, err := a.Store.FindNotifySettings(c.Request().Context(), request.User(c).ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSettingsJSON(s))
}

func (a *Area) apiPutSettings(c echo.Context) error {
	var in settingsJSON
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	s, err := a.Store.UpdateNotifySettings(c.Request().Context(), request.User(c).ID, store.NotifySettings(in))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSettingsJSON(s))
}

func toChannelJSON(ch store.NotifyChannel) channelJSON {
	if ch.Events == nil {
		ch.Events = store.NameList{}
	}
	return channelJSON{NotifyChannel: ch, URLHint: ch.URLHint(), HasSecret: ch.HasSecret()}
}

func (a *Area) apiListChannels(c echo.Context) error {
	_, names, err := a.channelsProps(c)
	if err != nil {
		return err
	}
	chans, err := a.visibleChannels(c, names)
	if err != nil {
		return err
	}
	out := make([]channelJSON, len(chans))
	for i, ch := range chans {
		out[i] = toChannelJSON(ch)
	}
	return c.JSON(http.StatusOK, map[string]any{"channels": out})
}

func (a *Area) apiCreateChannel(c echo.Context) error {
	var in channelRequest
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	ch, err := a.Store.CreateNotifyChannel(c.Request().Context(), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toChannelJSON(*ch))
}

func (a *Area) apiUpdateChannel(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	var in channelRequest
	if err := request.DecodeJSON(c, &in); err != nil {
		return err
	}
	up, err := a.Store.UpdateNotifyChannel(c.Request().Context(), ch.ID, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toChannelJSON(*up))
}

func (a *Area) apiDeleteChannel(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	if err := a.Store.DeleteNotifyChannel(c.Request().Context(), ch.ID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (a *Area) apiTestChannel(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	out, sendErr := a.testChannel(c, ch)
	answer := out.Answer
	if sendErr != nil {
		answer = answerOf(out, sendErr)
	}
	return c.JSON(http.StatusOK, testJSON{OK: sendErr == nil, Status: out.Status, Answer: answer})
}

func (a *Area) apiListOutbox(c echo.Context) error {
	state := c.QueryParam("state")
	if state != "" && !slices.Contains([]string{store.OutboxPending, store.OutboxSent, store.OutboxFailed}, state) {
		return &errs.Error{Code: errs.Invalid, Op: "server.apiListOutbox", Key: "notify.state_invalid", Fields: map[string]string{"state": "notify.state_invalid"}}
	}
	rows, err := a.Store.FindOutbox(c.Request().Context(), store.OutboxFilter{State: state, Limit: 500})
	if err != nil {
		return err
	}
	if rows == nil {
		rows = []store.OutboxRow{}
	}
	return c.JSON(http.StatusOK, map[string]any{"notices": rows})
}

func (a *Area) apiRetry(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	if err := a.Store.RetryOutbox(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
