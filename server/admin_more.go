package server

import (
	"cardhour/server/route"
	"cardhour/store"
	"net/http"
)

// registerAdminPages adds the admin pages beyond card types.
func (s *Server) registerAdminPages() {
	const GET, POST = http.MethodGet, http.MethodPost

	s.add(GET, "/admin/hosts", route.Admin, s.hostsPage)
	s.add(POST, "/admin/hosts", route.Admin, s.createHostForm)
	s.add(GET, "/admin/hosts/:id", route.Admin, s.editHostPage)
	s.add(POST, "/admin/hosts/:id", route.Admin, s.updateHostForm)
	s.add(POST, "/admin/hosts/:id/delete", route.Admin, s.deleteHostForm)

	s.add(GET, "/admin/cards", route.Admin, s.cardsPage)
	s.add(POST, "/admin/cards", route.Admin, s.createCardForm)
	s.add(GET, "/admin/cards/:id", route.Admin, s.editCardPage)
	s.add(POST, "/admin/cards/:id", route.Admin, s.updateCardForm)
	s.add(POST, "/admin/cards/:id/retire", route.Admin, s.retireCardForm)
	s.add(POST, "/admin/cards/:id/delete", route.Admin, s.deleteCardForm)

	s.add(GET, "/admin/images", route.Admin, s.imagesPage)
	s.add(POST, "/admin/images", route.Admin, s.createImageForm)
	s.add(GET, "/admin/images/:id", route.Admin, s.editImagePage)
	s.add(POST, "/admin/images/:id", route.Admin, s.updateImageForm)
	s.add(POST, "/admin/images/:id/delete", route.Admin, s.deleteImageForm)

	s.add(GET, "/admin/teams", route.Admin, s.teamsPage)
	s.add(POST, "/admin/teams", route.Admin, s.createTeamForm)
	s.add(GET, "/admin/teams/:id", route.Admin, s.editTeamPage)
	s.add(POST, "/admin/teams/:id", route.Admin, s.updateTeamForm)
	s.add(POST, "/admin/teams/:id/delete", route.Admin, s.deleteTeamForm)
	s.add(POST, "/admin/teams/:id/members", route.Admin, s.addMemberForm)
	s.add(POST, "/admin/teams/:id/members/:user_id", route.Admin, s.setMemberRoleForm)
	s.add(POST, "/admin/teams/:id/members/:user_id/delete", route.Admin, s.removeMemberForm)

	s.add(GET, "/admin/users", route.Admin, s.usersPage)
	s.add(POST, "/admin/users", route.Admin, s.createUserForm)
	s.add(GET, "/admin/users/:id", route.Admin, s.editUserPage)
	s.add(POST, "/admin/users/:id", route.Admin, s.updateUserForm)

	s.add(GET, "/admin/audit", route.Admin, s.auditPage)
}

// registerAdminAPI adds the JSON endpoints beyond card types. Inventory is
// readable by anyone logged in (booking needs it); people and the audit log
// are for admins only.
func (s *Server) registerAdminAPI() {
	const (
		GET    = http.MethodGet
		POST   = http.MethodPost
		PUT    = http.MethodPut
		PATCH  = http.MethodPatch
		DELETE = http.MethodDelete
	)

	s.op(GET, "/api/v1/hosts", route.Viewer, s.apiListHosts, route.API{Tag: "inventory", Summary: "List hosts with their card counts", Status: http.StatusOK, Result: route.List("hosts", "Host", hostJSON{})})
	s.op(POST, "/api/v1/hosts", route.Admin, s.apiCreateHost, route.API{Tag: "inventory", Summary: "Add a host", Body: route.JSON("HostInput", store.HostInput{}, "name"), Status: http.StatusCreated, Result: route.JSON("Host", hostJSON{}), Conflict: true})
	s.op(GET, "/api/v1/hosts/:id", route.Viewer, s.apiGetHost, route.API{Tag: "inventory", Summary: "One host", Status: http.StatusOK, Result: route.JSON("Host", hostJSON{})})
	s.op(PUT, "/api/v1/hosts/:id", route.Admin, s.apiUpdateHost, route.API{Tag: "inventory", Summary: "Replace a host", Body: route.JSON("HostInput", store.HostInput{}, "name"), Status: http.StatusOK, Result: route.JSON("Host", hostJSON{}), Conflict: true})
	s.op(DELETE, "/api/v1/hosts/:id", route.Admin, s.apiDeleteHost, route.API{Tag: "inventory", Summary: "Delete a host without cards", Status: http.StatusNoContent, Conflict: true})

	s.op(GET, "/api/v1/cards", route.Viewer, s.apiListCards, route.API{Tag: "inventory", Summary: "List cards", Status: http.StatusOK, Result: route.List("cards", "Card", store.CardView{}), Query: []route.Param{{Name: "host_id", Kind: "integer", Desc: "only this host"}, {Name: "card_type_id", Kind: "integer", Desc: "only this card type"}, {Name: "status", Kind: "string", Desc: "active, maintenance or retired"}}})
	s.op(POST, "/api/v1/cards", route.Admin, s.apiCreateCard, route.API{Tag: "inventory", Summary: "Register a card (host and card type by id or name)", Body: route.JSON("CardInput", cardRequest{}, "uuid"), Status: http.StatusCreated, Result: route.JSON("Card", store.CardView{}), Conflict: true})
	s.op(GET, "/api/v1/cards/:id", route.Viewer, s.apiGetCard, route.API{Tag: "inventory", Summary: "One card", Status: http.StatusOK, Result: route.JSON("Card", store.CardView{})})
	s.op(PUT, "/api/v1/cards/:id", route.Admin, s.apiUpdateCard, route.API{Tag: "inventory", Summary: "Replace a card", Body: route.JSON("CardInput", cardRequest{}, "uuid"), Status: http.StatusOK, Result: route.JSON("Card", store.CardView{}), Conflict: true})
	s.op(DELETE, "/api/v1/cards/:id", route.Admin, s.apiDeleteCard, route.API{Tag: "inventory", Summary: "Delete a card no booking used", Status: http.StatusNoContent, Conflict: true})

	s.op(GET, "/api/v1/images", route.Viewer, s.apiListImages, route.API{Tag: "inventory", Summary: "List environment images", Status: http.StatusOK, Result: route.List("images", "Image", store.Image{})})
	s.op(POST, "/api/v1/images", route.Admin, s.apiCreateImage, route.API{Tag: "inventory", Summary: "Add an image", Body: route.JSON("ImageInput", store.ImageInput{}, "name", "reference"), Status: http.StatusCreated, Result: route.JSON("Image", store.Image{}), Conflict: true})
	s.op(GET, "/api/v1/images/:id", route.Viewer, s.apiGetImage, route.API{Tag: "inventory", Summary: "One image", Status: http.StatusOK, Result: route.JSON("Image", store.Image{})})
	s.op(PUT, "/api/v1/images/:id", route.Admin, s.apiUpdateImage, route.API{Tag: "inventory", Summary: "Replace an image", Body: route.JSON("ImageInput", store.ImageInput{}, "name", "reference"), Status: http.StatusOK, Result: route.JSON("Image", store.Image{}), Conflict: true})
	s.op(DELETE, "/api/v1/images/:id", route.Admin, s.apiDeleteImage, route.API{Tag: "inventory", Summary: "Delete an image no task uses", Status: http.StatusNoContent, Conflict: true})

	s.op(GET, "/api/v1/teams", route.Admin, s.apiListTeams, route.API{Tag: "people", Summary: "List teams with member counts", Status: http.StatusOK, Result: route.List("teams", "Team", teamJSON{})})
	s.op(POST, "/api/v1/teams", route.Admin, s.apiCreateTeam, route.API{Tag: "people", Summary: "Add a team", Body: route.JSON("TeamInput", store.TeamInput{}, "name"), Status: http.StatusCreated, Result: route.JSON("Team", teamJSON{}), Conflict: true})
	s.op(GET, "/api/v1/teams/:id", route.Admin, s.apiGetTeam, route.API{Tag: "people", Summary: "One team", Status: http.StatusOK, Result: route.JSON("Team", teamJSON{})})
	s.op(PUT, "/api/v1/teams/:id", route.Admin, s.apiUpdateTeam, route.API{Tag: "people", Summary: "Replace a team", Body: route.JSON("TeamInput", store.TeamInput{}, "name"), Status: http.StatusOK, Result: route.JSON("Team", teamJSON{}), Conflict: true})
	s.op(DELETE, "/api/v1/teams/:id", route.Admin, s.apiDeleteTeam, route.API{Tag: "people", Summary: "Delete a team without tasks", Status: http.StatusNoContent, Conflict: true})
	s.op(GET, "/api/v1/teams/:id/members", route.Admin, s.apiListMembers, route.API{Tag: "people", Summary: "List a team's members", Status: http.StatusOK, Result: route.List("members", "Membership", store.MembershipView{})})
	s.op(PUT, "/api/v1/teams/:id/members/:user_id", route.Admin, s.apiSetMember, route.API{Tag: "people", Summary: "Add a member or change their team role", Body: route.JSON("MembershipInput", memberRequest{}), Status: http.StatusOK, Result: route.JSON("Membership", store.MembershipView{}), Conflict: true})
	s.op(DELETE, "/api/v1/teams/:id/members/:user_id", route.Admin, s.apiRemoveMember, route.API{Tag: "people", Summary: "Remove a member", Status: http.StatusNoContent, Conflict: true})

	s.op(GET, "/api/v1/users", route.Admin, s.apiListUsers, route.API{Tag: "people", Summary: "List users with their teams", Status: http.StatusOK, Result: route.List("users", "User", userJSON{}), Query: []route.Param{{Name: "q", Kind: "string", Desc: "part of a username, name or email"}}})
	s.op(POST, "/api/v1/users", route.Admin, s.apiCreateUser, route.API{Tag: "people", Summary: "Add a user", Body: route.JSON("UserCreate", store.UserCreate{}, "username", "password", "role"), Status: http.StatusCreated, Result: route.JSON("User", userJSON{}), Conflict: true})
	s.op(GET, "/api/v1/users/:id", route.Admin, s.apiGetUser, route.API{Tag: "people", Summary: "One user", Status: http.StatusOK, Result: route.JSON("User", userJSON{})})
	s.op(PATCH, "/api/v1/users/:id", route.Admin, s.apiUpdateUser, route.API{Tag: "people", Summary: "Change some of a user's fields", Body: route.JSON("UserUpdate", store.UserUpdate{}), Status: http.StatusOK, Result: route.JSON("User", userJSON{}), Conflict: true})

	s.op(GET, "/api/v1/audit", route.Admin, s.apiListAudit, route.API{Tag: "people", Summary: "The audit log, newest first", Status: http.StatusOK, Result: route.JSON("AuditPage", auditPageJSON{}), Query: []route.Param{{Name: "entity", Kind: "string", Desc: "only this kind of record (booking, quota, …)"}, {Name: "entity_id", Kind: "integer", Desc: "only this record"},
		{Name: "limit", Kind: "integer", Desc: "1–1000, default 50"}, {Name: "offset", Kind: "integer", Desc: "entries to skip"}}})
}
