-- +goose Up
-- A booking's note becomes structured, as notifications are: state_note
-- holds a message key of the web catalogues and state_note_args its
-- arguments as a JSON array, so pages render the note in the reader's
-- language and nothing parses facts back out of English text.
ALTER TABLE bookings ADD COLUMN state_note_args TEXT NOT NULL DEFAULT '[]';

-- "booking #N" (preempted by booking N) → note.preempted_by [N].
UPDATE bookings SET state_note_args = '[' || SUBSTR(state_note, 10) || ']', state_note = 'note.preempted_by'
  WHERE state = 'preempted' AND state_note LIKE 'booking #%'
    AND SUBSTR(state_note, 10) <> '' AND SUBSTR(state_note, 10) NOT GLOB '*[^0-9]*';
-- Any other preemption note (the demo's "core task") names no booking.
UPDATE bookings SET state_note = 'note.preempted'
  WHERE state = 'preempted' AND state_note <> '' AND state_note NOT LIKE 'note.%';
-- "window passed while waiting (REASON)" → note.expired.REASON.
UPDATE bookings SET state_note = 'note.expired.' || SUBSTR(state_note, 30, LENGTH(state_note) - 30)
  WHERE state = 'cancelled' AND state_note LIKE 'window passed while waiting (%)'
    AND SUBSTR(state_note, 30, LENGTH(state_note) - 30) IN ('approval', 'capacity', 'data');
-- "nothing ran on its cards in the first N min" → note.no_show [N].
UPDATE bookings SET state_note_args = '[' || SUBSTR(state_note, 39, LENGTH(state_note) - 42) || ']', state_note = 'note.no_show'
  WHERE state = 'no_show' AND state_note LIKE 'nothing ran on its cards in the first % min'
    AND SUBSTR(state_note, 39, LENGTH(state_note) - 42) <> '' AND SUBSTR(state_note, 39, LENGTH(state_note) - 42) NOT GLOB '*[^0-9]*';

-- +goose Down
UPDATE bookings SET state_note = 'booking #' || SUBSTR(state_note_args, 2, LENGTH(state_note_args) - 2)
  WHERE state_note = 'note.preempted_by';
UPDATE bookings SET state_note = 'core task' WHERE state_note = 'note.preempted';
UPDATE bookings SET state_note = 'window passed while waiting (' || SUBSTR(state_note, 14) || ')'
  WHERE state_note LIKE 'note.expired.%';
UPDATE bookings SET state_note = 'nothing ran on its cards in the first ' || SUBSTR(state_note_args, 2, LENGTH(state_note_args) - 2) || ' min'
  WHERE state_note = 'note.no_show';
ALTER TABLE bookings DROP COLUMN state_note_args;
