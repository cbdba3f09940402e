// Package ldap checks a password against a company's LDAP directory or
// Active Directory and tells who signed in (directory.Identity): the
// service account (or an anonymous search) finds the person's entry by
// login name, a bind as that entry checks the password, and the entry's
// memberOf values and, where configured, a group search give the groups.
//
// Each call dials a fresh connection: logins are rare next to the cost of a
// pool that must notice a directory failing over, and a fresh connection
// never carries a previous user's bind.
package ldap

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	goldap "github.com/go-ldap/ldap/v3"

	"cardhour/errs"
)

// Config is how the portal reaches the directory and reads its entries.
type Config struct {
	// URL is ldap://host[:389] (upgraded with StartTLS unless StartTLS is
	// false) or ldaps://host[:636].
	URL string
	// StartTLS upgrades an ldap:// connection before anything is sent;
	// false sends binds in clear (a lab, a directory on this host). It
	// does not apply to ldaps://.
	StartTLS bool
	// CAFile is a PEM file of the CA(s) that signed the directory's
	// certificate; empty = the system roots.
	CAFile             string
	InsecureSkipVerify bool
	// BindDN and BindPassword are the service account the search runs
	// as; both empty = anonymous search.
	BindDN, BindPassword string
	// UserBase is where people are searched for (subtree).
	UserBase string
	// UserFilter finds one person; each %s becomes the escaped login
	// name. Default (uid=%s); Active Directory: (sAMAccountName=%s).
	UserFilter string
	// UsernameAttr, NameAttr and MailAttr are the entry's login name,
	// display name and mail (defaults uid, cn, mail; AD: sAMAccountName,
	// displayName, mail).
	UsernameAttr string
	NameAttr     string
	MailAttr     string
	// GroupBase, when set, is searched (subtree) for the groups that name
	// the person, in addition to the entry's memberOf values.
	GroupBase string
	// GroupFilter finds those groups; each %s becomes the escaped DN of
	// the person. Default (|(member=%s)(uniqueMember=%s)).
	GroupFilter string
	// GroupAttr is a group's name attribute, default cn.
	GroupAttr string
	// Timeout bounds the dial and each operation; default 5s.
	Timeout time.Duration
}

// Defaults of the optional fields.
const (
	DefaultUserFilter   = "(uid=%s)"
	DefaultUsernameAttr = "uid"
	DefaultNameAttr     = "cn"
	DefaultMailAttr     = "mail"
	DefaultGroupFilter  = "(|(member=%s)(uniqueMember=%s))"
	DefaultGroupAttr    = "cn"
	DefaultTimeout      = 5 * time.Second
)

// Directory is a configured directory. It holds no connection and is safe
// for concurrent use.
type Directory struct {
	cfg  Config
	addr string // host:port to dial
	tls  bool   // ldaps://: TLS from the first byte
	tlsc *tls.Config
}

// New checks cfg and fills in the defaults. A bad setting is errs.Invalid
// with a message naming it (the password is never quoted).
func New(cfg Config) (*Directory, error) {
	const op = "ldap.New"
	bad := func(format string, args ...any) error {
		return &errs.Error{Code: errs.Invalid, Op: op, Key: "directory.config_invalid", Err: fmt.Errorf(format, args...)}
	}
	def := func(v *string, d string) {
		if *v = strings.TrimSpace(*v); *v == "" {
			*v = d
		}
	}
	def(&cfg.UserFilter, DefaultUserFilter)
	def(&cfg.UsernameAttr, DefaultUsernameAttr)
	def(&cfg.NameAttr, DefaultNameAttr)
	def(&cfg.MailAttr, DefaultMailAttr)
	def(&cfg.GroupFilter, DefaultGroupFilter)
	def(&cfg.GroupAttr, DefaultGroupAttr)
	cfg.BindDN = strings.TrimSpace(cfg.BindDN)
	cfg.UserBase = strings.TrimSpace(cfg.UserBase)
	cfg.GroupBase = strings.TrimSpace(cfg.GroupBase)
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Timeout < 0 {
		return nil, bad("timeout %s: want a positive duration", cfg.Timeout)
	}

	u, err := url.Parse(strings.TrimSpace(cfg.URL))
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, bad("URL %q: want ldap://host[:port] or ldaps://host[:port]", cfg.URL)
	}
	d := &Directory{}
	port := u.Port()
	switch strings.ToLower(u.Scheme) {
	case "ldap":
		if port == "" {
			port = "389"
		}
	case "ldaps":
		d.tls = true
		if port == "" {
			port = "636"
		}
	default:
		return nil, bad("URL %q: the scheme must be ldap or ldaps", cfg.URL)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.User != nil {
		return nil, bad("URL %q: want only scheme, host and port (the base DN is a setting of its own)", cfg.URL)
	}
	d.addr = net.JoinHostPort(u.Hostname(), port)

	if (cfg.BindDN == "") != (cfg.BindPassword == "") {
		return nil, bad("bind DN and bind password: set both, or neither for an anonymous search")
	}
	if cfg.BindDN != "" {
		if _, err := goldap.ParseDN(cfg.BindDN); err != nil {
			return nil, bad("bind DN %q: not a DN: %w", cfg.BindDN, err)
		}
	}
	if cfg.UserBase == "" {
		return nil, bad("user base: required, e.g. ou=people,dc=example,dc=com")
	}
	if _, err := goldap.ParseDN(cfg.UserBase); err != nil {
		return nil, bad("user base %q: not a DN: %w", cfg.UserBase, err)
	}
	if err := checkFilter(cfg.UserFilter); err != nil {
		return nil, bad("user filter %q: %w", cfg.UserFilter, err)
	}
	if cfg.GroupBase != "" {
		if _, err := goldap.ParseDN(cfg.GroupBase); err != nil {
			return nil, bad("group base %q: not a DN: %w", cfg.GroupBase, err)
		}
		if err := checkFilter(cfg.GroupFilter); err != nil {
			return nil, bad("group filter %q: %w", cfg.GroupFilter, err)
		}
	}
	for _, a := range []string{cfg.UsernameAttr, cfg.NameAttr, cfg.MailAttr, cfg.GroupAttr} {
		if strings.ContainsAny(a, " ,()=*\\") {
			return nil, bad("attribute %q: want an attribute name such as uid or displayName", a)
		}
	}

	d.tlsc = &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // only when the operator asks
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, bad("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, bad("CA file %s: no PEM certificate in it", cfg.CAFile)
		}
		d.tlsc.RootCAs = pool
	}
	d.cfg = cfg
	return d, nil
}

// checkFilter makes sure a filter template names the login (or DN) and
// still parses once it is filled in, so a typo stops the start rather than
// every login.
func checkFilter(f string) error {
	if !strings.Contains(f, "%s") {
		return fmt.Errorf("must contain %%s where the escaped value goes")
	}
	if _, err := goldap.CompileFilter(fill(f, "x")); err != nil {
		return fmt.Errorf("not an LDAP filter: %w", err)
	}
	return nil
}

// fill puts the escaped value in every %s of a filter template. Escaping is
// what keeps a login name such as `*)(uid=*` from widening the search.
func fill(template, value string) string {
	return strings.ReplaceAll(template, "%s", goldap.EscapeFilter(value))
}
