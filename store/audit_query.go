package store

import "context"

// FindAuditEntities lists the entity names the audit log holds, so a filter
// offers exactly what can be found, including entities added by later modules.
func (s *Store) FindAuditEntities(ctx context.Context) ([]string, error) {
	var out []string
	if err := s.read(ctx).Model(&AuditEntry{}).Distinct("entity").Order("entity").Pluck("entity", &out).Error; err != nil {
		return nil, translate("store.FindAuditEntities", err)
	}
	return out, nil
}
