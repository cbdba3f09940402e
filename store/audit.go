package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Actor is who makes a change; every mutating method records it in the
// audit log inside the same transaction as the change itself.
type Actor struct {
	UserID   int64
	Username string
	IP       string
	// Role, when set, is the site role the caller loaded with the user for
	// this very request; the store then trusts it instead of reading the
	// user again inside its transactions.
	Role string
}

type actorKey struct{}

// WithActor attaches the acting user to ctx.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// orTelemetry names the telemetry as the actor of ctx's changes, unless
// ctx names an actor already.
func orTelemetry(ctx context.Context) context.Context {
	if _, ok := ctx.Value(actorKey{}).(Actor); ok {
		return ctx
	}
	return WithActor(ctx, Actor{Username: "telemetry"})
}

// ActorFrom returns the actor in ctx; changes made by the system itself
// (start-up seeding) carry the name "system".
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return Actor{Username: "system"}
}

// AuditEntry is one recorded change. Its summary is either words of the
// catalogue, SummaryKey with its arguments, translated when shown, or (for
// entries from before the keys, and for a bare name) the stored Summary.
type AuditEntry struct {
	ID          int64
	At          time.Time
	ActorID     *int64
	ActorName   string
	Action      string // create, update, delete, login, logout, ...
	Entity      string // user, team, card_type, ...
	EntityID    int64
	Summary     string
	SummaryKey  string
	SummaryArgs *string // JSON of []AuditArg
	BeforeJSON  *string
	AfterJSON   *string
	RemoteIP    string
}

func (AuditEntry) TableName() string { return "audit_log" }

// AuditArg is one argument of a keyed summary: text shown as it is (a name,
// a number), a message key translated in the reader's language (a state, a
// kind), or a time shown in the reader's zone.
type AuditArg struct {
	Text string     `json:"v,omitempty"`
	Key  string     `json:"k,omitempty"`
	Time *time.Time `json:"t,omitempty"`
}

// Args decodes the summary's arguments; nil when it has none or they do
// not parse (the summary is then shown without them rather than not at all).
func (e AuditEntry) Args() []AuditArg {
	if e.SummaryArgs == nil {
		return nil
	}
	var out []AuditArg
	if json.Unmarshal([]byte(*e.SummaryArgs), &out) != nil {
		return nil
	}
	return out
}

// auditNote is a summary in the catalogue's words, for the reader's
// language: the store keeps no language of its own.
type auditNote struct {
	key  string
	args []AuditArg
}

func auditMsg(key string, args ...AuditArg) auditNote { return auditNote{key: key, args: args} }

// argText is an argument shown as it is.
func argText(v any) AuditArg { return AuditArg{Text: fmt.Sprint(v)} }

// argKey is an argument translated when shown.
func argKey(key string) AuditArg { return AuditArg{Key: key} }

// argTime is a time shown in the reader's zone.
func argTime(t time.Time) AuditArg { t = t.UTC(); return AuditArg{Time: &t} }

// AuthActions are the audit actions of signing in and out: frequent, and
// read for other reasons than changes, so the log shows them apart.
var AuthActions = []string{"login", "logout", "login_failed"}

// AuditFilter narrows FindAuditEntries. Zero values do not filter.
type AuditFilter struct {
	Entity        string
	EntityID      int64
	ActorID       int64
	ActorName     string
	Actions       []string // any of these
	ExceptActions []string // none of these
	From, Before  time.Time
	Limit         int
	Offset        int
}

// audit writes one entry through tx; before/after are marshalled as JSON and
// must not hold secrets (callers pass views without hashes). summary is
// text shown as it is: a name, a UUID; words go through auditNoted.
func (s *Store) audit(ctx context.Context, tx *gorm.DB, action, entity string, id int64, summary string, before, after any) error {
	return s.writeAudit(ctx, tx, action, entity, id, summary, auditNote{}, before, after)
}

// auditNoted is audit with a summary in the catalogue's words.
func (s *Store) auditNoted(ctx context.Context, tx *gorm.DB, action, entity string, id int64, n auditNote, before, after any) error {
	return s.writeAudit(ctx, tx, action, entity, id, "", n, before, after)
}

func (s *Store) writeAudit(ctx context.Context, tx *gorm.DB, action, entity string, id int64, summary string, n auditNote, before, after any) error {
	a := ActorFrom(ctx)
	e := AuditEntry{
		At: s.now(), ActorName: a.Username, Action: action, Entity: entity, EntityID: id,
		Summary: truncate(summary, 255), RemoteIP: a.IP,
		BeforeJSON: jsonOrNil(before), AfterJSON: jsonOrNil(after),
	}
	if n.key != "" {
		e.SummaryKey = n.key
		if len(n.args) > 0 {
			e.SummaryArgs = jsonOrNil(n.args)
		}
	}
	if a.UserID != 0 {
		uid := a.UserID
		e.ActorID = &uid
	}
	if w := deferredWrites(tx); w != nil {
		if id < 0 {
			// A booking whose insert is deferred: its id and its JSON are
			// known when it is written.
			e.BeforeJSON, e.AfterJSON = nil, nil
			w.audits = append(w.audits, deferredAudit{entry: e, after: after})
		} else {
			w.audits = append(w.audits, deferredAudit{entry: e})
		}
		return nil
	}
	return tx.Create(&e).Error
}

// RecordEvent audits something that is not a row change, such as a login.
func (s *Store) RecordEvent(ctx context.Context, action, entity string, id int64, summary string) error {
	return s.tx(ctx, "store.RecordEvent", func(tx *gorm.DB) error {
		return s.audit(ctx, tx, action, entity, id, summary, nil, nil)
	})
}

// FindAuditEntries lists entries newest first, with the total count.
func (s *Store) FindAuditEntries(ctx context.Context, f AuditFilter) ([]AuditEntry, int64, error) {
	q := s.auditQuery(ctx, f)
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, translate("store.FindAuditEntries", err)
	}
	var out []AuditEntry
	if err := q.Order("id DESC").Limit(limitOr(f.Limit, 50)).Offset(f.Offset).Find(&out).Error; err != nil {
		return nil, 0, translate("store.FindAuditEntries", err)
	}
	return out, total, nil
}

// auditQuery is the filter's WHERE.
func (s *Store) auditQuery(ctx context.Context, f AuditFilter) *gorm.DB {
	q := s.read(ctx).Model(&AuditEntry{})
	if f.Entity != "" {
		q = q.Where("entity = ?", f.Entity)
	}
	if f.EntityID != 0 {
		q = q.Where("entity_id = ?", f.EntityID)
	}
	if f.ActorID != 0 {
		q = q.Where("actor_id = ?", f.ActorID)
	}
	if f.ActorName != "" {
		q = q.Where("actor_name = ?", f.ActorName)
	}
	if len(f.Actions) > 0 {
		q = q.Where("action IN ?", f.Actions)
	}
	if len(f.ExceptActions) > 0 {
		q = q.Where("action NOT IN ?", f.ExceptActions)
	}
	if !f.From.IsZero() {
		q = q.Where("at >= ?", f.From.UTC())
	}
	if !f.Before.IsZero() {
		q = q.Where("at < ?", f.Before.UTC())
	}
	return q
}

func jsonOrNil(v any) *string {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	s := string(b)
	return &s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

func limitOr(limit, def int) int {
	if limit <= 0 || limit > 1000 {
		return def
	}
	return limit
}

// FindAuditEntities lists the entity names the audit log holds, so a filter
// offers exactly what can be found, including entities added by later modules.
func (s *Store) FindAuditEntities(ctx context.Context) ([]string, error) {
	return s.auditDistinct(ctx, "store.FindAuditEntities", "entity", AuditFilter{})
}

// FindAuditActions lists the actions of the entries f lets through (the
// changes, or the sign-ins), for the action filter.
func (s *Store) FindAuditActions(ctx context.Context, f AuditFilter) ([]string, error) {
	return s.auditDistinct(ctx, "store.FindAuditActions", "action", f)
}

// FindAuditActors lists who acted in the entries f lets through, by name:
// the system's own actors (system, telemetry, demo, cli) have no user id.
func (s *Store) FindAuditActors(ctx context.Context, f AuditFilter) ([]string, error) {
	return s.auditDistinct(ctx, "store.FindAuditActors", "actor_name", f)
}

func (s *Store) auditDistinct(ctx context.Context, op, col string, f AuditFilter) ([]string, error) {
	var out []string
	if err := s.auditQuery(ctx, f).Distinct(col).Order(col).Pluck(col, &out).Error; err != nil {
		return nil, translate(op, err)
	}
	return out, nil
}
