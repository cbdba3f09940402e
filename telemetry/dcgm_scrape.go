package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// Scraper reads DCGM exporter endpoints (Prometheus text on :9400/metrics).
// A metric family that does not parse is skipped and logged once per
// target until the target prints it well again, not at every scrape.
type Scraper struct {
	Targets []string
	Client  *http.Client
	Log     *slog.Logger // slog.Default() when nil

	mu     sync.Mutex
	broken map[string]map[string]bool // target → families skipped at its last scrape
}

// BrokenFamilies returns the families target's last scrape skipped, sorted.
func (s *Scraper) BrokenFamilies(target string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.broken[target]))
	for name := range s.broken[target] {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// noteSkipped logs the families of target newly skipped, and forgets those
// that parse again. The caller holds s.mu.
func (s *Scraper) noteSkipped(target string, skipped []SkippedFamily) {
	if s.broken == nil {
		s.broken = map[string]map[string]bool{}
	}
	was := s.broken[target]
	now := make(map[string]bool, len(skipped))
	log := s.Log
	if log == nil {
		log = slog.Default()
	}
	for _, f := range skipped {
		if now[f.Name] {
			continue
		}
		now[f.Name] = true
		if !was[f.Name] {
			log.Warn("DCGM metric family skipped: it does not parse; the rest of the endpoint is read",
				"target", target, "family", f.Name, "line", f.Line, "reason", f.Reason)
		}
	}
	if len(now) == 0 {
		delete(s.broken, target)
		return
	}
	s.broken[target] = now
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
			s.mu.Lock()
			if err == nil || len(got.Skipped) > 0 {
				s.noteSkipped(target, got.Skipped)
			}
			s.mu.Unlock()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, ScrapeError{target, err})
				return
			}
			samples = append(samples, got.Samples...)
		}()
	}
	wg.Wait()
	return samples, errs
}

func scrapeOne(ctx context.Context, client *http.Client, target string, at time.Time) (DCGMScrape, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return DCGMScrape{}, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	res, err := client.Do(req)
	if err != nil {
		return DCGMScrape{}, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
		return DCGMScrape{}, fmt.Errorf("status %s", res.Status)
	}
	host := req.URL.Hostname()
	return ParseDCGMScrape(res.Body, host, at)
}
