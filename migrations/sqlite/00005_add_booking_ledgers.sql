-- +goose Up
-- A running ledger of what each quota has given out, in card-seconds: every
-- change to a booking adjusts it inside the same transaction, under the card
-- type's lock. Summing the team's bookings at each request instead made each
-- booking cost more than the one before it.
ALTER TABLE quotas ADD COLUMN used_card_seconds BIGINT NOT NULL DEFAULT 0;

-- What the bookings made so far have drawn: each booking's whole seconds,
-- clipped to the quota window, up to its early end once it is over. Times
-- are read to the microsecond from the stored text, as the store does.
UPDATE quotas SET used_card_seconds = COALESCE((
  SELECT SUM(c.card_count * (((unixepoch(c.e) * 1000000 + CASE WHEN substr(c.e, 20, 1) = '.' THEN CAST(substr(substr(c.e, 21, instr(substr(c.e, 21), '+') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END)
    - (unixepoch(c.s) * 1000000 + CASE WHEN substr(c.s, 20, 1) = '.' THEN CAST(substr(substr(c.s, 21, instr(substr(c.s, 21), '+') - 1) || '000000', 1, 6) AS INTEGER) ELSE 0 END)) / 1000000))
  FROM (
    SELECT b.card_count, MAX(b.start_at, quotas.valid_from) AS s,
      MIN(CASE WHEN b.ended_at IS NOT NULL AND b.ended_at < b.end_at AND b.state NOT IN ('pending', 'confirmed', 'active') THEN b.ended_at ELSE b.end_at END, quotas.expires_at) AS e
    FROM bookings b
    WHERE b.team_id = quotas.team_id AND b.card_type_id = quotas.card_type_id AND b.state <> 'cancelled'
      AND b.start_at < quotas.expires_at AND b.end_at > quotas.valid_from
  ) c
  WHERE c.e > c.s
), 0);

-- Every transaction that takes a card type's lock raises its generation,
-- so a process knows whether the placement book it keeps in memory for the
-- type is still current.
ALTER TABLE card_types ADD COLUMN booking_gen BIGINT NOT NULL DEFAULT 0;

-- Reading a type's book needs its held assignments that have not ended.
CREATE INDEX ix_booking_cards_type_end ON booking_cards (card_type_id, held, end_at);

-- +goose Down
DROP INDEX ix_booking_cards_type_end;
ALTER TABLE card_types DROP COLUMN booking_gen;
ALTER TABLE quotas DROP COLUMN used_card_seconds;
