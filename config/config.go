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
		if def == "" {
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
