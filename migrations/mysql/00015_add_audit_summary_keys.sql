-- +goose Up
-- An audit summary in the catalogue's words: a message key and its
-- arguments (a JSON array of {"v": text} | {"k": key} | {"t": time}),
-- translated when shown, so a zh-CN reader is not handed "returned 4.0
-- card-hours". Entries written before keep their summary text, shown as
-- stored. The indexes serve the log's filters by action (the sign-ins have
-- a view of their own) and by who acted, newest first.
-- (TEXT: the arguments may hold a long name; a TEXT column takes no default
-- on MySQL 5.7, so NULL means none.)
ALTER TABLE audit_log ADD COLUMN summary_key VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN summary_args TEXT NULL;
CREATE INDEX ix_audit_log_action ON audit_log (action, id);
CREATE INDEX ix_audit_log_actor ON audit_log (actor_name, id);

-- +goose Down
DROP INDEX ix_audit_log_actor ON audit_log;
DROP INDEX ix_audit_log_action ON audit_log;
ALTER TABLE audit_log DROP COLUMN summary_args;
ALTER TABLE audit_log DROP COLUMN summary_key;
