package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestTimesOutsideTheSaneRangeAre422: every API route with a date-time
// query parameter (read from the route table, so a new one is tried too),
// the booking and quota APIs' body times, the quota form and the heatmap's
// day refuse a time before 2000 or from 2200
// on with 422 and a message naming the range, on the parameter — rather
// than handing MariaDB a year it cannot store (9999-12-31 plus a window
// answered 500) — in both languages; a time inside the range passes.
func TestTimesOutsideTheSaneRangeAre422(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		o := servertest.Options{}
		if dialect == store.MySQL {
			dsn, _ := storetest.MySQLDSN(t)
			o.Vars = map[string]string{"CARDHOUR_DB": "mysql://" + dsn}
		}
		f := servertest.NewFleet(t, o, 2, 1000)
		member := f.Token(store.RoleMember)
		want := map[string][]string{"en": {"2000-01-01", "2200-01-01"}, "zh-CN": {"2000-01-01", "2200-01-01", "时间"}}
		check := func(what string, r servertest.Response, field, lang string) {
			t.Helper()
			if r.StatusCode != http.StatusUnprocessableEntity {
				t.Errorf("%s: status %d, want 422; body: %.300s", what, r.StatusCode, r)
				return
			}
			e := servertest.MustAPIError(t, r, http.StatusUnprocessableEntity, "invalid")
			msg := e.Error.Fields[field]
			for _, w := range want[lang] {
				if !strings.Contains(msg, w) {
					t.Errorf("%s (%s): message on %q is %q, want it to name %q", what, lang, field, msg, w)
				}
			}
		}
		walked := 0
		for _, r := range f.E.Srv.Routes() {
			if r.API == nil || r.Method != http.MethodGet {
				continue
			}
			for _, p := range r.API.Query {
				if p.Kind != "date-time" {
					continue
				}
				walked++
				for _, bad := range []string{"9999-12-31T23:59:59Z", "1999-12-31T23:59:59Z", "2200-01-01T00:00:00Z"} {
					for lang := range want {
						path := r.Path + "?" + url.Values{p.Name: {bad}, "lang": {lang}}.Encode()
						check("GET "+path, f.C.APICall(http.MethodGet, path, member, ""), p.Name, lang)
					}
				}
				ok := r.Path + "?" + url.Values{p.Name: {f.At(1)}}.Encode()
				if res := f.C.APICall(http.MethodGet, ok, member, ""); res.StatusCode != http.StatusOK {
					t.Errorf("GET %s: status %d, want 200\n%s", ok, res.StatusCode, res)
				}
			}
		}
		if walked < 3 {
			t.Errorf("%d date-time query parameters in the route table, want at least availability's from and bookings' from and to", walked)
		}

		body := func(start, end string) string {
			b, _ := json.Marshal(map[string]any{"task_id": f.Normal.ID, "card_type": "H800", "count": 1, "start": start, "end": end})
			return string(b)
		}
		check("POST /api/v1/bookings ending in 9999", f.Call(http.MethodPost, "/api/v1/bookings", member, body(f.At(0), "9999-12-31T23:59:59Z")), "end", "en")
		check("POST /api/v1/bookings starting in 1970", f.Call(http.MethodPost, "/api/v1/bookings", member, body("1970-01-01T00:00:00Z", f.At(1))), "start", "en")
		quota := fmt.Sprintf(`{"team":"llm","card_type":"H800","card_hours":1,"valid_from":%q,"expires_at":"9999-12-31T23:59:59Z"}`, f.At(24*60))
		check("POST /api/v1/quotas expiring in 9999", f.Call(http.MethodPost, "/api/v1/quotas", f.Token(store.RoleManager), quota), "expires_at", "en")

		// Pages' day parameters too: a week from 9999-12-31 answered 500 on
		// MariaDB.
		for _, p := range []string{"/board/heatmap?day=9999-12-31&days=7", "/board/long?day=9999-12-31", "/board/heatmap?day=1999-12-31"} {
			if r := f.E.LoggedIn(store.RoleViewer).Get(p); r.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(r.String(), "2200-01-01") {
				t.Errorf("GET %s: status %d, want 422 with a message naming the range", p, r.StatusCode)
			}
		}

		// Forms read their times in the portal's zone, through the same rule.
		form := f.E.LoggedIn(store.RoleManager).PostForm("/quotas/new", url.Values{"team": {fmt.Sprint(f.LLM.ID)}, "card_type": {fmt.Sprint(f.CT.ID)},
			"card_hours": {"1"}, "valid_from": {"2100-01-01T00:00"}, "expires_at": {"9999-12-31T23:59"}}, true)
		if form.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(form.String(), "2200-01-01") {
			t.Errorf("the quota form expiring in 9999: status %d, want 422 with a message naming the range", form.StatusCode)
		}
	})
}
