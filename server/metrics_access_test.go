package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cardhour/server/servertest"
)

// scrape sends GET /metrics from peer (host:port) with the headers, as a
// scraper on that address would.
func scrape(e *env, peer string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.RemoteAddr = peer
	for k, vs := range header {
		req.Header[k] = vs
	}
	rec := httptest.NewRecorder()
	e.Srv.Handler().ServeHTTP(rec, req)
	return rec
}

const metricsSeries = "go_goroutines"

// TestMetricsAnswersOnlyTheMonitoringNetwork: /metrics is no longer open
// to anyone. By default it answers this host (loopback) and logged-in
// admins; CARDHOUR_METRICS_ALLOW widens or closes the networks,
// CARDHOUR_METRICS_TOKEN admits a scraper from anywhere. A request that a
// proxy on this host forwarded is not "from this host".
func TestMetricsAnswersOnlyTheMonitoringNetwork(t *testing.T) {
	t.Parallel()
	const token = "scrape-secret-0123456789"
	bearer := func(s string) http.Header { return http.Header{"Authorization": {"Bearer " + s}} }
	t.Run("defaults", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, servertest.Options{})
		if r := e.Client().Get("/metrics"); r.StatusCode != http.StatusOK || !strings.Contains(r.String(), metricsSeries) {
			t.Errorf("from loopback: %d, want 200 with the series", r.StatusCode)
		}
		if r := scrape(e, "[::1]:40000", nil); r.Code != http.StatusOK {
			t.Errorf("from ::1: %d, want 200", r.Code)
		}
		r := scrape(e, "10.20.30.40:40000", nil)
		if r.Code != http.StatusUnauthorized || strings.Contains(r.Body.String(), metricsSeries) {
			t.Errorf("from an intranet address: %d, want 401 without the series", r.Code)
		}
		if r.Header().Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
		if r := scrape(e, "127.0.0.1:40000", http.Header{"X-Forwarded-For": {"203.0.113.5"}}); r.Code != http.StatusUnauthorized {
			t.Errorf("forwarded by a proxy on this host that is not trusted: %d, want 401", r.Code)
		}
		if r := scrape(e, "10.20.30.40:40000", bearer(e.Users["admin"].Token)); r.Code != http.StatusOK {
			t.Errorf("an admin's API token from the intranet: %d, want 200", r.Code)
		}
		if r := scrape(e, "10.20.30.40:40000", bearer(e.Users["manager"].Token)); r.Code != http.StatusForbidden {
			t.Errorf("a manager's API token from the intranet: %d, want 403", r.Code)
		}
		if r := scrape(e, "10.20.30.40:40000", bearer(token)); r.Code != http.StatusUnauthorized {
			t.Errorf("a token when none is configured: %d, want 401", r.Code)
		}
	})
	t.Run("token, no networks", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, servertest.Options{Vars: map[string]string{"CARDHOUR_METRICS_TOKEN": token, "CARDHOUR_METRICS_ALLOW": "none"}})
		if r := scrape(e, "127.0.0.1:40000", nil); r.Code != http.StatusUnauthorized {
			t.Errorf("loopback with CARDHOUR_METRICS_ALLOW=none: %d, want 401", r.Code)
		}
		if r := scrape(e, "198.51.100.7:40000", bearer(token)); r.Code != http.StatusOK || !strings.Contains(r.Body.String(), metricsSeries) {
			t.Errorf("the metrics token from anywhere: %d, want 200", r.Code)
		}
		if r := scrape(e, "198.51.100.7:40000", bearer(token+"x")); r.Code != http.StatusUnauthorized {
			t.Errorf("a wrong token: %d, want 401", r.Code)
		}
	})
	t.Run("allowed network behind a trusted proxy", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, servertest.Options{Vars: map[string]string{"CARDHOUR_METRICS_ALLOW": "10.9.0.0/16", "CARDHOUR_TRUSTED_PROXIES": "10.0.0.2"}})
		if r := scrape(e, "10.9.1.1:40000", nil); r.Code != http.StatusOK {
			t.Errorf("from the allowed network: %d, want 200", r.Code)
		}
		if r := scrape(e, "10.0.0.2:40000", http.Header{"X-Forwarded-For": {"10.9.1.1"}}); r.Code != http.StatusOK {
			t.Errorf("from the allowed network through the trusted proxy: %d, want 200", r.Code)
		}
		if r := scrape(e, "10.0.0.2:40000", http.Header{"X-Forwarded-For": {"198.51.100.7"}}); r.Code != http.StatusUnauthorized {
			t.Errorf("from outside through the trusted proxy: %d, want 401", r.Code)
		}
		if r := scrape(e, "127.0.0.1:40000", nil); r.Code != http.StatusUnauthorized {
			t.Errorf("loopback when the list does not name it: %d, want 401", r.Code)
		}
	})
}
