// Command loadledger times the ledger's pages and exports against a running
// cardhour server, as a manager's browser asks for them: the monthly report
// page, its JSON, CSV and XLSX exports, the yearly baseline and the ledger.
// It signs in through the login form (with the page's CSRF token) and
// requests each URL -runs times, one at a time, and prints the median,
// minimum and maximum time to the last byte. On the same host the network
// adds well under a millisecond, so the figures are the server's.
//
//	go run ./e2e/loadledger -server http://127.0.0.1:8080 -user admin -password … -month 2026-10 -runs 15
//
// The exit status is 1 when any request does not answer 200.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

type result struct {
	Name     string  `json:"name"`
	URL      string  `json:"url"`
	Bytes    int     `json:"bytes"`
	MedianMs float64 `json:"median_ms"`
	MinMs    float64 `json:"min_ms"`
	MaxMs    float64 `json:"max_ms"`
}

func main() {
	server := flag.String("server", "http://127.0.0.1:8080", "base URL of the portal")
	user := flag.String("user", "admin", "a manager or admin")
	password := flag.String("password", os.Getenv("CARDHOUR_ADMIN_PASSWORD"), "their password (default $CARDHOUR_ADMIN_PASSWORD)")
	month := flag.String("month", "", "YYYY-MM (default last month)")
	runs := flag.Int("runs", 15, "requests per URL")
	jsonOut := flag.Bool("json", false, "print the results as JSON")
	flag.Parse()
	if *month == "" {
		*month = time.Now().AddDate(0, -1, 0).Format("2006-01")
	}
	base := strings.TrimRight(*server, "/")
	hc, err := login(base, *user, *password)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadledger:", err)
		os.Exit(1)
	}
	year := (*month)[:4]
	targets := []struct{ name, path string }{
		{"monthly report page", "/reports/monthly?month=" + *month},
		{"monthly report JSON", "/api/v1/reports/monthly?month=" + *month + "&format=json"},
		{"monthly report CSV", "/api/v1/reports/monthly?month=" + *month + "&format=csv"},
		{"monthly report XLSX", "/api/v1/reports/monthly?month=" + *month + "&format=xlsx"},
		{"yearly baseline page", "/reports/yearly?year=" + year},
		{"ledger page", "/ledger?month=" + *month},
	}
	var out []result
	failed := false
	for _, t := range targets {
		r := result{Name: t.name, URL: t.path}
		var ds []float64
		for range *runs {
			t0 := time.Now()
			res, err := hc.Get(base + t.path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "loadledger:", err)
				os.Exit(1)
			}
			n, _ := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			ds = append(ds, float64(time.Since(t0).Microseconds())/1000)
			if res.StatusCode != http.StatusOK {
				fmt.Fprintf(os.Stderr, "loadledger: %s answered %d\n", t.path, res.StatusCode)
				failed = true
			}
			r.Bytes = int(n)
		}
		sort.Float64s(ds)
		r.MedianMs, r.MinMs, r.MaxMs = ds[len(ds)/2], ds[0], ds[len(ds)-1]
		out = append(out, r)
	}
	if *jsonOut {
		_ = json.NewEncoder(os.Stdout).Encode(out)
	} else {
		fmt.Printf("loadledger: %s, %d runs each, month %s\n", base, *runs, *month)
		for _, r := range out {
			fmt.Printf("  %-22s median %8.1f ms  (min %7.1f, max %7.1f)  %9d bytes\n", r.Name, r.MedianMs, r.MinMs, r.MaxMs, r.Bytes)
		}
	}
	if failed {
		os.Exit(1)
	}
}

var csrfInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// login signs in as a browser does and returns a client holding the session.
func login(base, user, password string) (*http.Client, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 2 * time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := hc.Get(base + "/login")
	if err != nil {
		return nil, err
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfInput.FindSubmatch(page)
	if m == nil {
		return nil, fmt.Errorf("the login page has no CSRF token")
	}
	res, err = hc.PostForm(base+"/login", url.Values{"_csrf": {string(m[1])}, "username": {user}, "password": {password}, "next": {"/"}})
	if err != nil {
		return nil, err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("login as %s: status %d", user, res.StatusCode)
	}
	return hc, nil
}
