package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestSaveBookingRefusesTransitionsScheduleForbids: a change of state that
// schedule does not allow is an internal error and writes nothing; one it
// allows is written.
func TestSaveBookingRefusesTransitionsScheduleForbids(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 2)
		ctx := context.Background()
		ahead := w.mustBook(t, w.member, w.normal, 1, 2, 4).Booking
		now := w.mustBook(t, w.member, w.normal, 1, 0, 1).Booking
		if _, err := w.st.ReleaseBooking(as(w.member), now.ID); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			id       int64
			from, to string
		}{
			{now.ID, store.BookingCancelled, store.BookingActive},
			{ahead.ID, store.BookingConfirmed, store.BookingNoShow},
			{ahead.ID, store.BookingConfirmed, "gone"},
		} {
			err := w.st.SaveBookingState(ctx, c.id, c.to)
			if !errs.Is(err, errs.Internal) {
				t.Errorf("%s → %s: %v, want an internal error", c.from, c.to, err)
			}
			if got, err := w.st.FindBookingByID(ctx, c.id); err != nil || got.State != c.from {
				t.Errorf("after the refused %s → %s the booking is %v (%v)", c.from, c.to, got.State, err)
			}
		}
		if err := w.st.SaveBookingState(ctx, ahead.ID, store.BookingActive); err != nil {
			t.Errorf("confirmed → active: %v", err)
		}
		if got, _ := w.st.FindBookingByID(ctx, ahead.ID); got.State != store.BookingActive {
			t.Errorf("after confirmed → active the booking is %s", got.State)
		}
	})
}

// TestBookingNotesMigration rolls the structured notes back under bookings
// noted in the old English forms and applies them again: each form becomes
// its key and arguments, Down writes the text back, and Up converts it
// again.
func TestBookingNotesMigration(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 2)
		ctx := context.Background()
		cases := []struct {
			state, text string
			key         string
			args        []int64
			down        string // the text after Down, when not text
		}{
			{store.BookingPreempted, "booking #1234567890", store.NotePreemptedBy, []int64{1234567890}, ""},
			{store.BookingPreempted, "core task", store.NotePreempted, nil, ""},
			{store.BookingPreempted, "booking #0 (generated)", store.NotePreempted, nil, "core task"},
			{store.BookingCancelled, "window passed while waiting (approval)", store.NoteExpired(store.WaitApproval), nil, ""},
			{store.BookingCancelled, "window passed while waiting (capacity)", store.NoteExpired(store.WaitCapacity), nil, ""},
			{store.BookingCancelled, "window passed while waiting (data)", store.NoteExpired(store.WaitData), nil, ""},
			{store.BookingNoShow, "nothing ran on its cards in the first 30 min", store.NoteNoShow, []int64{30}, ""},
			{store.BookingCompleted, "", "", nil, ""},
			{store.BookingCancelled, "kept as it was", "kept as it was", nil, ""},
		}
		ids := make([]int64, len(cases))
		for i := range cases {
			ids[i] = w.mustBook(t, w.member, w.normal, 1, float64(2*i), float64(2*i+1)).Booking.ID
		}
		if err := w.st.MigrateDownTo(ctx, 7); err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			if _, err := w.st.DB().Exec("UPDATE bookings SET state = ?, state_note = ? WHERE id = ?", c.state, c.text, ids[i]); err != nil {
				t.Fatal(err)
			}
		}
		checkUp := func(pass string) {
			t.Helper()
			if err := w.st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			for i, c := range cases {
				b, err := w.st.FindBookingByID(ctx, ids[i])
				if err != nil {
					t.Fatal(err)
				}
				var args []int64
				for j := range b.NoteArgs {
					n, ok := b.NoteArgs.Int64(j)
					if !ok {
						t.Errorf("%s: %q: argument %d is %#v, not a number", pass, c.text, j, b.NoteArgs[j])
					}
					args = append(args, n)
				}
				if b.NoteKey != c.key || !slices.Equal(args, c.args) {
					t.Errorf("%s: %q became %q %v, want %q %v", pass, c.text, b.NoteKey, args, c.key, c.args)
				}
			}
		}
		checkUp("up")
		if err := w.st.MigrateDownTo(ctx, 7); err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			var text string
			if err := w.st.DB().QueryRow("SELECT state_note FROM bookings WHERE id = ?", ids[i]).Scan(&text); err != nil {
				t.Fatal(err)
			}
			want := c.text
			if c.down != "" {
				want = c.down
			}
			if text != want {
				t.Errorf("down: %q became %q, want %q", c.text, text, want)
			}
		}
		checkUp("up again")
	})
}

// TestTickNotesAnExpiredWaitWithItsReason: a request queued until its
// window passed is cancelled with the note of its wait reason.
func TestTickNotesAnExpiredWaitWithItsReason(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 1)
		ctx := context.Background()
		w.mustBook(t, w.member, w.normal, 1, 0, 3)
		queued, err := w.st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1,
			Start: w.at(1), End: w.at(2), Queue: true})
		if err != nil || queued.Booking.State != store.BookingPending {
			t.Fatalf("queued request: %+v, %v", queued, err)
		}
		w.clock.Advance(2 * time.Hour)
		if _, err := w.st.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := w.st.FindBookingByID(ctx, queued.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != store.BookingCancelled || got.NoteKey != store.NoteExpired(store.WaitCapacity) || len(got.NoteArgs) != 0 {
			t.Errorf("expired request: %s %q %v, want cancelled with %q", got.State, got.NoteKey, got.NoteArgs, store.NoteExpired(store.WaitCapacity))
		}
	})
}
