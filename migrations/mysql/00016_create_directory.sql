-- +goose Up
-- Company login (issue 16). An external identity is who a directory (LDAP
-- or OpenID Connect) says signed in, keyed by the directory's own name for
-- the person (the entry's DN, the issuer and sub): subject_hash is its
-- SHA-256, unique with the provider, because a unique key on the 512
-- characters themselves passes InnoDB's 3072-byte limit in utf8mb4.
-- user_id is NULL while the identity waits for an admin to link it to a
-- local account of the same name (never merged silently).
CREATE TABLE external_identities (
  id BIGINT NOT NULL AUTO_INCREMENT,
  provider VARCHAR(16) NOT NULL,
  subject VARCHAR(512) NOT NULL,
  subject_hash CHAR(64) NOT NULL,
  username VARCHAR(255) NOT NULL,
  display_name VARCHAR(255) NOT NULL DEFAULT '',
  email VARCHAR(255) NOT NULL DEFAULT '',
  user_id BIGINT NULL,
  seen_at DATETIME(6) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_external_identities_subject (provider, subject_hash),
  KEY ix_external_identities_user (user_id),
  CONSTRAINT fk_external_identities_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A rule from a directory group to a team membership and/or a portal role.
-- provider '' is any provider. team_id is NULL for a rule that gives only
-- a portal role; team_key is team_id or 0, so that the unique key (a NULL
-- would never collide) also refuses a second role-only rule for the group.
CREATE TABLE group_mappings (
  id BIGINT NOT NULL AUTO_INCREMENT,
  provider VARCHAR(16) NOT NULL DEFAULT '',
  group_name VARCHAR(255) NOT NULL,
  team_id BIGINT NULL,
  team_key BIGINT NOT NULL DEFAULT 0,
  team_role VARCHAR(16) NOT NULL DEFAULT '',
  portal_role VARCHAR(16) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_group_mappings_rule (provider, group_name, team_key),
  KEY ix_group_mappings_team (team_id),
  CONSTRAINT fk_group_mappings_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- An OpenID Connect round trip between the redirect to the provider and
-- its callback, on whichever replica the callback lands: only the hash of
-- the state is kept, and the row is deleted when taken (single use).
CREATE TABLE login_states (
  state_hash CHAR(64) NOT NULL,
  nonce VARCHAR(255) NOT NULL,
  verifier VARCHAR(255) NOT NULL,
  next_url VARCHAR(1024) NOT NULL DEFAULT '',
  expires_at DATETIME(6) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (state_hash),
  KEY ix_login_states_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Settings an admin changes at run time (local sign-in on or off); a
-- missing row is the default.
CREATE TABLE portal_settings (
  name VARCHAR(64) NOT NULL,
  value VARCHAR(255) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE portal_settings;
DROP TABLE login_states;
DROP TABLE group_mappings;
DROP TABLE external_identities;
