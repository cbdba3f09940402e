package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"cardhour/errs"
	"cardhour/notify"
)

// Delivery is what the store needs to know of the deployment to fan a
// notice out: whether mail can be sent at all, the language of a user who
// chose none, and the zone quiet hours and digests are read in.
type Delivery struct {
	Mail bool
	Lang string
	TZ   *time.Location
}

// SetDelivery tells the store how notices go out; until it is called only
// the bell and the robots get them, in zh-CN, in UTC.
func (s *Store) SetDelivery(d Delivery) {
	if d.Lang == "" {
		d.Lang = "zh-CN"
	}
	if d.TZ == nil {
		d.TZ = time.UTC
	}
	s.delivery = d
}

func (s *Store) zone() *time.Location {
	if s.delivery.TZ == nil {
		return time.UTC
	}
	return s.delivery.TZ
}

// Outbox states.
const (
	OutboxPending = "pending"
	OutboxSent    = "sent"
	OutboxFailed  = "failed"
)

// OutboxRow is one notice on its way to one recipient over one channel.
type OutboxRow struct {
	ID         int64      `json:"id"`
	DedupKey   string     `json:"-"`
	Kind       string     `json:"kind"`
	MessageKey string     `json:"message_key"`
	ArgsJSON   string     `json:"-"`
	Link       string     `json:"link"`
	UserID     *int64     `json:"user_id"`
	ChannelID  *int64     `json:"channel_id"`
	Channel    string     `json:"channel"`
	Address    string     `json:"-"`
	Lang       string     `json:"lang"`
	State      string     `json:"state"`
	Attempts   int        `json:"attempts"`
	NextAt     time.Time  `json:"next_at"`
	LeaseToken *string    `json:"-"`
	LeaseUntil *time.Time `json:"-"`
	LastStatus int        `json:"last_status"`
	LastAnswer string     `json:"last_answer"`
	CreatedAt  time.Time  `json:"created_at"`
	SentAt     *time.Time `json:"sent_at"`
}

// TableName is the outbox table.
func (OutboxRow) TableName() string { return "notify_outbox" }

// Args decodes the message arguments.
func (r OutboxRow) Args() []any {
	var out []any
	_ = json.Unmarshal([]byte(r.ArgsJSON), &out)
	return out
}

// notice is one event told to its recipients: the bell of each user, their
// mail, and the group channels of the subject's team (and the system-wide
// ones for admin events).
type notice struct {
	Kind, Key, Link string
	Args            []any
	Users           []int64
	// TeamID is the subject's team, whose group robots hear it; 0 = none.
	TeamID int64
	// Mark names the notice for scans (event:subject:stage): told once,
	// whoever runs the scan. Empty for a notice told where it happens.
	Mark string
	// NoGroups keeps the group channels out: another notice of the same
	// event tells them.
	NoGroups bool
}

// insertIgnoring inserts v unless a row with the same unique key exists;
// it reports whether the row is new.
func insertIgnoring(tx *gorm.DB, v any) (bool, error) {
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(v)
	return res.RowsAffected == 1, res.Error
}

type notifyMark struct {
	MarkKey   string `gorm:"primaryKey"`
	CreatedAt time.Time
}

func (notifyMark) TableName() string { return "notify_marks" }

// tell writes n to each recipient's bell and enqueues it for their mail and
// the group channels. A notice with a Mark is told only the first time
// (false when it was told before).
func (s *Store) tell(tx *gorm.DB, n notice) (bool, error) {
	if n.Mark != "" {
		fresh, err := insertIgnoring(tx, &notifyMark{MarkKey: n.Mark, CreatedAt: s.now()})
		if err != nil || !fresh {
			return false, err
		}
	}
	return true, s.fanOut(tx, []notice{n})
}

// errRaced says a batch of marks met marks another scan took meanwhile.
var errRaced = errors.New("store: reminder marks taken meanwhile")

// tellAll is tell for a batch of marked notices none of which was told when
// the scan looked: their marks in one statement, then their fan-out. When
// another scan took some of the marks meanwhile, nothing is written and
// errRaced says to tell them one by one.
func (s *Store) tellAll(tx *gorm.DB, ns []notice) error {
	now := s.now()
	marks := make([]notifyMark, len(ns))
	for i, n := range ns {
		marks[i] = notifyMark{MarkKey: n.Mark, CreatedAt: now}
	}
	res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&marks)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected != int64(len(ns)) {
		return errRaced
	}
	return s.fanOut(tx, ns)
}

// fanOut writes notices to the bells of their users and enqueues them for
// mail and the group channels: a handful of statements for the whole batch
// (the recipients, their switches and the channels read once), so that a
// scan that finds thousands due tells them in seconds.
func (s *Store) fanOut(tx *gorm.DB, ns []notice) error {
	now := s.now()
	var bells []Notification
	var users, teams []int64
	var kinds []string
	argsOf := make([]string, len(ns))
	for i, n := range ns {
		b, err := json.Marshal(n.Args)
		if err != nil {
			return err
		}
		argsOf[i] = string(b)
		for _, uid := range n.Users {
			bells = append(bells, Notification{UserID: uid, Kind: n.Kind, MessageKey: n.Key, ArgsJSON: argsOf[i], Link: n.Link, CreatedAt: now})
		}
		users = append(users, n.Users...)
		kinds = append(kinds, n.Kind)
		if n.TeamID > 0 {
			teams = append(teams, n.TeamID)
		}
	}
	if len(bells) > 0 {
		if err := tx.CreateInBatches(bells, 500).Error; err != nil {
			return err
		}
	}
	people, err := s.recipients(tx, users, kinds)
	if err != nil {
		return err
	}
	chans, err := enabledChannels(tx, teams)
	if err != nil {
		return err
	}
	var rows []OutboxRow
	for i, n := range ns {
		ev, known := notify.Find(n.Kind)
		if !known {
			continue // such a notice stays in the bell
		}
		base := n.Mark
		if base == "" {
			base = n.Kind + ":" + randomKey()
		}
		row := func(key string) OutboxRow {
			return OutboxRow{DedupKey: key, Kind: n.Kind, MessageKey: n.Key, ArgsJSON: argsOf[i], Link: n.Link,
				State: OutboxPending, NextAt: now, CreatedAt: now}
		}
		// Chat goes out when someone it is about wants it, after the last
		// of their quiet hours that covers now.
		chatWanted, chatAt := len(n.Users) == 0, time.Time{}
		for _, uid := range n.Users {
			p, ok := people[uid]
			if !ok {
				continue // disabled
			}
			at := notify.QuietUntil(p.QuietFrom, p.QuietTo, now, s.zone())
			if s.delivery.Mail && p.Email != "" && p.wants(ev, PrefMail) {
				r := row(fmt.Sprintf("%s:mail:u%d", base, p.ID))
				id := p.ID
				r.UserID, r.Channel, r.Address, r.Lang, r.NextAt = &id, string(notify.Mail), p.Email, s.langOf(p.Lang), at
				rows = append(rows, r)
			}
			if p.wants(ev, PrefChat) {
				if !chatWanted || at.Before(chatAt) {
					chatAt = at
				}
				chatWanted = true
			}
		}
		if chatAt.IsZero() {
			chatAt = now
		}
		if !chatWanted || n.NoGroups {
			continue
		}
		for _, c := range chans {
			if !c.Carries(ev) || (c.TeamID != nil && *c.TeamID != n.TeamID) {
				continue
			}
			r := row(fmt.Sprintf("%s:ch%d", base, c.ID))
			cid := c.ID
			r.ChannelID, r.Channel, r.Lang, r.NextAt = &cid, c.Kind, c.Lang, chatAt
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(rows, 200).Error
}

func (s *Store) langOf(lang string) string {
	if lang == "" {
		return s.delivery.Lang
	}
	return lang
}

func randomKey() string {
	b := make([]byte, 9)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// recipient is what fanning a notice out needs of a user.
type recipient struct {
	ID                 int64
	Email, Lang        string
	QuietFrom, QuietTo int
	// switched holds the user's choices that differ from the events'
	// defaults, by event and channel (mail, chat).
	switched map[string]map[string]bool
}

// wants tells whether the recipient hears ev on ch (PrefMail or PrefChat).
func (r recipient) wants(ev notify.Event, ch string) bool {
	def := ev.Chat
	if ch == PrefMail {
		def = ev.Mail
	}
	if v, ok := r.switched[ev.Name][ch]; ok {
		return v
	}
	return def
}

// recipients are the enabled users of ids with their switches for kinds,
// by id.
func (s *Store) recipients(tx *gorm.DB, ids []int64, kinds []string) (map[int64]recipient, error) {
	out := map[int64]recipient{}
	if len(ids) == 0 {
		return out, nil
	}
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	for chunk := range chunks(ids, 500) {
		var rs []recipient
		err := tx.Table("users").Select("id, email, lang, quiet_from, quiet_to").Where("id IN ? AND disabled = ?", chunk, false).Scan(&rs).Error
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			out[r.ID] = r
		}
		var prefs []NotifyPref
		if err := tx.Where("user_id IN ? AND event IN ?", chunk, kinds).Find(&prefs).Error; err != nil {
			return nil, err
		}
		for _, p := range prefs {
			r, ok := out[p.UserID]
			if !ok {
				continue
			}
			if r.switched == nil {
				r.switched = map[string]map[string]bool{}
			}
			if r.switched[p.Event] == nil {
				r.switched[p.Event] = map[string]bool{}
			}
			r.switched[p.Event][p.Channel] = p.Enabled
			out[p.UserID] = r
		}
	}
	return out, nil
}

// ClaimOutbox leases up to limit due notices to the sender owner for lease:
// no other sender takes them until the lease ends. Each group channel
// gives out no more than its rate per minute, counting what was sent in
// the last minute and what is leased, whichever process sent it: the
// channel's row is locked while its share is counted.
func (s *Store) ClaimOutbox(ctx context.Context, limit int, lease time.Duration) ([]OutboxRow, error) {
	const op = "store.ClaimOutbox"
	token := randomKey()
	var out []OutboxRow
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		// A run that finds nothing due returns before the Find below: it
		// must not return what a failed run leased.
		out = nil
		now := s.now()
		var ids []int64
		// Channels whose rate is spent this minute are looked past: a
		// backlog on one robot must not hold back the mail and the other
		// channels queued behind it. Each pass adds a full channel, so
		// there are at most as many passes as channels with notices due.
		var full []int64
		for len(ids) == 0 {
			var due []OutboxRow
			q := tx.Select("id, channel_id").Where("state = ? AND next_at <= ? AND (lease_until IS NULL OR lease_until < ?)", OutboxPending, now, now)
			if len(full) > 0 {
				q = q.Where("(channel_id IS NULL OR channel_id NOT IN ?)", full)
			}
			if err := q.Order("next_at, id").Limit(limit).Find(&due).Error; err != nil || len(due) == 0 {
				return err
			}
			byChannel := map[int64][]int64{}
			for _, r := range due {
				if r.ChannelID == nil {
					ids = append(ids, r.ID)
				} else {
					byChannel[*r.ChannelID] = append(byChannel[*r.ChannelID], r.ID)
				}
			}
			for cid, rows := range byChannel {
				room, err := channelRoom(tx, cid, now)
				if err != nil {
					return err
				}
				if room == 0 {
					full = append(full, cid)
				}
				ids = append(ids, rows[:min(room, len(rows))]...)
			}
		}
		until := now.Add(lease)
		err := tx.Model(&OutboxRow{}).Where("id IN ? AND state = ? AND (lease_until IS NULL OR lease_until < ?)", ids, OutboxPending, now).
			Updates(map[string]any{"lease_token": token, "lease_until": until}).Error
		if err != nil {
			return err
		}
		return tx.Where("lease_token = ?", token).Order("id").Find(&out).Error
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// channelRoom is how many more notices channel cid may take this minute:
// its rate less what it sent in the last minute and what is leased to a
// sender now. The channel's row stays locked until the claim commits.
func channelRoom(tx *gorm.DB, cid int64, now time.Time) (int, error) {
	var c NotifyChannel
	if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Select("id, rate_per_minute, enabled").First(&c, cid).Error; err != nil {
		return 0, err
	}
	if !c.Enabled {
		return 0, nil
	}
	var busy int64
	err := tx.Model(&OutboxRow{}).Where("channel_id = ? AND ((state = ? AND sent_at > ?) OR (state = ? AND lease_until >= ?))",
		cid, OutboxSent, now.Add(-time.Minute), OutboxPending, now).Count(&busy).Error
	if err != nil {
		return 0, err
	}
	return max(0, c.RatePerMinute-int(busy)), nil
}

// Outcome of one try, as the sender records it.
type Outcome struct {
	Sent   bool
	Status int
	Answer string
	// RetryAt is when to try again; zero with Sent false marks the notice
	// failed (its tries are spent or the failure will not pass).
	RetryAt time.Time
}

// FinishOutbox records the outcome of one try of a leased notice. It does
// nothing when the lease was lost (the sender was too slow and another
// took the row): that one records its own outcome.
func (s *Store) FinishOutbox(ctx context.Context, r OutboxRow, o Outcome) error {
	const op = "store.FinishOutbox"
	if r.LeaseToken == nil {
		return errs.Internalf(op, "notice %d was not leased", r.ID)
	}
	up := map[string]any{"attempts": r.Attempts + 1, "last_status": o.Status, "last_answer": truncate(o.Answer, 2048),
		"lease_token": nil, "lease_until": nil}
	switch {
	case o.Sent:
		up["state"], up["sent_at"] = OutboxSent, s.now()
	case o.RetryAt.IsZero():
		up["state"] = OutboxFailed
	default:
		up["next_at"] = o.RetryAt
	}
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		res := tx.Model(&OutboxRow{}).Where("id = ? AND lease_token = ?", r.ID, *r.LeaseToken).Updates(up)
		if res.Error != nil || res.RowsAffected == 0 || o.Sent || !o.RetryAt.IsZero() {
			return res.Error
		}
		// A notice that could not be delivered is one more thing admins
		// must hear of — in the bell, so that a broken channel cannot hide
		// its own failure.
		admins, err := adminIDs(tx)
		if err != nil {
			return err
		}
		_, err = s.tell(tx, notice{Kind: notify.DeliveryFailed, Key: "notify.delivery_failed", Link: "/admin/notify",
			Args: []any{r.Channel, r.ID}, Users: admins, Mark: fmt.Sprintf("failed:%d", r.ID)})
		return err
	})
}

func adminIDs(tx *gorm.DB) ([]int64, error) {
	var ids []int64
	err := tx.Table("users").Where("role = ? AND disabled = ?", RoleAdmin, false).Order("id").Pluck("id", &ids).Error
	return ids, err
}

// OutboxFilter narrows FindOutbox.
type OutboxFilter struct {
	State string
	Limit int
}

// FindOutbox lists notices, newest first (admins' view of what failed).
func (s *Store) FindOutbox(ctx context.Context, f OutboxFilter) ([]OutboxRow, error) {
	q := s.read(ctx).Model(&OutboxRow{})
	if f.State != "" {
		q = q.Where("state = ?", f.State)
	}
	var out []OutboxRow
	if err := q.Order("id DESC").Limit(limitOr(f.Limit, 100)).Find(&out).Error; err != nil {
		return nil, translate("store.FindOutbox", err)
	}
	return out, nil
}

// CountOutbox counts notices by state.
func (s *Store) CountOutbox(ctx context.Context) (map[string]int, error) {
	var rows []struct {
		State string
		N     int
	}
	if err := s.read(ctx).Model(&OutboxRow{}).Select("state, COUNT(*) AS n").Group("state").Scan(&rows).Error; err != nil {
		return nil, translate("store.CountOutbox", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.State] = r.N
	}
	return out, nil
}

// RetryOutbox puts a failed notice back in the queue, now (an admin's
// "send again" once the channel is mended).
func (s *Store) RetryOutbox(ctx context.Context, id int64) error {
	const op = "store.RetryOutbox"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var r OutboxRow
		if err := tx.First(&r, id).Error; err != nil {
			return err
		}
		if r.State != OutboxFailed {
			return errs.E(errs.Conflict, op, "notify.retry_not_failed")
		}
		before := r
		if err := tx.Model(&r).Updates(map[string]any{"state": OutboxPending, "next_at": s.now(), "attempts": 0}).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "retry", "notice", r.ID, r.Channel, before, r)
	})
}

// noticeKey is the message key of a notice kind that has one of its own.
func noticeKey(kind string) string { return "notify." + kind }
