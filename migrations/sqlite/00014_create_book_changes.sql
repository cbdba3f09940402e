-- +goose Up
-- The change log of the placement books (store/booking_changes.go): what
-- each generation of a card type changed of its held assignments and quota
-- totals, written in the transaction that raised card_types.booking_gen.
-- A process whose book is at generation g reads the rows past g instead of
-- every held assignment of the type. Every generation has at least one row
-- (kind none when it changed nothing, reset when the change cannot be
-- replayed), so a missing generation means pruned: read the book whole.
--
-- kind is held, quota, none or reset; the rows of one generation are
-- written by one statement with one created_at, so pruning by age takes a
-- generation whole or not at all.
CREATE TABLE book_changes (
  card_type_id BIGINT NOT NULL,
  generation BIGINT NOT NULL,
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  booking_id BIGINT NOT NULL DEFAULT 0,
  card_id BIGINT NOT NULL DEFAULT 0,
  team_id BIGINT NOT NULL DEFAULT 0,
  priority TEXT NOT NULL DEFAULT '',
  start_at DATETIME NULL,
  end_at DATETIME NULL,
  quota_id BIGINT NOT NULL DEFAULT 0,
  delta BIGINT NOT NULL DEFAULT 0,
  created_at DATETIME NOT NULL,
  PRIMARY KEY (card_type_id, generation, seq)
);
CREATE INDEX ix_book_changes_created ON book_changes (created_at);

-- +goose Down
DROP TABLE book_changes;
