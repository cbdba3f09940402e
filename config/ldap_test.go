package config_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cardhour/config"
	"cardhour/directory/ldap"
)

func TestLDAPIsOffByDefault(t *testing.T) {
	c, err := config.Load("serve", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.LDAP.On() || c.LDAP != (config.LDAP{}) {
		t.Errorf("LDAP %+v, want off", c.LDAP)
	}
}

func TestLDAPSettingsAreRead(t *testing.T) {
	vars := map[string]string{
		"CARDHOUR_LDAP_URL":           "ldaps://dc01.corp.example:636",
		"CARDHOUR_LDAP_BIND_DN":       "CN=cardhour,OU=Services,DC=corp,DC=example",
		"CARDHOUR_LDAP_BIND_PASSWORD": " pass word ",
		"CARDHOUR_LDAP_USER_BASE":     "OU=Staff,DC=corp,DC=example",
		"CARDHOUR_LDAP_USER_FILTER":   "(&(objectClass=user)(sAMAccountName=%s))",
		"CARDHOUR_LDAP_USERNAME_ATTR": "sAMAccountName",
		"CARDHOUR_LDAP_NAME_ATTR":     "displayName",
		"CARDHOUR_LDAP_SYNC_INTERVAL": "1h",
	}
	c, err := config.Load("serve", nil, env(vars), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config.LDAP{Config: ldap.Config{
		URL: "ldaps://dc01.corp.example:636", StartTLS: true,
		BindDN: "CN=cardhour,OU=Services,DC=corp,DC=example", BindPassword: " pass word ",
		UserBase: "OU=Staff,DC=corp,DC=example", UserFilter: "(&(objectClass=user)(sAMAccountName=%s))",
		UsernameAttr: "sAMAccountName", NameAttr: "displayName", MailAttr: "mail",
		GroupFilter: "(|(member=%s)(uniqueMember=%s))", GroupAttr: "cn",
	}, SyncInterval: time.Hour}
	if c.LDAP != want {
		t.Errorf("LDAP\n %+v, want\n %+v", c.LDAP, want)
	}
	if _, err := ldap.New(c.LDAP.Config); err != nil {
		t.Errorf("ldap.New of the loaded settings: %v", err)
	}
	vars = map[string]string{"CARDHOUR_LDAP_URL": "ldap://127.0.0.1:3389", "CARDHOUR_LDAP_USER_BASE": "dc=lab",
		"CARDHOUR_LDAP_STARTTLS": "false", "CARDHOUR_LDAP_SYNC_INTERVAL": "0"}
	if c, err = config.Load("serve", nil, env(vars), io.Discard); err != nil {
		t.Fatal(err)
	}
	if c.LDAP.StartTLS || c.LDAP.SyncInterval != 0 {
		t.Errorf("plain, no sync: %+v", c.LDAP)
	}
}

func TestLDAPBadSettingsStopTheStart(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"CARDHOUR_LDAP_URL": "ldap://ldap.example.com", "CARDHOUR_LDAP_USER_BASE": "ou=people,dc=example,dc=com"}
	for name, c := range map[string]struct {
		set  map[string]string
		want string
	}{
		"settings, no URL":      {map[string]string{"CARDHOUR_LDAP_URL": "", "CARDHOUR_LDAP_BIND_PASSWORD": "hunter2"}, "CARDHOUR_LDAP_URL is empty"},
		"http URL":              {map[string]string{"CARDHOUR_LDAP_URL": "http://ldap.example.com"}, "CARDHOUR_LDAP_URL"},
		"bare host":             {map[string]string{"CARDHOUR_LDAP_URL": "ldap.example.com:389"}, "CARDHOUR_LDAP_URL"},
		"no user base":          {map[string]string{"CARDHOUR_LDAP_USER_BASE": ""}, "CARDHOUR_LDAP_USER_BASE: required"},
		"user base not a DN":    {map[string]string{"CARDHOUR_LDAP_USER_BASE": "people"}, "user base"},
		"filter without %s":     {map[string]string{"CARDHOUR_LDAP_USER_FILTER": "(uid=admin)"}, "CARDHOUR_LDAP_USER_FILTER"},
		"filter not a filter":   {map[string]string{"CARDHOUR_LDAP_USER_FILTER": "uid=%s)"}, "user filter"},
		"group filter, no %s":   {map[string]string{"CARDHOUR_LDAP_GROUP_BASE": "ou=groups,dc=example,dc=com", "CARDHOUR_LDAP_GROUP_FILTER": "(member=x)"}, "CARDHOUR_LDAP_GROUP_FILTER"},
		"password, no bind DN":  {map[string]string{"CARDHOUR_LDAP_BIND_PASSWORD": "hunter2"}, "set both"},
		"bind DN, no password":  {map[string]string{"CARDHOUR_LDAP_BIND_DN": "cn=svc,dc=example,dc=com"}, "set both"},
		"bad STARTTLS":          {map[string]string{"CARDHOUR_LDAP_STARTTLS": "maybe"}, "CARDHOUR_LDAP_STARTTLS"},
		"bad skip-verify":       {map[string]string{"CARDHOUR_LDAP_INSECURE_SKIP_VERIFY": "sure"}, "CARDHOUR_LDAP_INSECURE_SKIP_VERIFY"},
		"skip-verify with a CA": {map[string]string{"CARDHOUR_LDAP_INSECURE_SKIP_VERIFY": "true", "CARDHOUR_LDAP_CA_FILE": notPEM}, "contradict"},
		"CA file missing":       {map[string]string{"CARDHOUR_LDAP_CA_FILE": "/nonexistent/ca.pem"}, "CA file"},
		"CA file not PEM":       {map[string]string{"CARDHOUR_LDAP_CA_FILE": notPEM}, "no PEM"},
		"sync too often":        {map[string]string{"CARDHOUR_LDAP_SYNC_INTERVAL": "5s"}, "CARDHOUR_LDAP_SYNC_INTERVAL"},
		"sync not a duration":   {map[string]string{"CARDHOUR_LDAP_SYNC_INTERVAL": "15"}, "CARDHOUR_LDAP_SYNC_INTERVAL"},
		"sync negative":         {map[string]string{"CARDHOUR_LDAP_SYNC_INTERVAL": "-1m"}, "CARDHOUR_LDAP_SYNC_INTERVAL"},
	} {
		vars := map[string]string{"CARDHOUR_LDAP_BIND_DN": "cn=svc,dc=example,dc=com", "CARDHOUR_LDAP_BIND_PASSWORD": "hunter2"}
		for k, v := range base {
			vars[k] = v
		}
		if strings.HasPrefix(name, "password, no") {
			delete(vars, "CARDHOUR_LDAP_BIND_DN")
		}
		if strings.HasPrefix(name, "bind DN, no") {
			delete(vars, "CARDHOUR_LDAP_BIND_PASSWORD")
		}
		if name == "settings, no URL" {
			vars = map[string]string{}
		}
		for k, v := range c.set {
			vars[k] = v
		}
		_, err := config.Load("serve", nil, env(vars), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one containing %q", name, err, c.want)
		} else if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: the error quotes the password or is not one line: %v", name, err)
		}
	}
	// The bind password never becomes a flag default, which -h prints.
	var help strings.Builder
	_, _ = config.Load("serve", []string{"-h"}, env(map[string]string{"CARDHOUR_LDAP_BIND_PASSWORD": "hunter2"}), &help)
	if strings.Contains(help.String(), "hunter2") {
		t.Fatal("-h prints the LDAP bind password")
	}
}
