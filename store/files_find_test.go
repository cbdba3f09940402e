package store_test

import (
	"fmt"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// A booking ran with each file's newest version at its start.
func TestFindBookingFileVersions(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newFileWorld(t, dialect)
		ctx := as(w.member)
		v1 := mustVersion(t, w.st, ctx, version(w.core, "train.sh", "v1", ""))
		cfg := mustVersion(t, w.st, ctx, version(w.core, "cfg.yaml", "c1", ""))
		first := w.mustBook(t, w.member, w.core, 1, 1, 2) // starts in 1 h
		w.clock.Advance(90 * time.Minute)
		v2 := mustVersion(t, w.st, ctx, version(w.core, "train.sh", "v2", ""))
		second := w.mustBook(t, w.member, w.core, 1, 0.5, 1.5) // starts after v2
		w.clock.Advance(2 * time.Hour)
		mustVersion(t, w.st, ctx, version(w.core, "late.txt", "after both", ""))
		other := w.mustBook(t, w.member, w.normal, 1, 1, 2)

		got, err := w.st.FindBookingFileVersions(ctx, first.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(refs(got)) != fmt.Sprint([]string{"cfg.yaml v1 " + cfg.VersionID, "train.sh v1 " + v1.VersionID}) {
			t.Errorf("first booking ran with %v", refs(got))
		}
		got, _ = w.st.FindBookingFileVersions(ctx, second.Booking.ID)
		if fmt.Sprint(refs(got)) != fmt.Sprint([]string{"cfg.yaml v1 " + cfg.VersionID, "train.sh v2 " + v2.VersionID}) {
			t.Errorf("second booking ran with %v", refs(got))
		}
		got, err = w.st.FindBookingFileVersions(ctx, other.Booking.ID)
		if err != nil || len(got) != 0 || got == nil {
			t.Errorf("a task without files: %v, %v; want an empty list", got, err)
		}

		batch, err := w.st.FindBookingsFileVersions(as(w.viewer), []int64{first.Booking.ID, second.Booking.ID, other.Booking.ID, 99999})
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) != 2 || len(batch[first.Booking.ID]) != 2 || batch[second.Booking.ID][1].No != 2 {
			t.Errorf("batch = %v", batch)
		}
		if b, err := w.st.FindBookingsFileVersions(as(w.outsider), []int64{first.Booking.ID}); err != nil || len(b) != 0 {
			t.Errorf("an outsider's batch = %v, %v; want nothing", b, err)
		}
		_, err = w.st.FindBookingFileVersions(as(w.outsider), first.Booking.ID)
		storetest.AssertCode(t, err, errs.NotFound, "files.team_only")
		_, err = w.st.FindBookingFileVersions(ctx, 99999)
		storetest.AssertCode(t, err, errs.NotFound, "booking.not_found")
		if b, err := w.st.FindBookingsFileVersions(as(w.admin), nil); err != nil || len(b) != 0 {
			t.Errorf("no bookings: %v, %v", b, err)
		}
	})
}

func refs(vs []store.FileVersion) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s v%d %s", v.Path, v.No, v.VersionID))
	}
	return out
}
