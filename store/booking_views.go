package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// BookingView is a booking with the names and figures a page shows.
type BookingView struct {
	Booking
	TaskName     string `json:"task"`
	TeamName     string `json:"team"`
	Username     string `json:"user"`
	CardTypeName string `json:"card_type"`
	// DecidedByName is the manager who approved or rejected it.
	DecidedByName string `json:"decided_by_name,omitempty"`
	// Cards are the uuids of the assigned cards, Assigned the same cards
	// as people name them.
	Cards    []string       `json:"cards" gorm:"-"`
	Assigned []AssignedCard `json:"assigned_cards" gorm:"-"`
	CostFen  int64          `json:"cost_fen" gorm:"-"`
}

// AssignedCard is a card a booking holds as people find it: on its host at
// its index ("gpu-bj-h800-01 #3", what nvidia-smi on that host shows), with
// the uuid telemetry keys it by.
type AssignedCard struct {
	UUID     string `json:"uuid"`
	Host     string `json:"host"`
	GPUIndex int    `json:"index"`
	// Label is "host #index".
	Label string `json:"label"`
}

func assignedCard(uuid, host string, index int) AssignedCard {
	return AssignedCard{UUID: uuid, Host: host, GPUIndex: index, Label: fmt.Sprintf("%s #%d", host, index)}
}

// BookingFilter narrows FindBookings.
type BookingFilter struct {
	UserID     int64
	TeamIDs    []int64 // nil = any team
	TaskID     int64
	CardTypeID int64
	States     []string
	From, To   time.Time // overlapping this window, when set
	// Query finds bookings by the name of their task, team or user (login
	// or display name), the uuid or host of a card they hold, or their
	// number ("#42" or "42").
	Query string
	// Latest lists the newest start first: a history reads backwards,
	// what is coming reads soonest first.
	Latest bool
	Limit  int
}

const bookingViewColumns = "b.*, t.name AS task_name, tm.name AS team_name, u.username AS username, ct.name AS card_type_name, d.username AS decided_by_name"

// bookingsJoined is the bookings with the rows their views name, without
// a select: FindBookingPage counts it.
func (s *Store) bookingsJoined(ctx context.Context) *gorm.DB {
	return s.read(ctx).Table("bookings b").
		Joins("JOIN tasks t ON t.id = b.task_id").
		Joins("JOIN teams tm ON tm.id = b.team_id").
		Joins("JOIN users u ON u.id = b.user_id").
		Joins("JOIN card_types ct ON ct.id = b.card_type_id").
		Joins("LEFT JOIN users d ON d.id = b.decided_by")
}

func (s *Store) bookingViews(ctx context.Context) *gorm.DB {
	return s.bookingsJoined(ctx).Select(bookingViewColumns)
}

// none tells whether f can match nothing: an empty list of teams (a reader
// in no team), which SQL's IN () cannot say.
func (f BookingFilter) none() bool { return f.TeamIDs != nil && len(f.TeamIDs) == 0 }

// filterBookings narrows q by f, which is not none.
func filterBookings(q *gorm.DB, f BookingFilter) *gorm.DB {
	if f.UserID != 0 {
		q = q.Where("b.user_id = ?", f.UserID)
	}
	if f.TeamIDs != nil {
		q = q.Where("b.team_id IN ?", f.TeamIDs)
	}
	if f.TaskID != 0 {
		q = q.Where("b.task_id = ?", f.TaskID)
	}
	if f.CardTypeID != 0 {
		q = q.Where("b.card_type_id = ?", f.CardTypeID)
	}
	if len(f.States) > 0 {
		q = q.Where("b.state IN ?", f.States)
	}
	if !f.From.IsZero() {
		q = q.Where("b.end_at > ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("b.start_at < ?", f.To.UTC())
	}
	if term := searchTerm(f.Query); term != "" {
		like := likeAny(term)
		cond := "t.name LIKE @like ESCAPE '!' OR tm.name LIKE @like ESCAPE '!' OR u.username LIKE @like ESCAPE '!' OR u.display_name LIKE @like ESCAPE '!'" +
			" OR b.id IN (SELECT bc.booking_id FROM booking_cards bc JOIN cards c ON c.id = bc.card_id JOIN hosts h ON h.id = c.host_id" +
			" WHERE c.uuid LIKE @like ESCAPE '!' OR h.name LIKE @like ESCAPE '!')"
		args := map[string]any{"like": like}
		if n, err := strconv.ParseInt(strings.TrimPrefix(term, "#"), 10, 64); err == nil && n > 0 {
			cond, args["id"] = "b.id = @id OR "+cond, n
		}
		q = q.Where("("+cond+")", args)
	}
	return q
}

func bookingOrder(f BookingFilter) string {
	if f.Latest {
		return "b.start_at DESC, b.id DESC"
	}
	return "b.start_at, b.id"
}

// FindBookingByID returns one booking with its cards.
func (s *Store) FindBookingByID(ctx context.Context, id int64) (*BookingView, error) {
	const op = "store.FindBookingByID"
	var out []BookingView
	if err := s.bookingViews(ctx).Where("b.id = ?", id).Scan(&out).Error; err != nil {
		return nil, translate(op, err)
	}
	if len(out) == 0 {
		return nil, errs.E(errs.NotFound, op, "booking.not_found")
	}
	if err := s.fillCards(ctx, out); err != nil {
		return nil, translate(op, err)
	}
	return &out[0], nil
}

// FindBookings lists bookings, soonest first (f.Latest: newest first), at
// most f.Limit (default 500).
func (s *Store) FindBookings(ctx context.Context, f BookingFilter) ([]BookingView, error) {
	const op = "store.FindBookings"
	if f.none() {
		return nil, nil
	}
	var out []BookingView
	if err := filterBookings(s.bookingViews(ctx), f).Order(bookingOrder(f)).Limit(limitOr(f.Limit, 500)).Scan(&out).Error; err != nil {
		return nil, translate(op, err)
	}
	if err := s.fillCards(ctx, out); err != nil {
		return nil, translate(op, err)
	}
	return out, nil
}

// FindBookingPage is one page of the bookings f selects, in FindBookings'
// order, with how many it selects in all (f.Limit is not used).
func (s *Store) FindBookingPage(ctx context.Context, f BookingFilter, r PageRequest) (Page[BookingView], error) {
	const op = "store.FindBookingPage"
	r = r.norm(50)
	if f.none() {
		return Page[BookingView]{Limit: r.Limit, Offset: r.Offset}, nil
	}
	query := func() *gorm.DB { return filterBookings(s.bookingsJoined(ctx), f) }
	pg, err := findPage[BookingView](query, bookingViewColumns, bookingOrder(f), r)
	if err != nil {
		return pg, translate(op, err)
	}
	if err := s.fillCards(ctx, pg.Items); err != nil {
		return pg, translate(op, err)
	}
	return pg, nil
}

func (s *Store) fillCards(ctx context.Context, views []BookingView) error {
	if len(views) == 0 {
		return nil
	}
	ids := make([]int64, len(views))
	idx := map[int64]int{}
	for i := range views {
		ids[i] = views[i].ID
		idx[views[i].ID] = i
		v := &views[i]
		v.StartAt, v.EndAt, v.SubmittedAt = v.StartAt.UTC(), v.EndAt.UTC(), v.SubmittedAt.UTC()
		v.CostFen = schedule.CostFen(v.BookedCardSeconds(), v.PriceFen)
	}
	var rows []struct {
		BookingID int64
		UUID      string `gorm:"column:uuid"`
		HostName  string
		GPUIndex  int `gorm:"column:gpu_index"`
	}
	err := s.read(ctx).Table("booking_cards bc").Select("bc.booking_id, c.uuid, h.name AS host_name, c.gpu_index").
		Joins("JOIN cards c ON c.id = bc.card_id").
		Joins("JOIN hosts h ON h.id = c.host_id").
		Where("bc.booking_id IN ?", ids).Order("c.host_id, c.gpu_index").Scan(&rows).Error
	if err != nil {
		return err
	}
	for _, r := range rows {
		v := &views[idx[r.BookingID]]
		v.Cards = append(v.Cards, r.UUID)
		v.Assigned = append(v.Assigned, assignedCard(r.UUID, r.HostName, r.GPUIndex))
	}
	return nil
}

// nameAssigned gives bookings just placed their cards' hosts and indexes:
// the placement itself knows the cards by id and uuid only, and the card
// type's lock is not held for names. Names this process read lately are
// taken as they are (cardLabels, forgotten when cards or hosts change);
// the others are read after the commit, in one query. The bookings stand
// whatever this read does; a card it cannot name keeps its uuid.
func (s *Store) nameAssigned(ctx context.Context, views ...*BookingView) {
	named, asked := map[string]AssignedCard{}, map[string]bool{}
	var unknown []string
	for _, v := range views {
		if v == nil {
			continue
		}
		for _, u := range v.Cards {
			if _, ok := named[u]; ok || asked[u] {
				continue
			}
			if c, ok := s.cardLabels.get(u); ok {
				named[u] = c
			} else {
				asked[u], unknown = true, append(unknown, u)
			}
		}
	}
	if len(unknown) > 0 {
		gen := s.cardLabels.generation()
		var rows []struct {
			UUID     string `gorm:"column:uuid"`
			HostName string
			GPUIndex int `gorm:"column:gpu_index"`
		}
		err := s.read(ctx).Table("cards c").Select("c.uuid, h.name AS host_name, c.gpu_index").
			Joins("JOIN hosts h ON h.id = c.host_id").Where("c.uuid IN ?", unknown).Scan(&rows).Error
		if err == nil {
			for _, r := range rows {
				c := assignedCard(r.UUID, r.HostName, r.GPUIndex)
				named[r.UUID] = c
				s.cardLabels.put(r.UUID, c, gen)
			}
		}
	}
	for _, v := range views {
		if v == nil || len(v.Cards) == 0 {
			continue
		}
		v.Assigned = make([]AssignedCard, 0, len(v.Cards))
		for _, u := range v.Cards {
			c, ok := named[u]
			if !ok {
				c = AssignedCard{UUID: u, Label: u}
			}
			v.Assigned = append(v.Assigned, c)
		}
	}
}
