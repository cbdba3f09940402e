package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestOSAccountsAreKeptPerUserAndListedPerTeam(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 1)
		ctx := context.Background()
		u, err := w.st.CreateUser(asActor(), store.UserCreate{Username: "lihua", Password: testPassword, OSAccounts: []string{"lihua", " lihua_gpu", "lihua", ""}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(u.OSAccounts, []string{"lihua", "lihua_gpu"}) {
			t.Errorf("accounts %v", u.OSAccounts)
		}
		if got, err := w.st.FindUserByID(ctx, u.ID); err != nil || !slices.Equal(got.OSAccounts, u.OSAccounts) {
			t.Errorf("read back %+v %v", got, err)
		}
		// None is an empty list in JSON, never null.
		if raw, _ := json.Marshal(w.member); !strings.Contains(string(raw), `"os_accounts":[]`) {
			t.Errorf("a user without accounts: %s", raw)
		}

		before := storetest.MustCounts(t, w.st)
		sixteen := make([]string, store.MaxOSAccounts+1)
		for i := range sixteen {
			sixteen[i] = fmt.Sprintf("u%d", i)
		}
		for _, c := range []struct {
			names []string
			key   string
			args  string
		}{
			{[]string{"Li Hua"}, "user.os_account_invalid", "[Li Hua]"},
			{[]string{"9lives"}, "user.os_account_invalid", "[9lives]"},
			{[]string{strings.Repeat("a", 33)}, "user.os_account_invalid", "[" + strings.Repeat("a", 33) + "]"},
			{sixteen, "user.os_accounts_too_many", "[16]"},
		} {
			_, err := w.st.CreateUser(asActor(), store.UserCreate{Username: "x-" + fmt.Sprint(len(c.names)), Password: testPassword, OSAccounts: c.names})
			e := storetest.AssertCode(t, err, errs.Invalid, c.key)
			if e.Fields["os_accounts"] != c.key || fmt.Sprint(e.Args) != c.args {
				t.Errorf("%v: fields %v args %v", c.names, e.Fields, e.Args)
			}
			_, err = w.st.UpdateUser(asActor(), w.member.ID, store.UserUpdate{OSAccounts: &c.names})
			storetest.AssertCode(t, err, errs.Invalid, c.key)
		}
		storetest.AssertUnchanged(t, w.st, before)

		// An update replaces them, audited like any change of the user.
		audits := auditCount(t, w.st)
		up, err := w.st.UpdateUser(asActor(), w.member.ID, store.UserUpdate{OSAccounts: &[]string{"dev", "dev_gpu"}})
		if err != nil || !slices.Equal(up.OSAccounts, []string{"dev", "dev_gpu"}) {
			t.Fatalf("update %+v %v", up, err)
		}
		was, now := wantAudit(t, w.st, audits, "update", "user", w.member.ID, true, true)
		if fmt.Sprint(was["os_accounts"]) != "[]" || fmt.Sprint(now["os_accounts"]) != "[dev dev_gpu]" {
			t.Errorf("audit before %v after %v", was["os_accounts"], now["os_accounts"])
		}
		// An update of other fields keeps them.
		if up, err := w.st.UpdateUser(asActor(), w.member.ID, store.UserUpdate{DisplayName: ptr("Dev")}); err != nil || len(up.OSAccounts) != 2 {
			t.Errorf("after another update %+v %v", up, err)
		}
		if _, err := w.st.UpdateUser(asActor(), w.manager.ID, store.UserUpdate{OSAccounts: &[]string{"boss", "dev"}}); err != nil {
			t.Fatal(err)
		}
		// An API token's user carries them too.
		_, secret, err := w.st.CreateAPIToken(ctx, w.member.ID, "cli", store.TokenUser)
		if err != nil {
			t.Fatal(err)
		}
		if _, tu, err := w.st.FindTokenUser(ctx, secret); err != nil || !slices.Equal(tu.OSAccounts, []string{"dev", "dev_gpu"}) {
			t.Errorf("token user %+v %v", tu, err)
		}

		teams, err := w.st.TeamOSAccounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := teams[w.team.ID]; !slices.Equal(got, []string{"boss", "dev", "dev_gpu"}) {
			t.Errorf("team llm: %v, want its members' accounts sorted, once each", got)
		}
		if got, ok := teams[w.otherTeam.ID]; !ok || got == nil || len(got) != 0 {
			t.Errorf("team vision: %v (listed %v), want an empty list", got, ok)
		}
	})
}
