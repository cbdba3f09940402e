package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// FindTaskFiles lists a task's files by path, each with its latest version.
func (s *Store) FindTaskFiles(ctx context.Context, taskID int64) ([]TaskFile, error) {
	const op = "store.FindTaskFiles"
	if _, err := s.readableTask(ctx, op, taskID); err != nil {
		return nil, err
	}
	var files []TaskFile
	if err := s.read(ctx).Where("task_id = ?", taskID).Order("path").Find(&files).Error; err != nil {
		return nil, translate(op, err)
	}
	var latest []FileVersion
	err := s.versionsWithPath(ctx).Where("f.task_id = ? AND v.version_no = f.latest_no", taskID).Scan(&latest).Error
	if err != nil {
		return nil, translate(op, err)
	}
	byFile := map[int64]*FileVersion{}
	for i := range latest {
		byFile[latest[i].FileID] = &latest[i]
	}
	for i := range files {
		files[i].Latest = byFile[files[i].ID]
	}
	return files, nil
}

// FindTaskFile returns one file of a task with its latest version.
func (s *Store) FindTaskFile(ctx context.Context, taskID int64, path string) (*TaskFile, error) {
	const op = "store.FindTaskFile"
	if _, err := s.readableTask(ctx, op, taskID); err != nil {
		return nil, err
	}
	var fs []TaskFile
	if err := s.read(ctx).Where("task_id = ? AND path = ?", taskID, path).Limit(1).Find(&fs).Error; err != nil {
		return nil, translate(op, err)
	}
	if len(fs) == 0 {
		return nil, errs.E(errs.NotFound, op, "files.not_found", path)
	}
	f := fs[0]
	var latest []FileVersion
	if err := s.versionsWithPath(ctx).Where("v.file_id = ? AND v.version_no = ?", f.ID, f.LatestNo).Scan(&latest).Error; err != nil {
		return nil, translate(op, err)
	}
	if len(latest) > 0 {
		f.Latest = &latest[0]
	}
	return &f, nil
}

// FindFileVersions lists a file's versions newest first, with their count.
func (s *Store) FindFileVersions(ctx context.Context, taskID int64, path string, f FileVersionFilter) ([]FileVersion, int64, error) {
	const op = "store.FindFileVersions"
	file, err := s.FindTaskFile(ctx, taskID, path)
	if err != nil {
		return nil, 0, err
	}
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	out := []FileVersion{}
	err = s.read(ctx).Where("file_id = ?", file.ID).Order("version_no DESC").Limit(limit).Offset(max(f.Offset, 0)).Find(&out).Error
	if err != nil {
		return nil, 0, translate(op, err)
	}
	for i := range out {
		out[i].Path = file.Path
	}
	return out, int64(file.LatestNo), nil
}

// FindFileVersion returns version no of a file; 0 is the latest.
func (s *Store) FindFileVersion(ctx context.Context, taskID int64, path string, no int) (*FileVersion, error) {
	const op = "store.FindFileVersion"
	file, err := s.FindTaskFile(ctx, taskID, path)
	if err != nil {
		return nil, err
	}
	if no == 0 {
		no = file.LatestNo
	}
	var out []FileVersion
	if err := s.read(ctx).Where("file_id = ? AND version_no = ?", file.ID, no).Limit(1).Find(&out).Error; err != nil {
		return nil, translate(op, err)
	}
	if len(out) == 0 {
		return nil, errs.E(errs.NotFound, op, "files.version_not_found", no)
	}
	out[0].Path = file.Path
	return &out[0], nil
}

// bookingFileVersion is a version with the booking it was found for.
type bookingFileVersion struct {
	BookingID   int64
	FileVersion `gorm:"embedded"`
}

// FindBookingFileVersions returns the versions a booking ran with: for each
// of its task's files, the newest version created at or before the
// booking's start. Files created after the start are not listed. The actor
// must be able to read the task's files.
func (s *Store) FindBookingFileVersions(ctx context.Context, bookingID int64) ([]FileVersion, error) {
	const op = "store.FindBookingFileVersions"
	var b Booking
	if err := s.read(ctx).First(&b, bookingID).Error; err != nil {
		return nil, withKey(translate(op, err), "booking.not_found")
	}
	if err := mayReadFiles(ctx, s.read(ctx), op, b.TeamID); err != nil {
		return nil, err
	}
	byBooking, err := s.FindBookingsFileVersions(ctx, []int64{bookingID})
	if err != nil {
		return nil, err
	}
	out := byBooking[bookingID]
	if out == nil {
		out = []FileVersion{}
	}
	return out, nil
}

// FindBookingsFileVersions is FindBookingFileVersions for many bookings in
// one query, keyed by booking id. Bookings whose files the actor may not
// read, and bookings without files, are absent from the map.
func (s *Store) FindBookingsFileVersions(ctx context.Context, bookingIDs []int64) (map[int64][]FileVersion, error) {
	const op = "store.FindBookingsFileVersions"
	out := map[int64][]FileVersion{}
	if len(bookingIDs) == 0 {
		return out, nil
	}
	u, err := actorUser(ctx, s.read(ctx), op)
	if err != nil {
		return nil, err
	}
	// No window functions (MySQL 5.7): the newest version at the start is the
	// one whose number is the largest among the file's versions up to then.
	q := s.read(ctx).Table("bookings b").
		Select("b.id AS booking_id, v.*, f.path AS path").
		Joins("JOIN task_file_versions v ON v.task_id = b.task_id AND v.created_at <= b.start_at").
		Joins("JOIN task_files f ON f.id = v.file_id").
		Where("b.id IN ?", bookingIDs).
		Where("v.version_no = (SELECT MAX(v2.version_no) FROM task_file_versions v2 WHERE v2.file_id = v.file_id AND v2.created_at <= b.start_at)")
	if u.Role != RoleAdmin {
		q = q.Where("b.team_id IN (SELECT m.team_id FROM memberships m WHERE m.user_id = ?)", u.ID)
	}
	var rows []bookingFileVersion
	if err := q.Order("b.id, f.path").Scan(&rows).Error; err != nil {
		return nil, translate(op, err)
	}
	for _, r := range rows {
		out[r.BookingID] = append(out[r.BookingID], r.FileVersion)
	}
	return out, nil
}

// FileVersionRef locates one version's content, for reconciliation.
type FileVersionRef struct {
	TaskID    int64
	Path      string
	No        int
	ObjectKey string
	VersionID string
	CreatedAt time.Time
}

// FindFileVersionRefs lists where every version's content should be.
func (s *Store) FindFileVersionRefs(ctx context.Context) ([]FileVersionRef, error) {
	var out []FileVersionRef
	err := s.read(ctx).Table("task_file_versions v").
		Select("v.task_id, f.path, v.version_no AS no, v.object_key, v.version_id, v.created_at").
		Joins("JOIN task_files f ON f.id = v.file_id").Order("v.id").Scan(&out).Error
	if err != nil {
		return nil, translate("store.FindFileVersionRefs", err)
	}
	return out, nil
}

// versionsWithPath selects versions joined with their file's path.
func (s *Store) versionsWithPath(ctx context.Context) *gorm.DB {
	return s.read(ctx).Table("task_file_versions v").Select("v.*, f.path AS path").Joins("JOIN task_files f ON f.id = v.file_id")
}

// readableTask loads a task whose files the actor may read.
func (s *Store) readableTask(ctx context.Context, op string, taskID int64) (*Task, error) {
	t, err := fileTask(s.read(ctx), op, taskID)
	if err != nil {
		return nil, err
	}
	if err := mayReadFiles(ctx, s.read(ctx), op, t.TeamID); err != nil {
		return nil, err
	}
	return t, nil
}
