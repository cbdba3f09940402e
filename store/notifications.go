package store

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Notification is an in-app message to one user.
type Notification struct {
	ID         int64      `json:"id"`
	UserID     int64      `json:"user_id"`
	Kind       string     `json:"kind"`
	MessageKey string     `json:"message_key"`
	ArgsJSON   string     `json:"-"`
	Link       string     `json:"link"`
	CreatedAt  time.Time  `json:"created_at"`
	ReadAt     *time.Time `json:"read_at"`
}

// Args decodes the message arguments.
func (n Notification) Args() []any {
	var out []any
	_ = json.Unmarshal([]byte(n.ArgsJSON), &out)
	return out
}

// notify tells one user of something that just happened: their bell,
// their mail, and (when teamID is not 0) the team's group robots.
func (s *Store) notify(tx *gorm.DB, userID int64, kind, key, link string, args ...any) error {
	return s.notifyTeam(tx, 0, userID, kind, key, link, args...)
}

// notifyTeam is notify about something of team teamID.
func (s *Store) notifyTeam(tx *gorm.DB, teamID, userID int64, kind, key, link string, args ...any) error {
	_, err := s.tell(tx, notice{Kind: kind, Key: key, Link: link, Args: args, Users: []int64{userID}, TeamID: teamID})
	return err
}

// FindNotifications lists a user's newest notifications.
func (s *Store) FindNotifications(ctx context.Context, userID int64, unreadOnly bool, limit int) ([]Notification, error) {
	q := s.read(ctx).Where("user_id = ?", userID)
	if unreadOnly {
		q = q.Where("read_at IS NULL")
	}
	var out []Notification
	if err := q.Order("id DESC").Limit(limitOr(limit, 20)).Find(&out).Error; err != nil {
		return nil, translate("store.FindNotifications", err)
	}
	return out, nil
}

// MarkNotificationsRead marks all of a user's notifications read.
func (s *Store) MarkNotificationsRead(ctx context.Context, userID int64) error {
	err := s.read(ctx).Model(&Notification{}).Where("user_id = ? AND read_at IS NULL", userID).Update("read_at", s.now()).Error
	return translate("store.MarkNotificationsRead", err)
}

// MarkNotificationRead marks one of the user's notifications read; another
// user's is not found.
func (s *Store) MarkNotificationRead(ctx context.Context, userID, id int64) error {
	const op = "store.MarkNotificationRead"
	res := s.read(ctx).Model(&Notification{}).Where("id = ? AND user_id = ?", id, userID).
		Where("read_at IS NULL").Update("read_at", s.now())
	if res.Error != nil {
		return translate(op, res.Error)
	}
	if res.RowsAffected == 0 {
		var n int64
		if err := s.read(ctx).Model(&Notification{}).Where("id = ? AND user_id = ?", id, userID).Count(&n).Error; err != nil {
			return translate(op, err)
		}
		if n == 0 {
			return errs.E(errs.NotFound, op, "notification.not_found")
		}
	}
	return nil
}

// CountUnread counts the user's unread notifications: the number on the
// bell.
func (s *Store) CountUnread(ctx context.Context, userID int64) (int, error) {
	var n int64
	err := s.read(ctx).Model(&Notification{}).Where("user_id = ? AND read_at IS NULL", userID).Count(&n).Error
	return int(n), translate("store.CountUnread", err)
}
