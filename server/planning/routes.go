package planning

import (
	"cardhour/server/route"
	"cardhour/store"
	"net/http"
)

// Routes are quotas, templates, availability and calendar feeds, pages and API.
func (a *Area) Routes() []route.Route {
	return []route.Route{
		// Quotas: everyone sees their teams' quotas; managers grant and renew
		// for the teams they manage (the store checks which).
		route.New(route.GET, "/quotas", route.Viewer, a.quotasPage),
		route.New(route.GET, "/quotas/new", route.Manager, a.newQuotaPage),
		route.New(route.POST, "/quotas/new", route.Manager, a.createQuotaForm),
		route.New(route.GET, "/quotas/:id", route.Manager, a.editQuotaPage),
		route.New(route.POST, "/quotas/:id", route.Manager, a.updateQuotaForm),
		// Renewal and adjustment requests ("提前续或调"): a manager or a member
		// with a core task asks (the store checks who), an admin decides.
		route.New(route.GET, "/quotas/:id/request", route.Member, a.quotaRequestPage),
		route.New(route.POST, "/quotas/:id/request", route.Member, a.createQuotaRequestForm),
		route.New(route.POST, "/quota-requests/:id/approve", route.Admin, a.approveQuotaRequestForm),
		route.New(route.POST, "/quota-requests/:id/refuse", route.Admin, a.refuseQuotaRequestForm),

		// Templates ("固化取用模板").
		route.New(route.GET, "/templates", route.Viewer, a.templatesPage),
		route.New(route.POST, "/templates", route.Member, a.createTemplateForm),
		route.New(route.GET, "/templates/new", route.Member, a.newTemplatePage),
		route.New(route.GET, "/templates/:id", route.Viewer, a.templatePage),
		route.New(route.POST, "/templates/:id/preview", route.Member, a.previewTemplateForm),
		route.New(route.POST, "/templates/:id/use", route.Member, a.useTemplateForm),
		route.New(route.POST, "/templates/:id/delete", route.Member, a.deleteTemplateForm),

		// Availability and calendar feeds.
		route.New(route.GET, "/availability", route.Viewer, a.availabilityPage),
		route.New(route.GET, "/calendar", route.Viewer, a.calendarPage),
		route.New(route.POST, "/calendar/feeds", route.Viewer, a.createCalendarFeedForm),

		// The secret in the URL is the credential: calendar apps cannot log in.
		route.New(route.GET, "/ical/:token", route.Public, a.icalFeed),

		// API.
		route.Op(route.GET, "/api/v1/availability", route.Viewer, a.apiAvailability, route.API{
			Tag:     "bookings",
			Summary: "Free cards per card type and hour",
			Status:  http.StatusOK,
			Result:  route.JSON("Availability", availabilityJSON{}),
			Query:   []route.Param{{Name: "from", Kind: "date-time", Desc: "first hour (RFC 3339, default now)"}, {Name: "hours", Kind: "integer", Desc: "1–744, default 336 (14 days)"}, {Name: "card_type", Kind: "string", Desc: "card type name or id"}},
		}),
		route.Op(route.GET, "/api/v1/quotas", route.Manager, a.apiListQuotas, route.API{
			Tag:     "quotas",
			Summary: "Quotas of the teams the caller manages (admins: all) with their use",
			Status:  http.StatusOK,
			Result:  route.List("quotas", "Quota", store.QuotaView{}),
			Query:   []route.Param{{Name: "team", Kind: "string", Desc: "team name or id"}, {Name: "card_type", Kind: "string", Desc: "card type name or id"}},
		}),
		route.Op(route.POST, "/api/v1/quotas", route.Manager, a.apiCreateQuota, route.API{
			Tag:      "quotas",
			Summary:  "Grant a quota",
			Body:     route.JSON("QuotaInput", quotaRequest{}, "team", "card_type", "card_hours", "valid_from", "expires_at"),
			Status:   http.StatusCreated,
			Result:   route.JSON("Quota", store.QuotaView{}),
			Conflict: true,
		}),
		route.Op(route.PUT, "/api/v1/quotas/:id", route.Manager, a.apiUpdateQuota, route.API{
			Tag:      "quotas",
			Summary:  "Renew or adjust a quota",
			Body:     route.JSON("QuotaInput", quotaRequest{}, "team", "card_type", "card_hours", "valid_from", "expires_at"),
			Status:   http.StatusOK,
			Result:   route.JSON("Quota", store.QuotaView{}),
			Conflict: true,
		}),
		route.Op(route.POST, "/api/v1/quotas/:id/requests", route.Member, a.apiCreateQuotaRequest, route.API{
			Tag:      "quotas",
			Summary:  "Ask to renew or adjust a quota",
			Desc:     "Allowed to the team's manager, an admin, or a member with a core task in the team. kind is renew (needs a later expires_at) or adjust (changes at least one of card_hours, max_cards, expires_at); left-out values stay as they are. One pending request per quota (409 otherwise). Admins are notified.",
			Body:     route.JSON("QuotaRequestInput", quotaRequestBody{}, "kind", "reason"),
			Status:   http.StatusCreated,
			Result:   route.JSON("QuotaRequest", store.QuotaRequestView{}),
			Conflict: true,
		}),
		route.Op(route.GET, "/api/v1/quota-requests", route.Member, a.apiListQuotaRequests, route.API{
			Tag:     "quotas",
			Summary: "Quota requests of the caller's teams (admins: all), newest first",
			Status:  http.StatusOK,
			Result:  route.List("quota_requests", "QuotaRequest", store.QuotaRequestView{}),
			Query:   []route.Param{{Name: "state", Kind: "string", Desc: "pending, approved or refused"}, {Name: "quota", Kind: "integer", Desc: "only this quota's"}},
		}),
		route.Op(route.POST, "/api/v1/quota-requests/:id/approve", route.Admin, a.apiApproveQuotaRequest, route.API{
			Tag:      "quotas",
			Summary:  "Approve a pending quota request: its asked values are applied to the quota",
			Desc:     "The quota's own rules apply (e.g. no overlap with the team's next quota of the type); when they refuse, the request stays pending. The requester is notified.",
			Body:     route.JSON("QuotaApproval", decisionBody{}),
			Status:   http.StatusOK,
			Result:   route.JSON("QuotaRequest", store.QuotaRequestView{}),
			Conflict: true,
		}),
		route.Op(route.POST, "/api/v1/quota-requests/:id/refuse", route.Admin, a.apiRefuseQuotaRequest, route.API{
			Tag:      "quotas",
			Summary:  "Refuse a pending quota request with a note for the requester",
			Body:     route.JSON("QuotaRefusal", decisionBody{}, "note"),
			Status:   http.StatusOK,
			Result:   route.JSON("QuotaRequest", store.QuotaRequestView{}),
			Conflict: true,
		}),
	}
}
