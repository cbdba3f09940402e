package store_test

import (
	"fmt"
	"testing"

	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestBookingPagesCountAndSearch: a page of bookings holds at most its
// limit, says how many the filter selects in all, and the pages together
// are the whole list in order; the search finds bookings by task, team and
// user name, a card's uuid or host, and number, its wildcards taken
// literally.
func TestBookingPagesCountAndSearch(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 4)
		// Seven one-card bookings of "eval", one after the other, and one
		// of the other team's "detector".
		var ids []int64
		for i := range 7 {
			ids = append(ids, w.mustBook(t, w.member, w.normal, 1, float64(2*i+1), float64(2*i+2)).Booking.ID)
		}
		other := w.mustBook(t, w.outsider, w.otherTask, 1, 1, 2).Booking.ID
		ctx := as(w.admin)
		mine := store.BookingFilter{TeamIDs: []int64{w.team.ID}}

		var got []int64
		for off := 0; off < 10; off += 3 {
			pg, err := w.st.FindBookingPage(ctx, mine, store.PageRequest{Limit: 3, Offset: off})
			if err != nil {
				t.Fatal(err)
			}
			if pg.Total != 7 || pg.Limit != 3 || pg.Offset != off || len(pg.Items) > 3 {
				t.Fatalf("page at %d: total %d, limit %d, offset %d, %d rows", off, pg.Total, pg.Limit, pg.Offset, len(pg.Items))
			}
			for _, b := range pg.Items {
				got = append(got, b.ID)
				if b.TaskName != "eval" || b.TeamName != "llm" || len(b.Cards) != 1 {
					t.Errorf("row %+v lacks its names or cards", b)
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Errorf("pages of 3 = %v, want %v soonest first", got, ids)
		}
		latest, err := w.st.FindBookingPage(ctx, store.BookingFilter{TeamIDs: []int64{w.team.ID}, Latest: true}, store.PageRequest{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(latest.Items) != 2 || latest.Items[0].ID != ids[6] || latest.Items[1].ID != ids[5] {
			t.Errorf("latest first = %v, want %d, %d", latest.Items, ids[6], ids[5])
		}
		none, err := w.st.FindBookingPage(ctx, store.BookingFilter{TeamIDs: []int64{}}, store.PageRequest{})
		if err != nil || none.Total != 0 || len(none.Items) != 0 || none.Limit != 50 {
			t.Errorf("no teams: %+v %v, want an empty page of the default size", none, err)
		}

		cardOf := func(id int64) string {
			b, err := w.st.FindBookingByID(ctx, id)
			if err != nil || len(b.Cards) == 0 {
				t.Fatalf("booking %d: %v", id, err)
			}
			return b.Cards[0]
		}
		for _, tc := range []struct {
			query string
			want  int64 // how many match, of all eight
		}{
			{"eval", 7}, {"EVAL", 7}, {"detect", 1}, {"visio", 1}, {"dev", 7}, {"DEV", 7}, {"stranger", 1},
			{cardOf(other), 1}, {"gpu-01", 8}, {fmt.Sprintf("#%d", other), 1}, {fmt.Sprintf("#%d", ids[2]), 1},
			{"%", 0}, {"_", 0}, {"nothing like it", 0},
		} {
			pg, err := w.st.FindBookingPage(ctx, store.BookingFilter{Query: tc.query}, store.PageRequest{})
			if err != nil {
				t.Fatalf("search %q: %v", tc.query, err)
			}
			if pg.Total != tc.want || len(pg.Items) != int(tc.want) {
				t.Errorf("search %q: total %d, %d rows, want %d", tc.query, pg.Total, len(pg.Items), tc.want)
			}
		}
		// The search narrows what the other filters chose, never widens it.
		pg, err := w.st.FindBookingPage(ctx, store.BookingFilter{TeamIDs: []int64{w.team.ID}, Query: "detector"}, store.PageRequest{})
		if err != nil || pg.Total != 0 {
			t.Errorf("another team's task searched within my team: %d, %v", pg.Total, err)
		}
	})
}

// TestTaskAndCardPagesFilterAndSearch: the task list filters by priority
// and readiness and finds tasks by task, team and author name; the card
// list finds cards by uuid, host, zone and type; both count the whole.
func TestTaskAndCardPagesFilterAndSearch(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 3)
		ctx := as(w.admin)
		if _, err := w.st.CreateTask(as(w.member), store.TaskInput{TeamID: w.team.ID, Name: "100%_tuned", Priority: schedule.Core,
			EstimateCardHours: 10, DataReadiness: schedule.DataPartial}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			f    store.TaskFilter
			want int64
		}{
			{store.TaskFilter{}, 5},
			{store.TaskFilter{TeamIDs: []int64{w.team.ID}}, 4},
			{store.TaskFilter{TeamIDs: []int64{}}, 0},
			{store.TaskFilter{Priority: schedule.Core}, 2},
			{store.TaskFilter{Readiness: schedule.DataPartial}, 1},
			{store.TaskFilter{Query: "VISION"}, 1},
			{store.TaskFilter{Query: "stranger"}, 1},
			{store.TaskFilter{Query: "DEV", TeamIDs: []int64{w.team.ID}}, 4},
			{store.TaskFilter{Query: "100%"}, 1},
			{store.TaskFilter{Query: "0%_t"}, 1},
			{store.TaskFilter{Query: "%"}, 1},
			{store.TaskFilter{Query: "pre", Priority: schedule.Core}, 1},
		} {
			pg, err := w.st.FindTaskPage(ctx, tc.f, store.PageRequest{Limit: 2})
			if err != nil {
				t.Fatalf("%+v: %v", tc.f, err)
			}
			if pg.Total != tc.want || len(pg.Items) != int(min(tc.want, 2)) {
				t.Errorf("tasks %+v: total %d, %d rows, want %d", tc.f, pg.Total, len(pg.Items), tc.want)
			}
		}
		all, err := w.st.FindTaskPage(ctx, store.TaskFilter{TeamIDs: []int64{w.team.ID}}, store.PageRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, task := range all.Items {
			names = append(names, task.Name)
		}
		if fmt.Sprint(names) != "[100%_tuned pretrain eval sweep]" {
			t.Errorf("tasks in order %v, want core first, then by name", names)
		}

		host2 := MustHost(t, w.st, "gpu-02")
		l40s := MustCardType(t, w.st, "L40S")
		MustCard(t, w.st, "GPU-99999999-aaaa-bbbb-cccc-999999999999", 0, host2.ID, l40s.ID)
		for _, tc := range []struct {
			f    store.CardFilter
			want int64
		}{
			{store.CardFilter{}, 4},
			{store.CardFilter{Query: "gpu-02"}, 1},
			{store.CardFilter{Query: "l40"}, 1},
			{store.CardFilter{Query: "999999"}, 1},
			{store.CardFilter{Query: "gpu-0000000"}, 3},
			{store.CardFilter{Query: "bj"}, 3},
			{store.CardFilter{Query: "GPU-", HostID: host2.ID}, 1},
			{store.CardFilter{Query: "_"}, 0},
		} {
			pg, err := w.st.FindCardPage(ctx, tc.f, store.PageRequest{Limit: 2, Offset: 1})
			if err != nil {
				t.Fatalf("%+v: %v", tc.f, err)
			}
			if wantRows := max(min(tc.want-1, 2), 0); pg.Total != tc.want || int64(len(pg.Items)) != wantRows {
				t.Errorf("cards %+v: total %d, %d rows, want %d and %d rows", tc.f, pg.Total, len(pg.Items), tc.want, wantRows)
			}
		}
	})
}
