package server

import (
	"net/http"

	"cardhour/errs"
)

// registerAdminPages adds the admin pages beyond card types.
func (s *Server) registerAdminPages() {
	const GET, POST = http.MethodGet, http.MethodPost

	s.add(GET, "/admin/hosts", Admin, s.hostsPage)
	s.add(POST, "/admin/hosts", Admin, s.createHostForm)
	s.add(GET, "/admin/hosts/:id", Admin, s.editHostPage)
	s.add(POST, "/admin/hosts/:id", Admin, s.updateHostForm)
	s.add(POST, "/admin/hosts/:id/delete", Admin, s.deleteHostForm)

	s.add(GET, "/admin/cards", Admin, s.cardsPage)
	s.add(POST, "/admin/cards", Admin, s.createCardForm)
	s.add(GET, "/admin/cards/:id", Admin, s.editCardPage)
	s.add(POST, "/admin/cards/:id", Admin, s.updateCardForm)
	s.add(POST, "/admin/cards/:id/retire", Admin, s.retireCardForm)
	s.add(POST, "/admin/cards/:id/delete", Admin, s.deleteCardForm)

	s.add(GET, "/admin/images", Admin, s.imagesPage)
	s.add(POST, "/admin/images", Admin, s.createImageForm)
	s.add(GET, "/admin/images/:id", Admin, s.editImagePage)
	s.add(POST, "/admin/images/:id", Admin, s.updateImageForm)
	s.add(POST, "/admin/images/:id/delete", Admin, s.deleteImageForm)

	s.add(GET, "/admin/teams", Admin, s.teamsPage)
	s.add(POST, "/admin/teams", Admin, s.createTeamForm)
	s.add(GET, "/admin/teams/:id", Admin, s.editTeamPage)
	s.add(POST, "/admin/teams/:id", Admin, s.updateTeamForm)
	s.add(POST, "/admin/teams/:id/delete", Admin, s.deleteTeamForm)
	s.add(POST, "/admin/teams/:id/members", Admin, s.addMemberForm)
	s.add(POST, "/admin/teams/:id/members/:user_id", Admin, s.setMemberRoleForm)
	s.add(POST, "/admin/teams/:id/members/:user_id/delete", Admin, s.removeMemberForm)

	s.add(GET, "/admin/users", Admin, s.usersPage)
	s.add(POST, "/admin/users", Admin, s.createUserForm)
	s.add(GET, "/admin/users/:id", Admin, s.editUserPage)
	s.add(POST, "/admin/users/:id", Admin, s.updateUserForm)

	s.add(GET, "/admin/audit", Admin, s.auditPage)
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

	s.add(GET, "/api/v1/hosts", Viewer, s.apiListHosts)
	s.add(POST, "/api/v1/hosts", Admin, s.apiCreateHost)
	s.add(GET, "/api/v1/hosts/:id", Viewer, s.apiGetHost)
	s.add(PUT, "/api/v1/hosts/:id", Admin, s.apiUpdateHost)
	s.add(DELETE, "/api/v1/hosts/:id", Admin, s.apiDeleteHost)

	s.add(GET, "/api/v1/cards", Viewer, s.apiListCards)
	s.add(POST, "/api/v1/cards", Admin, s.apiCreateCard)
	s.add(GET, "/api/v1/cards/:id", Viewer, s.apiGetCard)
	s.add(PUT, "/api/v1/cards/:id", Admin, s.apiUpdateCard)
	s.add(DELETE, "/api/v1/cards/:id", Admin, s.apiDeleteCard)

	s.add(GET, "/api/v1/images", Viewer, s.apiListImages)
	s.add(POST, "/api/v1/images", Admin, s.apiCreateImage)
	s.add(GET, "/api/v1/images/:id", Viewer, s.apiGetImage)
	s.add(PUT, "/api/v1/images/:id", Admin, s.apiUpdateImage)
	s.add(DELETE, "/api/v1/images/:id", Admin, s.apiDeleteImage)

	s.add(GET, "/api/v1/teams", Admin, s.apiListTeams)
	s.add(POST, "/api/v1/teams", Admin, s.apiCreateTeam)
	s.add(GET, "/api/v1/teams/:id", Admin, s.apiGetTeam)
	s.add(PUT, "/api/v1/teams/:id", Admin, s.apiUpdateTeam)
	s.add(DELETE, "/api/v1/teams/:id", Admin, s.apiDeleteTeam)
	s.add(GET, "/api/v1/teams/:id/members", Admin, s.apiListMembers)
	s.add(PUT, "/api/v1/teams/:id/members/:user_id", Admin, s.apiSetMember)
	s.add(DELETE, "/api/v1/teams/:id/members/:user_id", Admin, s.apiRemoveMember)

	s.add(GET, "/api/v1/users", Admin, s.apiListUsers)
	s.add(POST, "/api/v1/users", Admin, s.apiCreateUser)
	s.add(GET, "/api/v1/users/:id", Admin, s.apiGetUser)
	s.add(PATCH, "/api/v1/users/:id", Admin, s.apiUpdateUser)

	s.add(GET, "/api/v1/audit", Admin, s.apiListAudit)
}

// refused tells whether a row action (a delete, a role change) was turned
// down for a reason the admin can read, and gives it in lang, so the list is
// shown again with the reason above it instead of an error page.
func refused(lang string, err error) (string, bool) {
	e, ok := errs.As(err)
	if !ok || (e.Code != errs.Conflict && e.Code != errs.Invalid) {
		return "", false
	}
	_, _, msg, _ := describe(err, lang)
	return msg, true
}
