package config_test

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"cardhour/config"
)

func TestHTTPEdgeDefaults(t *testing.T) {
	c, err := config.Load("serve", nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.TrustedProxies) != 0 {
		t.Errorf("trusted proxies by default: %v, want none", c.TrustedProxies)
	}
	if c.RequestTimeout != 10*time.Second {
		t.Errorf("request timeout %s, want 10s", c.RequestTimeout)
	}
	if c.MetricsToken != "" {
		t.Errorf("a metrics token by default")
	}
	for ip, want := range map[string]bool{"127.0.0.1": true, "127.8.9.10": true, "::1": true, "::ffff:127.0.0.1": true,
		"10.0.0.1": false, "192.168.1.2": false, "203.0.113.9": false, "fe80::1": false} {
		if got := config.InNetworks(c.MetricsAllow, net.ParseIP(ip)); got != want {
			t.Errorf("/metrics from %s by default: allowed %v, want %v", ip, got, want)
		}
	}
}

func TestNetworkLists(t *testing.T) {
	nets, err := config.ParseNetworks(" 10.0.0.0/8, 192.168.1.5 ::1,fd00::/8 ")
	if err != nil {
		t.Fatal(err)
	}
	for ip, want := range map[string]bool{"10.200.3.4": true, "192.168.1.5": true, "192.168.1.6": false, "::1": true,
		"fd12::5": true, "127.0.0.1": false, "11.0.0.1": false} {
		if got := config.InNetworks(nets, net.ParseIP(ip)); got != want {
			t.Errorf("%s: in the list %v, want %v", ip, got, want)
		}
	}
	for _, none := range []string{"", "none", " NONE "} {
		if nets, err := config.ParseNetworks(none); err != nil || nets != nil {
			t.Errorf("%q: %v %v, want no networks", none, nets, err)
		}
	}
	c, err := config.Load("serve", nil, env(map[string]string{"CARDHOUR_METRICS_ALLOW": "none"}), io.Discard)
	if err != nil || len(c.MetricsAllow) != 0 {
		t.Errorf("CARDHOUR_METRICS_ALLOW=none: %v %v, want no networks", c.MetricsAllow, err)
	}
}

func TestHTTPEdgeRefusesBadValues(t *testing.T) {
	for option, bad := range map[string]string{
		"CARDHOUR_TRUSTED_PROXIES": "10.0.0.0/33",
		"CARDHOUR_METRICS_ALLOW":   "localhost",
		"CARDHOUR_REQUEST_TIMEOUT": "500ms",
		"CARDHOUR_METRICS_TOKEN":   "short-secret",
	} {
		_, err := config.Load("serve", nil, env(map[string]string{option: bad}), io.Discard)
		if err == nil || !strings.Contains(err.Error(), option) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s=%q: error %v, want one line naming the option", option, bad, err)
		}
		if option == "CARDHOUR_METRICS_TOKEN" && err != nil && strings.Contains(err.Error(), bad) {
			t.Errorf("the error quotes the metrics token: %v", err)
		}
	}
	if _, err := config.Load("serve", nil, env(map[string]string{"CARDHOUR_TRUSTED_PROXIES": "10.0.0.1, 10.1.0.0/16",
		"CARDHOUR_REQUEST_TIMEOUT": "3s", "CARDHOUR_METRICS_TOKEN": "0123456789abcdef0123"}), io.Discard); err != nil {
		t.Errorf("good values refused: %v", err)
	}
	// A token never becomes a flag default, which -h prints.
	var help strings.Builder
	_, _ = config.Load("serve", []string{"-h"}, env(map[string]string{"CARDHOUR_METRICS_TOKEN": "hunter2hunter2hunter2"}), &help)
	if strings.Contains(help.String(), "hunter2") {
		t.Fatal("-h prints the metrics token")
	}
}
