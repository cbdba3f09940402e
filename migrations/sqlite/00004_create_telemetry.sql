-- +goose Up
-- Cards that reported telemetry but are not in the inventory yet: an admin
-- registers them (choosing the card type) or leaves them parked here.
CREATE TABLE telemetry_pending_cards (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uuid TEXT NOT NULL COLLATE NOCASE,
  host_name TEXT NOT NULL COLLATE NOCASE,
  gpu_index INT NOT NULL DEFAULT 0,
  gpu_name TEXT NOT NULL DEFAULT '',
  mem_total_mib BIGINT NOT NULL DEFAULT 0,
  first_seen_at DATETIME NOT NULL,
  last_seen_at DATETIME NOT NULL
);
CREATE UNIQUE INDEX uq_telemetry_pending_cards_uuid ON telemetry_pending_cards (uuid);

-- Per-card minute rollups of the samples; raw samples are never stored.
-- util_sum / util_samples is the average, kept as a sum so that two partial
-- rows of one minute (a restart, a late batch) merge by addition.
CREATE TABLE telemetry_minutes (
  card_id BIGINT NOT NULL,
  minute_at DATETIME NOT NULL,
  samples INT NOT NULL DEFAULT 0,
  util_sum REAL NOT NULL DEFAULT 0,
  util_samples INT NOT NULL DEFAULT 0,
  util_max REAL NOT NULL DEFAULT 0,
  mem_max_mib REAL NOT NULL DEFAULT 0,
  mem_total_mib REAL NOT NULL DEFAULT 0,
  sampled_seconds REAL NOT NULL DEFAULT 0,
  busy_seconds REAL NOT NULL DEFAULT 0,
  full_seconds REAL NOT NULL DEFAULT 0,
  held_seconds REAL NOT NULL DEFAULT 0,
  held_idle_seconds REAL NOT NULL DEFAULT 0,
  booking_id BIGINT NULL,
  PRIMARY KEY (card_id, minute_at),
  FOREIGN KEY (card_id) REFERENCES cards (id) ON DELETE CASCADE,
  FOREIGN KEY (booking_id) REFERENCES bookings (id)
);
CREATE INDEX ix_telemetry_minutes_minute ON telemetry_minutes (minute_at);
CREATE INDEX ix_telemetry_minutes_booking ON telemetry_minutes (booking_id);

-- The same per hour, kept longer: the heatmap reads these.
CREATE TABLE telemetry_hours (
  card_id BIGINT NOT NULL,
  hour_at DATETIME NOT NULL,
  samples INT NOT NULL DEFAULT 0,
  util_sum REAL NOT NULL DEFAULT 0,
  util_samples INT NOT NULL DEFAULT 0,
  util_max REAL NOT NULL DEFAULT 0,
  mem_max_mib REAL NOT NULL DEFAULT 0,
  mem_total_mib REAL NOT NULL DEFAULT 0,
  sampled_seconds REAL NOT NULL DEFAULT 0,
  busy_seconds REAL NOT NULL DEFAULT 0,
  full_seconds REAL NOT NULL DEFAULT 0,
  held_seconds REAL NOT NULL DEFAULT 0,
  held_idle_seconds REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (card_id, hour_at),
  FOREIGN KEY (card_id) REFERENCES cards (id) ON DELETE CASCADE
);
CREATE INDEX ix_telemetry_hours_hour ON telemetry_hours (hour_at);

-- What each booking did with its cards, summed over its whole life.
CREATE TABLE telemetry_booking_usage (
  booking_id BIGINT NOT NULL,
  sampled_seconds REAL NOT NULL DEFAULT 0,
  busy_seconds REAL NOT NULL DEFAULT 0,
  held_idle_seconds REAL NOT NULL DEFAULT 0,
  updated_at DATETIME NOT NULL,
  PRIMARY KEY (booking_id),
  FOREIGN KEY (booking_id) REFERENCES bookings (id)
);

-- Alert episodes: one row from when a condition starts until it clears, so
-- an alert is raised once per episode, not once per sample.
CREATE TABLE telemetry_alerts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  card_id BIGINT NULL,
  booking_id BIGINT NULL,
  value REAL NOT NULL DEFAULT 0,
  started_at DATETIME NOT NULL,
  ended_at DATETIME NULL,
  FOREIGN KEY (card_id) REFERENCES cards (id) ON DELETE CASCADE,
  FOREIGN KEY (booking_id) REFERENCES bookings (id)
);
CREATE INDEX ix_telemetry_alerts_card ON telemetry_alerts (card_id, started_at);
CREATE INDEX ix_telemetry_alerts_booking ON telemetry_alerts (booking_id);
CREATE INDEX ix_telemetry_alerts_open ON telemetry_alerts (ended_at);

-- +goose Down
DROP TABLE telemetry_alerts;
DROP TABLE telemetry_booking_usage;
DROP TABLE telemetry_hours;
DROP TABLE telemetry_minutes;
DROP TABLE telemetry_pending_cards;
