package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"cardhour/directory/ldap"
	"cardhour/errs"
)

// LDAP is sign-in through the company directory; URL empty = off. The
// directory settings are ldap.Config's, so the command hands
// cfg.LDAP.Config to ldap.New as they are.
type LDAP struct {
	ldap.Config
	// SyncInterval is how often the directory is asked whether each of
	// its users is still there; 0 = never.
	SyncInterval time.Duration
}

// On returns whether sign-in through LDAP is configured.
func (l LDAP) On() bool { return l.URL != "" }

// loadLDAP reads the CARDHOUR_LDAP_* options. The bind password is taken as
// given (spaces may belong to it) and is never quoted in an error.
func (c *Config) loadLDAP(get func(string) string, bindPassword string) error {
	l := LDAP{Config: ldap.Config{
		URL:          get("ldap-url"),
		CAFile:       get("ldap-ca-file"),
		BindDN:       get("ldap-bind-dn"),
		BindPassword: bindPassword,
		UserBase:     get("ldap-user-base"),
		UserFilter:   get("ldap-user-filter"),
		UsernameAttr: get("ldap-username-attr"),
		NameAttr:     get("ldap-name-attr"),
		MailAttr:     get("ldap-mail-attr"),
		GroupBase:    get("ldap-group-base"),
		GroupFilter:  get("ldap-group-filter"),
		GroupAttr:    get("ldap-group-attr"),
	}}
	if l.URL == "" {
		// Settings without a server are a half-done configuration, not a
		// wish for LDAP to be off: say so rather than drop them silently.
		if l.BindDN != "" || l.BindPassword != "" || l.UserBase != "" || l.GroupBase != "" || l.CAFile != "" {
			return fmt.Errorf("CARDHOUR_LDAP_* settings are given but CARDHOUR_LDAP_URL is empty: set it to turn LDAP sign-in on, or unset them")
		}
		return nil
	}
	var err error
	if l.StartTLS, err = strconv.ParseBool(get("ldap-starttls")); err != nil {
		return fmt.Errorf("CARDHOUR_LDAP_STARTTLS %q: want true or false", get("ldap-starttls"))
	}
	if l.InsecureSkipVerify, err = strconv.ParseBool(get("ldap-insecure-skip-verify")); err != nil {
		return fmt.Errorf("CARDHOUR_LDAP_INSECURE_SKIP_VERIFY %q: want true or false", get("ldap-insecure-skip-verify"))
	}
	u, err := url.Parse(l.URL)
	if err != nil || (!strings.EqualFold(u.Scheme, "ldap") && !strings.EqualFold(u.Scheme, "ldaps")) || u.Hostname() == "" {
		return fmt.Errorf("CARDHOUR_LDAP_URL %q: want ldap://host[:389] (with StartTLS) or ldaps://host[:636]", l.URL)
	}
	if l.InsecureSkipVerify && l.CAFile != "" {
		return fmt.Errorf("CARDHOUR_LDAP_INSECURE_SKIP_VERIFY with CARDHOUR_LDAP_CA_FILE: a CA to verify against and no verification contradict; set one")
	}
	if l.UserBase == "" {
		return fmt.Errorf("CARDHOUR_LDAP_USER_BASE: required with CARDHOUR_LDAP_URL, e.g. ou=people,dc=example,dc=com")
	}
	if !strings.Contains(l.UserFilter, "%s") {
		return fmt.Errorf("CARDHOUR_LDAP_USER_FILTER %q: must contain %%s where the login name goes, e.g. (uid=%%s) or (sAMAccountName=%%s)", l.UserFilter)
	}
	if l.GroupBase != "" && !strings.Contains(l.GroupFilter, "%s") {
		return fmt.Errorf("CARDHOUR_LDAP_GROUP_FILTER %q: must contain %%s where the user's DN goes, e.g. (member=%%s)", l.GroupFilter)
	}
	if (l.BindDN == "") != (l.BindPassword == "") {
		return fmt.Errorf("CARDHOUR_LDAP_BIND_DN / CARDHOUR_LDAP_BIND_PASSWORD: set both, or neither for an anonymous search")
	}
	// The rest (DN syntax, filters that parse, a readable CA file) is
	// checked by the package itself, so the start fails as a login would.
	if _, err := ldap.New(l.Config); err != nil {
		if e, ok := errs.As(err); ok && e.Err != nil {
			err = e.Err
		}
		return fmt.Errorf("CARDHOUR_LDAP_*: %w", err)
	}
	d, err := time.ParseDuration(get("ldap-sync-interval"))
	if err != nil || d < 0 || (d > 0 && d < 10*time.Second) || d > 24*time.Hour {
		return fmt.Errorf("CARDHOUR_LDAP_SYNC_INTERVAL %q: want 0 (off) or a duration from 10s to 24h, e.g. 15m", get("ldap-sync-interval"))
	}
	l.SyncInterval = d
	c.LDAP = l
	return nil
}
