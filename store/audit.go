package store

import (
	"context"
	"encoding/json"
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

// AuditEntry is one recorded change.
type AuditEntry struct {
	ID         int64
	At         time.Time
	ActorID    *int64
	ActorName  string
	Action     string // create, update, delete, login, logout, ...
	Entity     string // user, team, card_type, ...
	EntityID   int64
	Summary    string
	BeforeJSON *string
	AfterJSON  *string
	RemoteIP   string
}

func (AuditEntry) TableName() string { return "audit_log" }

// AuditFilter narrows FindAuditEntries.
type AuditFilter struct {
	Entity   string
	EntityID int64
	ActorID  int64
	Limit    int
	Offset   int
}

// audit writes one entry through tx; before/after are marshalled as JSON and
// must not hold secrets (callers pass views without hashes).
func (s *Store) audit(ctx context.Context, tx *gorm.DB, action, entity string, id int64, summary string, before, after any) error {
	a := ActorFrom(ctx)
	e := AuditEntry{
		At: s.now(), ActorName: a.Username, Action: action, Entity: entity, EntityID: id,
		Summary: truncate(summary, 255), RemoteIP: a.IP,
		BeforeJSON: jsonOrNil(before), AfterJSON: jsonOrNil(after),
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
	var out []string
	if err := s.read(ctx).Model(&AuditEntry{}).Distinct("entity").Order("entity").Pluck("entity", &out).Error; err != nil {
		return nil, translate("store.FindAuditEntities", err)
	}
	return out, nil
}
