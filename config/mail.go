package config

import (
	"fmt"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"time"
)

// secretOption tells which options are secrets: their values never become
// a flag default, so `cardhour serve -h` cannot print them.
func secretOption(flag string) bool {
	switch flag {
	case "smtp-password", "admin-password", "s3-secret-key", "metrics-token", "oidc-client-secret", "ldap-bind-password",
		"redis": // a Redis URL may carry its password
		return true
	}
	return false
}

// loadMail reads the SMTP settings. The password is taken as given (spaces
// may belong to it) and is never quoted in an error.
func (c *Config) loadMail(get func(string) string, password string) error {
	m := Mail{
		Addr:     get("smtp-addr"),
		Security: strings.ToLower(get("smtp-security")),
		Username: get("smtp-user"),
		Password: password,
		From:     get("smtp-from"),
	}
	if m.Addr == "" {
		// Settings without a server are a half-done configuration, not a
		// wish for mail to be off: say so rather than drop them silently.
		if m.Username != "" || m.Password != "" || m.From != "" {
			return fmt.Errorf("CARDHOUR_SMTP_USER / CARDHOUR_SMTP_PASSWORD / CARDHOUR_SMTP_FROM are set but CARDHOUR_SMTP_ADDR is empty: set it to turn mail on, or unset them")
		}
		c.Mail = Mail{Security: m.Security}
		return nil
	}
	host, port, err := net.SplitHostPort(m.Addr)
	if p, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || p < 1 || p > 65535 {
		return fmt.Errorf("CARDHOUR_SMTP_ADDR %q: want host:port such as smtp.example.com:587", m.Addr)
	}
	switch m.Security {
	case "starttls", "tls":
	case "none":
		// net/smtp sends AUTH PLAIN in clear only to localhost; say so now
		// rather than at the first notice.
		if m.Username != "" && !isLoopback(host) {
			return fmt.Errorf("CARDHOUR_SMTP_SECURITY=none with CARDHOUR_SMTP_USER: the password would cross the network in clear; use starttls or tls, or a relay on this host")
		}
	default:
		return fmt.Errorf("CARDHOUR_SMTP_SECURITY %q: want starttls, tls or none", m.Security)
	}
	if (m.Username == "") != (m.Password == "") {
		return fmt.Errorf("CARDHOUR_SMTP_USER / CARDHOUR_SMTP_PASSWORD: set both or neither")
	}
	if m.From == "" {
		return fmt.Errorf("CARDHOUR_SMTP_FROM: required with CARDHOUR_SMTP_ADDR, e.g. 卡时 <noreply@example.com>")
	}
	if _, err := mail.ParseAddress(m.From); err != nil {
		return fmt.Errorf("CARDHOUR_SMTP_FROM %q: want an address such as noreply@example.com or 卡时 <noreply@example.com>", m.From)
	}
	c.Mail = m
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loadNotices reads when reminders are scanned for and how notices retry.
func (c *Config) loadNotices(get func(string) string) error {
	var err error
	if c.ReminderEvery, err = time.ParseDuration(get("reminder-interval")); err != nil || c.ReminderEvery < time.Second || c.ReminderEvery > time.Hour {
		return fmt.Errorf("CARDHOUR_REMINDER_INTERVAL %q: want a duration from 1s to 1h, e.g. 1m", get("reminder-interval"))
	}
	if c.NoticeTries, err = strconv.Atoi(get("notice-tries")); err != nil || c.NoticeTries < 1 || c.NoticeTries > 20 {
		return fmt.Errorf("CARDHOUR_NOTICE_TRIES %q: want a whole number from 1 to 20", get("notice-tries"))
	}
	if c.NoticeBackoff, err = time.ParseDuration(get("notice-backoff")); err != nil || c.NoticeBackoff < time.Second || c.NoticeBackoff > time.Hour {
		return fmt.Errorf("CARDHOUR_NOTICE_BACKOFF %q: want a duration from 1s to 1h, e.g. 30s", get("notice-backoff"))
	}
	return nil
}
