package servertest

// Booking is the part of a booking's JSON the tests read.
type Booking struct {
	ID                int64    `json:"id"`
	TaskID            int64    `json:"task_id"`
	State             string   `json:"state"`
	Kind              string   `json:"kind"`
	Priority          string   `json:"priority"`
	Count             int      `json:"count"`
	Start             string   `json:"start"`
	End               string   `json:"end"`
	Cards             []string `json:"cards"`
	PriceFen          int64    `json:"price_fen"`
	CostFen           int64    `json:"cost_fen"`
	Note              string   `json:"note"`
	NoteKey           string   `json:"note_key"`
	NoteArgs          []int64  `json:"note_args"`
	WaitReason        string   `json:"wait_reason"`
	Preempted         []int64  `json:"preempted"`
	CardType          string   `json:"card_type"`
	ReturnedCardHours float64  `json:"returned_card_hours"`
	ReturnedFen       int64    `json:"returned_fen"`
}
