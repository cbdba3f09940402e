package config_test

import (
	"io"
	"os"
	"strings"
	"testing"

	"cardhour/config"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaultsGiveSQLiteWithDemo(t *testing.T) {
	c, err := config.Load("serve", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":8080" || c.DataDir != "./data" || c.Lang != "zh-CN" || c.TZ.String() != "Asia/Shanghai" {
		t.Errorf("unexpected defaults: %+v", c)
	}
	if c.IsMySQL() || !c.Demo {
		t.Errorf("the embedded default is SQLite with demo data, got mysql=%v demo=%v", c.IsMySQL(), c.Demo)
	}
	target, err := config.ParseDB(c.DB, c.DataDir)
	if err != nil || target.Dialect != "sqlite" || !strings.HasSuffix(target.DSN, "cardhour.db") {
		t.Errorf("ParseDB default = %+v, %v", target, err)
	}
}

func TestMySQLTurnsDemoOffUnlessAsked(t *testing.T) {
	dsn := "mysql://u:p@tcp(127.0.0.1:3306)/cardhour"
	c, err := config.Load("serve", nil, env(map[string]string{"CARDHOUR_DB": dsn}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.IsMySQL() || c.Demo {
		t.Errorf("mysql=%v demo=%v", c.IsMySQL(), c.Demo)
	}
	c, err = config.Load("serve", nil, env(map[string]string{"CARDHOUR_DB": dsn, "CARDHOUR_DEMO": "true"}), io.Discard)
	if err != nil || !c.Demo {
		t.Errorf("CARDHOUR_DEMO=true with MySQL: demo=%v err=%v", c.Demo, err)
	}
}

func TestFlagsWinOverEnvironment(t *testing.T) {
	c, err := config.Load("serve", []string{"--addr", "127.0.0.1:9999", "--lang=en"}, env(map[string]string{"CARDHOUR_ADDR": ":1", "CARDHOUR_LANG": "zh-CN"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9999" || c.Lang != "en" {
		t.Errorf("got addr=%s lang=%s", c.Addr, c.Lang)
	}
}

func TestInvalidSettingsNameTheOption(t *testing.T) {
	cases := map[string]map[string]string{
		"CARDHOUR_ADDR":            {"CARDHOUR_ADDR": "nope"},
		"CARDHOUR_LANG":            {"CARDHOUR_LANG": "fr"},
		"CARDHOUR_TZ":              {"CARDHOUR_TZ": "Mars/Olympus"},
		"CARDHOUR_DEMO":            {"CARDHOUR_DEMO": "maybe"},
		"CARDHOUR_DB":              {"CARDHOUR_DB": "postgres://x"},
		"CARDHOUR_BASE_URL":        {"CARDHOUR_BASE_URL": "ftp://x"},
		"CARDHOUR_LOG_LEVEL":       {"CARDHOUR_LOG_LEVEL": "loud"},
		"CARDHOUR_LOG_FORMAT":      {"CARDHOUR_LOG_FORMAT": "xml"},
		"CARDHOUR_HORIZON_DAYS":    {"CARDHOUR_HORIZON_DAYS": "0"},
		"CARDHOUR_HEADROOM":        {"CARDHOUR_HEADROOM": "0.9"},
		"CARDHOUR_CORE_RESERVE":    {"CARDHOUR_CORE_RESERVE": "x"},
		"CARDHOUR_NO_SHOW_MINUTES": {"CARDHOUR_NO_SHOW_MINUTES": "3"},
	}
	for option, e := range cases {
		_, err := config.Load("serve", nil, env(e), io.Discard)
		if err == nil {
			t.Errorf("%s: accepted %v", option, e)
			continue
		}
		if !strings.Contains(err.Error(), option) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q should be one line naming the option", option, err)
		}
	}
}

func TestSecureCookiesFollowBaseURL(t *testing.T) {
	c, err := config.Load("serve", nil, env(map[string]string{"CARDHOUR_BASE_URL": "https://gpu.example.cn/"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.SecureCookies() || c.BaseURL != "https://gpu.example.cn" {
		t.Errorf("secure=%v base=%q", c.SecureCookies(), c.BaseURL)
	}
}

// The README's configuration table must list every option, so an option
// added in code cannot go undocumented.
func TestReadmeListsEveryOption(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range config.Options {
		if !strings.Contains(string(readme), "`"+o.Env+"`") || !strings.Contains(string(readme), "`--"+o.Flag+"`") {
			t.Errorf("README.md does not document %s / --%s", o.Env, o.Flag)
		}
	}
}

func TestRedisURL(t *testing.T) {
	c, err := config.Load("serve", nil, env(nil), io.Discard)
	if err != nil || c.Redis != "" {
		t.Fatalf("default: Redis %q err %v, want none", c.Redis, err)
	}
	for _, ok := range []string{"redis://127.0.0.1:6379/0", "redis://:s3cret@redis.internal:6379/1", "rediss://default:pw@dcs.example:6380/0"} {
		c, err := config.Load("serve", nil, env(map[string]string{"CARDHOUR_REDIS": ok}), io.Discard)
		if err != nil || c.Redis != ok {
			t.Errorf("%s: Redis %q err %v", ok, c.Redis, err)
		}
	}
	for _, bad := range []string{"127.0.0.1:6379", "memcache://x:1", "redis://:hunter2@:6379/0", "redis://:hunter2@h:6379/db"} {
		_, err := config.Load("serve", nil, env(map[string]string{"CARDHOUR_REDIS": bad}), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "CARDHOUR_REDIS") {
			t.Errorf("%s: err %v, want one naming CARDHOUR_REDIS", bad, err)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error quotes the password: %v", bad, err)
		}
	}
	// A URL with a password never becomes a flag default, which -h prints.
	var help strings.Builder
	_, _ = config.Load("serve", []string{"-h"}, env(map[string]string{"CARDHOUR_REDIS": "redis://:hunter2@h:6379/0"}), &help)
	if strings.Contains(help.String(), "hunter2") {
		t.Fatal("-h prints the Redis password")
	}
}
