package store

import (
	"context"

	"cardhour/errs"
)

// FindQuotaByID returns one quota with its names and use, for the quota
// edit page.
func (s *Store) FindQuotaByID(ctx context.Context, id int64) (*QuotaView, error) {
	const op = "store.FindQuotaByID"
	var q Quota
	if err := s.read(ctx).First(&q, id).Error; err != nil {
		return nil, withKey(translate(op, err), "quota.not_found")
	}
	// The team's quotas of the type are few; FindQuotas already knows how
	// to name them and sum their use.
	vs, err := s.FindQuotas(ctx, QuotaFilter{TeamIDs: []int64{q.TeamID}, CardTypeID: q.CardTypeID})
	if err != nil {
		return nil, err
	}
	for i := range vs {
		if vs[i].ID == id {
			return &vs[i], nil
		}
	}
	return nil, errs.E(errs.NotFound, op, "quota.not_found")
}
