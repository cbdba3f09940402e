-- +goose Up
-- The outbox as SQLite has it (TestSchemaParity): dedup keys compare
-- exactly, case included — they are built from ids and random hex, and two
-- keys differing only in case are two notices — and the index on user_id
-- that the foreign key implied is named like the others.
ALTER TABLE notify_outbox
  MODIFY dedup_key VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  DROP KEY fk_notify_outbox_user,
  ADD KEY ix_notify_outbox_user (user_id);

-- +goose Down
ALTER TABLE notify_outbox
  MODIFY dedup_key VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
  DROP KEY ix_notify_outbox_user,
  ADD KEY fk_notify_outbox_user (user_id);
