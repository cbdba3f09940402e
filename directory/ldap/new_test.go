package ldap_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cardhour/directory/ldap"
	"cardhour/errs"
)

func TestNewRefusesBadSettings(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := ldap.Config{URL: "ldaps://ldap.example.com", UserBase: "ou=people,dc=example,dc=com"}
	for name, c := range map[string]struct {
		mod  func(*ldap.Config)
		want string
	}{
		"no URL":                {func(c *ldap.Config) { c.URL = "" }, "URL"},
		"http URL":              {func(c *ldap.Config) { c.URL = "http://ldap.example.com" }, "scheme"},
		"URL with a base DN":    {func(c *ldap.Config) { c.URL = "ldap://ldap.example.com/dc=example,dc=com" }, "only scheme"},
		"no user base":          {func(c *ldap.Config) { c.UserBase = "" }, "user base"},
		"user base not a DN":    {func(c *ldap.Config) { c.UserBase = "people" }, "user base"},
		"filter without %s":     {func(c *ldap.Config) { c.UserFilter = "(uid=alice)" }, "%s"},
		"filter not a filter":   {func(c *ldap.Config) { c.UserFilter = "(uid=%s" }, "not an LDAP filter"},
		"group filter, no %s":   {func(c *ldap.Config) { c.GroupBase, c.GroupFilter = "ou=groups,dc=example,dc=com", "(cn=x)" }, "group filter"},
		"bind DN, no password":  {func(c *ldap.Config) { c.BindDN = "cn=svc,dc=example,dc=com" }, "both"},
		"password, no bind DN":  {func(c *ldap.Config) { c.BindPassword = "s3cret-pw" }, "both"},
		"bind DN not a DN":      {func(c *ldap.Config) { c.BindDN, c.BindPassword = "svc", "s3cret-pw" }, "bind DN"},
		"CA file missing":       {func(c *ldap.Config) { c.CAFile = "/nonexistent/ca.pem" }, "CA file"},
		"CA file without PEM":   {func(c *ldap.Config) { c.CAFile = notPEM }, "no PEM"},
		"attribute with syntax": {func(c *ldap.Config) { c.NameAttr = "cn)(x" }, "attribute"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := good
			c.mod(&cfg)
			_, err := ldap.New(cfg)
			if !errs.Is(err, errs.Invalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New = %v, want invalid naming %q", err, c.want)
			}
			if strings.Contains(err.Error(), "s3cret-pw") {
				t.Errorf("the error quotes the password: %v", err)
			}
		})
	}
	for _, u := range []string{"ldap://ldap.example.com", "ldap://10.0.0.5:3389", "LDAPS://[::1]:636"} {
		cfg := good
		cfg.URL = u
		if _, err := ldap.New(cfg); err != nil {
			t.Errorf("New(%s) = %v", u, err)
		}
	}
}
