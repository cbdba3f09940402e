-- +goose Up
-- The index MySQL's foreign key on user_id needs, here too
-- (TestSchemaParity); dedup keys already compare exactly (BINARY).
CREATE INDEX ix_notify_outbox_user ON notify_outbox (user_id);

-- +goose Down
DROP INDEX ix_notify_outbox_user;
