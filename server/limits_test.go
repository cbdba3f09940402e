package server_test

import (
	"context"
	"fmt"
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

// TestFormInputsCarryTheStoresLimits: every form whose fields the store
// limits draws each input with the store's own numbers (maxlength, and min
// and max on a number), and a value past the limit posted anyway — by a
// script, or a browser that ignores the attributes — comes back 422 with
// the message beside the field naming the same number.
func TestFormInputsCarryTheStoresLimits(t *testing.T) {
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
	tasks, err := e.St.FindTasks(ctx, store.TaskFilter{TeamID: teams[0].ID})
	if err != nil || len(tasks) == 0 {
		t.Fatalf("demo tasks: %v %v", tasks, err)
	}
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	zh := func(key string, args ...any) string { return web.T(web.LangZH, key, args...) }
	local := func(at time.Time) string { return at.In(e.Cfg.TZ).Format("2006-01-02T15:04") }
	maxCards := e.St.BookingPolicy().MaxCards
	rangeMsg := func(ls store.Limits, field, key string) string { return zh(key, ls[field].Args()...) }
	// 16 OS accounts of 32 characters each: fewer than the most a user may
	// have, together longer than the field.
	var accounts []string
	for i := range store.MaxOSAccounts {
		accounts = append(accounts, fmt.Sprintf("%s%02d", strings.Repeat("a", 30), i))
	}

	type over struct{ value, want string }
	tpl := e.St.TemplateLimits()
	forms := []struct {
		name, page, post string
		limits           store.Limits
		base             url.Values
		// over is a value past a field's limit and the message it gets;
		// a text field without an entry gets one character too many and
		// field.too_long.
		over map[string]over
	}{
		{"task", "/tasks/new", "/tasks/new", store.TaskLimits,
			url.Values{"team_id": {id(teams[0].ID)}, "name": {"限长测试"}, "priority": {"normal"}, "estimate_card_hours": {"10"}, "data_readiness": {"ready"}},
			map[string]over{
				"estimate_card_hours": {"1000001", rangeMsg(store.TaskLimits, "estimate_card_hours", "task.estimate_range")},
				"vram_gib":            {"100001", rangeMsg(store.TaskLimits, "vram_gib", "task.vram_range")},
			}},
		{"card type", "/admin/card-types", "/admin/card-types", store.CardTypeLimits,
			url.Values{"name": {"限长卡"}, "vram_gib": {"80"}, "price": {"5"}, "tflops_bf16": {"100"}},
			map[string]over{
				"vram_gib":    {"4097", rangeMsg(store.CardTypeLimits, "vram_gib", "cardtype.vram_range")},
				"price":       {"1000001", rangeMsg(store.CardTypeLimits, "price", "cardtype.price_range")},
				"tflops_fp32": {"100001", rangeMsg(store.CardTypeLimits, "tflops_fp32", "cardtype.tflops_range")},
				"tflops_tf32": {"100001", rangeMsg(store.CardTypeLimits, "tflops_tf32", "cardtype.tflops_range")},
				"tflops_bf16": {"100001", rangeMsg(store.CardTypeLimits, "tflops_bf16", "cardtype.tflops_range")},
				"tflops_fp16": {"100001", rangeMsg(store.CardTypeLimits, "tflops_fp16", "cardtype.tflops_range")},
				"tflops_fp8":  {"100001", rangeMsg(store.CardTypeLimits, "tflops_fp8", "cardtype.tflops_range")},
				"tflops_int8": {"100001", rangeMsg(store.CardTypeLimits, "tflops_int8", "cardtype.tflops_range")},
			}},
		{"host", "/admin/hosts", "/admin/hosts", store.HostLimits,
			url.Values{"name": {"limit-host"}, "zone": {"z"}}, nil},
		{"card", "/admin/cards", "/admin/cards", store.CardLimits,
			url.Values{"host_id": {id(hosts[0].ID)}, "card_type_id": {id(types[0].ID)}, "index": {"7"}, "uuid": {"GPU-12345678-aaaa-bbbb-cccc-1234567890ab"}, "status": {"active"}},
			map[string]over{"index": {"1024", rangeMsg(store.CardLimits, "index", "card.index_range")}}},
		{"image", "/admin/images", "/admin/images", store.ImageLimits,
			url.Values{"name": {"limit-image"}, "reference": {"registry.example/limit:1"}}, nil},
		{"team", "/admin/teams", "/admin/teams", store.TeamLimits, url.Values{"name": {"限长组"}}, nil},
		{"user", "/admin/users", "/admin/users", store.UserLimits,
			url.Values{"username": {"limituser"}, "password": {"long-enough-pw"}, "role": {"member"}},
			map[string]over{"os_accounts": {strings.Join(accounts, ","), zh("user.os_accounts_too_long", store.UserLimits["os_accounts"].MaxLen)}}},
		{"quota", "/quotas/new", "/quotas/new", store.QuotaLimits,
			url.Values{"team": {id(teams[0].ID)}, "card_type": {id(types[0].ID)}, "card_hours": {"10"},
				"valid_from": {local(time.Now().Add(time.Hour))}, "expires_at": {local(time.Now().Add(30 * 24 * time.Hour))}},
			map[string]over{
				"card_hours": {"10000001", rangeMsg(store.QuotaLimits, "card_hours", "quota.hours_range")},
				"max_cards":  {"10001", rangeMsg(store.QuotaLimits, "max_cards", "quota.max_cards_range")},
			}},
		{"booking template", "/templates/new", "/templates", tpl,
			url.Values{"name": {"限长模板"}, "task_id": {id(tasks[0].ID)}, "card_type": {id(types[0].ID)}, "count": {"1"}, "duration_hours": {"2"}},
			map[string]over{
				"count":          {strconv.Itoa(maxCards + 1), zh("booking.count_range", maxCards)},
				"duration_hours": {"100000", zh("template.duration_range")},
			}},
		{"booking", "/booking/new", "/booking/preview", e.St.BookingLimits(),
			url.Values{"task_id": {id(tasks[0].ID)}, "card_type": {id(types[0].ID)}, "count": {"1"}, "mode": {"now"}, "duration_hours": {"2"}},
			map[string]over{"count": {strconv.Itoa(maxCards + 1), zh("booking.count_range", maxCards)}}},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			page := c.Get(f.page)
			if page.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d", f.page, page.StatusCode)
			}
			doc := page.Doc(t)
			for field, l := range f.limits {
				in := doc.Find("#f-" + field)
				if in.Length() != 1 {
					t.Errorf("%s: %d inputs #f-%s, want 1", f.page, in.Length(), field)
					continue
				}
				if l.MaxLen > 0 {
					if got := in.AttrOr("maxlength", ""); got != strconv.Itoa(l.MaxLen) {
						t.Errorf("%s %s: maxlength %q, want the store's %d", f.page, field, got, l.MaxLen)
					}
				}
				// A text input (the price in yuan) carries no range: the
				// browser would not apply one.
				if l.Range && in.AttrOr("type", "") == "number" {
					lo, hi := strconv.FormatFloat(l.Min, 'f', -1, 64), strconv.FormatFloat(l.Max, 'f', -1, 64)
					if got := in.AttrOr("min", ""); got != lo {
						t.Errorf("%s %s: min %q, want the store's %s", f.page, field, got, lo)
					}
					if got := in.AttrOr("max", ""); got != hi {
						t.Errorf("%s %s: max %q, want the store's %s", f.page, field, got, hi)
					}
				}

				o, ok := f.over[field]
				if !ok {
					if l.MaxLen == 0 {
						t.Fatalf("%s: no value past the limit of %s", f.name, field)
					}
					o = over{strings.Repeat("长", l.MaxLen+1), zh("field.too_long", l.MaxLen)}
				}
				v := servertest.CloneValues(f.base)
				v.Set(field, o.value)
				res := c.PostForm(f.post, v, true)
				if res.StatusCode != http.StatusUnprocessableEntity {
					t.Errorf("POST %s with %s past its limit: %d, want 422", f.post, field, res.StatusCode)
					continue
				}
				if got := strings.TrimSpace(res.Doc(t).Find("[data-testid=error-" + field + "]").Text()); got != o.want {
					t.Errorf("POST %s with %s past its limit: message %q, want %q", f.post, field, got, o.want)
				}
			}
		})
	}
}

// TestTokenNameInputsCarryTheStoresLimit: the name of a new API token (the
// account page) and of a board or agent token (the telemetry page) is
// limited in the input as in the store.
func TestTokenNameInputsCarryTheStoresLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	c := e.LoggedIn(store.RoleAdmin)
	want := strconv.Itoa(store.TokenLimits["name"].MaxLen)
	for _, path := range []string{"/account", "/admin/telemetry"} {
		if got, _ := c.Get(path).Doc(t).Find(`#f-name`).Attr("maxlength"); got != want {
			t.Errorf("%s: the token name's maxlength %q, want the store's %s", path, got, want)
		}
	}
}
