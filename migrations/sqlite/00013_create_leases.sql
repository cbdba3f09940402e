-- +goose Up
-- Work done once across replicas (issue 14): a lease per piece of
-- background work. A replica holds a lease while expires_at is ahead and
-- renews it every few seconds; one that dies is replaced once it lapses.
-- Taken and renewed by one conditional UPDATE or INSERT each (store/leases.go).
CREATE TABLE IF NOT EXISTS leases (
  name TEXT NOT NULL COLLATE NOCASE PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at DATETIME NOT NULL,
  renewed_at DATETIME NOT NULL
);

-- An open alert episode's identity (kind, card, booking; a spoof's detail),
-- NULL once it closes: unique, so two replicas opening the same episode at
-- once store it once.
ALTER TABLE telemetry_alerts ADD COLUMN open_key TEXT NULL COLLATE NOCASE;
CREATE UNIQUE INDEX uq_telemetry_alerts_open_key ON telemetry_alerts (open_key);

-- +goose Down
DROP INDEX uq_telemetry_alerts_open_key;
ALTER TABLE telemetry_alerts DROP COLUMN open_key;
DROP TABLE leases;
