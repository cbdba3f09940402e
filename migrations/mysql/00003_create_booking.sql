-- +goose Up
ALTER TABLE teams ADD COLUMN requires_approval TINYINT(1) NOT NULL DEFAULT 0;

CREATE TABLE tasks (
  id BIGINT NOT NULL AUTO_INCREMENT,
  team_id BIGINT NOT NULL,
  name VARCHAR(100) NOT NULL,
  priority VARCHAR(16) NOT NULL,
  estimate_card_seconds BIGINT NOT NULL,
  data_readiness VARCHAR(16) NOT NULL,
  data_ready_at DATETIME(6) NULL,
  vram_gib DOUBLE NOT NULL DEFAULT 0,
  compute_precision VARCHAR(8) NOT NULL DEFAULT '',
  image_id BIGINT NULL,
  notes VARCHAR(2000) NOT NULL DEFAULT '',
  created_by BIGINT NOT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_tasks_team_name (team_id, name),
  KEY ix_tasks_image (image_id),
  KEY ix_tasks_created_by (created_by),
  CONSTRAINT fk_tasks_team FOREIGN KEY (team_id) REFERENCES teams (id),
  CONSTRAINT fk_tasks_image FOREIGN KEY (image_id) REFERENCES images (id),
  CONSTRAINT fk_tasks_created_by FOREIGN KEY (created_by) REFERENCES users (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE task_card_types (
  task_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  PRIMARY KEY (task_id, card_type_id),
  KEY ix_task_card_types_card_type (card_type_id),
  CONSTRAINT fk_task_card_types_task FOREIGN KEY (task_id) REFERENCES tasks (id) ON DELETE CASCADE,
  CONSTRAINT fk_task_card_types_card_type FOREIGN KEY (card_type_id) REFERENCES card_types (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE bookings (
  id BIGINT NOT NULL AUTO_INCREMENT,
  task_id BIGINT NOT NULL,
  team_id BIGINT NOT NULL,
  user_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  card_count INT NOT NULL,
  start_at DATETIME(6) NOT NULL,
  end_at DATETIME(6) NOT NULL,
  state VARCHAR(16) NOT NULL,
  wait_reason VARCHAR(16) NOT NULL DEFAULT '',
  kind VARCHAR(16) NOT NULL,
  priority VARCHAR(16) NOT NULL,
  price_fen BIGINT NOT NULL,
  submitted_at DATETIME(6) NOT NULL,
  confirmed_at DATETIME(6) NULL,
  ended_at DATETIME(6) NULL,
  state_note VARCHAR(255) NOT NULL DEFAULT '',
  quota_override_by BIGINT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_bookings_type_state (card_type_id, state, start_at),
  KEY ix_bookings_team (team_id, start_at),
  KEY ix_bookings_task (task_id),
  KEY ix_bookings_user (user_id, start_at),
  KEY ix_bookings_state_start (state, start_at),
  CONSTRAINT fk_bookings_task FOREIGN KEY (task_id) REFERENCES tasks (id),
  CONSTRAINT fk_bookings_team FOREIGN KEY (team_id) REFERENCES teams (id),
  CONSTRAINT fk_bookings_user FOREIGN KEY (user_id) REFERENCES users (id),
  CONSTRAINT fk_bookings_card_type FOREIGN KEY (card_type_id) REFERENCES card_types (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE booking_cards (
  id BIGINT NOT NULL AUTO_INCREMENT,
  booking_id BIGINT NOT NULL,
  card_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  start_at DATETIME(6) NOT NULL,
  end_at DATETIME(6) NOT NULL,
  held TINYINT(1) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_booking_cards_booking (booking_id),
  KEY ix_booking_cards_card (card_id, start_at),
  KEY ix_booking_cards_type_held (card_type_id, held, start_at, end_at),
  CONSTRAINT fk_booking_cards_booking FOREIGN KEY (booking_id) REFERENCES bookings (id),
  CONSTRAINT fk_booking_cards_card FOREIGN KEY (card_id) REFERENCES cards (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE quotas (
  id BIGINT NOT NULL AUTO_INCREMENT,
  team_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  card_seconds BIGINT NOT NULL,
  max_cards INT NOT NULL DEFAULT 0,
  valid_from DATETIME(6) NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  note VARCHAR(255) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_quotas_team_type (team_id, card_type_id, valid_from),
  KEY ix_quotas_card_type (card_type_id),
  CONSTRAINT fk_quotas_team FOREIGN KEY (team_id) REFERENCES teams (id),
  CONSTRAINT fk_quotas_card_type FOREIGN KEY (card_type_id) REFERENCES card_types (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE booking_templates (
  id BIGINT NOT NULL AUTO_INCREMENT,
  team_id BIGINT NOT NULL,
  name VARCHAR(100) NOT NULL,
  priority VARCHAR(16) NOT NULL,
  estimate_card_seconds BIGINT NOT NULL,
  data_readiness VARCHAR(16) NOT NULL,
  vram_gib DOUBLE NOT NULL DEFAULT 0,
  compute_precision VARCHAR(8) NOT NULL DEFAULT '',
  image_id BIGINT NULL,
  card_type_id BIGINT NOT NULL,
  card_count INT NOT NULL,
  duration_seconds BIGINT NOT NULL,
  notes VARCHAR(2000) NOT NULL DEFAULT '',
  created_by BIGINT NOT NULL,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_booking_templates_team_name (team_id, name),
  KEY ix_booking_templates_card_type (card_type_id),
  KEY ix_booking_templates_image (image_id),
  KEY ix_booking_templates_created_by (created_by),
  CONSTRAINT fk_booking_templates_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE,
  CONSTRAINT fk_booking_templates_card_type FOREIGN KEY (card_type_id) REFERENCES card_types (id),
  CONSTRAINT fk_booking_templates_image FOREIGN KEY (image_id) REFERENCES images (id),
  CONSTRAINT fk_booking_templates_created_by FOREIGN KEY (created_by) REFERENCES users (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE calendar_feeds (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NULL,
  team_id BIGINT NULL,
  token_hash CHAR(64) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_calendar_feeds_token_hash (token_hash),
  KEY ix_calendar_feeds_user (user_id),
  KEY ix_calendar_feeds_team (team_id),
  CONSTRAINT fk_calendar_feeds_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
  CONSTRAINT fk_calendar_feeds_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE notifications (
  id BIGINT NOT NULL AUTO_INCREMENT,
  user_id BIGINT NOT NULL,
  kind VARCHAR(32) NOT NULL,
  message_key VARCHAR(64) NOT NULL,
  args_json VARCHAR(1000) NOT NULL DEFAULT '[]',
  link VARCHAR(255) NOT NULL DEFAULT '',
  created_at DATETIME(6) NOT NULL,
  read_at DATETIME(6) NULL,
  PRIMARY KEY (id),
  KEY ix_notifications_user (user_id, read_at),
  CONSTRAINT fk_notifications_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

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
