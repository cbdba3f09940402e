package notify

import (
	"net/http"

	"cardhour/server/route"
	"cardhour/store"
)

// Routes are the bell, notice settings, channels and the outbox, pages and
// API.
func (a *Area) Routes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/notifications", route.Viewer, a.notificationsPage),
		route.New(route.POST, "/notifications/read", route.Viewer, a.markAllReadForm),
		route.New(route.POST, "/notifications/:id/read", route.Viewer, a.markReadForm),
		route.New(route.GET, "/account/notifications", route.Viewer, a.settingsPage),
		route.New(route.POST, "/account/notifications", route.Viewer, a.saveSettingsForm),
		// Managers configure their teams' robots; admins the system-wide ones too.
		route.New(route.GET, "/channels", route.Manager, a.channelsPage),
		route.New(route.POST, "/channels", route.Manager, a.createChannelForm),
		route.New(route.GET, "/channels/:id", route.Manager, a.editChannelPage),
		route.New(route.POST, "/channels/:id", route.Manager, a.updateChannelForm),
		route.New(route.POST, "/channels/:id/delete", route.Manager, a.deleteChannelForm),
		route.New(route.POST, "/channels/:id/test", route.Manager, a.testChannelForm),
		route.New(route.GET, "/admin/notify", route.Admin, a.outboxPage),
		route.New(route.POST, "/admin/notify/:id/retry", route.Admin, a.retryForm),

		route.Op(route.GET, "/api/v1/notifications", route.Viewer, a.apiListNotifications, route.API{
			Tag: "notices", Summary: "The caller's notices, newest first, in the caller's language", Status: http.StatusOK,
			Query:  []route.Param{{Name: "unread", Kind: "boolean", Desc: "only unread ones"}},
			Result: route.List("notifications", "Notice", noticeJSON{}),
		}),
		route.Op(route.POST, "/api/v1/notifications/read", route.Viewer, a.apiMarkRead, route.API{
			Tag: "notices", Summary: "Mark the caller's notices read: the ids given, or all", Status: http.StatusOK,
			Body:   route.JSON("MarkRead", markReadRequest{}),
			Result: route.JSON("Unread", unreadJSON{}),
		}),
		route.Op(route.GET, "/api/v1/me/notify-settings", route.Viewer, a.apiGetSettings, route.API{
			Tag: "notices", Summary: "Where the caller hears each event, quiet hours, digest time", Status: http.StatusOK,
			Result: route.JSON("NotifySettings", settingsJSON{}),
		}),
		route.Op(route.PUT, "/api/v1/me/notify-settings", route.Viewer, a.apiPutSettings, route.API{
			Tag: "notices", Summary: "Change the caller's notice settings; events not listed keep theirs", Status: http.StatusOK,
			Body:   route.JSON("NotifySettingsInput", settingsJSON{}),
			Result: route.JSON("NotifySettings", settingsJSON{}),
		}),
		route.Op(route.GET, "/api/v1/notify-channels", route.Manager, a.apiListChannels, route.API{
			Tag: "notices", Summary: "Channels the caller configures: system-wide (admins) and their teams'", Status: http.StatusOK,
			Result: route.List("channels", "NotifyChannel", channelJSON{}),
		}),
		route.Op(route.POST, "/api/v1/notify-channels", route.Manager, a.apiCreateChannel, route.API{
			Tag: "notices", Summary: "Add a DingTalk, WeCom or Feishu robot or a signed webhook; no team_id = system-wide (admins)",
			Desc:   "The URL and secret are stored and never returned; `url_hint` shows the host only.",
			Status: http.StatusCreated, Body: route.JSON("NotifyChannelInput", channelRequest{}, "kind", "name", "url"),
			Result: route.JSON("NotifyChannel", channelJSON{}),
		}),
		route.Op(route.PUT, "/api/v1/notify-channels/:id", route.Manager, a.apiUpdateChannel, route.API{
			Tag: "notices", Summary: "Change a channel; an empty url or secret keeps the stored one", Status: http.StatusOK,
			Body:   route.JSON("NotifyChannelInput", channelRequest{}, "kind", "name", "url"),
			Result: route.JSON("NotifyChannel", channelJSON{}),
		}),
		route.Op(route.DELETE, "/api/v1/notify-channels/:id", route.Manager, a.apiDeleteChannel, route.API{
			Tag: "notices", Summary: "Remove a channel and what waits in its outbox", Status: http.StatusNoContent,
		}),
		route.Op(route.POST, "/api/v1/notify-channels/:id/test", route.Manager, a.apiTestChannel, route.API{
			Tag: "notices", Summary: "Send a test message now and return the channel's real answer", Status: http.StatusOK,
			Result: route.JSON("ChannelTest", testJSON{}),
		}),
		route.Op(route.GET, "/api/v1/notify-outbox", route.Admin, a.apiListOutbox, route.API{
			Tag: "notices", Summary: "Notices in the outbox, newest first", Status: http.StatusOK,
			Query:  []route.Param{{Name: "state", Kind: "string", Desc: "pending, sent or failed"}},
			Result: route.List("notices", "OutboxNotice", store.OutboxRow{}),
		}),
		route.Op(route.POST, "/api/v1/notify-outbox/:id/retry", route.Admin, a.apiRetry, route.API{
			Tag: "notices", Summary: "Queue a failed notice again", Status: http.StatusNoContent, Conflict: true,
		}),
	}
}
