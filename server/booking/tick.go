package booking

import (
	"context"
	"time"

	"cardhour/server/area"
	"cardhour/store"
)

// tickEvery is how often bookings move along with the clock: confirmed to
// active at their start, to completed at their end, and queued requests
// onto freed cards.
const tickEvery = 10 * time.Second

// Jobs is the booking tick. Every process runs one; Tick is idempotent
// and serialised per card type, so several processes agree.
func (a *Area) Jobs() []area.Job {
	return []area.Job{{Name: "booking tick", Every: tickEvery, Run: a.tick, Once: "booking tick"}}
}

func (a *Area) tick(ctx context.Context) error {
	res, err := a.Store.Tick(ctx)
	if err == nil && res != (store.TickResult{}) {
		a.Log.Debug("bookings ticked", "activated", res.Activated, "completed", res.Completed, "expired", res.Expired, "back_to_data", res.BackToData)
	}
	return err
}
