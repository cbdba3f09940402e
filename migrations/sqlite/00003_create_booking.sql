-- +goose Up
ALTER TABLE teams ADD COLUMN requires_approval INTEGER NOT NULL DEFAULT 0;

CREATE TABLE tasks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id BIGINT NOT NULL,
  name TEXT NOT NULL COLLATE NOCASE,
  priority TEXT NOT NULL,
  estimate_card_seconds BIGINT NOT NULL,
  data_readiness TEXT NOT NULL,
  data_ready_at DATETIME NULL,
  vram_gib REAL NOT NULL DEFAULT 0,
  compute_precision TEXT NOT NULL DEFAULT '',
  image_id BIGINT NULL,
  notes TEXT NOT NULL DEFAULT '',
  created_by BIGINT NOT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (team_id) REFERENCES teams (id),
  FOREIGN KEY (image_id) REFERENCES images (id),
  FOREIGN KEY (created_by) REFERENCES users (id)
);
CREATE UNIQUE INDEX uq_tasks_team_name ON tasks (team_id, name);
CREATE INDEX ix_tasks_image ON tasks (image_id);
CREATE INDEX ix_tasks_created_by ON tasks (created_by);

CREATE TABLE task_card_types (
  task_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  PRIMARY KEY (task_id, card_type_id),
  FOREIGN KEY (task_id) REFERENCES tasks (id) ON DELETE CASCADE,
  FOREIGN KEY (card_type_id) REFERENCES card_types (id) ON DELETE CASCADE
);
CREATE INDEX ix_task_card_types_card_type ON task_card_types (card_type_id);

CREATE TABLE bookings (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id BIGINT NOT NULL,
  team_id BIGINT NOT NULL,
  user_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  card_count INT NOT NULL,
  start_at DATETIME NOT NULL,
  end_at DATETIME NOT NULL,
  state TEXT NOT NULL,
  wait_reason TEXT NOT NULL DEFAULT '',
  kind TEXT NOT NULL,
  priority TEXT NOT NULL,
  price_fen BIGINT NOT NULL,
  submitted_at DATETIME NOT NULL,
  confirmed_at DATETIME NULL,
  ended_at DATETIME NULL,
  state_note TEXT NOT NULL DEFAULT '',
  quota_override_by BIGINT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (task_id) REFERENCES tasks (id),
  FOREIGN KEY (team_id) REFERENCES teams (id),
  FOREIGN KEY (user_id) REFERENCES users (id),
  FOREIGN KEY (card_type_id) REFERENCES card_types (id)
);
CREATE INDEX ix_bookings_type_state ON bookings (card_type_id, state, start_at);
CREATE INDEX ix_bookings_team ON bookings (team_id, start_at);
CREATE INDEX ix_bookings_task ON bookings (task_id);
CREATE INDEX ix_bookings_user ON bookings (user_id, start_at);
CREATE INDEX ix_bookings_state_start ON bookings (state, start_at);

CREATE TABLE booking_cards (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  booking_id BIGINT NOT NULL,
  card_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  start_at DATETIME NOT NULL,
  end_at DATETIME NOT NULL,
  held INTEGER NOT NULL,
  FOREIGN KEY (booking_id) REFERENCES bookings (id),
  FOREIGN KEY (card_id) REFERENCES cards (id)
);
CREATE INDEX ix_booking_cards_booking ON booking_cards (booking_id);
CREATE INDEX ix_booking_cards_card ON booking_cards (card_id, start_at);
CREATE INDEX ix_booking_cards_type_held ON booking_cards (card_type_id, held, start_at, end_at);

CREATE TABLE quotas (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  card_seconds BIGINT NOT NULL,
  max_cards INT NOT NULL DEFAULT 0,
  valid_from DATETIME NOT NULL,
  expires_at DATETIME NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (team_id) REFERENCES teams (id),
  FOREIGN KEY (card_type_id) REFERENCES card_types (id)
);
CREATE INDEX ix_quotas_team_type ON quotas (team_id, card_type_id, valid_from);
CREATE INDEX ix_quotas_card_type ON quotas (card_type_id);

CREATE TABLE booking_templates (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  team_id BIGINT NOT NULL,
  name TEXT NOT NULL COLLATE NOCASE,
  priority TEXT NOT NULL,
  estimate_card_seconds BIGINT NOT NULL,
  data_readiness TEXT NOT NULL,
  vram_gib REAL NOT NULL DEFAULT 0,
  compute_precision TEXT NOT NULL DEFAULT '',
  image_id BIGINT NULL,
  card_type_id BIGINT NOT NULL,
  card_count INT NOT NULL,
  duration_seconds BIGINT NOT NULL,
  notes TEXT NOT NULL DEFAULT '',
  created_by BIGINT NOT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE,
  FOREIGN KEY (card_type_id) REFERENCES card_types (id),
  FOREIGN KEY (image_id) REFERENCES images (id),
  FOREIGN KEY (created_by) REFERENCES users (id)
);
CREATE UNIQUE INDEX uq_booking_templates_team_name ON booking_templates (team_id, name);
CREATE INDEX ix_booking_templates_card_type ON booking_templates (card_type_id);
CREATE INDEX ix_booking_templates_image ON booking_templates (image_id);
CREATE INDEX ix_booking_templates_created_by ON booking_templates (created_by);

CREATE TABLE calendar_feeds (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id BIGINT NULL,
  team_id BIGINT NULL,
  token_hash TEXT NOT NULL COLLATE NOCASE,
  created_at DATETIME NOT NULL,
  FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
  FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX uq_calendar_feeds_token_hash ON calendar_feeds (token_hash);
CREATE INDEX ix_calendar_feeds_user ON calendar_feeds (user_id);
CREATE INDEX ix_calendar_feeds_team ON calendar_feeds (team_id);

CREATE TABLE notifications (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id BIGINT NOT NULL,
  kind TEXT NOT NULL,
  message_key TEXT NOT NULL,
  args_json TEXT NOT NULL DEFAULT '[]',
  link TEXT NOT NULL DEFAULT '',
  created_at DATETIME NOT NULL,
  read_at DATETIME NULL,
  FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
);
CREATE INDEX ix_notifications_user ON notifications (user_id, read_at);

-- +goose Down
DROP TABLE notifications;
DROP TABLE calendar_feeds;
DROP TABLE booking_templates;
DROP TABLE quotas;
DROP TABLE booking_cards;
DROP TABLE bookings;
DROP TABLE task_card_types;
DROP TABLE tasks;
ALTER TABLE teams DROP COLUMN requires_approval;
