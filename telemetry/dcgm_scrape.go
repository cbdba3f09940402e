package telemetry

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Scraper reads DCGM exporter endpoints (Prometheus text on :9400/metrics).
type Scraper struct {
	Targets []string
	Client  *http.Client
}

// ParseTargets splits CARDHOUR_DCGM_TARGETS: comma-separated http(s) URLs;
// a bare host:port gets http:// and /metrics.
func ParseTargets(v string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(v, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if !strings.Contains(t, "://") {
			t = "http://" + t
		}
		u, err := url.Parse(t)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%q: want a URL such as http://gpu-01:9400/metrics", t)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/metrics"
		}
		out = append(out, u.String())
	}
	return out, nil
}

// ScrapeError is a target that could not be read.
type ScrapeError struct {
	Target string
	Err    error
}

func (e ScrapeError) Error() string { return e.Target + ": " + e.Err.Error() }

// Scrape reads every target at once and returns the samples of those that
// answered, stamped at, and an error for each that did not. A target's
// host name, when its metrics carry none, is the URL's host.
func (s *Scraper) Scrape(ctx context.Context, at time.Time) ([]Sample, []ScrapeError) {
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	var (
		mu      sync.Mutex
		samples []Sample
		errs    []ScrapeError
		wg      sync.WaitGroup
	)
	for _, target := range s.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := scrapeOne(ctx, client, target, at)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, ScrapeError{target, err})
				return
			}
			samples = append(samples, got...)
		}()
	}
	wg.Wait()
	return samples, errs
}

func scrapeOne(ctx context.Context, client *http.Client, target string, at time.Time) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
		return nil, fmt.Errorf("status %s", res.Status)
	}
	host := req.URL.Hostname()
	return ParseDCGM(res.Body, host, at)
}
