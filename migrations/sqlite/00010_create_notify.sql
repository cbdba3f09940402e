-- +goose Up
-- Notices that reach people where they are (issue 13): channels, each
-- user's choices, and the outbox every notice beyond the bell goes through.
--
-- Each user's language (for mail; empty = the portal's default), quiet hours
-- as minutes of the day in the portal's zone (equal = none) and, for
-- managers, the minute of the day their digest goes out (-1 = none).
ALTER TABLE users ADD COLUMN lang TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN quiet_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN quiet_to INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN digest_minute INTEGER NOT NULL DEFAULT 540;

-- A group robot or webhook: system-wide (team_id NULL, set by admins) or a
-- team's (set by its managers). url and secret are never shown again.
CREATE TABLE notify_channels (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id BIGINT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  secret TEXT NOT NULL DEFAULT '',
  lang TEXT NOT NULL DEFAULT 'zh-CN',
  events TEXT NOT NULL DEFAULT '',
  rate_per_minute INTEGER NOT NULL DEFAULT 20,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_by BIGINT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
);
CREATE INDEX ix_notify_channels_team ON notify_channels (team_id);

-- A user's switch for one event on mail or chat, where it differs from the
-- event's default.
CREATE TABLE notify_prefs (
  user_id BIGINT NOT NULL,
  event TEXT NOT NULL,
  channel TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  PRIMARY KEY (user_id, event, channel),
  FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
);

-- Every notice beyond the bell, one row per recipient and channel. dedup_key
-- makes a second enqueue of the same notice a no-op, whoever runs it; a
-- sender claims due rows under a lease (lease_token, lease_until) and marks
-- them sent, retried later (next_at) or failed.
CREATE TABLE notify_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  dedup_key TEXT NOT NULL,
  kind TEXT NOT NULL,
  message_key TEXT NOT NULL,
  args_json TEXT NOT NULL DEFAULT '[]',
  link TEXT NOT NULL DEFAULT '',
  user_id BIGINT NULL,
  channel_id BIGINT NULL,
  channel TEXT NOT NULL,
  address TEXT NOT NULL DEFAULT '',
  lang TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at DATETIME NOT NULL,
  lease_token TEXT NULL,
  lease_until DATETIME NULL,
  last_status INTEGER NOT NULL DEFAULT 0,
  last_answer TEXT NOT NULL DEFAULT '',
  created_at DATETIME NOT NULL,
  sent_at DATETIME NULL,
  FOREIGN KEY (channel_id) REFERENCES notify_channels (id) ON DELETE CASCADE,
  FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX ux_notify_outbox_dedup ON notify_outbox (dedup_key);
CREATE INDEX ix_notify_outbox_due ON notify_outbox (state, next_at);
CREATE INDEX ix_notify_outbox_channel ON notify_outbox (channel_id, sent_at);
CREATE INDEX ix_notify_outbox_lease ON notify_outbox (lease_token);
CREATE INDEX ix_notify_outbox_user ON notify_outbox (user_id);

-- A reminder a scan has sent: one per (event, subject, stage), whoever
-- runs the scan, so that a scan run twice or by two processes tells once.
CREATE TABLE notify_marks (
  mark_key TEXT NOT NULL PRIMARY KEY,
  created_at DATETIME NOT NULL
);

-- +goose Down
DROP TABLE notify_marks;
DROP TABLE notify_outbox;
DROP TABLE notify_prefs;
DROP TABLE notify_channels;
ALTER TABLE users DROP COLUMN digest_minute;
ALTER TABLE users DROP COLUMN quiet_to;
ALTER TABLE users DROP COLUMN quiet_from;
ALTER TABLE users DROP COLUMN lang;
