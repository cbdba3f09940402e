package board

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"cardhour/errs"
	"cardhour/server/request"
	"cardhour/server/scope"
	"cardhour/store"
	"cardhour/telemetry"
)

// maxPushBody bounds one push: nvidia-smi output for a host is a few KiB,
// an agent's catch-up batch a few hundred.
const maxPushBody = 4 << 20

// hostParam is what a host name may look like in ?host= (as in the inventory).
var hostParam = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// pusher is who pushes telemetry: an agent token (bound to the hosts it
// may report), or an admin (nil token), who may report any host.
type pusher struct {
	token *store.APIToken
}

// origin names the pusher for the cap on unregistered cards.
func (p pusher) origin() string {
	if p.token == nil {
		return "admin"
	}
	return "token:" + strconv.FormatInt(p.token.ID, 10)
}

// name is the pusher as an alert names it: the token's name, or an admin.
func (p pusher) name() string {
	if p.token == nil {
		return "admin"
	}
	return p.token.Name
}

// telemetryWriter admits an agent token, or an admin (API token or
// session). Push routes are Public in the table because an agent token is
// no user; this is their gate. A board token, a non-admin's token or no
// credentials at all are refused.
func (a *Area) telemetryWriter(c echo.Context) (pusher, error) {
	const op = "server.telemetryWriter"
	ctx := c.Request().Context()
	if secret, ok := request.BearerToken(c.Request()); ok {
		if t := a.live.tokens.known(secret); t != nil {
			return pusher{token: t}, nil
		}
		if t, err := a.Store.FindTelemetryToken(ctx, store.TokenAgent, secret); err == nil {
			a.live.tokens.remember(secret, t)
			return pusher{token: t}, nil
		} else if !errs.Is(err, errs.Unauthorized) {
			return pusher{}, err
		}
	}
	u, err := request.CurrentUser(c)
	if err != nil {
		return pusher{}, err
	}
	if u == nil {
		return pusher{}, errs.E(errs.Unauthorized, op, "telemetry.token_required")
	}
	if u.Role != store.RoleAdmin {
		return pusher{}, errs.E(errs.Forbidden, op, "telemetry.agent_only")
	}
	return pusher{}, nil
}

// mayReport checks that the pusher may report every host a push names: an
// agent token reports the hosts it is bound to; one bound to none is bound
// to the first it reports. A refusal is an admin's alert as well.
func (a *Area) mayReport(c echo.Context, p pusher, hosts []string) error {
	const op = "server.mayReport"
	if p.token == nil {
		return nil
	}
	ctx := c.Request().Context()
	if len(p.token.Hosts) == 0 && len(hosts) > 0 {
		bound, err := a.Store.BindTokenHost(ctx, p.token.ID, hosts[0])
		if err != nil {
			return err
		}
		p.token.Hosts = bound
		a.live.tokens.forget(p.token)
	}
	for _, h := range hosts {
		if p.token.MayReport(h) {
			continue
		}
		if _, _, err := a.Store.OpenAlert(ctx, store.AlertInput{Kind: store.AlertSpoof,
			Detail: alertDetail{Host: h, Token: p.token.Name, Reason: "host not bound to the token"}}); err != nil {
			return err
		}
		return errs.E(errs.Forbidden, op, "telemetry.host_not_bound", h, strings.Join(p.token.Hosts, ", "))
	}
	return nil
}

// knownElsewhere refuses a push that reports a card the inventory places on
// another host: nothing of it is applied, and the admins are told.
func (a *Area) knownElsewhere(c echo.Context, p pusher, samples []telemetry.Sample) error {
	const op = "server.knownElsewhere"
	s, known, cardID, found := a.live.fleet.Misplaced(samples)
	if !found {
		return nil
	}
	if _, _, err := a.Store.OpenAlert(c.Request().Context(), store.AlertInput{Kind: store.AlertSpoof, CardID: cardID,
		Detail: alertDetail{Host: s.Host, Token: p.name(), UUID: s.UUID, Known: known, Reason: "card registered on another host"}}); err != nil {
		return err
	}
	return errs.E(errs.Conflict, op, "telemetry.host_mismatch", s.UUID, known, s.Host)
}

// accept applies a push whose hosts the pusher may report: refused whole
// if it places a card on the wrong host, else ingested and answered.
func (a *Area) accept(c echo.Context, p pusher, samples []telemetry.Sample, src telemetry.Source, skipped []telemetry.LineError) error {
	if err := a.knownElsewhere(c, p, samples); err != nil {
		return err
	}
	res, err := a.live.ingest(c.Request().Context(), samples, src, p.origin())
	if err != nil {
		return err
	}
	out := pushResult{Accepted: res.Accepted, Unknown: res.Unknown, Ignored: res.Ignored}
	for _, b := range skipped[:min(len(skipped), maxSkippedShown)] {
		out.Skipped = append(out.Skipped, skippedLineOut{b.Line, b.Reason})
	}
	return c.JSON(http.StatusOK, out)
}

func readBody(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxPushBody+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errs.E(errs.TooLarge, "server.readBody", "error.too_large")
		}
		return nil, errs.Wrap(errs.Invalid, "server.readBody", err)
	}
	if len(body) > maxPushBody {
		return nil, errs.E(errs.TooLarge, "server.readBody", "error.too_large")
	}
	return body, nil
}

// pushResult answers a push.
type pushResult struct {
	Accepted int              `json:"accepted"`
	Unknown  int              `json:"unknown"`
	Ignored  int              `json:"ignored"`
	Skipped  []skippedLineOut `json:"skipped_lines,omitempty"`
}

type skippedLineOut struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// apiPushNvidiaSMI takes the raw CSV of the GPU query (with or without
// units and header), optionally followed by a blank line and the CSV of the
// compute-apps query, so `nvidia-smi … | curl --data-binary @- …` is enough.
// A GPU nvidia-smi reports only as an error line ("Unable to determine the
// device handle for GPU 0000:3B:00.0: Unknown Error") is marked faulty
// when the fleet knows which card sits on that bus.
func (a *Area) apiPushNvidiaSMI(c echo.Context) error {
	const op = "server.apiPushNvidiaSMI"
	p, err := a.telemetryWriter(c)
	if err != nil {
		return err
	}
	host := c.QueryParam("host")
	if !hostParam.MatchString(host) {
		return &errs.Error{Code: errs.Invalid, Op: op, Key: "telemetry.host_required", Fields: map[string]string{"host": "telemetry.host_required"}}
	}
	if err := a.mayReport(c, p, []string{host}); err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	now := time.Now()
	parsed, err := telemetry.ParsePush(body, host, now)
	if errors.Is(err, telemetry.ErrNewlinesStripped) {
		return &errs.Error{Code: errs.Invalid, Op: op, Key: "telemetry.newlines_stripped", Err: err}
	}
	samples := parsed.Samples
	skipped := parsed.Skipped
	for _, e := range parsed.GPUErrors {
		s, ok := a.live.fleet.CardOnBus(host, e.BusID)
		if !ok {
			skipped = append(skipped, telemetry.LineError{Line: e.Line, Reason: "nvidia-smi cannot reach GPU " + e.BusID +
				" (" + e.Reason + "), and no card was reported on that bus from this host before"})
			continue
		}
		s.At, s.Fault = now, e.Reason
		samples = append(samples, s)
	}
	slices.SortFunc(skipped, func(x, y telemetry.LineError) int { return x.Line - y.Line })
	if len(samples) == 0 {
		return noSamples(op, skipped)
	}
	return a.accept(c, p, samples, telemetry.SourcePush, skipped)
}

// maxSkippedShown bounds the skipped lines an answer lists.
const maxSkippedShown = 20

// noSamples refuses a push none of whose lines could be used, naming the
// lines skipped and why, so the sender sees what to fix: the message lists
// the first few, the fields each one shown ("line 3": its reason).
func noSamples(op string, skipped []telemetry.LineError) error {
	if len(skipped) == 0 {
		return &errs.Error{Code: errs.Invalid, Op: op, Key: "telemetry.no_samples"}
	}
	const inMessage = 5
	var b strings.Builder
	for i, l := range skipped[:min(len(skipped), inMessage)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(l.Error())
	}
	if len(skipped) > inMessage {
		b.WriteString("; …")
	}
	fields := make(map[string]string, min(len(skipped), maxSkippedShown))
	for _, l := range skipped[:min(len(skipped), maxSkippedShown)] {
		fields["line "+strconv.Itoa(l.Line)] = l.Reason
	}
	return &errs.Error{Code: errs.Invalid, Op: op, Key: "telemetry.no_samples_lines",
		Args: []any{len(skipped), b.String()}, Fields: fields}
}

// maxBatchSamples bounds one agent batch (60 rounds of 16 cards, and more).
const maxBatchSamples = 20000

// apiPushSamples takes an agent's batch: samples already parsed on the
// host, each with the time it was taken.
func (a *Area) apiPushSamples(c echo.Context) error {
	const op = "server.apiPushSamples"
	p, err := a.telemetryWriter(c)
	if err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	var b telemetry.Batch
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return &errs.Error{Code: errs.Invalid, Op: op, Key: "error.bad_json", Args: []any{err.Error()}, Err: err}
	}
	if b.Host != "" && !hostParam.MatchString(b.Host) {
		return &errs.Error{Code: errs.Invalid, Op: op, Key: "telemetry.host_required", Fields: map[string]string{"host": "telemetry.host_required"}}
	}
	if len(b.Samples) == 0 {
		return &errs.Error{Code: errs.Invalid, Op: op, Key: "telemetry.no_samples"}
	}
	if len(b.Samples) > maxBatchSamples {
		return errs.E(errs.TooLarge, op, "error.too_large")
	}
	var hosts []string
	for i := range b.Samples {
		if b.Samples[i].Host == "" || !hostParam.MatchString(b.Samples[i].Host) {
			b.Samples[i].Host = b.Host
		}
		h := b.Samples[i].Host
		if h == "" && p.token != nil {
			// An agent token reports for its hosts only: a sample that names
			// none would slip past that check and the inventory's.
			return &errs.Error{Code: errs.Invalid, Op: op, Key: "telemetry.host_required", Fields: map[string]string{"host": "telemetry.host_required"}}
		}
		if h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	if err := a.mayReport(c, p, hosts); err != nil {
		return err
	}
	return a.accept(c, p, b.Samples, telemetry.SourceAgent, nil)
}

// tokenRequest creates a board or agent token.
type tokenRequest struct {
	Name string `json:"name"`
	// Hosts binds an agent token to the hosts it may report; without it,
	// to the first host it reports.
	Hosts []string `json:"hosts,omitempty"`
}

// telemetryTokenJSON is a token just issued: the secret appears only here.
type telemetryTokenJSON struct {
	ID        int64     `json:"id"`
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	Prefix    string    `json:"prefix"`
	CreatedAt time.Time `json:"created_at"`
	Token     string    `json:"token"`
	BoardURL  string    `json:"board_url,omitempty"`
	Hosts     []string  `json:"hosts,omitempty"`
}

func (a *Area) apiCreateTelemetryToken(kind string) echo.HandlerFunc {
	return func(c echo.Context) error {
		var in tokenRequest
		if err := request.DecodeJSON(c, &in); err != nil {
			return err
		}
		t, secret, err := a.Store.CreateTelemetryToken(c.Request().Context(), kind, in.Name, in.Hosts...)
		if err != nil {
			return err
		}
		out := telemetryTokenJSON{ID: t.ID, Kind: t.Kind, Name: t.Name, Prefix: t.Prefix, CreatedAt: t.CreatedAt, Token: secret, Hosts: t.Hosts}
		if kind == store.TokenBoard {
			out.BoardURL = a.portalURL() + "/board?token=" + secret // a path without CARDHOUR_BASE_URL
		}
		return c.JSON(http.StatusCreated, out)
	}
}

// fleetJSON is the live state as the API returns it.
type fleetJSON struct {
	At      time.Time             `json:"at"`
	Summary telemetry.Summary     `json:"summary"`
	Cards   []telemetry.CardView  `json:"cards"`
	Alerts  []telemetry.AlertView `json:"alerts"`
}

func (a *Area) apiFleet(c echo.Context) error {
	if err := a.live.ensureFresh(c.Request().Context(), 5*time.Second); err != nil {
		return err
	}
	now := time.Now()
	out := fleetJSON{At: now, Summary: a.live.fleet.Summary(now), Cards: a.live.fleet.Snapshot(), Alerts: a.live.openAlerts()}
	if out.Alerts == nil {
		out.Alerts = []telemetry.AlertView{}
	}
	return c.JSON(http.StatusOK, out)
}

// apiBookingUsage is a booking's used and idle card-hours.
func (a *Area) apiBookingUsage(c echo.Context) error {
	id, err := request.PathID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// Only someone who may see the booking sees its usage.
	if _, err := scope.Booking(c, a.Store, id); err != nil {
		return err
	}
	u, err := a.Store.FindBookingUsage(ctx, id)
	if err != nil {
		return err
	}
	alerts, err := a.Store.FindBookingAlerts(ctx, id)
	if err != nil {
		return err
	}
	if alerts == nil {
		alerts = []store.AlertView{}
	}
	return c.JSON(http.StatusOK, bookingUsageJSON{u, alerts})
}

// bookingUsageJSON is a booking's usage with its alerts.
type bookingUsageJSON struct {
	*store.BookingUsage
	Alerts []store.AlertView `json:"alerts"`
}

// tokenCache remembers agent tokens found valid for a short while, so a
// fleet pushing every second does not cost a database read per push. A
// revocation (here, or on another replica through the cluster) clears it
// at once; without that news — Redis away — a revoked token keeps working
// for up to tokenCacheTTL.
type tokenCache struct {
	mu     sync.Mutex
	tokens map[string]cachedToken // hash of the secret → the token
}

type cachedToken struct {
	token *store.APIToken
	until time.Time
}

const tokenCacheTTL = 15 * time.Second

func (tc *tokenCache) known(secret string) *store.APIToken {
	h := store.HashSecret(secret)
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if e, ok := tc.tokens[h]; ok && time.Now().Before(e.until) {
		t := *e.token
		return &t
	}
	return nil
}

func (tc *tokenCache) remember(secret string, t *store.APIToken) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.tokens == nil || len(tc.tokens) > 4096 {
		tc.tokens = map[string]cachedToken{}
	}
	c := *t
	tc.tokens[store.HashSecret(secret)] = cachedToken{token: &c, until: time.Now().Add(tokenCacheTTL)}
}

// clear drops every token: one was revoked, here or on another replica.
func (tc *tokenCache) clear() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	clear(tc.tokens)
}

// forget drops a token whose hosts changed, so the next push reads them.
func (tc *tokenCache) forget(t *store.APIToken) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for h, e := range tc.tokens {
		if e.token.ID == t.ID {
			delete(tc.tokens, h)
		}
	}
}
