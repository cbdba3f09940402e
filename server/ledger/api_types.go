package ledger

import (
	"cardhour/store"
)

// outputRequest is the body of POST /api/v1/bookings/{id}/outputs.
type outputRequest struct {
	Quantity   *float64 `json:"quantity"`
	Unit       string   `json:"unit"`
	Note       string   `json:"note"`
	CorrectsID int64    `json:"corrects_id"`
}

// kindRequest is the body of PUT /api/v1/ledger/tasks/{id}/kind.
type kindRequest struct {
	Kind *string `json:"kind"`
}

// kindJSON answers a kind change.
type kindJSON struct {
	TaskID int64  `json:"task_id"`
	Kind   string `json:"kind"`
}

// roundsJSON answers the round list.
type roundsJSON struct {
	Month  string                  `json:"month"`
	Zone   string                  `json:"zone"`
	Rounds []store.LedgerRoundView `json:"rounds"`
}
