package store

import (
	"bytes"
	"cardhour/notify"
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Alert kinds.
const (
	AlertVRAM          = "vram"           // VRAM at or above the alert share of the card's total
	AlertHeldIdle      = "held_idle"      // booked, and idle longer than the threshold
	AlertReleaseWarned = "release_warned" // the auto-release policy warned the booking
	AlertReleased      = "auto_released"  // the auto-release policy released the booking
	AlertFault         = "fault"          // the card reports itself unhealthy (reset required, unknown error, XID)
	AlertUnbooked      = "unbooked"       // load or VRAM in use on a card no booking holds
	AlertForeign       = "foreign"        // a booked card runs processes of someone outside the booking's team
	AlertSpoof         = "spoof"          // a push for a card known under another host, or from a host the token is not bound to
)

// Alert is one episode of a condition on a card or a booking: it opens
// when the condition starts and closes when it ends, so people are told
// once per episode, not once per sample.
type Alert struct {
	ID        int64      `json:"id"`
	Kind      string     `json:"kind"`
	CardID    *int64     `json:"card_id"`
	BookingID *int64     `json:"booking_id"`
	Value     float64    `json:"value"`
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at"`
	// Detail is what the episode is about beyond its card and booking (the
	// processes seen, the host a push named), a JSON object.
	Detail AlertDetail `json:"detail,omitempty" gorm:"column:detail"`
	// OpenKey is the episode's identity while it is open (alertOpenKey),
	// NULL once closed: unique, so an episode is opened once however many
	// replicas see it start.
	OpenKey *string `json:"-" gorm:"column:open_key"`
}

// alertOpenKey is what tells one open episode from another: its kind, card
// and booking, and for one on neither (a spoofed push) its detail.
func alertOpenKey(kind string, cardID, bookingID int64, detail AlertDetail) *string {
	k := fmt.Sprintf("%s:%d:%d", kind, cardID, bookingID)
	if cardID == 0 && bookingID == 0 && detail != nil {
		sum := sha256.Sum256(detail)
		k += ":" + hex.EncodeToString(sum[:16])
	}
	return &k
}

// AlertDetail is an alert's detail, a JSON object kept as it was written
// (like json.RawMessage), in a text column that is NULL when there is none.
type AlertDetail []byte

// MarshalJSON writes the detail as it is, null when there is none.
func (d AlertDetail) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("null"), nil
	}
	return d, nil
}

// Value writes the detail as text, NULL when there is none.
func (d AlertDetail) Value() (driver.Value, error) {
	if len(d) == 0 {
		return nil, nil
	}
	return string(d), nil
}

// Scan reads the column; NULL or empty text is no detail.
func (d *AlertDetail) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d = nil
	case string:
		*d = AlertDetail(v)
	case []byte:
		*d = AlertDetail(bytes.Clone(v))
	default:
		return fmt.Errorf("store.AlertDetail: cannot scan %T", src)
	}
	if len(*d) == 0 {
		*d = nil
	}
	return nil
}

// GormDataType tells gorm the detail is a column of text.
func (AlertDetail) GormDataType() string { return "string" }

// TableName maps Alert to its table.
func (Alert) TableName() string { return "telemetry_alerts" }

// AlertView is an alert with the card and booking it is about.
type AlertView struct {
	Alert
	UUID     string `json:"uuid" gorm:"column:uuid"`
	HostName string `json:"host"`
	GPUIndex int    `json:"index" gorm:"column:gpu_index"`
	TeamName string `json:"team"`
	TaskName string `json:"task"`
}

// AlertInput opens an alert.
type AlertInput struct {
	Kind      string
	CardID    int64 // 0 for a booking-wide alert, or a spoofed push naming no known card
	BookingID int64 // 0 when no booking holds the card
	Value     float64
	At        time.Time
	// Detail, when not nil, is stored as JSON (a json.RawMessage as it is).
	// An alert on neither a card nor a booking (a spoof from a host the
	// token is not bound to) is told apart from others of its kind by its
	// detail, which should then hold "host" and "token": the notification
	// names them.
	Detail any
}

// reopenWindow is how soon after its end an episode of the same condition
// on the same card and booking continues the old one rather than starting a
// new one: a restart of the portal, or a card dipping out of the condition
// for a moment, does not tell people twice.
const reopenWindow = 15 * time.Minute

// OpenAlert records the start of an episode and tells the booking's owner
// and its team's managers. An episode already open (or closed moments ago)
// for the same kind, card and booking is returned instead, without telling
// anyone again.
func (s *Store) OpenAlert(ctx context.Context, in AlertInput) (*Alert, bool, error) {
	const op = "store.OpenAlert"
	at := in.At.UTC()
	if at.IsZero() {
		at = s.now()
	}
	if err := checkAlertInput(op, in); err != nil {
		return nil, false, err
	}
	var detail AlertDetail
	if in.Detail != nil {
		b, err := json.Marshal(in.Detail)
		if err != nil {
			return nil, false, errs.Internalf(op, "alert detail: %w", err)
		}
		detail = b
	}
	var out Alert
	created := false
	key := alertOpenKey(in.Kind, in.CardID, in.BookingID, detail)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		out, created = Alert{}, false
		q := tx.Where("kind = ?", in.Kind)
		q = whereID(q, "card_id", in.CardID)
		q = whereID(q, "booking_id", in.BookingID)
		if in.CardID == 0 && in.BookingID == 0 && detail != nil {
			q = q.Where("detail = ?", string(detail))
		}
		var prev []Alert
		if err := q.Where("(ended_at IS NULL OR ended_at > ?)", at.Add(-reopenWindow)).Order("id DESC").Limit(1).Find(&prev).Error; err != nil {
			return err
		}
		if len(prev) == 1 {
			out = prev[0]
			// The newest detail (the processes seen now) replaces the old.
			newDetail := detail != nil && !bytes.Equal(out.Detail, detail)
			if out.EndedAt != nil || newDetail {
				out.EndedAt = nil
				out.OpenKey = key
				out.Value = math.Max(out.Value, in.Value)
				if detail != nil {
					out.Detail = detail
				}
				return tx.Save(&out).Error
			}
			return nil
		}
		out = Alert{Kind: in.Kind, Value: in.Value, StartedAt: at, Detail: detail, OpenKey: key}
		if in.CardID != 0 {
			id := in.CardID
			out.CardID = &id
		}
		if in.BookingID != 0 {
			id := in.BookingID
			out.BookingID = &id
		}
		if err := tx.Create(&out).Error; err != nil {
			return err
		}
		created = true
		switch in.Kind {
		case AlertFault, AlertUnbooked, AlertForeign, AlertSpoof:
			return s.notifyAdminAlert(tx, &out)
		}
		if in.BookingID == 0 {
			return nil
		}
		return s.notifyAlert(tx, &out)
	})
	if errs.Is(err, errs.Conflict) {
		// Another replica opened the same episode a moment ago: it is
		// open, once, and told by that replica.
		var open []Alert
		if ferr := s.read(ctx).Where("open_key = ?", *key).Limit(1).Find(&open).Error; ferr == nil && len(open) == 1 {
			return &open[0], false, nil
		}
	}
	if err != nil {
		return nil, false, err
	}
	return &out, created, nil
}

func whereID(q *gorm.DB, col string, id int64) *gorm.DB {
	if id == 0 {
		return q.Where(col + " IS NULL")
	}
	return q.Where(col+" = ?", id)
}

// notifyAlert tells the booking's owner and its team's managers.
func (s *Store) notifyAlert(tx *gorm.DB, a *Alert) error {
	b, to, err := bookingAudience(tx, *a.BookingID)
	if err != nil {
		return err
	}
	var task Task
	if err := tx.First(&task, b.TaskID).Error; err != nil {
		return err
	}
	where := ""
	if a.CardID != nil {
		host, index, err := cardPlace(tx, *a.CardID)
		if err != nil {
			return err
		}
		where = fmt.Sprintf("%s #%d", host, index)
	}
	link := fmt.Sprintf("/bookings/%d", b.ID)
	pct := int(math.Round(a.Value))
	var args []any
	kind := "alert_" + a.Kind
	switch a.Kind {
	case AlertVRAM, AlertHeldIdle:
		args = []any{b.ID, task.Name, where, pct}
	case AlertReleaseWarned:
		args = []any{b.ID, task.Name, pct}
	case AlertReleased:
		kind, args = notify.Released, []any{b.ID, task.Name, pct}
	default:
		return errs.Internalf("store.notifyAlert", "unknown alert kind %q", a.Kind)
	}
	// One notice per episode: its holders and managers in the bell and mail,
	// the team's robot once.
	_, err = s.tell(tx, notice{Kind: kind, Key: noticeKey(kind), Link: link, Args: args, Users: to,
		TeamID: b.TeamID, Mark: fmt.Sprintf("alert:%d", a.ID)})
	return err
}

// bookingAudience loads a booking and lists who hears of its alerts: its
// owner first, then its team's managers, each once.
func bookingAudience(tx *gorm.DB, bookingID int64) (Booking, []int64, error) {
	var b Booking
	if err := tx.First(&b, bookingID).Error; err != nil {
		return b, nil, err
	}
	var managers []int64
	if err := tx.Model(&Membership{}).Where("team_id = ? AND role = ?", b.TeamID, TeamRoleManager).Order("user_id").Pluck("user_id", &managers).Error; err != nil {
		return b, nil, err
	}
	to := []int64{b.UserID}
	for _, m := range managers {
		if m != b.UserID {
			to = append(to, m)
		}
	}
	return b, to, nil
}

// cardPlace is where a card sits, as people name it: its host and index.
func cardPlace(tx *gorm.DB, cardID int64) (host string, index int, err error) {
	var c struct {
		HostName string
		GPUIndex int `gorm:"column:gpu_index"`
	}
	err = tx.Table("cards c").Select("h.name AS host_name, c.gpu_index").Joins("JOIN hosts h ON h.id = c.host_id").
		Where("c.id = ?", cardID).Scan(&c).Error
	return c.HostName, c.GPUIndex, err
}

// CloseAlert ends the open episode of kind on the card (cardID 0: on the
// booking), recording value when it is larger (the peak VRAM, the idle
// minutes).
func (s *Store) CloseAlert(ctx context.Context, kind string, cardID, bookingID int64, value float64, at time.Time) error {
	const op = "store.CloseAlert"
	at = at.UTC()
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		q := tx.Where("kind = ? AND ended_at IS NULL", kind)
		if cardID != 0 {
			q = q.Where("card_id = ?", cardID)
		} else {
			q = whereID(q, "booking_id", bookingID)
		}
		var open []Alert
		if err := q.Find(&open).Error; err != nil {
			return err
		}
		for i := range open {
			a := &open[i]
			a.EndedAt, a.OpenKey = &at, nil
			a.Value = math.Max(a.Value, value)
			if err := tx.Save(a).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) alertViews(ctx context.Context) *gorm.DB {
	return s.read(ctx).Table("telemetry_alerts a").
		Select("a.*, COALESCE(c.uuid, '') AS uuid, COALESCE(h.name, '') AS host_name, COALESCE(c.gpu_index, 0) AS gpu_index, " +
			"COALESCE(tm.name, '') AS team_name, COALESCE(t.name, '') AS task_name").
		Joins("LEFT JOIN cards c ON c.id = a.card_id").
		Joins("LEFT JOIN hosts h ON h.id = c.host_id").
		Joins("LEFT JOIN bookings b ON b.id = a.booking_id").
		Joins("LEFT JOIN teams tm ON tm.id = b.team_id").
		Joins("LEFT JOIN tasks t ON t.id = b.task_id")
}

func scanAlerts(q *gorm.DB, op string) ([]AlertView, error) {
	var out []AlertView
	if err := q.Scan(&out).Error; err != nil {
		return nil, translate(op, err)
	}
	for i := range out {
		out[i].StartedAt = out[i].StartedAt.UTC()
		if out[i].EndedAt != nil {
			e := out[i].EndedAt.UTC()
			out[i].EndedAt = &e
		}
	}
	return out, nil
}

// FindOpenAlerts lists the episodes still open, newest first.
func (s *Store) FindOpenAlerts(ctx context.Context) ([]AlertView, error) {
	return scanAlerts(s.alertViews(ctx).Where("a.ended_at IS NULL").Order("a.started_at DESC, a.id DESC").Limit(200), "store.FindOpenAlerts")
}

// FindBookingAlerts lists a booking's alerts, newest first, for its page.
func (s *Store) FindBookingAlerts(ctx context.Context, bookingID int64) ([]AlertView, error) {
	return scanAlerts(s.alertViews(ctx).Where("a.booking_id = ?", bookingID).Order("a.started_at DESC, a.id DESC").Limit(100), "store.FindBookingAlerts")
}

// staleKinds are the episodes a portal that stopped may have left open.
var staleKinds = []string{AlertVRAM, AlertHeldIdle, AlertReleaseWarned, AlertFault, AlertUnbooked, AlertForeign, AlertSpoof}

// CloseStaleAlerts ends episodes left open before t (a portal that stopped
// without closing them); the live state opens them again if they persist.
func (s *Store) CloseStaleAlerts(ctx context.Context, t time.Time) (int64, error) {
	return s.CloseStaleAlertsExcept(ctx, t, nil)
}

// CloseStaleAlertsExcept is CloseStaleAlerts sparing the episodes for which
// live is true: those the caller's live state still raises (nil: none).
func (s *Store) CloseStaleAlertsExcept(ctx context.Context, t time.Time, live func(Alert) bool) (int64, error) {
	const op = "store.CloseStaleAlerts"
	stale := func() *gorm.DB {
		return s.read(ctx).Model(&Alert{}).Where("ended_at IS NULL AND started_at < ? AND kind IN ?", t.UTC(), staleKinds)
	}
	closed := map[string]any{"ended_at": t.UTC(), "open_key": nil}
	if live == nil {
		res := stale().Updates(closed)
		return res.RowsAffected, translate(op, res.Error)
	}
	var open []Alert
	if err := stale().Find(&open).Error; err != nil {
		return 0, translate(op, err)
	}
	var ids []int64
	for _, a := range open {
		if !live(a) {
			ids = append(ids, a.ID)
		}
	}
	var n int64
	for chunk := range slices.Chunk(ids, 500) {
		res := s.read(ctx).Model(&Alert{}).Where("id IN ? AND ended_at IS NULL", chunk).Updates(closed)
		if res.Error != nil {
			return n, translate(op, res.Error)
		}
		n += res.RowsAffected
	}
	return n, nil
}

// AutoReleaseBooking releases a booking that stayed idle past the policy's
// limit. It acts for the booking's owner (the release rules are the
// owner's), is audited as the auto-release, and tells the owner and the
// team's managers.
func (s *Store) AutoReleaseBooking(ctx context.Context, bookingID int64, idleMinutes int) (*ReleaseResult, error) {
	const op = "store.AutoReleaseBooking"
	var b Booking
	if err := s.read(ctx).First(&b, bookingID).Error; err != nil {
		return nil, withKey(translate(op, err), "booking.not_found")
	}
	actx := WithActor(ctx, Actor{UserID: b.UserID, Username: "auto-release", IP: "telemetry"})
	res, err := s.ReleaseBooking(actx, bookingID)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.OpenAlert(ctx, AlertInput{Kind: AlertReleased, BookingID: bookingID, Value: float64(idleMinutes)}); err != nil {
		return res, err
	}
	now := s.now()
	if err := s.CloseAlert(ctx, AlertReleased, 0, bookingID, float64(idleMinutes), now); err != nil {
		return res, err
	}
	return res, s.CloseAlert(ctx, AlertReleaseWarned, 0, bookingID, 0, now)
}
