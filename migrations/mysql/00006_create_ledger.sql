-- +goose Up
-- What kind of work a task is (pretrain, finetune, eval, …): the yearly
-- baseline sizes next year's quota per kind of work. '' is unclassified.
ALTER TABLE tasks ADD COLUMN kind VARCHAR(32) NOT NULL DEFAULT '';

-- The ledger pass looks for bookings that finished recently.
CREATE INDEX ix_bookings_ended ON bookings (ended_at);

-- Telemetry per booking and hour, summed over the booking's cards: what the
-- ledger splits at month boundaries. Fed from the minute rollups (which know
-- the booking that held each card); kept as long as the hour rollups.
CREATE TABLE telemetry_booking_hours (
  booking_id BIGINT NOT NULL,
  hour_at DATETIME(6) NOT NULL,
  sampled_seconds DOUBLE NOT NULL DEFAULT 0,
  busy_seconds DOUBLE NOT NULL DEFAULT 0,
  held_idle_seconds DOUBLE NOT NULL DEFAULT 0,
  PRIMARY KEY (booking_id, hour_at),
  KEY ix_telemetry_booking_hours_hour (hour_at),
  CONSTRAINT fk_telemetry_booking_hours_booking FOREIGN KEY (booking_id) REFERENCES bookings (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One ledger round per finished booking ("记真实账"), written once by the
-- ledger pass: the price is the one the booking was made at, so later price
-- changes never rewrite it. Usage stays open to late telemetry until settled.
CREATE TABLE ledger_rounds (
  booking_id BIGINT NOT NULL,
  task_id BIGINT NOT NULL,
  team_id BIGINT NOT NULL,
  user_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  card_count INT NOT NULL,
  state VARCHAR(16) NOT NULL,
  start_at DATETIME(6) NOT NULL,
  end_at DATETIME(6) NOT NULL,
  planned_end_at DATETIME(6) NOT NULL,
  price_fen BIGINT NOT NULL,
  booked_card_seconds BIGINT NOT NULL,
  cost_fen BIGINT NOT NULL,
  sampled_card_seconds BIGINT NOT NULL DEFAULT 0,
  busy_card_seconds BIGINT NOT NULL DEFAULT 0,
  held_idle_card_seconds BIGINT NOT NULL DEFAULT 0,
  settled TINYINT(1) NOT NULL DEFAULT 0,
  created_at DATETIME(6) NOT NULL,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (booking_id),
  KEY ix_ledger_rounds_task (task_id, end_at),
  -- Covering for the monthly report's quota use: a team's rounds by end.
  KEY ix_ledger_rounds_team (team_id, end_at, start_at, card_type_id, card_count, booked_card_seconds),
  KEY ix_ledger_rounds_user (user_id, end_at),
  KEY ix_ledger_rounds_card_type (card_type_id),
  KEY ix_ledger_rounds_settled (settled, booking_id),
  CONSTRAINT fk_ledger_rounds_booking FOREIGN KEY (booking_id) REFERENCES bookings (id),
  CONSTRAINT fk_ledger_rounds_task FOREIGN KEY (task_id) REFERENCES tasks (id),
  CONSTRAINT fk_ledger_rounds_team FOREIGN KEY (team_id) REFERENCES teams (id),
  CONSTRAINT fk_ledger_rounds_user FOREIGN KEY (user_id) REFERENCES users (id),
  CONSTRAINT fk_ledger_rounds_card_type FOREIGN KEY (card_type_id) REFERENCES card_types (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Each round's share of each calendar month in a time zone: the reports
-- read only these. zone is the IANA name the months were cut in, so a
-- changed CARDHOUR_TZ gets its own rows instead of mixing cuts.
CREATE TABLE ledger_round_months (
  booking_id BIGINT NOT NULL,
  zone VARCHAR(64) NOT NULL,
  month CHAR(7) NOT NULL,
  team_id BIGINT NOT NULL,
  task_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  is_end_month TINYINT(1) NOT NULL DEFAULT 0,
  booked_card_seconds BIGINT NOT NULL,
  cost_fen BIGINT NOT NULL,
  sampled_card_seconds BIGINT NOT NULL DEFAULT 0,
  busy_card_seconds BIGINT NOT NULL DEFAULT 0,
  held_idle_card_seconds BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (booking_id, zone, month),
  -- Covering: the reports group a month's rows by team, task and card type
  -- without touching the table.
  KEY ix_ledger_round_months_month (zone, month, team_id, task_id, card_type_id, is_end_month,
    booked_card_seconds, cost_fen, sampled_card_seconds, busy_card_seconds, held_idle_card_seconds),
  CONSTRAINT fk_ledger_round_months_round FOREIGN KEY (booking_id) REFERENCES ledger_rounds (booking_id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Outputs recorded against a round; append-only: a correction is a new
-- entry naming the one it replaces, and an entry is replaced at most once.
CREATE TABLE ledger_outputs (
  id BIGINT NOT NULL AUTO_INCREMENT,
  booking_id BIGINT NOT NULL,
  quantity DOUBLE NOT NULL,
  -- Binary: "Epochs" and "epochs" are two units here as in SQLite, so both
  -- dialects group outputs alike.
  unit VARCHAR(32) NOT NULL COLLATE utf8mb4_bin,
  note VARCHAR(500) NOT NULL DEFAULT '',
  corrects_id BIGINT NULL,
  created_by BIGINT NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_ledger_outputs_booking (booking_id, id),
  UNIQUE KEY uq_ledger_outputs_corrects (corrects_id),
  KEY ix_ledger_outputs_created_by (created_by),
  CONSTRAINT fk_ledger_outputs_round FOREIGN KEY (booking_id) REFERENCES ledger_rounds (booking_id),
  CONSTRAINT fk_ledger_outputs_corrects FOREIGN KEY (corrects_id) REFERENCES ledger_outputs (id),
  CONSTRAINT fk_ledger_outputs_created_by FOREIGN KEY (created_by) REFERENCES users (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE ledger_outputs;
DROP TABLE ledger_round_months;
DROP TABLE ledger_rounds;
DROP TABLE telemetry_booking_hours;
DROP INDEX ix_bookings_ended ON bookings;
ALTER TABLE tasks DROP COLUMN kind;
