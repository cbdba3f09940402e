package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Precisions a card type can list dense TFLOPS for, in the order shown.
var Precisions = []string{"fp32", "tf32", "bf16", "fp16", "fp8", "int8"}

// CardType is a GPU model with its memory, speed and price.
type CardType struct {
	ID         int64     `json:"id"`
	Name       string    `json:"name"`
	VRAMGiB    int       `json:"vram_gib" gorm:"column:vram_gib"`
	TFLOPSFP32 float64   `json:"tflops_fp32" gorm:"column:tflops_fp32"`
	TFLOPSTF32 float64   `json:"tflops_tf32" gorm:"column:tflops_tf32"`
	TFLOPSBF16 float64   `json:"tflops_bf16" gorm:"column:tflops_bf16"`
	TFLOPSFP16 float64   `json:"tflops_fp16" gorm:"column:tflops_fp16"`
	TFLOPSFP8  float64   `json:"tflops_fp8" gorm:"column:tflops_fp8"`
	TFLOPSINT8 float64   `json:"tflops_int8" gorm:"column:tflops_int8"`
	PriceFen   int64     `json:"price_fen"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// TFLOPS returns the dense TFLOPS at precision p; 0 means unsupported.
func (c CardType) TFLOPS(p string) float64 {
	switch p {
	case "fp32":
		return c.TFLOPSFP32
	case "tf32":
		return c.TFLOPSTF32
	case "bf16":
		return c.TFLOPSBF16
	case "fp16":
		return c.TFLOPSFP16
	case "fp8":
		return c.TFLOPSFP8
	case "int8":
		return c.TFLOPSINT8
	}
	return 0
}

// TFLOPSByPrecision is the card's dense TFLOPS at every precision, for
// tables that show them side by side.
func (c CardType) TFLOPSByPrecision() map[string]float64 {
	out := make(map[string]float64, len(Precisions))
	for _, p := range Precisions {
		out[p] = c.TFLOPS(p)
	}
	return out
}

// CardsPerType counts the cards of each type that are not retired.
func CardsPerType(cards []CardView) map[int64]int {
	n := map[int64]int{}
	for _, cd := range cards {
		if cd.Status != CardRetired {
			n[cd.CardTypeID]++
		}
	}
	return n
}

// CardTypeInput creates or replaces a card type.
type CardTypeInput struct {
	Name       string  `json:"name"`
	VRAMGiB    int     `json:"vram_gib"`
	TFLOPSFP32 float64 `json:"tflops_fp32"`
	TFLOPSTF32 float64 `json:"tflops_tf32"`
	TFLOPSBF16 float64 `json:"tflops_bf16"`
	TFLOPSFP16 float64 `json:"tflops_fp16"`
	TFLOPSFP8  float64 `json:"tflops_fp8"`
	TFLOPSINT8 float64 `json:"tflops_int8"`
	PriceFen   int64   `json:"price_fen"`
}

// Largest values accepted; anything above is a typo, not a GPU.
const (
	maxVRAMGiB  = 4096
	maxTFLOPS   = 100000
	maxPriceFen = 100_000_000 // one million yuan per card-hour
)

func (in *CardTypeInput) validate(op string) error {
	in.Name = strings.TrimSpace(in.Name)
	v := errs.NewValidation(op)
	v.Check(in.Name != "", "name", "field.required")
	v.CheckLen(in.Name, 100, "name")
	v.Check(in.VRAMGiB > 0 && in.VRAMGiB <= maxVRAMGiB, "vram_gib", "cardtype.vram_range")
	for _, f := range []struct {
		field string
		v     float64
	}{{"tflops_fp32", in.TFLOPSFP32}, {"tflops_tf32", in.TFLOPSTF32}, {"tflops_bf16", in.TFLOPSBF16},
		{"tflops_fp16", in.TFLOPSFP16}, {"tflops_fp8", in.TFLOPSFP8}, {"tflops_int8", in.TFLOPSINT8}} {
		v.Check(f.v >= 0 && f.v <= maxTFLOPS, f.field, "cardtype.tflops_range")
	}
	v.Check(in.TFLOPSFP32+in.TFLOPSTF32+in.TFLOPSBF16+in.TFLOPSFP16+in.TFLOPSFP8+in.TFLOPSINT8 > 0, "tflops_bf16", "cardtype.tflops_none")
	v.Check(in.PriceFen > 0 && in.PriceFen <= maxPriceFen, "price", "cardtype.price_range")
	return v.Err()
}

func (in CardTypeInput) apply(c *CardType) {
	c.Name, c.VRAMGiB, c.PriceFen = in.Name, in.VRAMGiB, in.PriceFen
	c.TFLOPSFP32, c.TFLOPSTF32, c.TFLOPSBF16 = in.TFLOPSFP32, in.TFLOPSTF32, in.TFLOPSBF16
	c.TFLOPSFP16, c.TFLOPSFP8, c.TFLOPSINT8 = in.TFLOPSFP16, in.TFLOPSFP8, in.TFLOPSINT8
}

// CreateCardType adds a card type.
func (s *Store) CreateCardType(ctx context.Context, in CardTypeInput) (*CardType, error) {
	const op = "store.CreateCardType"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	if err := in.validate(op); err != nil {
		return nil, err
	}
	now := s.now()
	c := new(CardType)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		// A fresh row each run: a failed run left its id in it.
		*c = CardType{CreatedAt: now, UpdatedAt: now}
		in.apply(c)
		if err := tx.Create(c).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "card_type", c.ID, c.Name, nil, c)
	})
	if err != nil {
		return nil, nameTaken(err, "cardtype.name_taken")
	}
	return c, nil
}

// UpdateCardType replaces a card type's fields. Past prices live on in the
// bookings that copied them, so a price change rewrites no history.
func (s *Store) UpdateCardType(ctx context.Context, id int64, in CardTypeInput) (*CardType, error) {
	const op = "store.UpdateCardType"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var c CardType
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		c = CardType{}
		// Under the type's lock, and the placement books read it again: a
		// new price applies to the next booking in every process.
		if err := s.lockCardType(tx, id, &c); err != nil {
			return withKey(translate(op, err), "cardtype.not_found")
		}
		noteBookChanged(tx, id)
		before := c
		in.apply(&c)
		c.UpdatedAt = s.now()
		if err := tx.Save(&c).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "update", "card_type", c.ID, c.Name, before, c)
	})
	if err != nil {
		return nil, nameTaken(err, "cardtype.name_taken")
	}
	return &c, nil
}

// DeleteCardType removes a card type that no card uses.
func (s *Store) DeleteCardType(ctx context.Context, id int64) error {
	const op = "store.DeleteCardType"
	defer s.changed(ChangeInventory) // after the commit: every replica reloads its inventory
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var c CardType
		if err := tx.First(&c, id).Error; err != nil {
			return withKey(translate(op, err), "cardtype.not_found")
		}
		if err := tx.Delete(&c).Error; err != nil {
			return inUse(translate(op, err), "cardtype.in_use")
		}
		return s.audit(ctx, tx, "delete", "card_type", c.ID, c.Name, c, nil)
	})
}

// FindCardTypeByID returns one card type.
func (s *Store) FindCardTypeByID(ctx context.Context, id int64) (*CardType, error) {
	var c CardType
	if err := s.read(ctx).First(&c, id).Error; err != nil {
		return nil, withKey(translate("store.FindCardTypeByID", err), "cardtype.not_found")
	}
	return &c, nil
}

// FindCardTypeByName returns one card type by its exact name.
func (s *Store) FindCardTypeByName(ctx context.Context, name string) (*CardType, error) {
	var c CardType
	if err := s.read(ctx).Where("name = ?", strings.TrimSpace(name)).First(&c).Error; err != nil {
		return nil, withKey(translate("store.FindCardTypeByName", err), "cardtype.not_found")
	}
	return &c, nil
}

// FindCardTypes lists card types by price, cheapest first.
func (s *Store) FindCardTypes(ctx context.Context) ([]CardType, error) {
	var out []CardType
	if err := s.read(ctx).Order("price_fen, name").Find(&out).Error; err != nil {
		return nil, translate("store.FindCardTypes", err)
	}
	return out, nil
}
