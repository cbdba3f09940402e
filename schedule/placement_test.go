package schedule_test

import (
	"reflect"
	"testing"
	"time"

	"cardhour/schedule"
)

var t0 = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

func win(fromH, toH int) schedule.Interval {
	return schedule.Interval{Start: t0.Add(time.Duration(fromH) * time.Hour), End: t0.Add(time.Duration(toH) * time.Hour)}
}

func held(card, booking int64, fromH, toH int, prio string) schedule.Assignment {
	return schedule.Assignment{CardID: card, BookingID: booking, Interval: win(fromH, toH), Priority: prio}
}

func TestIntervalsTouchingDoNotOverlap(t *testing.T) {
	if win(0, 2).Overlaps(win(2, 4)) || !win(0, 3).Overlaps(win(2, 4)) || !win(1, 2).Overlaps(win(0, 4)) {
		t.Fatal("half-open overlap is wrong")
	}
}

func TestPlace(t *testing.T) {
	four := []int64{1, 2, 3, 4}
	cases := []struct {
		name        string
		pool        schedule.Pool
		req         schedule.Request
		wantCards   []int64
		wantPreempt []int64
		wantShort   *schedule.Shortfall
	}{
		{"empty pool: lowest ids", schedule.Pool{Cards: four}, schedule.Request{Count: 2, Interval: win(0, 2), Priority: schedule.Normal},
			[]int64{1, 2}, nil, nil},
		{"skips cards that overlap, back-to-back is fine", schedule.Pool{Cards: four, Busy: []schedule.Assignment{held(1, 9, 0, 3, schedule.Normal), held(2, 9, 0, 2, schedule.Normal)}},
			schedule.Request{Count: 2, Interval: win(2, 4), Priority: schedule.Normal}, []int64{2, 3}, nil, nil},
		{"packs densely: the card whose booking just ended first", schedule.Pool{Cards: four, Busy: []schedule.Assignment{held(3, 7, 0, 2, schedule.Normal), held(4, 8, 0, 1, schedule.Normal)}},
			schedule.Request{Count: 1, Interval: win(2, 3), Priority: schedule.Normal}, []int64{3}, nil, nil},
		{"not enough free cards", schedule.Pool{Cards: four, Busy: []schedule.Assignment{held(1, 9, 0, 5, schedule.Core), held(2, 9, 0, 5, schedule.Core), held(3, 9, 0, 5, schedule.Core)}},
			schedule.Request{Count: 2, Interval: win(1, 2), Priority: schedule.Normal}, nil, nil, &schedule.Shortfall{Wanted: 2, Free: 1}},
		{"core preempts backfill only", schedule.Pool{Cards: four, Busy: []schedule.Assignment{held(1, 11, 0, 5, schedule.Backfill), held(2, 12, 0, 5, schedule.Normal), held(3, 13, 0, 5, schedule.Backfill), held(4, 13, 0, 5, schedule.Backfill)}},
			schedule.Request{Count: 2, Interval: win(1, 2), Priority: schedule.Core, MayPreempt: true}, []int64{1, 3}, []int64{11, 13}, nil},
		{"free cards before preemption", schedule.Pool{Cards: four, Busy: []schedule.Assignment{held(1, 11, 0, 5, schedule.Backfill), held(2, 12, 0, 5, schedule.Backfill)}},
			schedule.Request{Count: 3, Interval: win(1, 2), Priority: schedule.Core, MayPreempt: true}, []int64{3, 4, 1}, []int64{11}, nil},
		{"normal never preempts", schedule.Pool{Cards: four, Busy: []schedule.Assignment{held(1, 11, 0, 5, schedule.Backfill), held(2, 11, 0, 5, schedule.Backfill), held(3, 11, 0, 5, schedule.Backfill)}},
			schedule.Request{Count: 2, Interval: win(1, 2), Priority: schedule.Normal, MayPreempt: true}, nil, nil, &schedule.Shortfall{Wanted: 2, Free: 1}},
		{"a card held by backfill and normal cannot be preempted", schedule.Pool{Cards: []int64{1}, Busy: []schedule.Assignment{held(1, 11, 0, 2, schedule.Backfill), held(1, 12, 2, 5, schedule.Normal)}},
			schedule.Request{Count: 1, Interval: win(1, 3), Priority: schedule.Core, MayPreempt: true}, nil, nil, &schedule.Shortfall{Wanted: 1, Free: 0}},
		{"core reserve holds cards back from normal work", schedule.Pool{Cards: four, CoreReserve: 1, Busy: []schedule.Assignment{held(1, 9, 0, 5, schedule.Normal)}},
			schedule.Request{Count: 3, Interval: win(1, 2), Priority: schedule.Normal}, nil, nil, &schedule.Shortfall{Wanted: 3, Free: 2, Reserved: true}},
		{"core reserve is usable by core", schedule.Pool{Cards: four, CoreReserve: 1, Busy: []schedule.Assignment{held(1, 9, 0, 5, schedule.Normal)}},
			schedule.Request{Count: 3, Interval: win(1, 2), Priority: schedule.Core}, []int64{2, 3, 4}, nil, nil},
		{"reserve counts the busiest instant only", schedule.Pool{Cards: four, CoreReserve: 1, Busy: []schedule.Assignment{held(1, 9, 0, 2, schedule.Normal), held(2, 10, 2, 4, schedule.Normal)}},
			schedule.Request{Count: 2, Interval: win(0, 4), Priority: schedule.Normal}, []int64{3, 4}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, short := schedule.Place(c.pool, c.req)
			if !reflect.DeepEqual(short, c.wantShort) {
				t.Fatalf("shortfall = %+v, want %+v", short, c.wantShort)
			}
			if !reflect.DeepEqual(got.Cards, c.wantCards) || !reflect.DeepEqual(got.Preempt, c.wantPreempt) {
				t.Errorf("placed %v preempting %v, want %v preempting %v", got.Cards, got.Preempt, c.wantCards, c.wantPreempt)
			}
		})
	}
}

func TestOrderQueueCoreThenReadyThenFirstCome(t *testing.T) {
	q := []schedule.Waiting{
		{BookingID: 1, Priority: schedule.Backfill, Readiness: schedule.DataReady, Submitted: t0},
		{BookingID: 2, Priority: schedule.Normal, Readiness: schedule.DataNotReady, Submitted: t0},
		{BookingID: 3, Priority: schedule.Normal, Readiness: schedule.DataReady, Submitted: t0.Add(time.Minute)},
		{BookingID: 4, Priority: schedule.Core, Readiness: schedule.DataPartial, Submitted: t0.Add(time.Hour)},
		{BookingID: 5, Priority: schedule.Normal, Readiness: schedule.DataReady, Submitted: t0},
	}
	schedule.OrderQueue(q)
	var got []int64
	for _, w := range q {
		got = append(got, w.BookingID)
	}
	if want := []int64{4, 5, 3, 2, 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestPeakCards(t *testing.T) {
	spans := []schedule.Span{
		{Interval: win(0, 2), N: 2},
		{Interval: win(2, 4), N: 3}, // touches the first: no sum
		{Interval: win(3, 6), N: 1},
		{Interval: win(10, 12), N: 8}, // outside the window
	}
	if got := schedule.PeakCards(spans, win(0, 8)); got != 4 {
		t.Errorf("peak = %d, want 4", got)
	}
	if got := schedule.PeakCards(spans, win(0, 1)); got != 2 {
		t.Errorf("peak in the first hour = %d, want 2", got)
	}
}
