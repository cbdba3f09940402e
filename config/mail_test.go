package config_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"cardhour/config"
	"cardhour/notify"
)

func TestMailIsOffByDefault(t *testing.T) {
	c, err := config.Load("serve", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mail.Addr != "" || c.Mail.Security != "starttls" {
		t.Errorf("mail %+v", c.Mail)
	}
}

func TestMailSettingsConvertToTheSender(t *testing.T) {
	vars := map[string]string{
		"CARDHOUR_SMTP_ADDR":     "smtp.example.com:465",
		"CARDHOUR_SMTP_SECURITY": "TLS",
		"CARDHOUR_SMTP_USER":     "cardhour",
		"CARDHOUR_SMTP_PASSWORD": " pass word ",
		"CARDHOUR_SMTP_FROM":     "卡时 <noreply@example.com>",
	}
	c, err := config.Load("serve", nil, env(vars), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The conversion compiles only while the two structs keep the same fields.
	got := notify.MailConfig(c.Mail)
	want := notify.MailConfig{Addr: "smtp.example.com:465", Security: "tls", Username: "cardhour", Password: " pass word ", From: "卡时 <noreply@example.com>"}
	if got != want {
		t.Errorf("mail %+v, want %+v", got, want)
	}
}

func TestMailBadSettingsStopTheStart(t *testing.T) {
	base := map[string]string{"CARDHOUR_SMTP_ADDR": "smtp.example.com:587", "CARDHOUR_SMTP_FROM": "noreply@example.com"}
	for name, c := range map[string]struct {
		set  map[string]string
		want string
	}{
		"addr without port":   {map[string]string{"CARDHOUR_SMTP_ADDR": "smtp.example.com"}, "CARDHOUR_SMTP_ADDR"},
		"port out of range":   {map[string]string{"CARDHOUR_SMTP_ADDR": "smtp.example.com:70000"}, "CARDHOUR_SMTP_ADDR"},
		"unknown security":    {map[string]string{"CARDHOUR_SMTP_SECURITY": "ssl"}, "CARDHOUR_SMTP_SECURITY"},
		"no from":             {map[string]string{"CARDHOUR_SMTP_FROM": ""}, "CARDHOUR_SMTP_FROM: required"},
		"bad from":            {map[string]string{"CARDHOUR_SMTP_FROM": "not an address"}, "CARDHOUR_SMTP_FROM"},
		"user, no password":   {map[string]string{"CARDHOUR_SMTP_USER": "u"}, "set both or neither"},
		"clear password":      {map[string]string{"CARDHOUR_SMTP_SECURITY": "none", "CARDHOUR_SMTP_USER": "u", "CARDHOUR_SMTP_PASSWORD": "hunter2"}, "in clear"},
		"settings, no server": {map[string]string{"CARDHOUR_SMTP_ADDR": "", "CARDHOUR_SMTP_FROM": "n@example.com"}, "CARDHOUR_SMTP_ADDR is empty"},
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
			t.Errorf("%s: the error quotes the password: %v", name, err)
		}
	}
	// A relay on this host may take a password without TLS.
	local := map[string]string{"CARDHOUR_SMTP_ADDR": "127.0.0.1:25", "CARDHOUR_SMTP_SECURITY": "none", "CARDHOUR_SMTP_USER": "u",
		"CARDHOUR_SMTP_PASSWORD": "p", "CARDHOUR_SMTP_FROM": "n@example.com"}
	if _, err := config.Load("serve", nil, env(local), io.Discard); err != nil {
		t.Errorf("local relay: %v", err)
	}
}

// TestSecretsAreNeverPrinted: the SMTP and admin passwords and the S3
// secret key never become flag defaults, which -h prints.
func TestSecretsAreNeverPrinted(t *testing.T) {
	var help bytes.Buffer
	secrets := map[string]string{"CARDHOUR_SMTP_PASSWORD": "hunter2", "CARDHOUR_ADMIN_PASSWORD": "admin-pw-77", "CARDHOUR_S3_SECRET_KEY": "s3-key-99", "CARDHOUR_S3_ACCESS_KEY": "AK1"}
	_, _ = config.Load("serve", []string{"-h"}, env(secrets), &help)
	for k, v := range secrets {
		if k != "CARDHOUR_S3_ACCESS_KEY" && strings.Contains(help.String(), v) {
			t.Errorf("help output shows the secret %q:\n%s", v, help.String())
		}
	}
	if !strings.Contains(help.String(), "smtp-password") || !strings.Contains(help.String(), "admin-password") {
		t.Errorf("help output lacks the secret options:\n%s", help.String())
	}
	delete(secrets, "CARDHOUR_SMTP_PASSWORD") // mail needs more than its password
	if c, err := config.Load("serve", nil, env(secrets), io.Discard); err != nil || c.AdminPassword != "admin-pw-77" || c.S3.SecretKey != "s3-key-99" {
		t.Errorf("secrets from the environment: admin %q s3 %+v, %v", c.AdminPassword, c.S3, err)
	}
	// The flag still wins over the environment.
	vars := map[string]string{"CARDHOUR_SMTP_ADDR": "127.0.0.1:25", "CARDHOUR_SMTP_SECURITY": "none", "CARDHOUR_SMTP_USER": "u",
		"CARDHOUR_SMTP_PASSWORD": "from-env", "CARDHOUR_SMTP_FROM": "n@example.com"}
	c, err := config.Load("serve", []string{"--smtp-password", "from-flag"}, env(vars), io.Discard)
	if err != nil || c.Mail.Password != "from-flag" {
		t.Errorf("password %q, %v", c.Mail.Password, err)
	}
	if c, _ = config.Load("serve", nil, env(vars), io.Discard); c.Mail.Password != "from-env" {
		t.Errorf("password from env %q", c.Mail.Password)
	}
}
