// Package directorytest gives the tests of several packages their own
// people in the shared test directories — the slapd and the OpenID Connect
// provider that scripts/testenv.sh starts — so that suites running at the
// same time (go test runs packages in parallel) never change each other's
// users or groups: each test adds people and groups with fresh names and
// removes them when it ends.
package directorytest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	goldap "github.com/go-ldap/ldap/v3"
)

// LDAP is the test slapd, from CARDHOUR_TEST_LDAP_*.
type LDAP struct {
	URL, CA, Base          string
	BindDN, BindPassword   string
	adminDN, adminPassword string
}

// NewLDAP is the test slapd; the test skips when testenv did not start one.
func NewLDAP(tb testing.TB) LDAP {
	tb.Helper()
	l := LDAP{URL: os.Getenv("CARDHOUR_TEST_LDAP_URL"), CA: os.Getenv("CARDHOUR_TEST_LDAP_CA"), Base: os.Getenv("CARDHOUR_TEST_LDAP_BASE"),
		BindDN: os.Getenv("CARDHOUR_TEST_LDAP_BIND_DN"), BindPassword: os.Getenv("CARDHOUR_TEST_LDAP_BIND_PASSWORD"),
		adminDN: os.Getenv("CARDHOUR_TEST_LDAP_ADMIN_DN"), adminPassword: os.Getenv("CARDHOUR_TEST_LDAP_ADMIN_PASSWORD")}
	if l.URL == "" || l.adminDN == "" {
		tb.Skip("no test directory: CARDHOUR_TEST_LDAP_URL unset (scripts/testenv.sh starts slapd)")
	}
	return l
}

// Vars are the portal's CARDHOUR_LDAP_* settings for this directory:
// StartTLS with the test CA, the read-only service account, groups
// searched under ou=groups.
func (l LDAP) Vars() map[string]string {
	return map[string]string{
		"CARDHOUR_LDAP_URL":           l.URL,
		"CARDHOUR_LDAP_CA_FILE":       l.CA,
		"CARDHOUR_LDAP_BIND_DN":       l.BindDN,
		"CARDHOUR_LDAP_BIND_PASSWORD": l.BindPassword,
		"CARDHOUR_LDAP_USER_BASE":     "ou=people," + l.Base,
		"CARDHOUR_LDAP_GROUP_BASE":    "ou=groups," + l.Base,
	}
}

// Name is a fresh name with prefix, unique to this run.
func Name(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

func (l LDAP) admin(tb testing.TB) *goldap.Conn {
	tb.Helper()
	c, err := goldap.DialURL(l.URL)
	if err != nil {
		tb.Fatalf("dial the test directory: %v", err)
	}
	if err := c.Bind(l.adminDN, l.adminPassword); err != nil {
		c.Close()
		tb.Fatalf("bind as the directory's admin: %v", err)
	}
	return c
}

func (l LDAP) userDN(uid string) string {
	return "uid=" + goldap.EscapeDN(uid) + ",ou=people," + l.Base
}
func (l LDAP) groupDN(cn string) string { return "cn=" + goldap.EscapeDN(cn) + ",ou=groups," + l.Base }

// AddUser adds a person with a password, in the groups (made when
// missing); the test's end removes them and the groups it made.
func (l LDAP) AddUser(tb testing.TB, uid, password, displayName string, groups ...string) {
	tb.Helper()
	c := l.admin(tb)
	defer c.Close()
	add := goldap.NewAddRequest(l.userDN(uid), nil)
	add.Attribute("objectClass", []string{"inetOrgPerson"})
	add.Attribute("uid", []string{uid})
	add.Attribute("cn", []string{displayName})
	add.Attribute("sn", []string{uid})
	add.Attribute("mail", []string{uid + "@cardhour.test"})
	add.Attribute("userPassword", []string{password})
	if err := c.Add(add); err != nil {
		tb.Fatalf("add %s to the directory: %v", uid, err)
	}
	tb.Cleanup(func() {
		c := l.admin(tb)
		defer c.Close()
		if err := c.Del(goldap.NewDelRequest(l.userDN(uid), nil)); err != nil && !goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject) {
			tb.Errorf("remove %s from the directory: %v", uid, err)
		}
	})
	for _, g := range groups {
		l.Join(tb, uid, g)
	}
}

// Join puts the person in the group, making the group when it is not
// there yet (the test's end removes a group it made).
func (l LDAP) Join(tb testing.TB, uid, group string) {
	tb.Helper()
	c := l.admin(tb)
	defer c.Close()
	mod := goldap.NewModifyRequest(l.groupDN(group), nil)
	mod.Add("member", []string{l.userDN(uid)})
	err := c.Modify(mod)
	if goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject) {
		add := goldap.NewAddRequest(l.groupDN(group), nil)
		add.Attribute("objectClass", []string{"groupOfNames"})
		add.Attribute("cn", []string{group})
		add.Attribute("member", []string{l.userDN(uid)})
		err = c.Add(add)
		tb.Cleanup(func() {
			c := l.admin(tb)
			defer c.Close()
			_ = c.Del(goldap.NewDelRequest(l.groupDN(group), nil))
		})
	}
	if err != nil {
		tb.Fatalf("put %s in %s: %v", uid, group, err)
	}
}

// Leave takes the person out of the group.
func (l LDAP) Leave(tb testing.TB, uid, group string) {
	tb.Helper()
	c := l.admin(tb)
	defer c.Close()
	mod := goldap.NewModifyRequest(l.groupDN(group), nil)
	mod.Delete("member", []string{l.userDN(uid)})
	if err := c.Modify(mod); err != nil {
		// groupOfNames must keep a member: the last one leaves by the
		// group going.
		if goldap.IsErrorWithCode(err, goldap.LDAPResultObjectClassViolation) {
			err = c.Del(goldap.NewDelRequest(l.groupDN(group), nil))
		}
		if err != nil {
			tb.Fatalf("take %s out of %s: %v", uid, group, err)
		}
	}
}

// Remove deletes the person from the directory, as when someone leaves
// the company.
func (l LDAP) Remove(tb testing.TB, uid string) {
	tb.Helper()
	c := l.admin(tb)
	defer c.Close()
	if err := c.Del(goldap.NewDelRequest(l.userDN(uid), nil)); err != nil {
		tb.Fatalf("remove %s from the directory: %v", uid, err)
	}
}
