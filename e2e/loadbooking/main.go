// Command loadbooking measures booking throughput against a running
// cardhour server and checks the result for double bookings.
//
// Given an admin API token it creates its own fixtures through the API — a
// card type LOAD-<ts>, a host with -cards cards, a team, a member (whose
// token it obtains by logging in as a browser would), a quota large enough
// and a task — then runs -clients concurrent clients for -duration, each
// booking one card for a short random window in the next -days days. Most
// windows do not collide; -hot of the requests aim at one hour that fills
// at once, so conflicts are part of the load. At the end it reads every
// booking of the card type back through the API and checks that no card is
// held by two overlapping bookings.
//
//	go run ./e2e/loadbooking -server http://127.0.0.1:8080 -token cht_… -clients 64 -duration 20s -cards 16
//
// -server takes several portals, comma-separated (replicas on one
// database): each booking request goes to the next one in turn, so one
// run drives one replica or three.
//
// By default each client sends its next request as soon as the last one is
// answered (closed loop): the figure is the most the server sustains, and
// the latency includes the queue in front of the booking lock. With -rate,
// the clients together send that many requests a second on a fixed
// schedule (open loop) and each latency counts from the moment its request
// was due, so a server falling behind shows as latency instead of being
// hidden by clients that simply wait.
//
// The summary tells conflicts (409: no free card, or the quota) apart from
// busy answers (503 or code unavailable: the server gave up waiting, e.g.
// for the booking lock) and other failures. The exit status is 1 when a
// double booking, a failure that is neither, or a mismatch between the
// bookings made and those read back is found.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// errorCode is the code of a JSON error answer, "" for any other body.
func errorCode(raw []byte) string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	return e.Error.Code
}

type options struct {
	server   string
	servers  []string
	token    string
	clients  int
	duration time.Duration
	cards    int
	days     int
	minLen   time.Duration
	maxLen   time.Duration
	hot      float64
	rate     float64
	jsonOut  bool
}

func main() {
	var o options
	flag.StringVar(&o.server, "server", "http://127.0.0.1:8080", "base URL of the portal; several, comma-separated, take the booking requests in turn")
	flag.StringVar(&o.token, "token", os.Getenv("CARDHOUR_TOKEN"), "an admin's API token (default $CARDHOUR_TOKEN)")
	flag.IntVar(&o.clients, "clients", 64, "concurrent clients")
	flag.DurationVar(&o.duration, "duration", 20*time.Second, "how long to book")
	flag.IntVar(&o.cards, "cards", 16, "cards in the pool")
	flag.IntVar(&o.days, "days", 14, "bookings fall in the next this many days")
	flag.DurationVar(&o.minLen, "min", 5*time.Minute, "shortest booking")
	flag.DurationVar(&o.maxLen, "max", 30*time.Minute, "longest booking")
	flag.Float64Var(&o.hot, "hot", 0.1, "share of requests aimed at one contested hour")
	flag.BoolVar(&o.jsonOut, "json", false, "print the summary as one JSON object")
	flag.Float64Var(&o.rate, "rate", 0, "requests per second from all clients together on a fixed schedule (open loop); 0 sends back to back")
	flag.Parse()
	if o.token == "" {
		fmt.Fprintln(os.Stderr, "loadbooking: -token (an admin's API token) is required; issue one with `cardhour token --user admin`")
		os.Exit(2)
	}
	for _, u := range strings.Split(o.server, ",") {
		if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
			o.servers = append(o.servers, u)
		}
	}
	if len(o.servers) == 0 {
		fmt.Fprintln(os.Stderr, "loadbooking: -server names no portal")
		os.Exit(2)
	}
	o.server = o.servers[0] // fixtures and the read-back go to the first
	sum, err := run(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbooking:", err)
		os.Exit(1)
	}
	if o.jsonOut {
		_ = json.NewEncoder(os.Stdout).Encode(sum)
	} else {
		sum.print(os.Stdout)
	}
	if sum.DoubleBookings > 0 || sum.Errors > 0 || sum.ReadBack != sum.Booked {
		os.Exit(1)
	}
}

// summary is what a run measured.
type summary struct {
	Server         string         `json:"server"`
	CardType       string         `json:"card_type"`
	Clients        int            `json:"clients"`
	Rate           float64        `json:"rate,omitempty"` // offered requests/s; 0 = closed loop
	Cards          int            `json:"cards"`
	Seconds        float64        `json:"seconds"`
	Requests       int            `json:"requests"`
	Booked         int            `json:"booked"`
	Conflicts      int            `json:"conflicts"`
	Busy           int            `json:"busy"`
	Errors         int            `json:"errors"`
	PerServer      map[string]int `json:"per_server,omitempty"` // requests sent to each
	Statuses       map[string]int `json:"statuses"`
	BookingsPerSec float64        `json:"bookings_per_s"`
	RequestsPerSec float64        `json:"requests_per_s"`
	ConflictRate   float64        `json:"conflict_rate"`
	P50ms          float64        `json:"p50_ms"`
	P90ms          float64        `json:"p90_ms"`
	P99ms          float64        `json:"p99_ms"`
	MaxMs          float64        `json:"max_ms"`
	ReadBack       int            `json:"read_back"`
	DoubleBookings int            `json:"double_bookings"`
	FirstError     string         `json:"first_error,omitempty"`
}

func (s summary) print(w io.Writer) {
	fmt.Fprintf(w, "loadbooking: %d clients for %.1f s on %d cards of %s at %s\n", s.Clients, s.Seconds, s.Cards, s.CardType, s.Server)
	if len(s.PerServer) > 1 {
		fmt.Fprintf(w, "  per server      %v\n", s.PerServer)
	}
	if s.Rate > 0 {
		fmt.Fprintf(w, "  open loop       %.0f requests/s offered; latency counts from when each was due\n", s.Rate)
	}
	fmt.Fprintf(w, "  requests        %7d  %8.1f/s\n", s.Requests, s.RequestsPerSec)
	fmt.Fprintf(w, "  booked (201)    %7d  %8.1f/s\n", s.Booked, s.BookingsPerSec)
	fmt.Fprintf(w, "  conflict (409)  %7d  %7.1f %%  (no free card, or the quota)\n", s.Conflicts, 100*s.ConflictRate)
	fmt.Fprintf(w, "  busy            %7d  (503 / unavailable: the server gave up waiting)\n", s.Busy)
	fmt.Fprintf(w, "  other failures  %7d  %v\n", s.Errors, s.Statuses)
	fmt.Fprintf(w, "  latency ms      p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", s.P50ms, s.P90ms, s.P99ms, s.MaxMs)
	verdict := "OK"
	if s.DoubleBookings > 0 || s.ReadBack != s.Booked {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "  verify          %d of %d bookings read back, %d double bookings: %s\n", s.ReadBack, s.Booked, s.DoubleBookings, verdict)
	if s.FirstError != "" {
		fmt.Fprintf(w, "  first error     %s\n", s.FirstError)
	}
}

// client talks JSON to the portal with one token.
type client struct {
	base  string
	token string
	hc    *http.Client
}

func (c *client) do(ctx context.Context, method, path string, body, out any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, nil, err
	}
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return res.StatusCode, raw, fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return res.StatusCode, raw, nil
}

// must is do that wants one status.
func (c *client) must(ctx context.Context, method, path string, body, out any, want int) error {
	status, raw, err := c.do(ctx, method, path, body, out)
	if err != nil {
		return err
	}
	if status != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, status, want, bytes.TrimSpace(raw))
	}
	return nil
}

type idOnly struct {
	ID int64 `json:"id"`
}

// fixtures are what setup created.
type fixtures struct {
	cardType string
	typeID   int64
	taskID   int64
	member   *client
}

func setup(ctx context.Context, o options, admin *client) (*fixtures, error) {
	ts := time.Now().UTC().Format("20060102150405")
	f := &fixtures{cardType: "LOAD-" + ts}
	var ct, host, team, user idOnly
	if err := admin.must(ctx, http.MethodPost, "/api/v1/card-types", map[string]any{
		"name": f.cardType, "vram_gib": 80, "tflops_bf16": 989, "price_fen": 1000}, &ct, http.StatusCreated); err != nil {
		return nil, err
	}
	f.typeID = ct.ID
	if err := admin.must(ctx, http.MethodPost, "/api/v1/hosts", map[string]any{"name": "load-" + ts, "zone": "load"}, &host, http.StatusCreated); err != nil {
		return nil, err
	}
	for i := 0; i < o.cards; i++ {
		uuid := fmt.Sprintf("GPU-LOAD%s-%04d-0000-0000-000000000000", ts, i)
		if err := admin.must(ctx, http.MethodPost, "/api/v1/cards", map[string]any{
			"uuid": uuid, "index": i, "host_id": host.ID, "card_type_id": ct.ID}, nil, http.StatusCreated); err != nil {
			return nil, err
		}
	}
	if err := admin.must(ctx, http.MethodPost, "/api/v1/teams", map[string]any{"name": "load-" + ts}, &team, http.StatusCreated); err != nil {
		return nil, err
	}
	username, password := "load-"+ts, fmt.Sprintf("load-pw-%x", rand.Uint64())
	if err := admin.must(ctx, http.MethodPost, "/api/v1/users", map[string]any{
		"username": username, "password": password, "role": "member"}, &user, http.StatusCreated); err != nil {
		return nil, err
	}
	if err := admin.must(ctx, http.MethodPut, fmt.Sprintf("/api/v1/teams/%d/members/%d", team.ID, user.ID),
		map[string]any{"role": "member"}, nil, http.StatusOK); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	if err := admin.must(ctx, http.MethodPost, "/api/v1/quotas", map[string]any{
		"team": team.ID, "card_type": ct.ID, "card_hours": 10_000_000, "max_cards": 0,
		"valid_from": now.Add(-time.Hour).Format(time.RFC3339),
		"expires_at": now.Add(time.Duration(o.days+30) * 24 * time.Hour).Format(time.RFC3339)}, nil, http.StatusCreated); err != nil {
		return nil, err
	}
	token, err := memberToken(ctx, o.server, username, password)
	if err != nil {
		return nil, fmt.Errorf("the member's token: %w", err)
	}
	f.member = &client{base: admin.base, token: token, hc: admin.hc}
	var task idOnly
	if err := f.member.must(ctx, http.MethodPost, "/api/v1/tasks", map[string]any{
		"team": team.ID, "name": "load", "priority": "normal", "estimate_card_hours": 100000,
		"data_readiness": "ready", "vram_gib": 40, "precision": "bf16", "card_types": []int64{ct.ID}}, &task, http.StatusCreated); err != nil {
		return nil, err
	}
	f.taskID = task.ID
	return f, nil
}

var (
	csrfInput = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)
	newToken  = regexp.MustCompile(`data-testid="new-token"[^>]*>([^<]+)<`)
)

// memberToken logs in through the login form, as a browser does, and
// creates an API token on the account page: there is no API to issue a
// token for someone else, by design.
func memberToken(ctx context.Context, base, username, password string) (string, error) {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(path string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		res, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return string(b), err
	}
	post := func(path string, v url.Values) (int, string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, string(b), err
	}
	page, err := get("/login")
	if err != nil {
		return "", err
	}
	m := csrfInput.FindStringSubmatch(page)
	if m == nil {
		return "", errors.New("the login page has no _csrf field")
	}
	if _, _, err := post("/login", url.Values{"_csrf": {m[1]}, "username": {username}, "password": {password}, "next": {"/account"}}); err != nil {
		return "", err
	}
	page, err = get("/account")
	if err != nil {
		return "", err
	}
	if m = csrfInput.FindStringSubmatch(page); m == nil {
		return "", errors.New("not logged in: the account page has no form")
	}
	status, page, err := post("/account/tokens", url.Values{"_csrf": {m[1]}, "name": {"loadbooking"}})
	if err != nil {
		return "", err
	}
	t := newToken.FindStringSubmatch(page)
	if t == nil {
		return "", fmt.Errorf("POST /account/tokens: status %d and no token on the page", status)
	}
	return strings.TrimSpace(t[1]), nil
}

// result is one booking request's outcome.
type result struct {
	status  int
	busy    bool
	server  string
	latency time.Duration
	id      int64
	err     string
}

func run(ctx context.Context, o options) (summary, error) {
	tr := &http.Transport{MaxIdleConns: o.clients * 2, MaxIdleConnsPerHost: o.clients * 2, IdleConnTimeout: time.Minute}
	hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	admin := &client{base: o.server, token: o.token, hc: hc}
	f, err := setup(ctx, o, admin)
	if err != nil {
		return summary{}, fmt.Errorf("setting up fixtures: %w", err)
	}

	// Windows start at whole five minutes from the next hour on, so some
	// requests meet; the hot hour is tomorrow at ten.
	origin := time.Now().UTC().Truncate(time.Hour).Add(time.Hour)
	span := time.Duration(o.days)*24*time.Hour - time.Hour - o.maxLen
	hotStart := origin.Add(24 * time.Hour).Truncate(24 * time.Hour).Add(10 * time.Hour)
	const step = 5 * time.Minute

	results := make([][]result, o.clients)
	// Booking requests go to the portals in turn.
	var turn atomic.Uint64
	members := make([]*client, len(o.servers))
	for i, u := range o.servers {
		members[i] = &client{base: u, token: f.member.token, hc: hc}
	}
	deadline := time.Now().Add(o.duration)
	var wg sync.WaitGroup
	began := time.Now()
	// Open loop: a schedule of due times; a client takes the next one and
	// waits for it, and the latency counts from it.
	var due chan time.Time
	if o.rate > 0 {
		due = make(chan time.Time, o.clients)
		go func() {
			defer close(due)
			interval := time.Duration(float64(time.Second) / o.rate)
			for t := began; t.Before(deadline); t = t.Add(interval) {
				due <- t
			}
		}()
	}
	for i := 0; i < o.clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i)+1, uint64(began.UnixNano())))
			for time.Now().Before(deadline) {
				sendAt := time.Time{}
				if due != nil {
					t, ok := <-due
					if !ok {
						break
					}
					if d := time.Until(t); d > 0 {
						time.Sleep(d)
					}
					sendAt = t
				}
				var start time.Time
				length := o.minLen + time.Duration(rng.Int64N(int64(o.maxLen-o.minLen)/int64(step)+1))*step
				if rng.Float64() < o.hot {
					start = hotStart.Add(time.Duration(rng.IntN(4)) * 15 * time.Minute)
				} else {
					start = origin.Add(time.Duration(rng.Int64N(int64(span)/int64(step))) * step)
				}
				body := map[string]any{"task_id": f.taskID, "card_type": f.cardType, "count": 1,
					"start": start.Format(time.RFC3339), "end": start.Add(length).Format(time.RFC3339)}
				var out struct {
					ID    int64    `json:"id"`
					Cards []string `json:"cards"`
				}
				t0 := time.Now()
				if !sendAt.IsZero() {
					t0 = sendAt
				}
				member := members[(turn.Add(1)-1)%uint64(len(members))]
				status, raw, err := member.do(ctx, http.MethodPost, "/api/v1/bookings", body, &out)
				r := result{status: status, latency: time.Since(t0), id: out.ID, server: member.base}
				switch {
				case err == nil && (status == http.StatusServiceUnavailable || errorCode(raw) == "unavailable"):
					r.busy = true
					r.err = fmt.Sprintf("status %d: %s", status, bytes.TrimSpace(raw))
				case err != nil:
					r.err = err.Error()
				case status == http.StatusCreated && len(out.Cards) != 1:
					r.err = fmt.Sprintf("201 with %d cards", len(out.Cards))
				case status != http.StatusCreated && status != http.StatusConflict:
					r.err = fmt.Sprintf("status %d: %s", status, bytes.TrimSpace(raw))
				}
				results[i] = append(results[i], r)
			}
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(began)

	s := summary{Server: strings.Join(o.servers, ","), CardType: f.cardType, Clients: o.clients, Rate: o.rate, Cards: o.cards,
		Seconds: elapsed.Seconds(), Statuses: map[string]int{}, PerServer: map[string]int{}}
	var lat []time.Duration
	made := map[int64]bool{}
	for _, rs := range results {
		for _, r := range rs {
			s.Requests++
			s.PerServer[r.server]++
			lat = append(lat, r.latency)
			switch {
			case r.busy:
				s.Busy++
			case r.err != "":
				s.Errors++
				s.Statuses[fmt.Sprint(r.status)]++
				if s.FirstError == "" {
					s.FirstError = r.err
				}
			case r.status == http.StatusCreated:
				s.Booked++
				made[r.id] = true
			default:
				s.Conflicts++
			}
		}
	}
	if s.Requests > 0 {
		s.BookingsPerSec = float64(s.Booked) / elapsed.Seconds()
		s.RequestsPerSec = float64(s.Requests) / elapsed.Seconds()
		s.ConflictRate = float64(s.Conflicts) / float64(s.Requests)
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		q := func(p float64) float64 {
			return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
		}
		s.P50ms, s.P90ms, s.P99ms, s.MaxMs = q(0.50), q(0.90), q(0.99), q(1)
	}

	bookings, err := readBack(ctx, admin, f.typeID, origin.Add(-time.Hour), origin.Add(time.Duration(o.days+1)*24*time.Hour))
	if err != nil {
		return s, fmt.Errorf("reading the bookings back: %w", err)
	}
	for _, b := range bookings {
		if made[b.ID] {
			s.ReadBack++
		}
	}
	s.DoubleBookings = doubleBookings(bookings)
	return s, nil
}

// booking is what the check needs of a booking read back.
type booking struct {
	ID      int64     `json:"id"`
	State   string    `json:"state"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	EndedAt time.Time `json:"ended_at"`
	Cards   []string  `json:"cards"`
}

// readBack lists every booking of the card type that holds cards in
// [from, to), a window at a time: one answer holds at most 1000, so a
// window that comes back full is split in two.
func readBack(ctx context.Context, c *client, typeID int64, from, to time.Time) ([]booking, error) {
	const limit = 1000
	seen := map[int64]booking{}
	var walk func(from, to time.Time) error
	walk = func(from, to time.Time) error {
		q := url.Values{"card_type": {fmt.Sprint(typeID)}, "state": {"confirmed,active,completed,released,preempted"},
			"from": {from.Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "limit": {fmt.Sprint(limit)}}
		var out struct {
			Bookings []booking `json:"bookings"`
		}
		if err := c.must(ctx, http.MethodGet, "/api/v1/bookings?"+q.Encode(), nil, &out, http.StatusOK); err != nil {
			return err
		}
		if len(out.Bookings) >= limit {
			if to.Sub(from) <= time.Minute {
				return fmt.Errorf("more than %d bookings within a minute at %s", limit, from)
			}
			mid := from.Add(to.Sub(from) / 2).Truncate(time.Second)
			if err := walk(from, mid); err != nil {
				return err
			}
			return walk(mid, to)
		}
		for _, b := range out.Bookings {
			seen[b.ID] = b
		}
		return nil
	}
	if err := walk(from, to); err != nil {
		return nil, err
	}
	out := make([]booking, 0, len(seen))
	for _, b := range seen {
		out = append(out, b)
	}
	return out, nil
}

// doubleBookings counts pairs of bookings holding one card at once.
func doubleBookings(bs []booking) int {
	type span struct {
		start, end time.Time
		id         int64
	}
	byCard := map[string][]span{}
	for _, b := range bs {
		end := b.End
		if !b.EndedAt.IsZero() && b.EndedAt.Before(end) && b.State != "completed" {
			end = b.EndedAt
		}
		for _, c := range b.Cards {
			byCard[c] = append(byCard[c], span{b.Start, end, b.ID})
		}
	}
	n := 0
	for card, spans := range byCard {
		sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
		// Spans sorted by start overlap iff one starts before the latest end so far.
		var last span
		for i, sp := range spans {
			if i > 0 && sp.start.Before(last.end) {
				n++
				fmt.Fprintf(os.Stderr, "loadbooking: card %s held by bookings %d and %d at once\n", card, last.id, sp.id)
			}
			if i == 0 || sp.end.After(last.end) {
				last = sp
			}
		}
	}
	return n
}
