package server_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// TestFormsReportEveryBadFieldAtOnce: a form with a value that does not
// parse (a number that is not a number) and two values the store refuses
// comes back with all three messages, each beside its input — not the parse
// error alone, with the rest only on the next try.
func TestFormsReportEveryBadFieldAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{Demo: true})
	c := e.LoggedIn(store.RoleAdmin)
	ctx := context.Background()
	teams, err := e.St.FindTeams(ctx)
	if err != nil || len(teams) == 0 {
		t.Fatalf("demo teams: %v %v", teams, err)
	}
	types, err := e.St.FindCardTypes(ctx)
	if err != nil || len(types) == 0 {
		t.Fatalf("demo card types: %v %v", types, err)
	}
	hosts, err := e.St.FindHosts(ctx)
	if err != nil || len(hosts) == 0 {
		t.Fatalf("demo hosts: %v %v", hosts, err)
	}
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	zh := func(key string, args ...any) string { return web.T(web.LangZH, key, args...) }
	local := func(at time.Time) string { return at.In(e.Cfg.TZ).Format("2006-01-02T15:04") }
	long := func(field string, ls store.Limits) string { return strings.Repeat("长", ls[field].MaxLen+1) }

	var taskID, quotaID int64
	if err := e.St.DB().QueryRow("SELECT id FROM tasks ORDER BY id LIMIT 1").Scan(&taskID); err != nil {
		t.Fatal(err)
	}
	if err := e.St.DB().QueryRow("SELECT id FROM quotas ORDER BY id LIMIT 1").Scan(&quotaID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, post string
		form       url.Values
		want       map[string]string // field → its message
	}{
		{"task", "/tasks/new",
			url.Values{"team_id": {id(teams[0].ID)}, "name": {""}, "priority": {"normal"}, "estimate_card_hours": {"很多"},
				"data_readiness": {"ready"}, "notes": {long("notes", store.TaskLimits)}},
			map[string]string{"estimate_card_hours": zh("field.number"), "name": zh("field.required"),
				"notes": zh("field.too_long", store.TaskLimits["notes"].MaxLen)}},
		{"card", "/admin/cards",
			url.Values{"host_id": {id(hosts[0].ID)}, "card_type_id": {id(types[0].ID)}, "index": {"七"}, "uuid": {"not-a-uuid"}, "status": {"broken"}},
			map[string]string{"index": zh("field.integer"), "uuid": zh("card.uuid_invalid"), "status": zh("card.status_invalid")}},
		{"card type", "/admin/card-types",
			url.Values{"name": {" "}, "vram_gib": {"很多"}, "price": {"5"}, "tflops_bf16": {"100"}, "tflops_fp8": {"-1"}},
			map[string]string{"vram_gib": zh("field.integer"), "name": zh("field.required"),
				"tflops_fp8": zh("cardtype.tflops_range", store.CardTypeLimits["tflops_fp8"].Args()...)}},
		{"quota", "/quotas/new",
			url.Values{"team": {id(teams[0].ID)}, "card_type": {id(types[0].ID)}, "card_hours": {"很多"}, "max_cards": {"-1"},
				"valid_from": {local(time.Now().Add(time.Hour))}, "expires_at": {local(time.Now().Add(30 * 24 * time.Hour))},
				"note": {long("note", store.QuotaLimits)}},
			map[string]string{"card_hours": zh("field.number"), "max_cards": zh("quota.max_cards_range", store.QuotaLimits["max_cards"].Args()...),
				"note": zh("field.too_long", store.QuotaLimits["note"].MaxLen)}},
		{"booking", "/booking",
			url.Values{"task_id": {id(taskID)}, "card_type": {""}, "count": {"七"},
				"start": {local(time.Now().Add(3 * time.Hour))}, "end": {local(time.Now().Add(2 * time.Hour))}},
			map[string]string{"card_type": zh("bkform.card_type_required"), "count": zh("field.integer"), "end": zh("booking.end_before_start")}},
		{"template", "/templates",
			url.Values{"task_id": {id(taskID)}, "card_type": {id(types[0].ID)}, "name": {long("name", e.St.TemplateLimits())}, "count": {"七"}, "duration_hours": {"很多"}},
			map[string]string{"count": zh("field.integer"), "duration_hours": zh("field.number"), "name": zh("field.too_long", e.St.TemplateLimits()["name"].MaxLen)}},
		{"notify channel", "/channels",
			url.Values{"kind": {"webhook"}, "name": {""}, "url": {"not a url"}, "rate_per_minute": {"快"}, "lang": {"zh-CN"}},
			map[string]string{"rate_per_minute": zh("channel.rate_invalid"), "name": zh("channel.name_required"), "url": zh("channel.url_invalid")}},
		{"quota request", "/quotas/" + id(quotaID) + "/request",
			url.Values{"kind": {"adjust"}, "card_hours": {"很多"}, "expires_at": {"明天"}, "reason": {""}},
			map[string]string{"card_hours": zh("field.number"), "expires_at": zh("plan.bad_time"), "reason": zh("quota_request.reason_required")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := c.PostForm(tc.post, tc.form, true)
			if res.StatusCode != http.StatusUnprocessableEntity {
				t.Fatalf("POST %s: %d, want 422\n%.2000s", tc.post, res.StatusCode, res)
			}
			doc := res.Doc(t)
			shown := doc.Find(`[data-testid^="error-"]`)
			if shown.Length() != len(tc.want) {
				var got []string
				for i := range shown.Length() {
					s := shown.Eq(i)
					got = append(got, s.AttrOr("data-testid", "")+": "+strings.TrimSpace(s.Text()))
				}
				t.Errorf("POST %s: %d inline messages %q, want %d", tc.post, shown.Length(), got, len(tc.want))
			}
			for field, want := range tc.want {
				if got := strings.TrimSpace(doc.Find("[data-testid=error-" + field + "]").Text()); got != want {
					t.Errorf("POST %s: message at %s %q, want %q", tc.post, field, got, want)
				}
			}
			if got := strings.TrimSpace(doc.Find("[data-testid=form-error]").Text()); got != zh("form.has_errors") {
				t.Errorf("POST %s: headline %q, want %q", tc.post, got, zh("form.has_errors"))
			}
		})
	}
}
