-- +goose Up
CREATE TABLE teams (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL COLLATE NOCASE,
  description TEXT NOT NULL DEFAULT '',
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uq_teams_name ON teams (name);

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  username TEXT NOT NULL COLLATE NOCASE,
  display_name TEXT NOT NULL DEFAULT '',
  email TEXT NOT NULL DEFAULT '',
  password_hash TEXT NOT NULL,
  role TEXT NOT NULL,
  disabled INTEGER NOT NULL DEFAULT 0,
  password_changed_at DATETIME NOT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uq_users_username ON users (username);

CREATE TABLE memberships (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id BIGINT NOT NULL,
  user_id BIGINT NOT NULL,
  role TEXT NOT NULL,
  created_at DATETIME NOT NULL,
  FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE,
  FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX uq_memberships_team_user ON memberships (team_id, user_id);
CREATE INDEX ix_memberships_user ON memberships (user_id);

CREATE TABLE sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  token_hash TEXT NOT NULL COLLATE NOCASE,
  user_id BIGINT NOT NULL,
  created_at DATETIME NOT NULL,
  expires_at DATETIME NOT NULL,
  FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX uq_sessions_token_hash ON sessions (token_hash);
CREATE INDEX ix_sessions_user ON sessions (user_id);

CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id BIGINT NOT NULL,
  name TEXT NOT NULL COLLATE NOCASE,
  kind TEXT NOT NULL,
  prefix TEXT NOT NULL,
  token_hash TEXT NOT NULL COLLATE NOCASE,
  created_at DATETIME NOT NULL,
  last_used_at DATETIME NULL,
  revoked_at DATETIME NULL,
  FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX uq_api_tokens_token_hash ON api_tokens (token_hash);
CREATE INDEX ix_api_tokens_user ON api_tokens (user_id);

CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at DATETIME NOT NULL,
  actor_id BIGINT NULL,
  actor_name TEXT NOT NULL DEFAULT '',
  action TEXT NOT NULL,
  entity TEXT NOT NULL,
  entity_id BIGINT NOT NULL DEFAULT 0,
  summary TEXT NOT NULL DEFAULT '',
  before_json TEXT NULL,
  after_json TEXT NULL,
  remote_ip TEXT NOT NULL DEFAULT ''
);
CREATE INDEX ix_audit_log_at ON audit_log (at);
CREATE INDEX ix_audit_log_entity ON audit_log (entity, entity_id);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE api_tokens;
DROP TABLE sessions;
DROP TABLE memberships;
DROP TABLE users;
DROP TABLE teams;
