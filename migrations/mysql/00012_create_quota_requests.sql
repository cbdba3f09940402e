-- +goose Up
-- Renewal and adjustment requests on a quota ("提前续或调"): a manager, or a
-- member with a core task in the team, asks; an admin approves (the asked
-- values are applied to the quota) or refuses with a note.
--
-- The asked values are NULL where the request leaves the quota's value as
-- it is; kind is renew or adjust, state pending, approved or refused
-- (plain VARCHARs, checked by the store: MySQL 5.7 has no CHECK and we use
-- no ENUM).
CREATE TABLE quota_requests (
  id BIGINT NOT NULL AUTO_INCREMENT,
  quota_id BIGINT NOT NULL,
  team_id BIGINT NOT NULL,
  requested_by BIGINT NOT NULL,
  kind VARCHAR(16) NOT NULL,
  card_seconds BIGINT NULL,
  max_cards INT NULL,
  expires_at DATETIME(6) NULL,
  reason VARCHAR(2000) NOT NULL,
  state VARCHAR(16) NOT NULL DEFAULT 'pending',
  decided_by BIGINT NULL,
  decided_at DATETIME(6) NULL,
  decision_note VARCHAR(2000) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_quota_requests_state (state, quota_id),
  KEY ix_quota_requests_quota (quota_id),
  KEY ix_quota_requests_team (team_id),
  KEY ix_quota_requests_requested_by (requested_by),
  KEY ix_quota_requests_decided_by (decided_by),
  CONSTRAINT fk_quota_requests_quota FOREIGN KEY (quota_id) REFERENCES quotas (id) ON DELETE CASCADE,
  CONSTRAINT fk_quota_requests_team FOREIGN KEY (team_id) REFERENCES teams (id),
  CONSTRAINT fk_quota_requests_requested_by FOREIGN KEY (requested_by) REFERENCES users (id),
  CONSTRAINT fk_quota_requests_decided_by FOREIGN KEY (decided_by) REFERENCES users (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE quota_requests;
