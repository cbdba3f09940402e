-- +goose Up
-- A running ledger of what each quota has given out, in card-seconds: every
-- change to a booking adjusts it inside the same transaction, under the card
-- type's lock. Summing the team's bookings at each request instead made each
-- booking cost more than the one before it.
ALTER TABLE quotas ADD COLUMN used_card_seconds BIGINT NOT NULL DEFAULT 0;

-- What the bookings made so far have drawn: each booking's whole seconds,
-- clipped to the quota window, up to its early end once it is over.
UPDATE quotas q SET used_card_seconds = COALESCE((
  SELECT SUM(b.card_count * TIMESTAMPDIFF(SECOND, GREATEST(b.start_at, q.valid_from),
    LEAST(CASE WHEN b.ended_at IS NOT NULL AND b.ended_at < b.end_at AND b.state NOT IN ('pending', 'confirmed', 'active') THEN b.ended_at ELSE b.end_at END, q.expires_at)))
  FROM bookings b
  WHERE b.team_id = q.team_id AND b.card_type_id = q.card_type_id AND b.state <> 'cancelled'
    AND b.start_at < q.expires_at AND b.end_at > q.valid_from
    AND LEAST(CASE WHEN b.ended_at IS NOT NULL AND b.ended_at < b.end_at AND b.state NOT IN ('pending', 'confirmed', 'active') THEN b.ended_at ELSE b.end_at END, q.expires_at) > GREATEST(b.start_at, q.valid_from)
), 0);

-- Every transaction that takes a card type's lock raises its generation,
-- so a process knows whether the placement book it keeps in memory for the
-- type is still current.
ALTER TABLE card_types ADD COLUMN booking_gen BIGINT NOT NULL DEFAULT 0;

-- Reading a type's book needs its held assignments that have not ended.
CREATE INDEX ix_booking_cards_type_end ON booking_cards (card_type_id, held, end_at);

-- +goose Down
DROP INDEX ix_booking_cards_type_end ON booking_cards;
ALTER TABLE card_types DROP COLUMN booking_gen;
ALTER TABLE quotas DROP COLUMN used_card_seconds;
