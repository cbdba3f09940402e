-- +goose Up
-- What real fleets need the telemetry to tell truthfully (issue 12).
--
-- A faulty card (status 'fault', beside active/maintenance/retired) with
-- the reading that made it so and since when; it leaves the placement pool
-- until an admin clears it.
ALTER TABLE cards ADD COLUMN fault_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE cards ADD COLUMN fault_at DATETIME NULL;
-- What an alert episode is about beyond its card and booking (the
-- processes of an unbooked or foreign use, the host of a spoofed push), as
-- a JSON object.
ALTER TABLE telemetry_alerts ADD COLUMN detail TEXT NULL;
-- The host names an agent token may report, comma-separated, lowercased;
-- empty until it is issued for hosts or reports its first one.
ALTER TABLE api_tokens ADD COLUMN hosts TEXT NOT NULL DEFAULT '';
-- The OS accounts a person runs GPU processes as, comma-separated.
ALTER TABLE users ADD COLUMN os_accounts TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE users DROP COLUMN os_accounts;
ALTER TABLE api_tokens DROP COLUMN hosts;
ALTER TABLE telemetry_alerts DROP COLUMN detail;
-- The older schema knows no faulty card: keep it out of the pool as one
-- under maintenance rather than offering it again.
UPDATE cards SET status = 'maintenance' WHERE status = 'fault';
ALTER TABLE cards DROP COLUMN fault_at;
ALTER TABLE cards DROP COLUMN fault_reason;
