package store

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"cardhour/errs"
)

// A task's files are its card-hour plan, the scripts that take and run the
// capacity, and their configuration. Content lives in object storage; these
// rows are the trail (版本留痕): every version with its object key and
// version id, size, SHA-256, author, time and message. Versions are never
// changed or deleted; rolling back writes the old content as a new version.

// Where a version came from.
const (
	FileSourceUpload   = "upload"   // a file sent from the browser
	FileSourceEdit     = "edit"     // text written in the browser
	FileSourceAPI      = "api"      // PUT /api/v1/tasks/{id}/files/{path}
	FileSourceRollback = "rollback" // an older version's content made latest
	FileSourcePlan     = "plan"     // the generated card-hour plan
)

// FileSources lists the sources in the order filters show them.
var FileSources = []string{FileSourceUpload, FileSourceEdit, FileSourceAPI, FileSourceRollback, FileSourcePlan}

// PlanPath is where every task's generated card-hour plan is kept. Only the
// portal writes it; people read, diff and download it.
const PlanPath = "plan/card-hours.yaml"

// Limits of a file's path and message.
const (
	MaxFilePathRunes   = 300
	maxFileSegmentByte = 200
	MaxFileMessage     = 500
)

// TaskFile is one path of a task with its newest version number.
type TaskFile struct {
	ID         int64        `json:"-"`
	TaskID     int64        `json:"task_id"`
	Path       string       `json:"path"`
	LatestNo   int          `json:"versions" gorm:"column:latest_no"`
	LatestSize int64        `json:"size" gorm:"column:latest_size"`
	CreatedAt  time.Time    `json:"created_at"`
	UpdatedAt  time.Time    `json:"updated_at"`
	Latest     *FileVersion `json:"latest" gorm:"-"`
}

func (TaskFile) TableName() string { return "task_files" }

// Generated tells whether the portal writes this file itself.
func (f TaskFile) Generated() bool { return f.Path == PlanPath }

// FileVersion is one stored version of a task file.
type FileVersion struct {
	ID           int64     `json:"-"`
	FileID       int64     `json:"-"`
	TaskID       int64     `json:"task_id"`
	Path         string    `json:"path" gorm:"->;column:path"`
	No           int       `json:"version" gorm:"column:version_no"`
	ObjectKey    string    `json:"key" gorm:"column:object_key"`
	VersionID    string    `json:"version_id" gorm:"column:version_id"`
	Size         int64     `json:"size" gorm:"column:size_bytes"`
	SHA256       string    `json:"sha256" gorm:"column:sha256"`
	AuthorID     *int64    `json:"author_id"`
	AuthorName   string    `json:"author"`
	Message      string    `json:"message"`
	Source       string    `json:"source"`
	RestoredFrom *int      `json:"restored_from"`
	CreatedAt    time.Time `json:"created_at"`
}

func (FileVersion) TableName() string { return "task_file_versions" }

// FileVersionInput records a version whose content the caller has already
// written to object storage.
type FileVersionInput struct {
	TaskID       int64
	Path         string
	ObjectKey    string
	VersionID    string
	Size         int64
	SHA256       string
	Message      string
	Source       string
	RestoredFrom *int
	// BaseNo, when not 0, is the version the writer started from: if the
	// file has moved on since, someone else saved meanwhile (conflict).
	BaseNo int
	// MustBeNew refuses a path that already exists (the "new file" form).
	MustBeNew bool
	// SkipIfUnchanged refuses content equal to the latest version's
	// (files.unchanged), so saving without a change adds no version.
	SkipIfUnchanged bool
}

// FileVersionFilter pages through a file's versions.
type FileVersionFilter struct {
	Limit, Offset int
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

func pathErr(op, key string, args ...any) error {
	return &errs.Error{Code: errs.Invalid, Op: op, Key: key, Args: args, Fields: map[string]string{"path": key}}
}

// ValidateFilePath refuses what cannot be a file's path: empty names,
// traversal ("..", "."), empty segments, backslashes, control characters,
// names with leading or trailing blanks, and over-long paths.
func ValidateFilePath(p string) error {
	const op = "store.ValidateFilePath"
	switch {
	case p == "":
		return pathErr(op, "files.path_required")
	case !utf8.ValidString(p):
		return pathErr(op, "files.path_control")
	case utf8.RuneCountInString(p) > MaxFilePathRunes:
		return pathErr(op, "files.path_too_long", MaxFilePathRunes)
	case strings.ContainsRune(p, '\\'):
		return pathErr(op, "files.path_backslash")
	}
	for _, r := range p {
		// Format characters (bidi overrides, zero widths) make two paths
		// look the same; they are refused with the control characters.
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return pathErr(op, "files.path_control")
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			return pathErr(op, "files.path_empty_segment")
		case seg == "." || seg == "..":
			return pathErr(op, "files.path_traversal")
		case strings.TrimSpace(seg) != seg:
			return pathErr(op, "files.path_blank_edge")
		case len(seg) > maxFileSegmentByte:
			return pathErr(op, "files.path_segment_too_long", maxFileSegmentByte)
		}
	}
	return nil
}

func validateMessage(op, m string) (string, error) {
	m = strings.TrimSpace(m)
	if utf8.RuneCountInString(m) > MaxFileMessage {
		return "", &errs.Error{Code: errs.Invalid, Op: op, Key: "files.message_too_long", Args: []any{MaxFileMessage},
			Fields: map[string]string{"message": "files.message_too_long"}}
	}
	for _, r := range m {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return "", &errs.Error{Code: errs.Invalid, Op: op, Key: "files.message_control", Fields: map[string]string{"message": "files.message_control"}}
		}
	}
	return m, nil
}

// mayReadFiles: site admins, and anyone with a role in the task's team.
// Scripts and configs can hold more than the task page shows, so others
// are told the files are the team's (not found, so ids reveal nothing).
func mayReadFiles(ctx context.Context, tx *gorm.DB, op string, teamID int64) error {
	u, err := actorUser(ctx, tx, op)
	if err != nil {
		return err
	}
	if u.Role == RoleAdmin {
		return nil
	}
	r, err := teamRole(tx, teamID, u.ID)
	if err != nil {
		return err
	}
	if r == "" {
		return errs.E(errs.NotFound, op, "files.team_only")
	}
	return nil
}

// mayWriteFiles: those who may plan for the task's team, the rule for
// editing the task itself.
func mayWriteFiles(ctx context.Context, tx *gorm.DB, op string, teamID int64) error {
	u, err := actorUser(ctx, tx, op)
	if err != nil {
		return err
	}
	ok, err := mayBookFor(tx, u, teamID)
	if err != nil {
		return err
	}
	if !ok {
		if err := mayReadFiles(ctx, tx, op, teamID); err != nil {
			return err
		}
		return errs.E(errs.Forbidden, op, "files.write_not_your_team")
	}
	return nil
}

// fileTask loads the task a file belongs to.
func fileTask(tx *gorm.DB, op string, taskID int64) (*Task, error) {
	var t Task
	if err := tx.First(&t, taskID).Error; err != nil {
		return nil, withKey(translate(op, err), "task.not_found")
	}
	return &t, nil
}

// CheckFileWrite says, before any content is stored, whether the actor may
// write path in the task and whether the path is acceptable, so a refused
// write leaves nothing in object storage. CreateFileVersion checks again.
func (s *Store) CheckFileWrite(ctx context.Context, taskID int64, path string) error {
	const op = "store.CheckFileWrite"
	t, err := fileTask(s.read(ctx), op, taskID)
	if err != nil {
		return err
	}
	if err := mayWriteFiles(ctx, s.read(ctx), op, t.TeamID); err != nil {
		return err
	}
	if err := ValidateFilePath(path); err != nil {
		return err
	}
	if path == PlanPath {
		return pathErr(op, "files.plan_reserved")
	}
	if err := folderConflict(s.read(ctx), op, taskID, path); err != nil {
		return translate(op, err)
	}
	return nil
}

// folderConflict refuses a path that is a folder of an existing file, or
// under an existing file: a name cannot be both, on a file system or in a
// bucket served from one.
func folderConflict(tx *gorm.DB, op string, taskID int64, path string) error {
	var parents []string
	segs := strings.Split(path, "/")
	for i := 1; i < len(segs); i++ {
		parents = append(parents, strings.Join(segs[:i], "/"))
	}
	// "!" escapes: a backslash would itself need escaping in MySQL's string
	// literals but not in SQLite's.
	like := strings.NewReplacer(`!`, `!!`, `%`, `!%`, `_`, `!_`).Replace(path) + "/%"
	q := tx.Model(&TaskFile{}).Where("task_id = ?", taskID)
	if len(parents) > 0 {
		q = q.Where(`path LIKE ? ESCAPE '!' OR path IN ?`, like, parents)
	} else {
		q = q.Where(`path LIKE ? ESCAPE '!'`, like)
	}
	var clash []string
	if err := q.Limit(1).Pluck("path", &clash).Error; err != nil {
		return err
	}
	if len(clash) > 0 {
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "files.path_folder_conflict", Args: []any{clash[0]},
			Fields: map[string]string{"path": "files.path_folder_conflict"}}
	}
	return nil
}

func (in *FileVersionInput) validate(op string) error {
	if err := ValidateFilePath(in.Path); err != nil {
		return err
	}
	msg, err := validateMessage(op, in.Message)
	if err != nil {
		return err
	}
	in.Message = msg
	known := false
	for _, s := range FileSources {
		known = known || s == in.Source
	}
	if !known || in.ObjectKey == "" || in.VersionID == "" || in.Size < 0 || !sha256Hex.MatchString(in.SHA256) || in.BaseNo < 0 {
		return errs.Internalf(op, "incomplete version record %+v", *in)
	}
	if (in.Source == FileSourcePlan) != (in.Path == PlanPath) {
		return pathErr(op, "files.plan_reserved")
	}
	return nil
}

// CreateFileVersion records a new version. The content must already be in
// object storage under in.ObjectKey / in.VersionID; on any error the caller
// removes it again, so no object outlives a refused row.
func (s *Store) CreateFileVersion(ctx context.Context, in FileVersionInput) (*FileVersion, error) {
	const op = "store.CreateFileVersion"
	if err := in.validate(op); err != nil {
		return nil, err
	}
	var v *FileVersion
	var err error
	// Two first versions of one new path race on the unique index; the
	// loser tries once more and then finds the winner's row.
	for attempt := 0; attempt < 2; attempt++ {
		v, err = s.createFileVersion(ctx, op, in)
		if e, ok := errs.As(err); !ok || e.Key != "error.duplicate" {
			break
		}
	}
	return v, err
}

func (s *Store) createFileVersion(ctx context.Context, op string, in FileVersionInput) (*FileVersion, error) {
	actor := ActorFrom(ctx)
	fresh := FileVersion{TaskID: in.TaskID, ObjectKey: in.ObjectKey, VersionID: in.VersionID, Size: in.Size, SHA256: in.SHA256,
		AuthorName: actor.Username, Message: in.Message, Source: in.Source, RestoredFrom: in.RestoredFrom, CreatedAt: s.now()}
	if actor.UserID != 0 {
		id := actor.UserID
		fresh.AuthorID = &id
	}
	v := new(FileVersion)
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		*v = fresh // a failed run left its id and number in v
		t, err := fileTask(tx, op, in.TaskID)
		if err != nil {
			return err
		}
		if in.Source == FileSourcePlan {
			// Only the portal itself writes plans.
			if actor.UserID != 0 {
				return pathErr(op, "files.plan_reserved")
			}
		} else if err := mayWriteFiles(ctx, tx, op, t.TeamID); err != nil {
			return err
		}
		f, err := s.lockFile(tx, in.TaskID, in.Path)
		if err != nil {
			return err
		}
		if f == nil {
			if in.BaseNo > 0 {
				return errs.E(errs.Conflict, op, "files.changed_meanwhile", 0)
			}
			if err := folderConflict(tx, op, in.TaskID, in.Path); err != nil {
				return err
			}
			f = &TaskFile{TaskID: in.TaskID, Path: in.Path, CreatedAt: v.CreatedAt, UpdatedAt: v.CreatedAt}
			if err := tx.Create(f).Error; err != nil {
				return err
			}
		} else {
			if in.MustBeNew {
				return &errs.Error{Code: errs.Conflict, Op: op, Key: "files.exists", Args: []any{in.Path}, Fields: map[string]string{"path": "files.exists"}}
			}
			if in.BaseNo > 0 && f.LatestNo != in.BaseNo {
				return errs.E(errs.Conflict, op, "files.changed_meanwhile", f.LatestNo)
			}
			if in.SkipIfUnchanged && f.LatestNo > 0 {
				var sums []string
				if err := tx.Model(&FileVersion{}).Where("file_id = ? AND version_no = ?", f.ID, f.LatestNo).Pluck("sha256", &sums).Error; err != nil {
					return err
				}
				if len(sums) == 1 && sums[0] == in.SHA256 {
					return errs.E(errs.Conflict, op, "files.unchanged", f.LatestNo)
				}
			}
		}
		v.FileID, v.No = f.ID, f.LatestNo+1
		if err := tx.Omit("path").Create(v).Error; err != nil {
			return err
		}
		if err := tx.Model(&TaskFile{}).Where("id = ?", f.ID).
			Updates(map[string]any{"latest_no": v.No, "latest_size": v.Size, "updated_at": v.CreatedAt}).Error; err != nil {
			return err
		}
		v.Path = in.Path
		action := "update"
		switch {
		case in.Source == FileSourceRollback:
			action = "rollback"
		case v.No == 1:
			action = "create"
		}
		return s.audit(ctx, tx, action, "task_file", f.ID, fileSummary(t, v), nil, v)
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

func fileSummary(t *Task, v *FileVersion) string {
	s := t.Name + " · " + v.Path + " v" + strconv.Itoa(v.No)
	if v.RestoredFrom != nil {
		s += " ← v" + strconv.Itoa(*v.RestoredFrom)
	}
	if v.Message != "" {
		s += ": " + v.Message
	}
	return s
}

// lockFile reads a task's file row, locked on MySQL until the transaction
// ends so two writers number their versions one after the other (SQLite
// admits one writer at a time already). nil when the path is new.
func (s *Store) lockFile(tx *gorm.DB, taskID int64, path string) (*TaskFile, error) {
	q := tx
	if s.dialect == MySQL {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var fs []TaskFile
	if err := q.Where("task_id = ? AND path = ?", taskID, path).Limit(1).Find(&fs).Error; err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return nil, nil
	}
	return &fs[0], nil
}

// MayWriteFiles tells whether the actor may write the task's files, for
// pages that offer the buttons only to those who may use them.
func (s *Store) MayWriteFiles(ctx context.Context, taskID int64) (bool, error) {
	const op = "store.MayWriteFiles"
	t, err := fileTask(s.read(ctx), op, taskID)
	if err != nil {
		return false, err
	}
	err = mayWriteFiles(ctx, s.read(ctx), op, t.TeamID)
	switch {
	case err == nil:
		return true, nil
	case errs.Is(err, errs.Forbidden), errs.Is(err, errs.NotFound), errs.Is(err, errs.Unauthorized):
		return false, nil
	}
	return false, translate(op, err)
}
