package admin

import (
	"net/http"
	"slices"

	"cardhour/server/route"
	"cardhour/store"
)

// Routes are the admin pages and API: the inventory (card types, hosts,
// cards, images), people (teams and their members, users) and the audit
// log. Each resource's pages and API are listed together.
func (a *Area) Routes() []route.Route {
	return slices.Concat(
		[]route.Route{route.New(route.GET, "/admin", route.Admin, a.adminIndex)},
		a.cardTypesRoutes(),
		a.hostsRoutes(),
		a.cardsRoutes(),
		a.imagesRoutes(),
		a.teamsRoutes(),
		a.usersRoutes(),
		a.directoryRoutes(),
		a.auditRoutes(),
	)
}

// cardTypesRoutes are card types: the kinds of card with their VRAM, precisions and price.
func (a *Area) cardTypesRoutes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/admin/card-types", route.Admin, a.cardTypesPage),
		route.New(route.POST, "/admin/card-types", route.Admin, a.createCardTypeForm),
		route.New(route.GET, "/admin/card-types/:id", route.Admin, a.editCardTypePage),
		route.New(route.POST, "/admin/card-types/:id", route.Admin, a.updateCardTypeForm),
		route.New(route.POST, "/admin/card-types/:id/delete", route.Admin, a.deleteCardTypeForm),
		route.Op(route.GET, "/api/v1/card-types", route.Viewer, a.apiListCardTypes, route.API{
			Tag:     "inventory",
			Summary: "List card types, cheapest first",
			Status:  http.StatusOK,
			Result:  route.List("card_types", "CardType", cardTypeJSON{}),
		}),
		route.Op(route.POST, "/api/v1/card-types", route.Admin, a.apiCreateCardType, route.API{
			Tag:      "inventory",
			Summary:  "Add a card type",
			Body:     route.JSON("CardTypeInput", cardTypeRequest{}, "name", "vram_gib"),
			Status:   http.StatusCreated,
			Result:   route.JSON("CardType", cardTypeJSON{}),
			Conflict: true,
		}),
		route.Op(route.GET, "/api/v1/card-types/:id", route.Viewer, a.apiGetCardType, route.API{
			Tag:     "inventory",
			Summary: "One card type",
			Status:  http.StatusOK,
			Result:  route.JSON("CardType", cardTypeJSON{}),
		}),
		route.Op(route.PUT, "/api/v1/card-types/:id", route.Admin, a.apiUpdateCardType, route.API{
			Tag:      "inventory",
			Summary:  "Replace a card type",
			Body:     route.JSON("CardTypeInput", cardTypeRequest{}, "name", "vram_gib"),
			Status:   http.StatusOK,
			Result:   route.JSON("CardType", cardTypeJSON{}),
			Conflict: true,
		}),
		route.Op(route.DELETE, "/api/v1/card-types/:id", route.Admin, a.apiDeleteCardType, route.API{
			Tag:      "inventory",
			Summary:  "Delete a card type no card or booking uses",
			Status:   http.StatusNoContent,
			Conflict: true,
		}),
	}
}

// hostsRoutes are hosts: the machines the cards sit in.
func (a *Area) hostsRoutes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/admin/hosts", route.Admin, a.hostsPage),
		route.New(route.POST, "/admin/hosts", route.Admin, a.createHostForm),
		route.New(route.GET, "/admin/hosts/:id", route.Admin, a.editHostPage),
		route.New(route.POST, "/admin/hosts/:id", route.Admin, a.updateHostForm),
		route.New(route.POST, "/admin/hosts/:id/delete", route.Admin, a.deleteHostForm),
		route.Op(route.GET, "/api/v1/hosts", route.Viewer, a.apiListHosts, route.API{
			Tag:     "inventory",
			Summary: "List hosts with their card counts",
			Status:  http.StatusOK,
			Result:  route.List("hosts", "Host", hostJSON{}),
		}),
		route.Op(route.POST, "/api/v1/hosts", route.Admin, a.apiCreateHost, route.API{
			Tag:      "inventory",
			Summary:  "Add a host",
			Body:     route.JSON("HostInput", store.HostInput{}, "name"),
			Status:   http.StatusCreated,
			Result:   route.JSON("Host", hostJSON{}),
			Conflict: true,
		}),
		route.Op(route.GET, "/api/v1/hosts/:id", route.Viewer, a.apiGetHost, route.API{
			Tag:     "inventory",
			Summary: "One host",
			Status:  http.StatusOK,
			Result:  route.JSON("Host", hostJSON{}),
		}),
		route.Op(route.PUT, "/api/v1/hosts/:id", route.Admin, a.apiUpdateHost, route.API{
			Tag:      "inventory",
			Summary:  "Replace a host",
			Body:     route.JSON("HostInput", store.HostInput{}, "name"),
			Status:   http.StatusOK,
			Result:   route.JSON("Host", hostJSON{}),
			Conflict: true,
		}),
		route.Op(route.DELETE, "/api/v1/hosts/:id", route.Admin, a.apiDeleteHost, route.API{
			Tag:      "inventory",
			Summary:  "Delete a host without cards",
			Status:   http.StatusNoContent,
			Conflict: true,
		}),
	}
}

// cardsRoutes are cards: each GPU by uuid, its host, type and status.
func (a *Area) cardsRoutes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/admin/cards", route.Admin, a.cardsPage),
		route.New(route.POST, "/admin/cards", route.Admin, a.createCardForm),
		route.New(route.GET, "/admin/cards/:id", route.Admin, a.editCardPage),
		route.New(route.POST, "/admin/cards/:id", route.Admin, a.updateCardForm),
		route.New(route.POST, "/admin/cards/:id/retire", route.Admin, a.retireCardForm),
		route.New(route.POST, "/admin/cards/:id/clear-fault", route.Admin, a.clearFaultForm),
		route.New(route.POST, "/admin/cards/:id/delete", route.Admin, a.deleteCardForm),
		route.Op(route.GET, "/api/v1/cards", route.Viewer, a.apiListCards, route.API{
			Tag:     "inventory",
			Summary: "List cards by host, then index, a page at a time",
			Status:  http.StatusOK,
			Result:  route.JSON("CardPage", cardPageJSON{}),
			Query: []route.Param{{Name: "host_id", Kind: "integer", Desc: "only this host"}, {Name: "card_type_id", Kind: "integer", Desc: "only this card type"},
				{Name: "status", Kind: "string", Desc: "active, maintenance, retired or fault"}, {Name: "q", Kind: "string", Desc: "search: uuid, host name or zone, card type name"},
				{Name: "limit", Kind: "integer", Desc: "rows in the page, 1–1000, default 500"}, {Name: "offset", Kind: "integer", Desc: "rows skipped before the page, default 0; total says how many there are"}},
			Desc: "total is how many cards the filters select; page through them with offset.",
		}),
		route.Op(route.POST, "/api/v1/cards", route.Admin, a.apiCreateCard, route.API{
			Tag:      "inventory",
			Summary:  "Register a card (host and card type by id or name)",
			Body:     route.JSON("CardInput", cardRequest{}, "uuid"),
			Status:   http.StatusCreated,
			Result:   route.JSON("Card", store.CardView{}),
			Conflict: true,
		}),
		route.Op(route.GET, "/api/v1/cards/:id", route.Viewer, a.apiGetCard, route.API{
			Tag:     "inventory",
			Summary: "One card",
			Status:  http.StatusOK,
			Result:  route.JSON("Card", store.CardView{}),
		}),
		route.Op(route.PUT, "/api/v1/cards/:id", route.Admin, a.apiUpdateCard, route.API{
			Tag:     "inventory",
			Summary: "Replace a card",
			Desc: "A faulty card keeps its status: send \"fault\" to change its other fields, or \"maintenance\" / \"retired\" " +
				"(which ends its fault); \"active\" (or no status) is refused with 422 on status — POST /api/v1/cards/{id}/clear-fault returns it to service.",
			Body:     route.JSON("CardInput", cardRequest{}, "uuid"),
			Status:   http.StatusOK,
			Result:   route.JSON("Card", store.CardView{}),
			Conflict: true,
		}),
		route.Op(route.DELETE, "/api/v1/cards/:id", route.Admin, a.apiDeleteCard, route.API{
			Tag:      "inventory",
			Summary:  "Delete a card no booking used",
			Status:   http.StatusNoContent,
			Conflict: true,
		}),
		route.Op(route.POST, "/api/v1/cards/:id/clear-fault", route.Admin, a.apiClearFault, route.API{
			Tag:     "inventory",
			Summary: "Return a faulty card to service",
			Desc: "A card that reported a fault (reset required, unknown error, an XID error) is taken out of new bookings " +
				"until an admin clears it; its open fault alert ends then. 409 when the card is not marked faulty.",
			Status:   http.StatusOK,
			Result:   route.JSON("Card", store.CardView{}),
			Conflict: true,
		}),
	}
}

// imagesRoutes are images: the environment catalogue.
func (a *Area) imagesRoutes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/admin/images", route.Admin, a.imagesPage),
		route.New(route.POST, "/admin/images", route.Admin, a.createImageForm),
		route.New(route.GET, "/admin/images/:id", route.Admin, a.editImagePage),
		route.New(route.POST, "/admin/images/:id", route.Admin, a.updateImageForm),
		route.New(route.POST, "/admin/images/:id/delete", route.Admin, a.deleteImageForm),
		route.Op(route.GET, "/api/v1/images", route.Viewer, a.apiListImages, route.API{
			Tag:     "inventory",
			Summary: "List environment images",
			Status:  http.StatusOK,
			Result:  route.List("images", "Image", store.Image{}),
		}),
		route.Op(route.POST, "/api/v1/images", route.Admin, a.apiCreateImage, route.API{
			Tag:      "inventory",
			Summary:  "Add an image",
			Body:     route.JSON("ImageInput", store.ImageInput{}, "name", "reference"),
			Status:   http.StatusCreated,
			Result:   route.JSON("Image", store.Image{}),
			Conflict: true,
		}),
		route.Op(route.GET, "/api/v1/images/:id", route.Viewer, a.apiGetImage, route.API{
			Tag:     "inventory",
			Summary: "One image",
			Status:  http.StatusOK,
			Result:  route.JSON("Image", store.Image{}),
		}),
		route.Op(route.PUT, "/api/v1/images/:id", route.Admin, a.apiUpdateImage, route.API{
			Tag:      "inventory",
			Summary:  "Replace an image",
			Body:     route.JSON("ImageInput", store.ImageInput{}, "name", "reference"),
			Status:   http.StatusOK,
			Result:   route.JSON("Image", store.Image{}),
			Conflict: true,
		}),
		route.Op(route.DELETE, "/api/v1/images/:id", route.Admin, a.apiDeleteImage, route.API{
			Tag:      "inventory",
			Summary:  "Delete an image no task uses",
			Status:   http.StatusNoContent,
			Conflict: true,
		}),
	}
}

// teamsRoutes are teams and their members with team roles.
func (a *Area) teamsRoutes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/admin/teams", route.Admin, a.teamsPage),
		route.New(route.POST, "/admin/teams", route.Admin, a.createTeamForm),
		route.New(route.GET, "/admin/teams/:id", route.Admin, a.editTeamPage),
		route.New(route.POST, "/admin/teams/:id", route.Admin, a.updateTeamForm),
		route.New(route.POST, "/admin/teams/:id/delete", route.Admin, a.deleteTeamForm),
		route.New(route.POST, "/admin/teams/:id/members", route.Admin, a.addMemberForm),
		route.New(route.POST, "/admin/teams/:id/members/:user_id", route.Admin, a.setMemberRoleForm),
		route.New(route.POST, "/admin/teams/:id/members/:user_id/delete", route.Admin, a.removeMemberForm),
		route.Op(route.GET, "/api/v1/teams", route.Admin, a.apiListTeams, route.API{
			Tag:     "people",
			Summary: "List teams with member counts",
			Status:  http.StatusOK,
			Result:  route.List("teams", "Team", teamJSON{}),
		}),
		route.Op(route.POST, "/api/v1/teams", route.Admin, a.apiCreateTeam, route.API{
			Tag:      "people",
			Summary:  "Add a team",
			Body:     route.JSON("TeamInput", store.TeamInput{}, "name"),
			Status:   http.StatusCreated,
			Result:   route.JSON("Team", teamJSON{}),
			Conflict: true,
		}),
		route.Op(route.GET, "/api/v1/teams/:id", route.Admin, a.apiGetTeam, route.API{
			Tag:     "people",
			Summary: "One team",
			Status:  http.StatusOK,
			Result:  route.JSON("Team", teamJSON{}),
		}),
		route.Op(route.PUT, "/api/v1/teams/:id", route.Admin, a.apiUpdateTeam, route.API{
			Tag:      "people",
			Summary:  "Replace a team",
			Body:     route.JSON("TeamInput", store.TeamInput{}, "name"),
			Status:   http.StatusOK,
			Result:   route.JSON("Team", teamJSON{}),
			Conflict: true,
		}),
		route.Op(route.DELETE, "/api/v1/teams/:id", route.Admin, a.apiDeleteTeam, route.API{
			Tag:      "people",
			Summary:  "Delete a team without tasks",
			Status:   http.StatusNoContent,
			Conflict: true,
		}),
		route.Op(route.GET, "/api/v1/teams/:id/members", route.Admin, a.apiListMembers, route.API{
			Tag:     "people",
			Summary: "List a team's members",
			Status:  http.StatusOK,
			Result:  route.List("members", "Membership", store.MembershipView{}),
		}),
		route.Op(route.PUT, "/api/v1/teams/:id/members/:user_id", route.Admin, a.apiSetMember, route.API{
			Tag:      "people",
			Summary:  "Add a member or change their team role",
			Body:     route.JSON("MembershipInput", memberRequest{}),
			Status:   http.StatusOK,
			Result:   route.JSON("Membership", store.MembershipView{}),
			Conflict: true,
		}),
		route.Op(route.DELETE, "/api/v1/teams/:id/members/:user_id", route.Admin, a.apiRemoveMember, route.API{
			Tag:      "people",
			Summary:  "Remove a member",
			Status:   http.StatusNoContent,
			Conflict: true,
		}),
	}
}

// usersRoutes are users and their site roles.
func (a *Area) usersRoutes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/admin/users", route.Admin, a.usersPage),
		route.New(route.POST, "/admin/users", route.Admin, a.createUserForm),
		route.New(route.GET, "/admin/users/:id", route.Admin, a.editUserPage),
		route.New(route.POST, "/admin/users/:id", route.Admin, a.updateUserForm),
		route.Op(route.GET, "/api/v1/users", route.Admin, a.apiListUsers, route.API{
			Tag:     "people",
			Summary: "List users with their teams",
			Status:  http.StatusOK,
			Result:  route.List("users", "User", userJSON{}),
			Query:   []route.Param{{Name: "q", Kind: "string", Desc: "part of a username, name or email"}},
		}),
		route.Op(route.POST, "/api/v1/users", route.Admin, a.apiCreateUser, route.API{
			Tag:      "people",
			Summary:  "Add a user",
			Body:     route.JSON("UserCreate", store.UserCreate{}, "username", "password", "role"),
			Status:   http.StatusCreated,
			Result:   route.JSON("User", userJSON{}),
			Conflict: true,
		}),
		route.Op(route.GET, "/api/v1/users/:id", route.Admin, a.apiGetUser, route.API{
			Tag:     "people",
			Summary: "One user",
			Status:  http.StatusOK,
			Result:  route.JSON("User", userJSON{}),
		}),
		route.Op(route.PATCH, "/api/v1/users/:id", route.Admin, a.apiUpdateUser, route.API{
			Tag:      "people",
			Summary:  "Change some of a user's fields",
			Body:     route.JSON("UserUpdate", store.UserUpdate{}),
			Status:   http.StatusOK,
			Result:   route.JSON("User", userJSON{}),
			Conflict: true,
		}),
	}
}

// directoryRoutes are company login: the directories' group rules, the
// identities waiting for a link, the local sign-in switch.
func (a *Area) directoryRoutes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/admin/directory", route.Admin, a.directoryPage),
		route.New(route.POST, "/admin/directory/mappings", route.Admin, a.createRuleForm),
		route.New(route.POST, "/admin/directory/mappings/:id/delete", route.Admin, a.deleteRuleForm),
		route.New(route.POST, "/admin/directory/identities/:id/link", route.Admin, a.linkIdentityForm),
		route.New(route.POST, "/admin/directory/local-login", route.Admin, a.localLoginForm),
		route.Op(route.GET, "/api/v1/directory/mappings", route.Admin, a.apiListRules, route.API{
			Tag:     "people",
			Summary: "List the directory group rules",
			Status:  http.StatusOK,
			Result:  route.List("mappings", "GroupMapping", ruleJSON{}),
			Desc:    "Each rule maps a directory group (an LDAP group's cn or DN, an OIDC groups claim value) to a team membership and/or a portal role, applied at each directory sign-in and sync.",
		}),
		route.Op(route.POST, "/api/v1/directory/mappings", route.Admin, a.apiCreateRule, route.API{
			Tag:      "people",
			Summary:  "Add a directory group rule",
			Desc:     "provider is \"\" (any), \"ldap\" or \"oidc\"; a rule gives a team (team_id with team_role manager, member or viewer), a portal role (admin, manager, member, viewer), or both. Every bad field is reported at once (422); a second rule for the same provider, group and team is 409.",
			Body:     route.JSON("GroupMappingCreate", store.GroupMappingCreate{}, "group"),
			Status:   http.StatusCreated,
			Result:   route.JSON("GroupMapping", ruleJSON{}),
			Conflict: true,
		}),
		route.Op(route.DELETE, "/api/v1/directory/mappings/:id", route.Admin, a.apiDeleteRule, route.API{
			Tag:     "people",
			Summary: "Delete a directory group rule",
			Desc:    "The memberships the rule gave change at each person's next directory sign-in or sync.",
			Status:  http.StatusNoContent,
		}),
	}
}

// auditRoutes are the audit log.
func (a *Area) auditRoutes() []route.Route {
	return []route.Route{
		route.New(route.GET, "/admin/audit", route.Admin, a.auditPage),
		route.Op(route.GET, "/api/v1/audit", route.Admin, a.apiListAudit, route.API{
			Tag:     "people",
			Summary: "The audit log, newest first",
			Status:  http.StatusOK,
			Result:  route.JSON("AuditPage", auditPageJSON{}),
			Query: []route.Param{{Name: "entity", Kind: "string", Desc: "only this kind of record (booking, quota, …)"}, {Name: "entity_id", Kind: "integer", Desc: "only this record"},
				{Name: "actor", Kind: "string", Desc: "only what this user (username) or system actor (system, telemetry, demo, cli) did"},
				{Name: "action", Kind: "string", Desc: "only these actions, comma-separated (create,update,login,…)"},
				{Name: "view", Kind: "string", Desc: "changes (no sign-ins), auth (logins, logouts and failed logins only) or all (the default)"},
				{Name: "from", Kind: "string", Desc: "entries at or after this time: RFC 3339, or a date in the portal's zone"},
				{Name: "to", Kind: "string", Desc: "entries before this time (RFC 3339), or up to the end of this date"},
				{Name: "limit", Kind: "integer", Desc: "1–1000, default 50"}, {Name: "offset", Kind: "integer", Desc: "entries to skip"}},
			Desc: "summary is in the caller's language (Accept-Language, ?lang=); summary_key and summary_args are the message it was made from (empty for entries that kept a plain text).",
		}),
	}
}
