-- +goose Up
-- Company login (issue 16). An external identity is who a directory (LDAP
-- or OpenID Connect) says signed in, keyed by the directory's own name for
-- the person (the entry's DN, the issuer and sub): subject_hash is its
-- SHA-256, unique with the provider (MySQL cannot index the 512 characters
-- themselves). user_id is NULL while the identity waits for an admin to
-- link it to a local account of the same name (never merged silently).
CREATE TABLE external_identities (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  provider TEXT NOT NULL COLLATE NOCASE,
  subject TEXT NOT NULL,
  subject_hash TEXT NOT NULL COLLATE NOCASE,
  username TEXT NOT NULL,
  display_name TEXT NOT NULL DEFAULT '',
  email TEXT NOT NULL DEFAULT '',
  user_id BIGINT NULL,
  seen_at DATETIME NOT NULL,
  created_at DATETIME NOT NULL,
  FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX uq_external_identities_subject ON external_identities (provider, subject_hash);
CREATE INDEX ix_external_identities_user ON external_identities (user_id);

-- A rule from a directory group to a team membership and/or a portal role.
-- provider '' is any provider. team_id is NULL for a rule that gives only
-- a portal role; team_key is team_id or 0, so that the unique index (a NULL
-- would never collide) also refuses a second role-only rule for the group.
CREATE TABLE group_mappings (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  provider TEXT NOT NULL DEFAULT '' COLLATE NOCASE,
  group_name TEXT NOT NULL COLLATE NOCASE,
  team_id BIGINT NULL,
  team_key BIGINT NOT NULL DEFAULT 0,
  team_role TEXT NOT NULL DEFAULT '',
  portal_role TEXT NOT NULL DEFAULT '',
  created_at DATETIME NOT NULL,
  FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX uq_group_mappings_rule ON group_mappings (provider, group_name, team_key);
CREATE INDEX ix_group_mappings_team ON group_mappings (team_id);

-- An OpenID Connect round trip between the redirect to the provider and
-- its callback, on whichever replica the callback lands: only the hash of
-- the state is kept, and the row is deleted when taken (single use).
CREATE TABLE login_states (
  state_hash TEXT NOT NULL COLLATE NOCASE PRIMARY KEY,
  nonce TEXT NOT NULL,
  verifier TEXT NOT NULL,
  next_url TEXT NOT NULL DEFAULT '',
  expires_at DATETIME NOT NULL,
  created_at DATETIME NOT NULL
);
CREATE INDEX ix_login_states_expires ON login_states (expires_at);

-- Settings an admin changes at run time (local sign-in on or off); a
-- missing row is the default.
CREATE TABLE portal_settings (
  name TEXT NOT NULL COLLATE NOCASE PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE portal_settings;
DROP TABLE login_states;
DROP TABLE group_mappings;
DROP TABLE external_identities;
