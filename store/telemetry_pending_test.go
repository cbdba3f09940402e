package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestPendingCardsPageNewestFirst(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 1)
		ctx := context.Background()
		for i := range 3 {
			err := w.st.RecordUnknownCards(ctx, []store.UnknownCard{{UUID: fmt.Sprintf("GPU-2222222%d-2222-3333-4444-555555555555", i),
				Host: "gpu-new-01", Index: i, SeenAt: w.clock.Now().Add(time.Duration(i) * time.Minute)}})
			if err != nil {
				t.Fatal(err)
			}
		}
		page, total, err := w.st.FindPendingCardsPage(ctx, 2, 0)
		if err != nil || total != 3 || len(page) != 2 || page[0].GPUIndex != 2 || page[1].GPUIndex != 1 {
			t.Fatalf("first page %+v total %d %v", page, total, err)
		}
		page, total, err = w.st.FindPendingCardsPage(ctx, 2, 2)
		if err != nil || total != 3 || len(page) != 1 || page[0].GPUIndex != 0 {
			t.Errorf("second page %+v total %d %v", page, total, err)
		}
		if all, _, err := w.st.FindPendingCardsPage(ctx, 500, 0); err != nil || len(all) != 3 {
			t.Errorf("all %d %v", len(all), err)
		}
		for _, c := range []struct{ limit, offset int }{{0, 0}, {501, 0}, {10, -1}} {
			if _, _, err := w.st.FindPendingCardsPage(ctx, c.limit, c.offset); !errs.Is(err, errs.Invalid) {
				t.Errorf("limit %d offset %d: %v", c.limit, c.offset, err)
			}
		}
	})
}
