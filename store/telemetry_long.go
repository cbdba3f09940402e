package store

import (
	"context"
	"time"

	"cardhour/errs"
)

// CardLongState is one card's hours in a period, from the hour rollups,
// when it stayed idle or full a long time: the daily lists "idle ≥ 20 h"
// and "full ≥ 20 h".
type CardLongState struct {
	CardID       int64   `json:"id"`
	UUID         string  `json:"uuid"`
	HostName     string  `json:"host"`
	GPUIndex     int     `json:"index"`
	CardTypeName string  `json:"card_type"`
	SampledHours float64 `json:"sampled_hours"`
	BusyHours    float64 `json:"busy_hours"`
	FullHours    float64 `json:"full_hours"`
	IdleHours    float64 `json:"idle_hours"` // sampled less busy
	LongIdle     bool    `json:"long_idle"`
	LongFull     bool    `json:"long_full"`
}

// FindLongStates lists the cards idle (sampled less busy) or full for at
// least minHours in [from, to), by host and index.
func (s *Store) FindLongStates(ctx context.Context, from, to time.Time, minHours float64) ([]CardLongState, error) {
	const op = "store.FindLongStates"
	v := errs.NewValidation(op)
	v.Check(to.After(from), "to", "field.period_invalid")
	v.Check(minHours > 0, "min_hours", "field.hours_range")
	if err := v.Err(); err != nil {
		return nil, err
	}
	var rows []struct {
		CardID       int64
		UUID         string `gorm:"column:uuid"`
		HostName     string
		GPUIndex     int `gorm:"column:gpu_index"`
		CardTypeName string
		Sampled      float64 `gorm:"column:sampled_s"`
		Busy         float64 `gorm:"column:busy_s"`
		Full         float64 `gorm:"column:full_s"`
	}
	minSeconds := minHours * 3600
	// The per-card sums on the hour index; the threshold in SQL keeps the
	// answer to the cards listed.
	err := s.read(ctx).Table("telemetry_hours th").
		Select("th.card_id, c.uuid, h.name AS host_name, c.gpu_index, t.name AS card_type_name, "+
			"SUM(th.sampled_seconds) AS sampled_s, SUM(th.busy_seconds) AS busy_s, SUM(th.full_seconds) AS full_s").
		Joins("JOIN cards c ON c.id = th.card_id").
		Joins("JOIN hosts h ON h.id = c.host_id").
		Joins("JOIN card_types t ON t.id = c.card_type_id").
		Where("th.hour_at >= ? AND th.hour_at < ?", from.UTC(), to.UTC()).
		Group("th.card_id, c.uuid, h.name, c.gpu_index, t.name").
		Having("SUM(th.sampled_seconds) - SUM(th.busy_seconds) >= ? OR SUM(th.full_seconds) >= ?", minSeconds, minSeconds).
		Order("h.name, c.gpu_index, th.card_id").
		Scan(&rows).Error
	if err != nil {
		return nil, translate(op, err)
	}
	out := make([]CardLongState, 0, len(rows))
	for _, r := range rows {
		idle := max(0, r.Sampled-r.Busy)
		out = append(out, CardLongState{CardID: r.CardID, UUID: r.UUID, HostName: r.HostName, GPUIndex: r.GPUIndex, CardTypeName: r.CardTypeName,
			SampledHours: r.Sampled / 3600, BusyHours: r.Busy / 3600, FullHours: r.Full / 3600, IdleHours: idle / 3600,
			LongIdle: idle >= minSeconds, LongFull: r.Full >= minSeconds})
	}
	return out, nil
}
