package config_test

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"

	"cardhour/config"
	"cardhour/directory/oidc"
)

func TestOIDCIsOffByDefault(t *testing.T) {
	c, err := config.Load("serve", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.OIDC.Issuer != "" {
		t.Errorf("oidc %+v", c.OIDC)
	}
}

func TestOIDCSettingsConvertToTheClient(t *testing.T) {
	vars := map[string]string{
		"CARDHOUR_BASE_URL":            "https://cardhour.example.com/",
		"CARDHOUR_OIDC_ISSUER":         "https://sso.example.com/realms/main",
		"CARDHOUR_OIDC_CLIENT_ID":      "cardhour",
		"CARDHOUR_OIDC_CLIENT_SECRET":  " s3cret ",
		"CARDHOUR_OIDC_SCOPES":         "profile, email groups,openid",
		"CARDHOUR_OIDC_USERNAME_CLAIM": "upn",
		"CARDHOUR_OIDC_GROUPS_CLAIM":   "roles",
		"CARDHOUR_OIDC_NAME":           "飞书",
	}
	c, err := config.Load("serve", nil, env(vars), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The conversion compiles only while the two structs keep the same fields.
	got := oidc.Config(c.OIDC)
	want := oidc.Config{Issuer: "https://sso.example.com/realms/main", ClientID: "cardhour", ClientSecret: " s3cret ",
		Scopes: []string{"openid", "profile", "email", "groups"}, RedirectURL: "https://cardhour.example.com/login/oidc/callback",
		UsernameClaim: "upn", GroupsClaim: "roles", DisplayName: "飞书"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("oidc %+v, want %+v", got, want)
	}
	if _, err := oidc.New(got, nil); err != nil {
		t.Errorf("the client refuses what config accepted: %v", err)
	}

	// The defaults.
	c, err = config.Load("serve", nil, env(map[string]string{"CARDHOUR_BASE_URL": "http://127.0.0.1:8080",
		"CARDHOUR_OIDC_ISSUER": "http://127.0.0.1:9998", "CARDHOUR_OIDC_CLIENT_ID": "cardhour"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want = oidc.Config{Issuer: "http://127.0.0.1:9998", ClientID: "cardhour", Scopes: []string{"openid", "profile", "email"},
		RedirectURL: "http://127.0.0.1:8080/login/oidc/callback", UsernameClaim: "preferred_username", GroupsClaim: "groups", DisplayName: "SSO"}
	if got := oidc.Config(c.OIDC); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
}

func TestOIDCBadSettingsStopTheStart(t *testing.T) {
	base := map[string]string{"CARDHOUR_BASE_URL": "https://cardhour.example.com", "CARDHOUR_OIDC_ISSUER": "https://sso.example.com",
		"CARDHOUR_OIDC_CLIENT_ID": "cardhour", "CARDHOUR_OIDC_CLIENT_SECRET": "hunter2"}
	for name, c := range map[string]struct {
		set  map[string]string
		want string
	}{
		"relative issuer":      {map[string]string{"CARDHOUR_OIDC_ISSUER": "sso.example.com"}, "CARDHOUR_OIDC_ISSUER"},
		"http issuer":          {map[string]string{"CARDHOUR_OIDC_ISSUER": "http://sso.example.com"}, "only for a provider on this host"},
		"ftp issuer":           {map[string]string{"CARDHOUR_OIDC_ISSUER": "ftp://sso.example.com"}, "CARDHOUR_OIDC_ISSUER"},
		"issuer with a query":  {map[string]string{"CARDHOUR_OIDC_ISSUER": "https://sso.example.com/?tenant=1"}, "CARDHOUR_OIDC_ISSUER"},
		"no client id":         {map[string]string{"CARDHOUR_OIDC_CLIENT_ID": ""}, "CARDHOUR_OIDC_CLIENT_ID: required"},
		"no base URL":          {map[string]string{"CARDHOUR_BASE_URL": ""}, "CARDHOUR_BASE_URL: required with CARDHOUR_OIDC_ISSUER"},
		"no scopes":            {map[string]string{"CARDHOUR_OIDC_SCOPES": " , "}, "CARDHOUR_OIDC_SCOPES"},
		"two username claims":  {map[string]string{"CARDHOUR_OIDC_USERNAME_CLAIM": "upn email"}, "CARDHOUR_OIDC_USERNAME_CLAIM"},
		"long label":           {map[string]string{"CARDHOUR_OIDC_NAME": strings.Repeat("x", 41)}, "CARDHOUR_OIDC_NAME"},
		"client, no issuer":    {map[string]string{"CARDHOUR_OIDC_ISSUER": ""}, "CARDHOUR_OIDC_ISSUER is empty"},
		"secret only, no more": {map[string]string{"CARDHOUR_OIDC_ISSUER": "", "CARDHOUR_OIDC_CLIENT_ID": ""}, "CARDHOUR_OIDC_ISSUER is empty"},
	} {
		vars := map[string]string{}
		for k, v := range base {
			vars[k] = v
		}
		for k, v := range c.set {
			vars[k] = v
		}
		_, err := config.Load("serve", nil, env(vars), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error quotes the client secret: %v", name, err)
		}
	}
}

func TestOIDCClientSecretIsNotPrinted(t *testing.T) {
	var help bytes.Buffer
	_, _ = config.Load("serve", []string{"-h"}, env(map[string]string{"CARDHOUR_OIDC_CLIENT_SECRET": "oidc-secret-31"}), &help)
	if strings.Contains(help.String(), "oidc-secret-31") || !strings.Contains(help.String(), "oidc-client-secret") {
		t.Errorf("help output shows the client secret, or lacks the option:\n%s", help.String())
	}
}
