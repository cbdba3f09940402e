package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"cardhour/errs"
)

// Lease is who holds a piece of work done once across replicas, and until when.
type Lease struct {
	Name      string    `json:"name"`
	Holder    string    `json:"holder"`
	ExpiresAt time.Time `json:"expires_at"`
	RenewedAt time.Time `json:"renewed_at"`
}

// TableName maps Lease to its table.
func (Lease) TableName() string { return "leases" }

// NewHolder names this process for the leases it takes: its host, its pid
// and a random part (a pid comes back after a restart, in a container
// always the same one).
func NewHolder() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	h := fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
	if len(h) > 191 {
		h = h[len(h)-191:]
	}
	return h
}

// TakeLease takes the lease name for holder for ttl when it is free or has
// lapsed, or renews it when holder has it already; held says whether holder
// has it now. Each attempt is one committed conditional statement (an
// UPDATE, then an INSERT when there is no row yet), never a row lock read
// first nor a server-local named lock, so it also holds on a multi-primary
// Galera cluster: of two nodes writing the row at once, certification
// fails one, which then simply does not hold the lease. Losing a race is
// held=false, not an error.
func (s *Store) TakeLease(ctx context.Context, name, holder string, ttl time.Duration) (held bool, err error) {
	const op = "store.TakeLease"
	if name == "" || holder == "" || ttl <= 0 {
		return false, errs.Internalf(op, "lease %q for %q over %s", name, holder, ttl)
	}
	if s.dialect == SQLite {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	until := now.Add(ttl)
	db := s.db.WithContext(ctx)
	res := db.Exec("UPDATE leases SET holder = ?, expires_at = ?, renewed_at = ? WHERE name = ? AND (holder = ? OR expires_at <= ?)",
		holder, until, now, name, holder, now)
	if res.Error != nil {
		return lostRace(op, res.Error)
	}
	if res.RowsAffected == 1 {
		return true, nil
	}
	ignore := "INSERT IGNORE INTO"
	if s.dialect == SQLite {
		ignore = "INSERT OR IGNORE INTO"
	}
	res = db.Exec(ignore+" leases (name, holder, expires_at, renewed_at) VALUES (?, ?, ?, ?)", name, holder, until, now)
	if res.Error != nil {
		return lostRace(op, res.Error)
	}
	if res.RowsAffected == 1 {
		return true, nil
	}
	// Neither statement changed a row: the lease is another's, or ours and
	// renewed within the same microsecond (MySQL counts changed rows, not
	// matched ones). The row tells which.
	var l Lease
	if err := db.Where("name = ?", name).Limit(1).Find(&l).Error; err != nil {
		return false, translate(op, err)
	}
	return l.Holder == holder && l.ExpiresAt.After(now), nil
}

// lostRace is a write that another holder's write beat (a duplicate key, a
// deadlock, a Galera certification failure): not holding, not an error.
func lostRace(op string, err error) (bool, error) {
	err = translate(op, err)
	if errs.Is(err, errs.Conflict) {
		return false, nil
	}
	return false, err
}

// ReleaseLease gives the lease up when holder has it, so another replica
// takes the work over at once rather than when it lapses.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	if s.dialect == SQLite {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	if err := s.db.WithContext(ctx).Exec("DELETE FROM leases WHERE name = ? AND holder = ?", name, holder).Error; err != nil {
		return translate("store.ReleaseLease", err)
	}
	return nil
}

// FindLeases lists the leases, held or lapsed, by name.
func (s *Store) FindLeases(ctx context.Context) ([]Lease, error) {
	var out []Lease
	if err := s.read(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, translate("store.FindLeases", err)
	}
	for i := range out {
		out[i].ExpiresAt, out[i].RenewedAt = out[i].ExpiresAt.UTC(), out[i].RenewedAt.UTC()
	}
	return out, nil
}
