package store

import (
	"context"
	"encoding/json"
	"time"

	"gorm.io/gorm"
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

func (s *Store) notify(tx *gorm.DB, userID int64, kind, key, link string, args ...any) error {
	b, err := json.Marshal(args)
	if err != nil {
		return err
	}
	return tx.Create(&Notification{UserID: userID, Kind: kind, MessageKey: key, ArgsJSON: string(b), Link: link, CreatedAt: s.now()}).Error
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
