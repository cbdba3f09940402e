package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Image is an environment image in the catalogue ("把常用环境打成镜像"):
// newcomers start from it instead of installing dependencies again.
type Image struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Reference   string    `json:"reference"`
	CUDAVersion string    `json:"cuda_version" gorm:"column:cuda_version"`
	Frameworks  string    `json:"frameworks"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// ImageInput creates or replaces an image.
type ImageInput struct {
	Name        string `json:"name"`
	Reference   string `json:"reference"`
	CUDAVersion string `json:"cuda_version"`
	Frameworks  string `json:"frameworks"`
	Description string `json:"description"`
}

func (in *ImageInput) validate(op string) error {
	in.Name = strings.TrimSpace(in.Name)
	in.Reference = strings.TrimSpace(in.Reference)
	in.CUDAVersion = strings.TrimSpace(in.CUDAVersion)
	in.Frameworks = strings.TrimSpace(in.Frameworks)
	in.Description = strings.TrimSpace(in.Description)
	v := errs.NewValidation(op)
	v.Check(in.Name != "", "name", "field.required")
	v.CheckLen(in.Name, 100, "name")
	v.Check(in.Reference != "", "reference", "field.required")
	v.Check(len(in.Reference) <= 255 && !strings.ContainsAny(in.Reference, " \t\r\n"), "reference", "image.reference_invalid")
	v.CheckLen(in.CUDAVersion, 32, "cuda_version")
	v.CheckLen(in.Frameworks, 255, "frameworks")
	v.CheckLen(in.Description, 500, "description")
	return v.Err()
}

func (in ImageInput) apply(i *Image) {
	i.Name, i.Reference, i.CUDAVersion, i.Frameworks, i.Description = in.Name, in.Reference, in.CUDAVersion, in.Frameworks, in.Description
}

// CreateImage adds an image.
func (s *Store) CreateImage(ctx context.Context, in ImageInput) (*Image, error) {
	const op = "store.CreateImage"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	now := s.now()
	i := new(Image)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		// A fresh row each run: a failed run left its id in it.
		*i = Image{CreatedAt: now, UpdatedAt: now}
		in.apply(i)
		if err := tx.Create(i).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "create", "image", i.ID, i.Name, nil, i)
	})
	if err != nil {
		return nil, nameTaken(err, "image.name_taken")
	}
	return i, nil
}

// UpdateImage replaces an image's fields.
func (s *Store) UpdateImage(ctx context.Context, id int64, in ImageInput) (*Image, error) {
	const op = "store.UpdateImage"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var i Image
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		i = Image{}
		if err := tx.First(&i, id).Error; err != nil {
			return withKey(translate(op, err), "image.not_found")
		}
		before := i
		in.apply(&i)
		i.UpdatedAt = s.now()
		if err := tx.Save(&i).Error; err != nil {
			return err
		}
		return s.audit(ctx, tx, "update", "image", i.ID, i.Name, before, i)
	})
	if err != nil {
		return nil, nameTaken(err, "image.name_taken")
	}
	return &i, nil
}

// DeleteImage removes an image.
func (s *Store) DeleteImage(ctx context.Context, id int64) error {
	const op = "store.DeleteImage"
	return s.tx(ctx, op, func(tx *gorm.DB) error {
		var i Image
		if err := tx.First(&i, id).Error; err != nil {
			return withKey(translate(op, err), "image.not_found")
		}
		if err := tx.Delete(&i).Error; err != nil {
			return inUse(translate(op, err), "image.in_use")
		}
		return s.audit(ctx, tx, "delete", "image", i.ID, i.Name, i, nil)
	})
}

// FindImageByID returns one image.
func (s *Store) FindImageByID(ctx context.Context, id int64) (*Image, error) {
	var i Image
	if err := s.read(ctx).First(&i, id).Error; err != nil {
		return nil, withKey(translate("store.FindImageByID", err), "image.not_found")
	}
	return &i, nil
}

// FindImages lists images by name.
func (s *Store) FindImages(ctx context.Context) ([]Image, error) {
	var out []Image
	if err := s.read(ctx).Order("name").Find(&out).Error; err != nil {
		return nil, translate("store.FindImages", err)
	}
	return out, nil
}
