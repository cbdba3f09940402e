-- +goose Up
-- Renewal and adjustment requests on a quota ("提前续或调"): a manager, or a
-- member with a core task in the team, asks; an admin approves (the asked
-- values are applied to the quota) or refuses with a note.
--
-- The asked values are NULL where the request leaves the quota's value as
-- it is; kind is renew or adjust, state pending, approved or refused
-- (checked by the store, as on MySQL, which has no CHECK on 5.7).
CREATE TABLE quota_requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  quota_id BIGINT NOT NULL,
  team_id BIGINT NOT NULL,
  requested_by BIGINT NOT NULL,
  kind TEXT NOT NULL,
  card_seconds BIGINT NULL,
  max_cards INTEGER NULL,
  expires_at DATETIME NULL,
  reason TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  decided_by BIGINT NULL,
  decided_at DATETIME NULL,
  decision_note TEXT NOT NULL DEFAULT '',
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (quota_id) REFERENCES quotas (id) ON DELETE CASCADE,
  FOREIGN KEY (team_id) REFERENCES teams (id),
  FOREIGN KEY (requested_by) REFERENCES users (id),
  FOREIGN KEY (decided_by) REFERENCES users (id)
);
CREATE INDEX ix_quota_requests_state ON quota_requests (state, quota_id);
CREATE INDEX ix_quota_requests_quota ON quota_requests (quota_id);
CREATE INDEX ix_quota_requests_team ON quota_requests (team_id);
CREATE INDEX ix_quota_requests_requested_by ON quota_requests (requested_by);
CREATE INDEX ix_quota_requests_decided_by ON quota_requests (decided_by);

-- +goose Down
DROP TABLE quota_requests;
