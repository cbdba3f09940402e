-- +goose Up
-- What kind of work a task is (pretrain, finetune, eval, …): the yearly
-- baseline sizes next year's quota per kind of work. '' is unclassified.
ALTER TABLE tasks ADD COLUMN kind TEXT NOT NULL DEFAULT '';

-- The ledger pass looks for bookings that finished recently.
CREATE INDEX ix_bookings_ended ON bookings (ended_at);

-- Telemetry per booking and hour, summed over the booking's cards: what the
-- ledger splits at month boundaries. Fed from the minute rollups (which know
-- the booking that held each card); kept as long as the hour rollups.
CREATE TABLE telemetry_booking_hours (
  booking_id BIGINT NOT NULL,
  hour_at DATETIME NOT NULL,
  sampled_seconds REAL NOT NULL DEFAULT 0,
  busy_seconds REAL NOT NULL DEFAULT 0,
  held_idle_seconds REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (booking_id, hour_at),
  FOREIGN KEY (booking_id) REFERENCES bookings (id)
);
CREATE INDEX ix_telemetry_booking_hours_hour ON telemetry_booking_hours (hour_at);

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
  state TEXT NOT NULL,
  start_at DATETIME NOT NULL,
  end_at DATETIME NOT NULL,
  planned_end_at DATETIME NOT NULL,
  price_fen BIGINT NOT NULL,
  booked_card_seconds BIGINT NOT NULL,
  cost_fen BIGINT NOT NULL,
  sampled_card_seconds BIGINT NOT NULL DEFAULT 0,
  busy_card_seconds BIGINT NOT NULL DEFAULT 0,
  held_idle_card_seconds BIGINT NOT NULL DEFAULT 0,
  settled INTEGER NOT NULL DEFAULT 0,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  PRIMARY KEY (booking_id),
  FOREIGN KEY (booking_id) REFERENCES bookings (id),
  FOREIGN KEY (task_id) REFERENCES tasks (id),
  FOREIGN KEY (team_id) REFERENCES teams (id),
  FOREIGN KEY (user_id) REFERENCES users (id),
  FOREIGN KEY (card_type_id) REFERENCES card_types (id)
);
CREATE INDEX ix_ledger_rounds_task ON ledger_rounds (task_id, end_at);
-- Covering for the monthly report's quota use: a team's rounds by end.
CREATE INDEX ix_ledger_rounds_team ON ledger_rounds (team_id, end_at, start_at, card_type_id, card_count, booked_card_seconds);
CREATE INDEX ix_ledger_rounds_user ON ledger_rounds (user_id, end_at);
CREATE INDEX ix_ledger_rounds_card_type ON ledger_rounds (card_type_id);
CREATE INDEX ix_ledger_rounds_settled ON ledger_rounds (settled, booking_id);

-- Each round's share of each calendar month in a time zone: the reports
-- read only these. zone is the IANA name the months were cut in, so a
-- changed CARDHOUR_TZ gets its own rows instead of mixing cuts.
CREATE TABLE ledger_round_months (
  booking_id BIGINT NOT NULL,
  zone TEXT NOT NULL,
  month TEXT NOT NULL,
  team_id BIGINT NOT NULL,
  task_id BIGINT NOT NULL,
  card_type_id BIGINT NOT NULL,
  is_end_month INTEGER NOT NULL DEFAULT 0,
  booked_card_seconds BIGINT NOT NULL,
  cost_fen BIGINT NOT NULL,
  sampled_card_seconds BIGINT NOT NULL DEFAULT 0,
  busy_card_seconds BIGINT NOT NULL DEFAULT 0,
  held_idle_card_seconds BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (booking_id, zone, month),
  FOREIGN KEY (booking_id) REFERENCES ledger_rounds (booking_id) ON DELETE CASCADE
);
-- Covering: the reports group a month's rows by team, task and card type
-- without touching the table.
CREATE INDEX ix_ledger_round_months_month ON ledger_round_months (zone, month, team_id, task_id, card_type_id, is_end_month,
  booked_card_seconds, cost_fen, sampled_card_seconds, busy_card_seconds, held_idle_card_seconds);

-- Outputs recorded against a round; append-only: a correction is a new
-- entry naming the one it replaces, and an entry is replaced at most once.
CREATE TABLE ledger_outputs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  booking_id BIGINT NOT NULL,
  quantity REAL NOT NULL,
  unit TEXT NOT NULL,
  note TEXT NOT NULL DEFAULT '',
  corrects_id BIGINT NULL,
  created_by BIGINT NOT NULL,
  created_at DATETIME NOT NULL,
  FOREIGN KEY (booking_id) REFERENCES ledger_rounds (booking_id),
  FOREIGN KEY (corrects_id) REFERENCES ledger_outputs (id),
  FOREIGN KEY (created_by) REFERENCES users (id)
);
CREATE INDEX ix_ledger_outputs_booking ON ledger_outputs (booking_id, id);
CREATE UNIQUE INDEX uq_ledger_outputs_corrects ON ledger_outputs (corrects_id);
CREATE INDEX ix_ledger_outputs_created_by ON ledger_outputs (created_by);

-- +goose Down
DROP TABLE ledger_outputs;
DROP TABLE ledger_round_months;
DROP TABLE ledger_rounds;
DROP TABLE telemetry_booking_hours;
DROP INDEX ix_bookings_ended;
ALTER TABLE tasks DROP COLUMN kind;
