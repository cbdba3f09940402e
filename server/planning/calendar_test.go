package planning_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/store/storetest"
)

// issueFeed asks for a feed through the calendar page's form (team 0: the
// caller's own) and returns its path.
func issueFeed(t *testing.T, c *servertest.Client, team int64) string {
	t.Helper()
	res := c.PostForm("/calendar/feeds", url.Values{"team": {strconv.FormatInt(team, 10)}}, true)
	plnStatus(t, res, http.StatusOK, "POST /calendar/feeds")
	u, err := url.Parse(strings.TrimSpace(res.Doc(t).Find(`[data-testid=feed-url]`).Text()))
	if err != nil || !strings.HasPrefix(u.Path, "/ical/chc_") {
		t.Fatalf("feed URL %v (%v)", u, err)
	}
	return u.Path
}

// TestTeamFeedStopsWithItsCreatorsAccess: a team's calendar feed answers
// only while whoever asked for it could still read the team's bookings —
// it is not found once an admin removes them from the team or disables
// them (and answers again when they are back). A personal feed asked for
// later does not replace the team feed. A team feed issued before the
// creator was recorded is judged by the creator its audit entry names.
func TestTeamFeedStopsWithItsCreatorsAccess(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		o := servertest.Options{}
		if dialect == store.MySQL {
			dsn, _ := storetest.MySQLDSN(t)
			o.Vars = map[string]string{"CARDHOUR_DB": "mysql://" + dsn}
		}
		teamFeedStopsWithItsCreatorsAccess(t, newEnv(t, o))
	})
}

func teamFeedStopsWithItsCreatorsAccess(t *testing.T, e *env) {
	w := plnSetup(t, e)
	admin := e.LoggedIn(store.RoleAdmin)
	anon := e.Client()

	member := e.LoggedIn(store.RoleMember)
	byMember := issueFeed(t, member, w.core.ID)
	issueFeed(t, member, 0)
	plnStatus(t, anon.Get(byMember), http.StatusOK, "the team feed after its creator's personal feed was issued")

	memberID := e.Users[store.RoleMember].ID
	remove := fmt.Sprintf("/admin/teams/%d/members/%d/delete", w.core.ID, memberID)
	plnStatus(t, admin.PostForm(remove, nil, true), http.StatusSeeOther, "POST "+remove)
	plnStatus(t, anon.Get(byMember), http.StatusNotFound, "the team feed of a creator who left the team")
	if _, err := e.St.SetMembership(w.ctx, w.core.ID, memberID, store.TeamRoleMember); err != nil {
		t.Fatal(err)
	}
	plnStatus(t, anon.Get(byMember), http.StatusOK, "the team feed of a creator back in the team")

	// The manager asks again: the member's feed is replaced (one per team).
	manager := e.LoggedIn(store.RoleManager)
	byManager := issueFeed(t, manager, w.core.ID)
	plnStatus(t, anon.Get(byMember), http.StatusNotFound, "a replaced team feed")
	mgr := e.Users[store.RoleManager]
	disable := func(disabled bool) {
		t.Helper()
		r := admin.APICall(http.MethodPatch, fmt.Sprintf("/api/v1/users/%d", mgr.ID), e.Users[store.RoleAdmin].Token, fmt.Sprintf(`{"disabled":%t}`, disabled))
		plnStatus(t, r, http.StatusOK, "PATCH /api/v1/users/{id}")
	}
	disable(true)
	plnStatus(t, anon.Get(byManager), http.StatusNotFound, "the team feed of a disabled creator")
	disable(false)
	plnStatus(t, anon.Get(byManager), http.StatusOK, "the team feed of a creator enabled again")

	// A feed as older versions stored it: the team only. The audit log
	// names its creator, the manager; once they leave, it stops.
	if _, err := e.St.DB().Exec("UPDATE calendar_feeds SET user_id = NULL WHERE team_id = ?", w.core.ID); err != nil {
		t.Fatal(err)
	}
	plnStatus(t, anon.Get(byManager), http.StatusOK, "an older team feed whose creator is still a member")
	if err := e.St.DeleteMembership(w.ctx, w.core.ID, mgr.ID); err != nil {
		t.Fatal(err)
	}
	plnStatus(t, anon.Get(byManager), http.StatusNotFound, "an older team feed whose creator left")
}

// TestFeedURLIsNeverTheRequestsHost: the feed URL shown once is built
// from CARDHOUR_BASE_URL; a request naming another host does not put that
// host (which would receive the secret) into it.
func TestFeedURLIsNeverTheRequestsHost(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "https://gpu.example.cn"} {
		e := servertest.New(t, servertest.Options{Vars: map[string]string{"CARDHOUR_BASE_URL": base}})
		c := e.LoggedIn(store.RoleMember)
		csrf := c.CSRF()
		res := c.Do(http.MethodPost, "/calendar/feeds", strings.NewReader(url.Values{"_csrf": {csrf}, "team": {"0"}}.Encode()),
			http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Host": {"evil.example"}, "X-Forwarded-Host": {"evil.example"}})
		plnStatus(t, res, http.StatusOK, "POST /calendar/feeds")
		doc := res.Doc(t)
		shown := strings.TrimSpace(doc.Find(`[data-testid=feed-url]`).Text()) + " " + doc.Find(`[data-testid=feed-webcal]`).AttrOr("href", "")
		if strings.Contains(shown, "evil.example") || strings.Contains(shown, "127.0.0.1") {
			t.Errorf("base %q: the feed URL names the request's host: %s", base, shown)
		}
		if base != "" && !strings.HasPrefix(shown, base+"/ical/chc_") {
			t.Errorf("base %q: feed URL %q", base, shown)
		}
		if base == "" && (!strings.HasPrefix(shown, "/ical/chc_") || doc.Find(`[data-testid=feed-needs-base]`).Length() != 1) {
			t.Errorf("without a base URL the page shows %q and no hint", shown)
		}
	}
}
