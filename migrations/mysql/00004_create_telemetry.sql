-- +goose Up
-- Cards that reported telemetry but are not in the inventory yet: an admin
-- registers them (choosing the card type) or leaves them parked here.
CREATE TABLE telemetry_pending_cards (
  id BIGINT NOT NULL AUTO_INCREMENT,
  uuid VARCHAR(64) NOT NULL,
  host_name VARCHAR(100) NOT NULL,
  gpu_index INT NOT NULL DEFAULT 0,
  gpu_name VARCHAR(255) NOT NULL DEFAULT '',
  mem_total_mib BIGINT NOT NULL DEFAULT 0,
  first_seen_at DATETIME(6) NOT NULL,
  last_seen_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uq_telemetry_pending_cards_uuid (uuid)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Per-card minute rollups of the samples; raw samples are never stored.
-- util_sum / util_samples is the average, kept as a sum so that two partial
-- rows of one minute (a restart, a late batch) merge by addition.
CREATE TABLE telemetry_minutes (
  card_id BIGINT NOT NULL,
  minute_at DATETIME(6) NOT NULL,
  samples INT NOT NULL DEFAULT 0,
  util_sum DOUBLE NOT NULL DEFAULT 0,
  util_samples INT NOT NULL DEFAULT 0,
  util_max DOUBLE NOT NULL DEFAULT 0,
  mem_max_mib DOUBLE NOT NULL DEFAULT 0,
  mem_total_mib DOUBLE NOT NULL DEFAULT 0,
  sampled_seconds DOUBLE NOT NULL DEFAULT 0,
  busy_seconds DOUBLE NOT NULL DEFAULT 0,
  full_seconds DOUBLE NOT NULL DEFAULT 0,
  held_seconds DOUBLE NOT NULL DEFAULT 0,
  held_idle_seconds DOUBLE NOT NULL DEFAULT 0,
  booking_id BIGINT NULL,
  PRIMARY KEY (card_id, minute_at),
  KEY ix_telemetry_minutes_minute (minute_at),
  KEY ix_telemetry_minutes_booking (booking_id),
  CONSTRAINT fk_telemetry_minutes_card FOREIGN KEY (card_id) REFERENCES cards (id) ON DELETE CASCADE,
  CONSTRAINT fk_telemetry_minutes_booking FOREIGN KEY (booking_id) REFERENCES bookings (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The same per hour, kept longer: the heatmap reads these.
CREATE TABLE telemetry_hours (
  card_id BIGINT NOT NULL,
  hour_at DATETIME(6) NOT NULL,
  samples INT NOT NULL DEFAULT 0,
  util_sum DOUBLE NOT NULL DEFAULT 0,
  util_samples INT NOT NULL DEFAULT 0,
  util_max DOUBLE NOT NULL DEFAULT 0,
  mem_max_mib DOUBLE NOT NULL DEFAULT 0,
  mem_total_mib DOUBLE NOT NULL DEFAULT 0,
  sampled_seconds DOUBLE NOT NULL DEFAULT 0,
  busy_seconds DOUBLE NOT NULL DEFAULT 0,
  full_seconds DOUBLE NOT NULL DEFAULT 0,
  held_seconds DOUBLE NOT NULL DEFAULT 0,
  held_idle_seconds DOUBLE NOT NULL DEFAULT 0,
  PRIMARY KEY (card_id, hour_at),
  KEY ix_telemetry_hours_hour (hour_at),
  CONSTRAINT fk_telemetry_hours_card FOREIGN KEY (card_id) REFERENCES cards (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- What each booking did with its cards, summed over its whole life.
CREATE TABLE telemetry_booking_usage (
  booking_id BIGINT NOT NULL,
  sampled_seconds DOUBLE NOT NULL DEFAULT 0,
  busy_seconds DOUBLE NOT NULL DEFAULT 0,
  held_idle_seconds DOUBLE NOT NULL DEFAULT 0,
  updated_at DATETIME(6) NOT NULL,
  PRIMARY KEY (booking_id),
  CONSTRAINT fk_telemetry_booking_usage_booking FOREIGN KEY (booking_id) REFERENCES bookings (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Alert episodes: one row from when a condition starts until it clears, so
-- an alert is raised once per episode, not once per sample.
CREATE TABLE telemetry_alerts (
  id BIGINT NOT NULL AUTO_INCREMENT,
  kind VARCHAR(32) NOT NULL,
  card_id BIGINT NULL,
  booking_id BIGINT NULL,
  value DOUBLE NOT NULL DEFAULT 0,
  started_at DATETIME(6) NOT NULL,
  ended_at DATETIME(6) NULL,
  PRIMARY KEY (id),
  KEY ix_telemetry_alerts_card (card_id, started_at),
  KEY ix_telemetry_alerts_booking (booking_id),
  KEY ix_telemetry_alerts_open (ended_at),
  CONSTRAINT fk_telemetry_alerts_card FOREIGN KEY (card_id) REFERENCES cards (id) ON DELETE CASCADE,
  CONSTRAINT fk_telemetry_alerts_booking FOREIGN KEY (booking_id) REFERENCES bookings (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE telemetry_alerts;
DROP TABLE telemetry_booking_usage;
DROP TABLE telemetry_hours;
DROP TABLE telemetry_minutes;
DROP TABLE telemetry_pending_cards;
