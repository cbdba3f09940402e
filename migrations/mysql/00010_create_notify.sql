-- +goose Up
-- Notices that reach people where they are (issue 13): channels, each
-- user's choices, and the outbox every notice beyond the bell goes through.
--
-- Each user's language (for mail; empty = the portal's default), quiet hours
-- as minutes of the day in the portal's zone (equal = none) and, for
-- managers, the minute of the day their digest goes out (-1 = none).
ALTER TABLE users
  ADD COLUMN lang VARCHAR(8) NOT NULL DEFAULT '',
  ADD COLUMN quiet_from INT NOT NULL DEFAULT 0,
  ADD COLUMN quiet_to INT NOT NULL DEFAULT 0,
  ADD COLUMN digest_minute INT NOT NULL DEFAULT 540;

-- A group robot or webhook: system-wide (team_id NULL, set by admins) or a
-- team's (set by its managers). url and secret are never shown again.
CREATE TABLE notify_channels (
  id BIGINT NOT NULL AUTO_INCREMENT,
  team_id BIGINT NULL,
  kind VARCHAR(16) NOT NULL,
  name VARCHAR(100) NOT NULL,
  url VARCHAR(1000) NOT NULL,
  secret VARCHAR(500) NOT NULL DEFAULT '',
  lang VARCHAR(8) NOT NULL DEFAULT 'zh-CN',
  events VARCHAR(1000) NOT NULL DEFAULT '',
  rate_per_minute INT NOT NULL DEFAULT 20,
  enabled TINYINT(1) NOT NULL DEFAULT 1,
  created_by BIGINT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_notify_channels_team (team_id),
  CONSTRAINT fk_notify_channels_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A user's switch for one event on mail or chat, where it differs from the
-- event's default.
CREATE TABLE notify_prefs (
  user_id BIGINT NOT NULL,
  event VARCHAR(32) NOT NULL,
  channel VARCHAR(8) NOT NULL,
  enabled TINYINT(1) NOT NULL,
  PRIMARY KEY (user_id, event, channel),
  CONSTRAINT fk_notify_prefs_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Every notice beyond the bell, one row per recipient and channel. dedup_key
-- makes a second enqueue of the same notice a no-op, whoever runs it; a
-- sender claims due rows under a lease (lease_token, lease_until) and marks
-- them sent, retried later (next_at) or failed.
CREATE TABLE notify_outbox (
  id BIGINT NOT NULL AUTO_INCREMENT,
  dedup_key VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  kind VARCHAR(32) NOT NULL,
  message_key VARCHAR(64) NOT NULL,
  args_json VARCHAR(4000) NOT NULL DEFAULT '[]',
  link VARCHAR(255) NOT NULL DEFAULT '',
  user_id BIGINT NULL,
  channel_id BIGINT NULL,
  channel VARCHAR(16) NOT NULL,
  address VARCHAR(255) NOT NULL DEFAULT '',
  lang VARCHAR(8) NOT NULL,
  state VARCHAR(12) NOT NULL DEFAULT 'pending',
  attempts INT NOT NULL DEFAULT 0,
  next_at DATETIME(6) NOT NULL,
  lease_token VARCHAR(40) NULL,
  lease_until DATETIME(6) NULL,
  last_status INT NOT NULL DEFAULT 0,
  last_answer VARCHAR(2048) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL,
  sent_at DATETIME(6) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_notify_outbox_dedup (dedup_key),
  KEY ix_notify_outbox_due (state, next_at),
  KEY ix_notify_outbox_channel (channel_id, sent_at),
  KEY ix_notify_outbox_lease (lease_token),
  KEY ix_notify_outbox_user (user_id),
  CONSTRAINT fk_notify_outbox_channel FOREIGN KEY (channel_id) REFERENCES notify_channels (id) ON DELETE CASCADE,
  CONSTRAINT fk_notify_outbox_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A reminder a scan has sent: one per (event, subject, stage), whoever
-- runs the scan, so that a scan run twice or by two processes tells once.
CREATE TABLE notify_marks (
  mark_key VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (mark_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE notify_marks;
DROP TABLE notify_outbox;
DROP TABLE notify_prefs;
DROP TABLE notify_channels;
ALTER TABLE users DROP COLUMN digest_minute, DROP COLUMN quiet_to, DROP COLUMN quiet_from, DROP COLUMN lang;
