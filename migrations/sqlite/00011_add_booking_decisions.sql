-- +goose Up
-- A manager's decision on a booking that waited for approval: who decided
-- and when (approved or rejected), and why a rejection refused it. A
-- rejected booking ends in its own state, "rejected", and draws nothing.
ALTER TABLE bookings ADD COLUMN decided_by BIGINT NULL;
ALTER TABLE bookings ADD COLUMN decided_at DATETIME NULL;
ALTER TABLE bookings ADD COLUMN reject_reason VARCHAR(500) NOT NULL DEFAULT '';

-- +goose Down
-- The versions before know no rejected state: a rejected booking becomes
-- what it was to them, cancelled, drawing nothing as before.
UPDATE bookings SET state = 'cancelled' WHERE state = 'rejected';
ALTER TABLE bookings DROP COLUMN reject_reason;
ALTER TABLE bookings DROP COLUMN decided_at;
ALTER TABLE bookings DROP COLUMN decided_by;
