package store

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Card statuses. Only active cards can be booked. A card becomes faulty
// through MarkCardFault (its telemetry says so) and active again only
// through ClearCardFault (an admin says so), never through a form.
const (
	CardActive      = "active"
	CardMaintenance = "maintenance"
	CardRetired     = "retired"
	CardFault       = "fault"
)

// CardStatuses lists the statuses an admin sets, in the order shown.
var CardStatuses = []string{CardActive, CardMaintenance, CardRetired}

// CardListStatuses are those a card list filters by: the ones an admin
// sets, and fault, which only telemetry sets.
var CardListStatuses = []string{CardActive, CardMaintenance, CardRetired, CardFault}

// Card is one GPU. It is keyed by its uuid: the index nvidia-smi reports can
// change at boot.
type Card struct {
	ID         int64     `json:"id"`
	UUID       string    `json:"uuid" gorm:"column:uuid"`
	GPUIndex   int       `json:"index" gorm:"column:gpu_index"`
	HostID     int64     `json:"host_id"`
	CardTypeID int64     `json:"card_type_id"`
	Status     string    `json:"status"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	// FaultReason and FaultAt say why and since when a faulty card is.
	FaultReason string     `json:"fault_reason,omitempty"`
	FaultAt     *time.Time `json:"fault_at,omitempty"`
}

// CardView is a card with its host and type names, for lists.
type CardView struct {
	Card
	HostName     string `json:"host"`
	Zone         string `json:"zone"`
	CardTypeName string `json:"card_type"`
	VRAMGiB      int    `json:"vram_gib" gorm:"column:vram_gib"`
}

// CardInput creates or replaces a card.
type CardInput struct {
	UUID       string `json:"uuid"`
	GPUIndex   int    `json:"index"`
	HostID     int64  `json:"host_id"`
	CardTypeID int64  `json:"card_type_id"`
	Status     string `json:"status"`
}

// CardFilter narrows FindCards.
type CardFilter struct {
	HostID     int64
	CardTypeID int64
	Status     string
	// Query finds cards by uuid, host name or zone, or card type name.
	Query string
}

// nvidia-smi prints uuids as GPU-xxxxxxxx-xxxx-...; MIG devices as MIG-....
var cardUUIDPattern = regexp.MustCompile(`^(GPU|MIG)-[0-9A-Za-z-]{8,60}$`)

func validCardStatus(s string) bool {
	return s == CardActive || s == CardMaintenance || s == CardRetired
}

// validate checks the input. The fault status passes here: whether the
// card may carry it is checkStatusChange's to say, which knows the card.
func (in *CardInput) validate(op string) error {
	in.UUID = strings.TrimSpace(in.UUID)
	if in.Status == "" {
		in.Status = CardActive
	}
	v := errs.NewValidation(op)
	// The length first: a uuid past the limit hears the limit, not the pattern.
	CardLimits.checkLen(v, "uuid", in.UUID)
	v.Check(cardUUIDPattern.MatchString(in.UUID), "uuid", "card.uuid_invalid")
	CardLimits.checkRange(v, "index", float64(in.GPUIndex), "card.index_range")
	v.Check(in.HostID > 0, "host_id", "host.not_found")
	v.Check(in.CardTypeID > 0, "card_type_id", "cardtype.not_found")
	v.Check(validCardStatus(in.Status) || in.Status == CardFault, "status", "card.status_invalid")
	return v.Err()
}

// Check is what the store would refuse of in before it looks at the
// database; nothing is stored (see TaskInput.Check).
func (in CardInput) Check() error { return in.validate("store.CardInput") }

// checkStatusChange is the one rule on the fault status for CreateCard and
// UpdateCard: from is the card's status ("" for a new card), to the one
// asked for. Only MarkCardFault makes a card faulty, and only
// ClearCardFault, the admin's word that it works, returns it to service;
// a faulty card may be edited as it is, or sent to maintenance or retired
// (which ends its fault episode), never made bookable by a form.
func checkStatusChange(op, from, to string) error {
	switch {
	case from == CardFault && to != CardFault && to != CardMaintenance && to != CardRetired:
		return fieldErr(op, "status", "card.fault_kept")
	case from != CardFault && to == CardFault:
		return fieldErr(op, "status", "card.status_invalid")
	}
	return nil
}

// checkCardRefs turns a missing host or type into a field message rather
// than a bare foreign-key failure.
func checkCardRefs(tx *gorm.DB, op string, in CardInput) error {
	v := errs.NewValidation(op)
	var n int64
	if err := tx.Model(&Host{}).Where("id = ?", in.HostID).Count(&n).Error; err != nil {
		return err
	}
	v.Check(n == 1, "host_id", "host.not_found")
	if err := tx.Model(&CardType{}).Where("id = ?", in.CardTypeID).Count(&n).Error; err != nil {
		return err
	}
	v.Check(n == 1, "card_type_id", "cardtype.not_found")
	return v.Err()
}

// CreateCard adds a card.
func (s *Store) CreateCard(ctx context.Context, in CardInput) (*Card, error) {
	const op = "store.CreateCard"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	if err := in.validate(op); err != nil {
		return nil, err
	}
	if err := checkStatusChange(op, "", in.Status); err != nil {
		return nil, err
	}
	now := s.now()
	c := new(Card)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		// A fresh row each run: a failed run left its id in it.
		*c = Card{UUID: in.UUID, GPUIndex: in.GPUIndex, HostID: in.HostID, CardTypeID: in.CardTypeID, Status: in.Status, CreatedAt: now, UpdatedAt: now}
		if err := checkCardRefs(tx, op, in); err != nil {
			return err
		}
		if err := s.changeCardsOf(tx, in.CardTypeID); err != nil {
			return err
		}
		if err := tx.Create(c).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "card", c.ID, c.UUID, nil, c)
	})
	if err != nil {
		return nil, uuidTaken(err)
	}
	return c, nil
}

// UpdateCard replaces a card's fields; retiring is an update to status. A
// faulty card keeps its status (see checkStatusChange).
func (s *Store) UpdateCard(ctx context.Context, id int64, in CardInput) (*Card, error) {
	const op = "store.UpdateCard"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var c Card
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		c = Card{}
		if err := tx.First(&c, id).Error; err != nil {
			return withKey(translate(op, err), "card.not_found")
		}
		if err := checkCardRefs(tx, op, in); err != nil {
			return err
		}
		if err := s.changeCardsOf(tx, c.CardTypeID, in.CardTypeID); err != nil {
			return err
		}
		// Read again under the lock: the card may have become faulty since.
		if err := tx.First(&c, id).Error; err != nil {
			return withKey(translate(op, err), "card.not_found")
		}
		if err := checkStatusChange(op, c.Status, in.Status); err != nil {
			return err
		}
		before := c
		now := s.now()
		c.UUID, c.GPUIndex, c.HostID, c.CardTypeID, c.Status = in.UUID, in.GPUIndex, in.HostID, in.CardTypeID, in.Status
		c.UpdatedAt = now
		if before.Status == CardFault && c.Status != CardFault {
			// Sent to maintenance or retired: the fault episode ends here.
			if err := endFault(tx, &c, now); err != nil {
				return err
			}
		}
		if err := tx.Save(&c).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "update", "card", c.ID, c.UUID, before, c)
	})
	if err != nil {
		return nil, uuidTaken(err)
	}
	return &c, nil
}

// DeleteCard removes a card that was never booked; a booked card can only be
// retired, so the ledger keeps what it ran on.
func (s *Store) DeleteCard(ctx context.Context, id int64) error {
	const op = "store.DeleteCard"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var c Card
		if err := tx.First(&c, id).Error; err != nil {
			return withKey(translate(op, err), "card.not_found")
		}
		if err := s.changeCardsOf(tx, c.CardTypeID); err != nil {
			return err
		}
		if err := tx.Delete(&c).Error; err != nil {
			return inUse(translate(op, err), "card.has_bookings")
		}
		return s.audit(ctx, tx, "delete", "card", c.ID, c.UUID, c, nil)
	})
}

const cardViewColumns = "c.*, h.name AS host_name, h.zone AS zone, t.name AS card_type_name, t.vram_gib AS vram_gib"

// cardsJoined is the cards with their hosts and types, without a select:
// FindCardPage counts it.
func (s *Store) cardsJoined(ctx context.Context) *gorm.DB {
	return s.read(ctx).Table("cards c").
		Joins("JOIN hosts h ON h.id = c.host_id").
		Joins("JOIN card_types t ON t.id = c.card_type_id")
}

func (s *Store) cardViews(ctx context.Context) *gorm.DB {
	return s.cardsJoined(ctx).Select(cardViewColumns)
}

func filterCards(q *gorm.DB, f CardFilter) *gorm.DB {
	if f.HostID != 0 {
		q = q.Where("c.host_id = ?", f.HostID)
	}
	if f.CardTypeID != 0 {
		q = q.Where("c.card_type_id = ?", f.CardTypeID)
	}
	if f.Status != "" {
		q = q.Where("c.status = ?", f.Status)
	}
	if term := searchTerm(f.Query); term != "" {
		q = q.Where("(c.uuid LIKE @like ESCAPE '!' OR h.name LIKE @like ESCAPE '!' OR h.zone LIKE @like ESCAPE '!' OR t.name LIKE @like ESCAPE '!')",
			map[string]any{"like": likeAny(term)})
	}
	return q
}

// cardOrder is by host name, then index, as the machines number them.
const cardOrder = "h.name, c.gpu_index, c.id"

// FindCardByID returns one card with names.
func (s *Store) FindCardByID(ctx context.Context, id int64) (*CardView, error) {
	var out []CardView
	if err := s.cardViews(ctx).Where("c.id = ?", id).Scan(&out).Error; err != nil {
		return nil, translate("store.FindCardByID", err)
	}
	if len(out) == 0 {
		return nil, errs.E(errs.NotFound, "store.FindCardByID", "card.not_found")
	}
	return &out[0], nil
}

// FindCards lists cards by host, then index.
func (s *Store) FindCards(ctx context.Context, f CardFilter) ([]CardView, error) {
	var out []CardView
	if err := filterCards(s.cardViews(ctx), f).Order(cardOrder).Scan(&out).Error; err != nil {
		return nil, translate("store.FindCards", err)
	}
	return out, nil
}

// FindCardPage is one page of the cards f selects, in FindCards' order,
// with how many it selects in all.
func (s *Store) FindCardPage(ctx context.Context, f CardFilter, r PageRequest) (Page[CardView], error) {
	pg, err := findPage[CardView](func() *gorm.DB { return filterCards(s.cardsJoined(ctx), f) }, cardViewColumns, cardOrder, r.norm(50))
	if err != nil {
		return pg, translate("store.FindCardPage", err)
	}
	return pg, nil
}

func uuidTaken(err error) error {
	if e, ok := errs.As(err); ok && e.Code == errs.Conflict && e.Key == "error.duplicate" {
		return &errs.Error{Code: errs.Conflict, Op: e.Op, Key: "card.uuid_taken", Fields: map[string]string{"uuid": "card.uuid_taken"}, Err: err}
	}
	return err
}

// changeCardsOf takes the lock of each card type whose cards are about to
// change, so no booking is placed on a card being retired or moved
// meanwhile, and so the types' placement books are read again.
func (s *Store) changeCardsOf(tx *gorm.DB, typeIDs ...int64) error {
	// One order for every transaction, so two never wait on each other.
	slices.Sort(typeIDs)
	for _, id := range slices.Compact(typeIDs) {
		var ct CardType
		if err := s.lockCardType(tx, id, &ct); err != nil {
			if errs.Is(translate("", err), errs.NotFound) {
				continue // checkCardRefs reports an unknown type
			}
			return err
		}
		noteBookChanged(tx, id)
	}
	return nil
}
