package directorytest

import (
	"encoding/json"
	"os"
	"slices"
	"syscall"
	"testing"
)

// OIDC is the test OpenID Connect provider, from CARDHOUR_TEST_OIDC_*.
type OIDC struct {
	Issuer, ClientID, ClientSecret string
	users                          string
}

// NewOIDC is the test provider; the test skips when testenv did not start one.
func NewOIDC(tb testing.TB) OIDC {
	tb.Helper()
	o := OIDC{Issuer: os.Getenv("CARDHOUR_TEST_OIDC_ISSUER"), ClientID: os.Getenv("CARDHOUR_TEST_OIDC_CLIENT_ID"),
		ClientSecret: os.Getenv("CARDHOUR_TEST_OIDC_CLIENT_SECRET"), users: os.Getenv("CARDHOUR_TEST_OIDC_USERS")}
	if o.Issuer == "" || o.users == "" {
		tb.Skip("no test OpenID Connect provider: CARDHOUR_TEST_OIDC_ISSUER unset (scripts/testenv.sh starts one)")
	}
	return o
}

// Vars are the portal's CARDHOUR_OIDC_* settings for this provider; the
// portal must also have CARDHOUR_BASE_URL, its redirect URI's base.
func (o OIDC) Vars() map[string]string {
	return map[string]string{
		"CARDHOUR_OIDC_ISSUER":        o.Issuer,
		"CARDHOUR_OIDC_CLIENT_ID":     o.ClientID,
		"CARDHOUR_OIDC_CLIENT_SECRET": o.ClientSecret,
		"CARDHOUR_OIDC_NAME":          "Test SSO",
	}
}

// user is an entry of the provider's users file (e2e/oidcprovider).
type user struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Email    string   `json:"email"`
	Name     string   `json:"name"`
	Groups   []string `json:"groups"`
}

// AddUser adds a person to the provider (read at every login); the
// test's end removes them.
func (o OIDC) AddUser(tb testing.TB, username, password, name string, groups ...string) {
	tb.Helper()
	o.edit(tb, func(us []user) []user {
		return append(us, user{Username: username, Password: password, Email: username + "@cardhour.test", Name: name, Groups: groups})
	})
	tb.Cleanup(func() {
		o.edit(tb, func(us []user) []user {
			return slices.DeleteFunc(us, func(u user) bool { return u.Username == username })
		})
	})
}

// SetGroups replaces the person's groups.
func (o OIDC) SetGroups(tb testing.TB, username string, groups ...string) {
	tb.Helper()
	o.edit(tb, func(us []user) []user {
		for i := range us {
			if us[i].Username == username {
				us[i].Groups = groups
			}
		}
		return us
	})
}

// edit changes the users file under an exclusive lock: the suites of
// several packages edit it at once, each its own people.
func (o OIDC) edit(tb testing.TB, change func([]user) []user) {
	tb.Helper()
	lock, err := os.OpenFile(o.users+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		tb.Fatalf("lock the provider's users: %v", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		tb.Fatalf("lock the provider's users: %v", err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	data, err := os.ReadFile(o.users)
	if err != nil {
		tb.Fatalf("read the provider's users: %v", err)
	}
	var us []user
	if err := json.Unmarshal(data, &us); err != nil {
		tb.Fatalf("read the provider's users: %v", err)
	}
	out, err := json.MarshalIndent(change(us), "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	// Written whole to a new file and renamed: the provider reading it
	// meanwhile sees the old list or the new one, never half of one.
	tmp := o.users + ".new"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		tb.Fatalf("write the provider's users: %v", err)
	}
	if err := os.Rename(tmp, o.users); err != nil {
		tb.Fatalf("write the provider's users: %v", err)
	}
}
