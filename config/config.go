// Package config reads cardhour's settings from flags and CARDHOUR_*
// environment variables and validates them once, at start, so a bad value
// stops the process with one line naming the option instead of failing later.
package config

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cardhour/cluster"
	"cardhour/objects"
	"cardhour/telemetry"
)

// Config is every setting of the portal. Flags win over the environment.
type Config struct {
	Addr          string
	DataDir       string
	DB            string // as given; empty means the SQLite file in DataDir
	AdminPassword string
	Demo          bool
	BaseURL       string
	TZ            *time.Location
	TZName        string
	Lang          string
	LogLevel      string
	LogFormat     string
	Horizon       time.Duration
	Headroom      float64
	CoreReserve   float64

	// Live occupancy (telemetry, the board).
	Simulator    bool                 // drive cards no real source reports with simulated samples
	DCGMTargets  []string             // DCGM exporter endpoints to scrape
	DCGMInterval time.Duration        // between scrapes
	Thresholds   telemetry.Thresholds // state and alert thresholds
	AutoRelease  time.Duration        // release bookings idle this long; 0 = off
	NoShowAfter  time.Duration        // end untouched bookings as no-shows after this long; 0 = off
	KeepMinutes  time.Duration        // retention of the minute rollups
	KeepHours    time.Duration        // retention of the hour rollups

	// Redis is what the replicas share live state through (cluster.Open);
	// empty = one process, nothing shared.
	Redis string

	// Versioned task files (plans, scripts, configs).
	Objects      objects.Location    // where file versions are kept
	S3           objects.Credentials // for an s3:// location; empty = the SDK's default chain
	MaxFileBytes int64               // largest file accepted

	// The HTTP edge.
	TrustedProxies []*net.IPNet  // peers whose X-Forwarded-For names the client; none by default
	RequestTimeout time.Duration // deadline of a page or API request (not websockets, not large uploads)
	MetricsToken   string        // bearer token that admits a scrape of /metrics from anywhere; "" = none
	MetricsAllow   []*net.IPNet  // networks that may read /metrics without the token

	// Mail notices; Mail.Addr empty = mail off.
	Mail Mail
	// Sign-in through an OpenID Connect provider; OIDC.Issuer empty = off.
	OIDC OIDC
	// Notices beyond the bell: how often reminders are scanned for, how
	// many tries a notice gets and the wait after the first failure (then
	// 3× each time, at most an hour).
	ReminderEvery time.Duration
	NoticeTries   int
	NoticeBackoff time.Duration

	// LDAP is sign-in through the company directory; LDAP.URL empty = off.
	LDAP LDAP
	// DirectoryDefaultRole is the portal role of a directory account that
	// no group rule gives one.
	DirectoryDefaultRole string
}

// Mail is how the portal reaches its SMTP server. It has notify.MailConfig's
// fields in the same order, so the command converts it with
// notify.MailConfig(cfg.Mail) and config need not import notify.
type Mail struct {
	Addr     string // host:port
	Security string // starttls, tls or none
	Username string
	Password string
	From     string // may carry a display name: 卡时 <noreply@example.com>
}

// Option documents one setting; the README table is written from this list.
type Option struct {
	Flag, Env, Default, Help string
}

// Options lists every setting with its flag, variable and default.
var Options = []Option{
	{"addr", "CARDHOUR_ADDR", ":8080", "listen address"},
	{"data", "CARDHOUR_DATA", "./data", "data directory (SQLite file, local object store)"},
	{"db", "CARDHOUR_DB", "", "database: empty = SQLite file in the data dir; sqlite:///path/file.db; mysql://user:pass@tcp(host:port)/db?params"},
	{"admin-password", "CARDHOUR_ADMIN_PASSWORD", "", "on an empty database, password of the account admin (random and printed once when unset)"},
	{"demo", "CARDHOUR_DEMO", "auto", "load demo data into an empty database: true, false, or auto (on with SQLite, off with MySQL)"},
	{"base-url", "CARDHOUR_BASE_URL", "", "public URL of the portal, e.g. https://cardhour.example.com (https makes cookies Secure)"},
	{"tz", "CARDHOUR_TZ", "Asia/Shanghai", "time zone in which times are shown"},
	{"lang", "CARDHOUR_LANG", "zh-CN", "default language: zh-CN or en"},
	{"horizon-days", "CARDHOUR_HORIZON_DAYS", "90", "how many days ahead a booking may end"},
	{"headroom", "CARDHOUR_HEADROOM", "0.10", "share of each card's VRAM left free when choosing card types (0–0.5)"},
	{"core-reserve", "CARDHOUR_CORE_RESERVE", "0", "share of each card type's cards that only core tasks may book (0–0.9)"},
	{"simulator", "CARDHOUR_SIMULATOR", "auto", "simulate telemetry for cards no agent, push or DCGM endpoint reports: true, false, or auto (on with SQLite, off with MySQL)"},
	{"dcgm-targets", "CARDHOUR_DCGM_TARGETS", "", "DCGM exporter endpoints to scrape, comma-separated, e.g. http://gpu-01:9400/metrics"},
	{"dcgm-interval", "CARDHOUR_DCGM_INTERVAL", "5s", "how often the DCGM endpoints are scraped (1s–5m)"},
	{"full-vram-pct", "CARDHOUR_FULL_VRAM_PCT", "90", "VRAM share (%) at which a card shows as full"},
	{"full-util-pct", "CARDHOUR_FULL_UTIL_PCT", "95", "utilisation (%) at which a card shows as full"},
	{"idle-util-pct", "CARDHOUR_IDLE_UTIL_PCT", "10", "utilisation (%) below which a card is idle"},
	{"held-idle-minutes", "CARDHOUR_HELD_IDLE_MINUTES", "10", "minutes a booked card may stay idle before it shows as held-but-idle and its owner is alerted"},
	{"offline-seconds", "CARDHOUR_OFFLINE_SECONDS", "30", "seconds without a sample after which a card shows as offline"},
	{"vram-alert-pct", "CARDHOUR_VRAM_ALERT_PCT", "95", "VRAM share (%) that raises an alert to the booking's owner and team manager"},
	{"auto-release-minutes", "CARDHOUR_AUTO_RELEASE_MINUTES", "0", "release a booking whose cards have all been idle this many minutes, after a warning; 0 = off"},
	{"no-show-minutes", "CARDHOUR_NO_SHOW_MINUTES", "30", "end a booking as a no-show, its cards back to the pool, when nothing ran on them (no load, no VRAM taken) this many minutes from its start; 0 = off"},
	{"rollup-minutes-days", "CARDHOUR_ROLLUP_MINUTES_DAYS", "14", "days the per-card minute rollups are kept"},
	{"rollup-hours-days", "CARDHOUR_ROLLUP_HOURS_DAYS", "400", "days the per-card hour rollups (the heatmap) are kept"},
	{"objects", "CARDHOUR_OBJECTS", "", "where task file versions are kept: empty = the directory objects/ in the data dir; a directory; or s3://bucket/prefix?endpoint=https://…&region=…&path_style=true"},
	{"s3-access-key", "CARDHOUR_S3_ACCESS_KEY", "", "S3 access key for CARDHOUR_OBJECTS=s3://… (default AWS_ACCESS_KEY_ID, then the AWS SDK's default chain)"},
	{"s3-secret-key", "CARDHOUR_S3_SECRET_KEY", "", "S3 secret key (default AWS_SECRET_ACCESS_KEY)"},
	{"max-file-mib", "CARDHOUR_MAX_FILE_MIB", "10", "largest task file accepted, in MiB (1–256)"},
	{"smtp-addr", "CARDHOUR_SMTP_ADDR", "", "SMTP server for mail notices, host:port (587 with starttls, 465 with tls); empty = mail off"},
	{"smtp-security", "CARDHOUR_SMTP_SECURITY", "starttls", "starttls (required, not opportunistic), tls (implicit TLS) or none (only for a relay on this host)"},
	{"smtp-user", "CARDHOUR_SMTP_USER", "", "SMTP AUTH PLAIN user; empty = no AUTH"},
	{"smtp-password", "CARDHOUR_SMTP_PASSWORD", "", "SMTP AUTH password (never printed)"},
	{"reminder-interval", "CARDHOUR_REMINDER_INTERVAL", "1m", "how often due reminders (quota expiry and use, booking start and end, output, digests) are looked for (1s–1h)"},
	{"notice-tries", "CARDHOUR_NOTICE_TRIES", "8", "tries a mail or chat notice gets before it is marked failed and admins are told (1–20)"},
	{"notice-backoff", "CARDHOUR_NOTICE_BACKOFF", "30s", "wait after a notice's first failed try; each later wait is three times longer, at most an hour (1s–1h)"},
	{"smtp-from", "CARDHOUR_SMTP_FROM", "", "From address of mail notices, e.g. 卡时 <noreply@example.com>; required with CARDHOUR_SMTP_ADDR"},
	{"oidc-issuer", "CARDHOUR_OIDC_ISSUER", "", "OpenID Connect provider for a \"Sign in with …\" button (Keycloak, Authing, Entra ID, Feishu…): its issuer URL, https (http only for a provider on this host), e.g. https://sso.example.com/realms/main; needs CARDHOUR_BASE_URL, whose BASE/login/oidc/callback is the redirect URI to register there; empty = off"},
	{"oidc-client-id", "CARDHOUR_OIDC_CLIENT_ID", "", "the portal's client id at the OpenID Connect provider; required with CARDHOUR_OIDC_ISSUER"},
	{"oidc-client-secret", "CARDHOUR_OIDC_CLIENT_SECRET", "", "its client secret (never printed)"},
	{"oidc-scopes", "CARDHOUR_OIDC_SCOPES", "openid profile email", "scopes asked for, separated by commas or spaces; openid is always added; add the one (often groups) under which the provider gives the groups claim"},
	{"oidc-username-claim", "CARDHOUR_OIDC_USERNAME_CLAIM", "preferred_username", "claim holding the login name (lower-cased); a sign-in without it is refused, never guessed from the email"},
	{"oidc-groups-claim", "CARDHOUR_OIDC_GROUPS_CLAIM", "groups", "claim holding the person's groups, a string or an array of strings, from the ID token or else userinfo"},
	{"oidc-name", "CARDHOUR_OIDC_NAME", "SSO", "label of the sign-in button, e.g. Keycloak or 飞书 (at most 40 characters)"},
	{"redis", "CARDHOUR_REDIS", "", "Redis the replicas share live state through (samples, cache invalidations, login rate limits): redis://[:password@]host:port/db or rediss://… (TLS); empty = one process, nothing shared"},
	{"trusted-proxies", "CARDHOUR_TRUSTED_PROXIES", "", "reverse proxies whose X-Forwarded-For names the client (login rate limits, audit log), CIDRs or addresses, comma-separated; empty = none: the peer's own address counts"},
	{"request-timeout", "CARDHOUR_REQUEST_TIMEOUT", "10s", "deadline of a page or API request, after which it answers 503 (1s–5m); the board's websocket has none, a request with a body over 1 MiB (a task file upload) gets 2 minutes"},
	{"metrics-token", "CARDHOUR_METRICS_TOKEN", "", "bearer token that lets a scraper read /metrics from any address (at least 16 characters; never printed)"},
	{"metrics-allow", "CARDHOUR_METRICS_ALLOW", "127.0.0.0/8,::1", "networks that may read /metrics without the token, CIDRs or addresses; none = only with the token (admins may always)"},
	// Company login through LDAP / Active Directory (config/ldap.go).
	{"ldap-url", "CARDHOUR_LDAP_URL", "", "company directory for sign-in: ldap://host:389 (upgraded with StartTLS) or ldaps://host:636; empty = LDAP sign-in off"},
	{"ldap-starttls", "CARDHOUR_LDAP_STARTTLS", "true", "upgrade an ldap:// connection with StartTLS (required, not opportunistic); false sends passwords in clear, only for a lab or a directory on this host"},
	{"ldap-ca-file", "CARDHOUR_LDAP_CA_FILE", "", "PEM file of the CA that signed the directory's certificate; empty = the system's roots"},
	{"ldap-insecure-skip-verify", "CARDHOUR_LDAP_INSECURE_SKIP_VERIFY", "false", "do not verify the directory's certificate (testing only: anyone on the path can read passwords)"},
	{"ldap-bind-dn", "CARDHOUR_LDAP_BIND_DN", "", "DN of the read-only service account the search runs as, e.g. cn=cardhour,ou=services,dc=example,dc=com; empty (with no password) = anonymous search"},
	{"ldap-bind-password", "CARDHOUR_LDAP_BIND_PASSWORD", "", "password of the service account (never printed)"},
	{"ldap-user-base", "CARDHOUR_LDAP_USER_BASE", "", "where people are searched for (subtree), e.g. ou=people,dc=example,dc=com; required with CARDHOUR_LDAP_URL"},
	{"ldap-user-filter", "CARDHOUR_LDAP_USER_FILTER", "(uid=%s)", "filter that finds one person, %s = the escaped login name; Active Directory: (sAMAccountName=%s)"},
	{"ldap-username-attr", "CARDHOUR_LDAP_USERNAME_ATTR", "uid", "attribute with the login name (Active Directory: sAMAccountName)"},
	{"ldap-name-attr", "CARDHOUR_LDAP_NAME_ATTR", "cn", "attribute with the display name (Active Directory: displayName)"},
	{"ldap-mail-attr", "CARDHOUR_LDAP_MAIL_ATTR", "mail", "attribute with the mail address"},
	{"ldap-group-base", "CARDHOUR_LDAP_GROUP_BASE", "", "where groups naming the person are searched for, e.g. ou=groups,dc=example,dc=com; empty = the person's memberOf values only"},
	{"ldap-group-filter", "CARDHOUR_LDAP_GROUP_FILTER", "(|(member=%s)(uniqueMember=%s))", "filter that finds the person's groups under CARDHOUR_LDAP_GROUP_BASE, %s = the escaped DN of the person"},
	{"ldap-group-attr", "CARDHOUR_LDAP_GROUP_ATTR", "cn", "attribute with a group's name"},
	{"directory-default-role", "CARDHOUR_DIRECTORY_DEFAULT_ROLE", "viewer", "portal role of an account made by a company sign-in (LDAP or OIDC) whose groups no rule on /admin/directory gives a role: viewer, member or manager"},
	{"ldap-sync-interval", "CARDHOUR_LDAP_SYNC_INTERVAL", "15m", "how often directory users are checked and those gone from the directory disabled (10s–24h); 0 = off"},
	{"log-level", "CARDHOUR_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"log-format", "CARDHOUR_LOG_FORMAT", "text", "text or json"},
}

// Load parses args (without the subcommand) over the environment given by
// getenv. The error names the offending option.
func Load(name string, args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	values := map[string]*string{}
	for _, o := range Options {
		def := getenv(o.Env)
		if def == "" || secretOption(o.Flag) {
			// A secret's value is read after parsing instead of becoming
			// the flag's default, which -h would print.
			def = o.Default
		}
		values[o.Flag] = fs.String(o.Flag, def, o.Help+" ("+o.Env+")")
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, o := range Options {
		if secretOption(o.Flag) && *values[o.Flag] == "" {
			*values[o.Flag] = getenv(o.Env)
		}
	}
	get := func(f string) string { return strings.TrimSpace(*values[f]) }

	c := Config{
		Addr:          get("addr"),
		DataDir:       get("data"),
		DB:            get("db"),
		AdminPassword: *values["admin-password"],
		BaseURL:       strings.TrimRight(get("base-url"), "/"),
		TZName:        get("tz"),
		Lang:          get("lang"),
		LogLevel:      strings.ToLower(get("log-level")),
		LogFormat:     strings.ToLower(get("log-format")),
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return Config{}, fmt.Errorf("CARDHOUR_ADDR %q: want host:port such as :8080", c.Addr)
	}
	if c.DataDir == "" {
		return Config{}, fmt.Errorf("CARDHOUR_DATA: must not be empty")
	}
	if _, err := ParseDB(c.DB, c.DataDir); err != nil {
		return Config{}, err
	}
	demo, err := parseDemo(get("demo"), c.IsMySQL())
	if err != nil {
		return Config{}, err
	}
	c.Demo = demo
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Config{}, fmt.Errorf("CARDHOUR_BASE_URL %q: want an absolute http(s) URL", c.BaseURL)
		}
	}
	loc, err := time.LoadLocation(c.TZName)
	if err != nil {
		return Config{}, fmt.Errorf("CARDHOUR_TZ %q: unknown time zone", c.TZName)
	}
	c.TZ = loc
	switch c.Lang {
	case "zh-CN", "en":
	default:
		return Config{}, fmt.Errorf("CARDHOUR_LANG %q: want zh-CN or en", c.Lang)
	}
	days, err := strconv.Atoi(get("horizon-days"))
	if err != nil || days < 1 || days > 3650 {
		return Config{}, fmt.Errorf("CARDHOUR_HORIZON_DAYS %q: want a whole number of days from 1 to 3650", get("horizon-days"))
	}
	c.Horizon = time.Duration(days) * 24 * time.Hour
	if c.Headroom, err = strconv.ParseFloat(get("headroom"), 64); err != nil || c.Headroom < 0 || c.Headroom > 0.5 {
		return Config{}, fmt.Errorf("CARDHOUR_HEADROOM %q: want a share from 0 to 0.5, e.g. 0.10", get("headroom"))
	}
	if c.CoreReserve, err = strconv.ParseFloat(get("core-reserve"), 64); err != nil || c.CoreReserve < 0 || c.CoreReserve > 0.9 {
		return Config{}, fmt.Errorf("CARDHOUR_CORE_RESERVE %q: want a share from 0 to 0.9", get("core-reserve"))
	}
	if err := c.loadTelemetry(get); err != nil {
		return Config{}, err
	}
	if err := c.loadObjects(get, getenv); err != nil {
		return Config{}, err
	}
	if err := c.loadNotices(get); err != nil {
		return Config{}, err
	}
	if err := c.loadMail(get, *values["smtp-password"]); err != nil {
		return Config{}, err
	}
	if err := c.loadHTTP(get, strings.TrimSpace(*values["metrics-token"])); err != nil {
		return Config{}, err
	}
	if err := c.loadOIDC(get, *values["oidc-client-secret"]); err != nil {
		return Config{}, err
	}
	if err := c.loadLDAP(get, *values["ldap-bind-password"]); err != nil {
		return Config{}, err
	}
	switch c.DirectoryDefaultRole = strings.ToLower(get("directory-default-role")); c.DirectoryDefaultRole {
	case "viewer", "member", "manager":
	default:
		// Never admin: a directory group must say so, through a rule an
		// admin wrote.
		return Config{}, fmt.Errorf("CARDHOUR_DIRECTORY_DEFAULT_ROLE %q: want viewer, member or manager", c.DirectoryDefaultRole)
	}
	c.Redis = strings.TrimSpace(*values["redis"])
	if c.Redis != "" {
		if _, err := cluster.ParseURL(c.Redis); err != nil {
			return Config{}, fmt.Errorf("CARDHOUR_REDIS: %w", err)
		}
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return Config{}, fmt.Errorf("CARDHOUR_LOG_LEVEL %q: want debug, info, warn or error", c.LogLevel)
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return Config{}, fmt.Errorf("CARDHOUR_LOG_FORMAT %q: want text or json", c.LogFormat)
	}
	return c, nil
}

func parseDemo(v string, mysql bool) (bool, error) {
	if v == "" || strings.EqualFold(v, "auto") {
		return !mysql, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("CARDHOUR_DEMO %q: want true, false or auto", v)
	}
	return b, nil
}

// IsMySQL tells whether the configured database is MySQL-compatible.
func (c Config) IsMySQL() bool { return strings.HasPrefix(c.DB, "mysql://") }

// SecureCookies is true when the portal is served over HTTPS.
func (c Config) SecureCookies() bool { return strings.HasPrefix(c.BaseURL, "https://") }

// DBTarget is the parsed database setting.
type DBTarget struct {
	Dialect string // "sqlite" or "mysql"
	DSN     string // driver DSN
}

// ParseDB turns the CARDHOUR_DB value into a driver DSN.
func ParseDB(v, dataDir string) (DBTarget, error) {
	switch {
	case v == "":
		return DBTarget{Dialect: "sqlite", DSN: filepath.Join(dataDir, "cardhour.db")}, nil
	case strings.HasPrefix(v, "sqlite://"):
		p := strings.TrimPrefix(v, "sqlite://")
		if p == "" {
			return DBTarget{}, fmt.Errorf("CARDHOUR_DB %q: sqlite:// needs a file path", v)
		}
		return DBTarget{Dialect: "sqlite", DSN: p}, nil
	case strings.HasPrefix(v, "mysql://"):
		dsn := strings.TrimPrefix(v, "mysql://")
		if !strings.Contains(dsn, "/") || !strings.Contains(dsn, "@") {
			return DBTarget{}, fmt.Errorf("CARDHOUR_DB: want mysql://user:pass@tcp(host:port)/db")
		}
		return DBTarget{Dialect: "mysql", DSN: dsn}, nil
	default:
		return DBTarget{}, fmt.Errorf("CARDHOUR_DB: want empty, sqlite://PATH or mysql://user:pass@tcp(host:port)/db")
	}
}

// loadTelemetry reads the live-occupancy options.
func (c *Config) loadTelemetry(get func(string) string) error {
	sim, err := parseDemo(get("simulator"), c.IsMySQL())
	if err != nil {
		return fmt.Errorf("CARDHOUR_SIMULATOR %q: want true, false or auto", get("simulator"))
	}
	c.Simulator = sim
	if c.DCGMTargets, err = telemetry.ParseTargets(get("dcgm-targets")); err != nil {
		return fmt.Errorf("CARDHOUR_DCGM_TARGETS: %w", err)
	}
	if c.DCGMInterval, err = time.ParseDuration(get("dcgm-interval")); err != nil || c.DCGMInterval < time.Second || c.DCGMInterval > 5*time.Minute {
		return fmt.Errorf("CARDHOUR_DCGM_INTERVAL %q: want a duration from 1s to 5m, e.g. 5s", get("dcgm-interval"))
	}
	pct := func(flag, env string) (float64, error) {
		v, err := strconv.ParseFloat(get(flag), 64)
		if err != nil || v <= 0 || v > 100 {
			return 0, fmt.Errorf("%s %q: want a percentage above 0 and at most 100", env, get(flag))
		}
		return v, nil
	}
	whole := func(flag, env string, lo, hi int) (int, error) {
		v, err := strconv.Atoi(get(flag))
		if err != nil || v < lo || v > hi {
			return 0, fmt.Errorf("%s %q: want a whole number from %d to %d", env, get(flag), lo, hi)
		}
		return v, nil
	}
	t := &c.Thresholds
	if t.FullMemPct, err = pct("full-vram-pct", "CARDHOUR_FULL_VRAM_PCT"); err != nil {
		return err
	}
	if t.FullUtilPct, err = pct("full-util-pct", "CARDHOUR_FULL_UTIL_PCT"); err != nil {
		return err
	}
	if t.IdleUtilPct, err = pct("idle-util-pct", "CARDHOUR_IDLE_UTIL_PCT"); err != nil {
		return err
	}
	if t.VRAMAlertPct, err = pct("vram-alert-pct", "CARDHOUR_VRAM_ALERT_PCT"); err != nil {
		return err
	}
	minutes, err := whole("held-idle-minutes", "CARDHOUR_HELD_IDLE_MINUTES", 1, 1440)
	if err != nil {
		return err
	}
	t.HeldIdleAfter = time.Duration(minutes) * time.Minute
	seconds, err := whole("offline-seconds", "CARDHOUR_OFFLINE_SECONDS", 5, 3600)
	if err != nil {
		return err
	}
	t.OfflineAfter = time.Duration(seconds) * time.Second
	if err := t.Validate(); err != nil {
		return fmt.Errorf("CARDHOUR_IDLE_UTIL_PCT / CARDHOUR_FULL_UTIL_PCT: %w", err)
	}
	auto, err := whole("auto-release-minutes", "CARDHOUR_AUTO_RELEASE_MINUTES", 0, 10080)
	if err != nil {
		return err
	}
	if auto != 0 && auto < minutes {
		return fmt.Errorf("CARDHOUR_AUTO_RELEASE_MINUTES %d: want 0 (off) or at least CARDHOUR_HELD_IDLE_MINUTES (%d)", auto, minutes)
	}
	c.AutoRelease = time.Duration(auto) * time.Minute
	noShow, err := whole("no-show-minutes", "CARDHOUR_NO_SHOW_MINUTES", 0, 1440)
	if err != nil {
		return err
	}
	if noShow != 0 && noShow < 5 {
		return fmt.Errorf("CARDHOUR_NO_SHOW_MINUTES %d: want 0 (off) or 5 to 1440 minutes", noShow)
	}
	c.NoShowAfter = time.Duration(noShow) * time.Minute
	days, err := whole("rollup-minutes-days", "CARDHOUR_ROLLUP_MINUTES_DAYS", 1, 3650)
	if err != nil {
		return err
	}
	c.KeepMinutes = time.Duration(days) * 24 * time.Hour
	if days, err = whole("rollup-hours-days", "CARDHOUR_ROLLUP_HOURS_DAYS", 1, 36500); err != nil {
		return err
	}
	c.KeepHours = time.Duration(days) * 24 * time.Hour
	if c.KeepHours < c.KeepMinutes {
		return fmt.Errorf("CARDHOUR_ROLLUP_HOURS_DAYS %s: want at least CARDHOUR_ROLLUP_MINUTES_DAYS (%s)", get("rollup-hours-days"), get("rollup-minutes-days"))
	}
	return nil
}

// loadObjects reads where task files are kept and how large one may be.
// Credentials fall back to the AWS SDK's usual variables, so an operator
// who already exports AWS_ACCESS_KEY_ID need not repeat it.
func (c *Config) loadObjects(get, getenv func(string) string) error {
	loc, err := objects.ParseLocation(get("objects"), c.DataDir)
	if err != nil {
		return err
	}
	c.Objects = loc
	c.S3 = objects.Credentials{AccessKey: get("s3-access-key"), SecretKey: get("s3-secret-key")}
	if c.S3.AccessKey == "" && c.S3.SecretKey == "" {
		c.S3 = objects.Credentials{AccessKey: getenv("AWS_ACCESS_KEY_ID"), SecretKey: getenv("AWS_SECRET_ACCESS_KEY"),
			SessionToken: getenv("AWS_SESSION_TOKEN")}
	}
	if (c.S3.AccessKey == "") != (c.S3.SecretKey == "") {
		return fmt.Errorf("CARDHOUR_S3_ACCESS_KEY / CARDHOUR_S3_SECRET_KEY: set both or neither")
	}
	mib, err := strconv.Atoi(get("max-file-mib"))
	if err != nil || mib < 1 || mib > 256 {
		return fmt.Errorf("CARDHOUR_MAX_FILE_MIB %q: want a whole number of MiB from 1 to 256", get("max-file-mib"))
	}
	c.MaxFileBytes = int64(mib) << 20
	return nil
}
