package web

// CardRow is a card as lists and the board show it.
type CardRow struct {
	ID           int64
	UUID         string
	GPUIndex     int
	HostID       int64
	HostName     string
	Zone         string
	CardTypeID   int64
	CardTypeName string
	VRAMGiB      int
	Status       string
	FaultReason  string // why a faulty card was taken out of new bookings
}
