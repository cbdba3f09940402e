package store

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/notify"
)

// NotifyChannel is a group robot or webhook: system-wide (TeamID nil, set
// by admins) or a team's (set by its managers). Its URL (which carries the
// robot's token) and secret are never shown again once saved.
type NotifyChannel struct {
	ID            int64     `json:"id"`
	TeamID        *int64    `json:"team_id"`
	Kind          string    `json:"kind"`
	Name          string    `json:"name"`
	URL           string    `json:"-"`
	Secret        string    `json:"-"`
	Lang          string    `json:"lang"`
	Events        NameList  `json:"events" gorm:"column:events"`
	RatePerMinute int       `json:"rate_per_minute"`
	Enabled       bool      `json:"enabled"`
	CreatedBy     *int64    `json:"-"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// TableName is the channels table.
func (NotifyChannel) TableName() string { return "notify_channels" }

// URLHint is the channel's address with its token hidden: scheme, host and
// the path's first segment, enough to tell two channels apart.
func (c NotifyChannel) URLHint() string {
	u, err := url.Parse(c.URL)
	if err != nil || u.Host == "" {
		return "…"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// HasSecret tells whether a signing secret is set.
func (c NotifyChannel) HasSecret() bool { return c.Secret != "" }

// Carries tells whether the channel hears event ev: the events it lists,
// or, when it lists none, the defaults — a team's channel the team's
// events that go to chat by default, a system-wide one the admin events.
func (c NotifyChannel) Carries(ev notify.Event) bool {
	if len(c.Events) > 0 {
		return slices.Contains(c.Events, ev.Name)
	}
	if c.TeamID == nil {
		return ev.Admin && ev.Chat
	}
	return !ev.Admin && ev.Chat
}

// NotifyChannelInput creates or changes a channel. On a change, an empty
// URL or Secret keeps the stored one (they are never shown to be edited);
// ClearSecret removes the secret.
type NotifyChannelInput struct {
	TeamID        *int64   `json:"team_id,omitempty"`
	Kind          string   `json:"kind"`
	Name          string   `json:"name"`
	URL           string   `json:"url,omitempty"`
	Secret        string   `json:"secret,omitempty"`
	ClearSecret   bool     `json:"clear_secret,omitempty"`
	Lang          string   `json:"lang,omitempty"`
	Events        []string `json:"events,omitempty"`
	RatePerMinute int      `json:"rate_per_minute,omitempty"`
	Enabled       bool     `json:"enabled"`
}

// Limits of a channel.
const (
	MaxChannelRate    = 10000
	DefaultRobotRate  = 20 // DingTalk's limit per robot, the tightest of the vendors
	channelURLWidth   = 1000
	channelNameWidth  = 100
	channelSecretWide = 500
)

// Check runs the channel's own checks without the database (create: a new
// channel, which needs its secret where its kind signs), for a form that
// could not parse every field.
func (in NotifyChannelInput) Check(create bool) error {
	return in.validate("store.NotifyChannelInput", create)
}

func (in *NotifyChannelInput) validate(op string, creating bool) error {
	in.Name = strings.TrimSpace(in.Name)
	in.URL = strings.TrimSpace(in.URL)
	in.Secret = strings.TrimSpace(in.Secret)
	if in.Lang == "" {
		in.Lang = "zh-CN"
	}
	if in.RatePerMinute == 0 {
		in.RatePerMinute = DefaultRobotRate
	}
	v := errs.NewValidation(op)
	v.Check(slices.Contains(notify.RobotKinds, notify.Kind(in.Kind)), "kind", "channel.kind_invalid")
	v.Check(in.Name != "", "name", "channel.name_required")
	v.Check(len([]rune(in.Name)) <= channelNameWidth, "name", "channel.name_too_long")
	if creating || in.URL != "" {
		u, err := url.Parse(in.URL)
		v.Check(err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && len(in.URL) <= channelURLWidth, "url", "channel.url_invalid")
	}
	v.Check(len(in.Secret) <= channelSecretWide, "secret", "channel.secret_too_long")
	v.Check(in.Lang == "zh-CN" || in.Lang == "en", "lang", "notify.lang_invalid")
	v.Check(in.RatePerMinute >= 1 && in.RatePerMinute <= MaxChannelRate, "rate_per_minute", "channel.rate_invalid")
	for _, e := range in.Events {
		_, ok := notify.Find(e)
		v.Check(ok, "events", "notify.event_unknown")
	}
	return v.Err()
}

// mayManageChannels: admins for the system-wide channels and every team's,
// managers for their teams'.
func (s *Store) mayManageChannels(ctx context.Context, tx *gorm.DB, op string, teamID *int64) error {
	u, err := actorUser(ctx, tx, op)
	if err != nil {
		return err
	}
	if teamID == nil {
		if u.Role != RoleAdmin {
			return errs.E(errs.Forbidden, op, "channel.system_admins")
		}
		return nil
	}
	ok, err := managesTeam(tx, u, *teamID)
	if err != nil {
		return err
	}
	if !ok {
		return errs.E(errs.Forbidden, op, "channel.not_your_team")
	}
	return nil
}

// CreateNotifyChannel adds a channel.
func (s *Store) CreateNotifyChannel(ctx context.Context, in NotifyChannelInput) (*NotifyChannel, error) {
	const op = "store.CreateNotifyChannel"
	if err := in.validate(op, true); err != nil {
		return nil, err
	}
	var c NotifyChannel
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		if err := s.mayManageChannels(ctx, tx, op, in.TeamID); err != nil {
			return err
		}
		if in.TeamID != nil {
			if err := tx.Select("id").First(&Team{}, *in.TeamID).Error; err != nil {
				return errs.E(errs.Invalid, op, "team.not_found")
			}
		}
		a := ActorFrom(ctx)
		now := s.now()
		c = NotifyChannel{TeamID: in.TeamID, Kind: in.Kind, Name: in.Name, URL: in.URL, Secret: in.Secret, Lang: in.Lang,
			Events: in.Events, RatePerMinute: in.RatePerMinute, Enabled: in.Enabled, CreatedAt: now, UpdatedAt: now}
		if a.UserID != 0 {
			uid := a.UserID
			c.CreatedBy = &uid
		}
		if err := tx.Create(&c).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "notify_channel", c.ID, c.Name, nil, c)
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// UpdateNotifyChannel changes a channel; its team cannot change.
func (s *Store) UpdateNotifyChannel(ctx context.Context, id int64, in NotifyChannelInput) (*NotifyChannel, error) {
	const op = "store.UpdateNotifyChannel"
	var c NotifyChannel
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		c = NotifyChannel{}
		if err := tx.First(&c, id).Error; err != nil {
			return err
		}
		if err := s.mayManageChannels(ctx, tx, op, c.TeamID); err != nil {
			return err
		}
		in.Kind = c.Kind
		if err := in.validate(op, false); err != nil {
			return err
		}
		before := c
		c.Name, c.Lang, c.Events, c.RatePerMinute, c.Enabled = in.Name, in.Lang, in.Events, in.RatePerMinute, in.Enabled
		if in.URL != "" {
			c.URL = in.URL
		}
		if in.Secret != "" {
			c.Secret = in.Secret
		}
		if in.ClearSecret {
			c.Secret = ""
		}
		if err := tx.Save(&c).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "update", "notify_channel", c.ID, c.Name, before, c)
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// DeleteNotifyChannel removes a channel and what waits in its outbox.
func (s *Store) DeleteNotifyChannel(ctx context.Context, id int64) error {
	const op = "store.DeleteNotifyChannel"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var c NotifyChannel
		if err := tx.First(&c, id).Error; err != nil {
			return err
		}
		if err := s.mayManageChannels(ctx, tx, op, c.TeamID); err != nil {
			return err
		}
		if err := tx.Where("channel_id = ?", id).Delete(&OutboxRow{}).Error; err != nil {
			return err
		}
		if err := tx.Delete(&c).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "delete", "notify_channel", c.ID, c.Name, c, nil)
	})
}

// FindNotifyChannelByID is one channel, for whoever may manage it.
func (s *Store) FindNotifyChannelByID(ctx context.Context, id int64) (*NotifyChannel, error) {
	const op = "store.FindNotifyChannelByID"
	var c NotifyChannel
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		c = NotifyChannel{}
		if err := tx.First(&c, id).Error; err != nil {
			return err
		}
		return s.mayManageChannels(ctx, tx, op, c.TeamID)
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// ChannelFilter narrows FindNotifyChannels: the system-wide channels, or
// one team's.
type ChannelFilter struct {
	TeamID int64 // 0 = the system-wide ones
}

// FindNotifyChannels lists channels, for whoever may manage them.
func (s *Store) FindNotifyChannels(ctx context.Context, f ChannelFilter) ([]NotifyChannel, error) {
	const op = "store.FindNotifyChannels"
	var out []NotifyChannel
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		var team *int64
		q := tx.Where("team_id IS NULL")
		if f.TeamID != 0 {
			team = &f.TeamID
			q = tx.Where("team_id = ?", f.TeamID)
		}
		if err := s.mayManageChannels(ctx, tx, op, team); err != nil {
			return err
		}
		return q.Order("id").Find(&out).Error
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// enabledChannels are the enabled system-wide channels and those of teams.
func enabledChannels(tx *gorm.DB, teams []int64) ([]NotifyChannel, error) {
	var out []NotifyChannel
	q := tx.Where("enabled = ?", true)
	if len(teams) > 0 {
		q = q.Where("team_id IS NULL OR team_id IN ?", slices.Compact(slices.Sorted(slices.Values(teams))))
	} else {
		q = q.Where("team_id IS NULL")
	}
	return out, q.Order("id").Find(&out).Error
}

// NotifyTarget is where a leased outbox row goes: its channel's URL and
// secret, or its mail address. For the sender only: the secrets leave the
// store here and nowhere else.
func (s *Store) NotifyTarget(ctx context.Context, r OutboxRow) (notify.Target, error) {
	const op = "store.NotifyTarget"
	if r.ChannelID == nil {
		return notify.Target{Kind: notify.Mail, To: r.Address}, nil
	}
	var c NotifyChannel
	if err := s.read(ctx).First(&c, *r.ChannelID).Error; err != nil {
		return notify.Target{}, translate(op, err)
	}
	return notify.Target{Kind: notify.Kind(c.Kind), URL: c.URL, Secret: c.Secret}, nil
}
