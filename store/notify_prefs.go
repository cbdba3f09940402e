package store

import (
	"context"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/notify"
)

// The channels a user switches per event: mail, and chat (the team's group
// robots). The bell cannot be switched off.
const (
	PrefMail = "mail"
	PrefChat = "chat"
)

// NotifyPref is a user's switch for one event on one channel, stored where
// it differs from the event's default.
type NotifyPref struct {
	UserID  int64  `gorm:"primaryKey"`
	Event   string `gorm:"primaryKey"`
	Channel string `gorm:"primaryKey"`
	Enabled bool
}

// TableName is the preferences table.
func (NotifyPref) TableName() string { return "notify_prefs" }

// EventPref is where a user hears one event.
type EventPref struct {
	Event string `json:"event"`
	Group string `json:"group"`
	Mail  bool   `json:"mail"`
	Chat  bool   `json:"chat"`
}

// NotifySettings are a user's notice choices: language, quiet hours, the
// digest's minute and each event's channels.
type NotifySettings struct {
	Lang         string      `json:"lang"`
	QuietFrom    int         `json:"quiet_from"`
	QuietTo      int         `json:"quiet_to"`
	DigestMinute int         `json:"digest_minute"`
	Events       []EventPref `json:"events"`
}

// FindNotifySettings is the user's choices, every event of the catalogue
// with its default where the user switched nothing.
func (s *Store) FindNotifySettings(ctx context.Context, userID int64) (*NotifySettings, error) {
	const op = "store.FindNotifySettings"
	u, err := s.FindUserByID(ctx, userID)
	if err != nil {
		return nil, err
	}
	var prefs []NotifyPref
	if err := s.read(ctx).Where("user_id = ?", userID).Find(&prefs).Error; err != nil {
		return nil, translate(op, err)
	}
	out := &NotifySettings{Lang: u.Lang, QuietFrom: u.QuietFrom, QuietTo: u.QuietTo, DigestMinute: u.DigestMinute}
	for _, ev := range notify.Events {
		p := EventPref{Event: ev.Name, Group: ev.Group, Mail: ev.Mail, Chat: ev.Chat}
		for _, sw := range prefs {
			if sw.Event == ev.Name && sw.Channel == PrefMail {
				p.Mail = sw.Enabled
			}
			if sw.Event == ev.Name && sw.Channel == PrefChat {
				p.Chat = sw.Enabled
			}
		}
		out.Events = append(out.Events, p)
	}
	return out, nil
}

// UpdateNotifySettings replaces the user's choices. Events not listed keep
// their current switches; an unknown event or a minute outside the day is
// refused with nothing written.
func (s *Store) UpdateNotifySettings(ctx context.Context, userID int64, in NotifySettings) (*NotifySettings, error) {
	const op = "store.UpdateNotifySettings"
	v := errs.NewValidation(op)
	v.Check(in.Lang == "" || in.Lang == "zh-CN" || in.Lang == "en", "lang", "notify.lang_invalid")
	v.Check(in.QuietFrom >= 0 && in.QuietFrom < 1440, "quiet_from", "notify.minute_invalid")
	v.Check(in.QuietTo >= 0 && in.QuietTo < 1440, "quiet_to", "notify.minute_invalid")
	v.Check(in.DigestMinute >= -1 && in.DigestMinute < 1440, "digest_minute", "notify.minute_invalid")
	for _, p := range in.Events {
		_, ok := notify.Find(p.Event)
		v.Check(ok, "events", "notify.event_unknown")
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	before, err := s.FindNotifySettings(ctx, userID)
	if err != nil {
		return nil, err
	}
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		err := tx.Table("users").Where("id = ?", userID).Updates(map[string]any{"lang": in.Lang, "quiet_from": in.QuietFrom,
			"quiet_to": in.QuietTo, "digest_minute": in.DigestMinute}).Error
		if err != nil {
			return err
		}
		for _, p := range in.Events {
			ev, _ := notify.Find(p.Event)
			for _, sw := range []struct {
				ch       string
				on, dflt bool
			}{{PrefMail, p.Mail, ev.Mail}, {PrefChat, p.Chat, ev.Chat}} {
				q := tx.Where("user_id = ? AND event = ? AND channel = ?", userID, p.Event, sw.ch)
				if err := q.Delete(&NotifyPref{}).Error; err != nil {
					return err
				}
				if sw.on != sw.dflt {
					if err := tx.Create(&NotifyPref{UserID: userID, Event: p.Event, Channel: sw.ch, Enabled: sw.on}).Error; err != nil {
						return err
					}
				}
			}
		}
		return s.audit(ctx, tx, "update", "notify_settings", userID, "", before, in)
	})
	if err != nil {
		return nil, err
	}
	return s.FindNotifySettings(ctx, userID)
}

// SetUserLang remembers the language a user switched to, so that their mail
// speaks it too.
func (s *Store) SetUserLang(ctx context.Context, userID int64, lang string) error {
	const op = "store.SetUserLang"
	if lang != "zh-CN" && lang != "en" {
		return fieldErr(op, "lang", "notify.lang_invalid")
	}
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var before string
		if err := tx.Table("users").Where("id = ?", userID).Pluck("lang", &before).Error; err != nil {
			return err
		}
		if err := tx.Table("users").Where("id = ?", userID).Update("lang", lang).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "update", "user_lang", userID, lang, map[string]string{"lang": before}, map[string]string{"lang": lang})
	})
}
