package store

import (
	"context"
	"encoding/json"
	"strings"

	"gorm.io/gorm"

	"cardhour/errs"
)

// DirectorySyncResult is one round of the periodic directory sync.
type DirectorySyncResult struct {
	Provider string `json:"provider"`
	// Checked accounts were looked up; Changed had their groups applied
	// with a change; Disabled were gone from the directory; Failed could
	// not be checked.
	Checked  int `json:"checked"`
	Changed  int `json:"changed"`
	Disabled int `json:"disabled"`
	Failed   int `json:"failed"`
	// Err is why the round could not run, "" when it did.
	Err string `json:"err,omitempty"`
}

// syncErrWidth bounds the error kept with a round: the directory's message
// is for the admin, not a log dump.
const syncErrWidth = 500

// RecordDirectorySync audits a round of the sync (directory_sync). The
// entry's stored summary is the provider, which LastDirectorySync finds
// it by; it is shown through its message key.
func (s *Store) RecordDirectorySync(ctx context.Context, r DirectorySyncResult) error {
	const op = "store.RecordDirectorySync"
	r.Provider = strings.ToLower(strings.TrimSpace(r.Provider))
	r.Err = truncate(r.Err, syncErrWidth)
	provider := argKey("directory.provider." + r.Provider)
	n := auditMsg("audit.sum.directory_sync", provider, argText(r.Checked), argText(r.Changed), argText(r.Disabled), argText(r.Failed))
	if r.Err != "" {
		n = auditMsg("audit.sum.directory_sync_failed", provider, argText(r.Err))
	}
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		return s.writeAudit(ctx, tx, "directory_sync", "directory", 0, r.Provider, n, nil, r)
	})
}

// LastDirectorySync is the newest sync round of the provider (NotFound when
// there was none); DirectorySyncOf reads its result.
func (s *Store) LastDirectorySync(ctx context.Context, provider string) (*AuditEntry, error) {
	const op = "store.LastDirectorySync"
	var e AuditEntry
	err := s.read(ctx).Where("action = ? AND entity = ? AND summary = ?", "directory_sync", "directory", strings.ToLower(provider)).
		Order("id DESC").First(&e).Error
	if err != nil {
		return nil, withKey(translate(op, err), "directory.no_sync")
	}
	return &e, nil
}

// DirectorySyncOf is the result a directory_sync entry recorded.
func DirectorySyncOf(e *AuditEntry) (DirectorySyncResult, error) {
	var r DirectorySyncResult
	if e == nil || e.AfterJSON == nil {
		return r, errs.E(errs.NotFound, "store.DirectorySyncOf", "directory.no_sync")
	}
	if err := json.Unmarshal([]byte(*e.AfterJSON), &r); err != nil {
		return r, errs.Internalf("store.DirectorySyncOf", "decode: %w", err)
	}
	return r, nil
}
