package store

import (
	"context"
	"time"
)

// Availability is the free cards of one card type per hour.
type Availability struct {
	CardTypeID int64     `json:"card_type_id"`
	Name       string    `json:"card_type"`
	Total      int       `json:"total"`
	Free       []int     `json:"free"` // one entry per hour from From
	From       time.Time `json:"from"`
}

// FindAvailability counts, for each card type and each hour of the window
// starting at the hour of from, the cards no booking holds during that whole
// hour.
func (s *Store) FindAvailability(ctx context.Context, from time.Time, hoursN int) ([]Availability, error) {
	const op = "store.FindAvailability"
	from = from.UTC().Truncate(time.Hour)
	to := from.Add(time.Duration(hoursN) * time.Hour)
	types, err := s.FindCardTypes(ctx)
	if err != nil {
		return nil, err
	}
	var totals []struct {
		CardTypeID int64
		N          int
	}
	if err := s.read(ctx).Model(&Card{}).Select("card_type_id, COUNT(*) AS n").Where("status = ?", CardActive).
		Group("card_type_id").Scan(&totals).Error; err != nil {
		return nil, translate(op, err)
	}
	// Thousands of rows: read them without gorm's reflection, in card and
	// start order, so a card's back-to-back bookings meet one after another.
	rows, err := s.read(ctx).Raw("SELECT card_id, card_type_id, start_at, end_at FROM booking_cards WHERE held = ? AND start_at < ? AND end_at > ? ORDER BY card_id, start_at",
		true, to, from).Rows()
	if err != nil {
		return nil, translate(op, err)
	}
	defer rows.Close()
	index := map[int64]int{}
	out := make([]Availability, len(types))
	for i, t := range types {
		index[t.ID] = i
		out[i] = Availability{CardTypeID: t.ID, Name: t.Name, From: from, Free: make([]int, hoursN)}
	}
	for _, t := range totals {
		if i, ok := index[t.CardTypeID]; ok {
			out[i].Total = t.N
		}
	}
	// busy[type][hour] counts cards held at any moment of that hour; a card
	// held twice in one hour (back-to-back bookings) counts once: rows come
	// by card and start, so it is enough to remember the last hour counted
	// for the current card.
	busy := make([][]int, len(types))
	for i := range busy {
		busy[i] = make([]int, hoursN)
	}
	var card, typeID, lastCard int64
	var start, end time.Time
	lastHour := -1
	for rows.Next() {
		if err := rows.Scan(&card, &typeID, &start, &end); err != nil {
			return nil, translate(op, err)
		}
		i, ok := index[typeID]
		if !ok {
			continue
		}
		if card != lastCard {
			lastCard, lastHour = card, -1
		}
		first := int(start.UTC().Sub(from) / time.Hour)
		last := int((end.UTC().Sub(from) - 1) / time.Hour)
		for hr := max(first, lastHour+1, 0); hr <= last && hr < hoursN; hr++ {
			busy[i][hr]++
			lastHour = hr
		}
	}
	if err := rows.Err(); err != nil {
		return nil, translate(op, err)
	}
	for i := range out {
		for hr := range out[i].Free {
			out[i].Free[hr] = max(out[i].Total-busy[i][hr], 0)
		}
	}
	return out, nil
}
