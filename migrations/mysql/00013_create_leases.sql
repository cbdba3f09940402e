-- +goose Up
-- Work done once across replicas (issue 14): a lease per piece of
-- background work. A replica holds a lease while expires_at is ahead and
-- renews it every few seconds; one that dies is replaced once it lapses.
-- Taken and renewed by one conditional UPDATE or INSERT each (store/leases.go),
-- never by SELECT … FOR UPDATE or GET_LOCK, so it holds on a multi-primary
-- Galera cluster too. IF NOT EXISTS: Migrate creates this table before the
-- first migration, to take its turn through a "migrate" lease.
CREATE TABLE IF NOT EXISTS leases (
  name VARCHAR(64) NOT NULL,
  holder VARCHAR(191) NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  renewed_at DATETIME(6) NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- An open alert episode's identity (kind, card, booking; a spoof's detail),
-- NULL once it closes: unique, so two replicas opening the same episode at
-- once store it once.
ALTER TABLE telemetry_alerts ADD COLUMN open_key VARCHAR(191) NULL;
CREATE UNIQUE INDEX uq_telemetry_alerts_open_key ON telemetry_alerts (open_key);

-- +goose Down
DROP INDEX uq_telemetry_alerts_open_key ON telemetry_alerts;
ALTER TABLE telemetry_alerts DROP COLUMN open_key;
DROP TABLE leases;
