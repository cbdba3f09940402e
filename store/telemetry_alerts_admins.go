package store

import (
	"encoding/json"
	"fmt"
	"slices"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Notification keys of the alerts admins are told about. Args: the card's
// host and index; for AlertForeign also the booking's id; for a spoofed
// push naming no known card (NotifyAlertSpoofHost) the host it named and
// the token's name.
const (
	NotifyAlertFault     = "notify.alert_fault"
	NotifyAlertUnbooked  = "notify.alert_unbooked"
	NotifyAlertForeign   = "notify.alert_foreign"
	NotifyAlertSpoof     = "notify.alert_spoof"
	NotifyAlertSpoofHost = "notify.alert_spoof_host"
)

// AdminAlertKeys lists the notification keys of the admin alerts, for the
// test that each has its messages (TestEveryAdminAlertReadsInBothLanguages
// in server/booking).
func AdminAlertKeys() []string {
	return []string{NotifyAlertFault, NotifyAlertUnbooked, NotifyAlertForeign, NotifyAlertSpoof, NotifyAlertSpoofHost}
}

// adminAlertLink is where an admin reads about the fleet's alerts.
const adminAlertLink = "/admin/telemetry"

// checkAlertInput refuses an alert that would tell nobody what it is about.
func checkAlertInput(op string, in AlertInput) error {
	switch in.Kind {
	case AlertFault, AlertUnbooked:
		if in.CardID == 0 {
			return fieldErr(op, "card_id", "alert.card_required")
		}
	case AlertForeign:
		if in.CardID == 0 {
			return fieldErr(op, "card_id", "alert.card_required")
		}
		if in.BookingID == 0 {
			return fieldErr(op, "booking_id", "alert.booking_required")
		}
	}
	return nil
}

// notifyAdminAlert tells every enabled admin about a fault, an unbooked or
// foreign use, or a spoofed push; a fault on a booked card tells the
// booking's owner and its team's managers as well.
func (s *Store) notifyAdminAlert(tx *gorm.DB, a *Alert) error {
	var admins []int64
	if err := tx.Model(&User{}).Where("role = ? AND disabled = ?", RoleAdmin, false).Order("id").Pluck("id", &admins).Error; err != nil {
		return err
	}
	key, args, err := adminAlertMessage(tx, a)
	if err != nil {
		return err
	}
	// The holders of the card's booking first (their link is their
	// booking), then the admins who are not among them; the system-wide
	// robots hear it once, with the admins.
	var holders []int64
	if a.Kind == AlertFault && a.BookingID != nil {
		b, audience, err := bookingAudience(tx, *a.BookingID)
		if err != nil {
			return err
		}
		holders = audience
		_, err = s.tell(tx, notice{Kind: "alert_" + a.Kind, Key: key, Link: fmt.Sprintf("/bookings/%d", b.ID), Args: args,
			Users: audience, NoGroups: true, Mark: fmt.Sprintf("alert:%d:holders", a.ID)})
		if err != nil {
			return err
		}
	}
	var rest []int64
	for _, id := range admins {
		if !slices.Contains(holders, id) {
			rest = append(rest, id)
		}
	}
	_, err = s.tell(tx, notice{Kind: "alert_" + a.Kind, Key: key, Link: adminAlertLink, Args: args, Users: rest,
		Mark: fmt.Sprintf("alert:%d", a.ID)})
	return err
}

// adminAlertMessage is the message key and arguments of an admin alert.
func adminAlertMessage(tx *gorm.DB, a *Alert) (string, []any, error) {
	if a.CardID == nil {
		if a.Kind != AlertSpoof {
			return "", nil, errs.Internalf("store.notifyAdminAlert", "%s alert without a card", a.Kind)
		}
		var d struct {
			Host  string `json:"host"`
			Token string `json:"token"`
		}
		if len(a.Detail) > 0 {
			_ = json.Unmarshal(a.Detail, &d) // a detail of another shape names nothing
		}
		return NotifyAlertSpoofHost, []any{d.Host, d.Token}, nil
	}
	host, index, err := cardPlace(tx, *a.CardID)
	if err != nil {
		return "", nil, err
	}
	args := []any{host, index}
	switch a.Kind {
	case AlertFault:
		return NotifyAlertFault, args, nil
	case AlertUnbooked:
		return NotifyAlertUnbooked, args, nil
	case AlertForeign:
		var id int64
		if a.BookingID != nil {
			id = *a.BookingID
		}
		return NotifyAlertForeign, append(args, id), nil
	case AlertSpoof:
		return NotifyAlertSpoof, args, nil
	}
	return "", nil, errs.Internalf("store.notifyAdminAlert", "unknown alert kind %q", a.Kind)
}
