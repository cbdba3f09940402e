package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"
)

// TypeWaiting is how many requests for one card type wait in the queue,
// and since when the oldest waits (盯住占用与等待).
type TypeWaiting struct {
	CardTypeID  int64      `json:"card_type_id"`
	CardType    string     `json:"card_type"`
	Waiting     int        `json:"waiting"`
	OldestSince *time.Time `json:"oldest_since"`
}

// FindWaiting lists the pending bookings per card type (every wait
// reason), by card type name; types with none waiting are left out. One
// query on the bookings' (state, start_at) index.
func (s *Store) FindWaiting(ctx context.Context) ([]TypeWaiting, error) {
	const op = "store.FindWaiting"
	var rows []struct {
		CardTypeID int64
		CardType   string
		N          int
		Oldest     aggTime
	}
	err := s.read(ctx).Table("bookings b").
		Select("b.card_type_id, ct.name AS card_type, COUNT(*) AS n, MIN(b.submitted_at) AS oldest").
		Joins("JOIN card_types ct ON ct.id = b.card_type_id").
		Where("b.state = ?", BookingPending).
		Group("b.card_type_id, ct.name").
		Order("ct.name, b.card_type_id").
		Scan(&rows).Error
	if err != nil {
		return nil, translate(op, err)
	}
	out := make([]TypeWaiting, len(rows))
	for i, r := range rows {
		out[i] = TypeWaiting{CardTypeID: r.CardTypeID, CardType: r.CardType, Waiting: r.N, OldestSince: r.Oldest.t}
	}
	return out, nil
}

// aggTime scans a MIN or MAX of a time column: MySQL returns a time, but
// SQLite returns the stored text, the column's type being lost in the
// aggregate.
type aggTime struct{ t *time.Time }

// sqliteTimeLayouts are the ways SQLite holds times: the driver's own
// (_time_format=sqlite) and the bare forms.
var sqliteTimeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999"}

func (a *aggTime) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case nil:
		a.t = nil
		return nil
	case time.Time:
		u := v.UTC()
		a.t = &u
		return nil
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("store.aggTime: cannot scan %T", src)
	}
	for _, l := range sqliteTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			u := t.UTC()
			a.t = &u
			return nil
		}
	}
	return fmt.Errorf("store.aggTime: cannot parse %q", s)
}

// Value makes aggTime a column type to gorm; it is only ever read.
func (a aggTime) Value() (driver.Value, error) {
	if a.t == nil {
		return nil, nil
	}
	return *a.t, nil
}

var _ sql.Scanner = (*aggTime)(nil)
