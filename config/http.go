package config

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// loadHTTP reads the options of the HTTP edge: which peers are proxies
// whose X-Forwarded-For is believed, how long a request may take, and who
// may read /metrics.
func (c *Config) loadHTTP(get func(string) string, metricsToken string) error {
	var err error
	if c.TrustedProxies, err = ParseNetworks(get("trusted-proxies")); err != nil {
		return fmt.Errorf("CARDHOUR_TRUSTED_PROXIES: %w", err)
	}
	d, err := time.ParseDuration(get("request-timeout"))
	if err != nil || d < time.Second || d > 5*time.Minute {
		return fmt.Errorf("CARDHOUR_REQUEST_TIMEOUT %q: want a duration from 1s to 5m, e.g. 10s", get("request-timeout"))
	}
	c.RequestTimeout = d
	if c.MetricsAllow, err = ParseNetworks(get("metrics-allow")); err != nil {
		return fmt.Errorf("CARDHOUR_METRICS_ALLOW: %w", err)
	}
	// A token is compared, never printed, so the error does not quote it.
	c.MetricsToken = metricsToken
	if t := c.MetricsToken; t != "" && (len(t) < 16 || strings.ContainsAny(t, " \t\r\n")) {
		return fmt.Errorf("CARDHOUR_METRICS_TOKEN: want at least 16 characters without spaces (e.g. openssl rand -hex 16)")
	}
	return nil
}

// ParseNetworks reads a list of networks and addresses separated by commas
// or spaces (10.0.0.0/8, 192.168.1.5, ::1); a bare address is a network of
// one. Empty and "none" are no networks.
func ParseNetworks(v string) ([]*net.IPNet, error) {
	v = strings.TrimSpace(v)
	if v == "" || strings.EqualFold(v, "none") {
		return nil, nil
	}
	var out []*net.IPNet
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if strings.Contains(f, "/") {
			_, n, err := net.ParseCIDR(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not a network: want CIDR such as 10.0.0.0/8 or an address", f)
			}
			out = append(out, n)
			continue
		}
		ip := net.ParseIP(f)
		if ip == nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR network", f)
		}
		bits := 128
		if ip4 := ip.To4(); ip4 != nil {
			ip, bits = ip4, 32
		}
		out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
	}
	return out, nil
}

// InNetworks tells whether ip lies in one of nets.
func InNetworks(nets []*net.IPNet, ip net.IP) bool {
	if ip == nil {
		return false
	}
	for _, n := range nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}
