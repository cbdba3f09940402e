package web

import (
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"
)

// FileRow is one file of a task in the list.
type FileRow struct {
	Path      string
	Versions  int
	Size      int64
	UpdatedAt time.Time
	Author    string
	Message   string
	Source    string
	Generated bool // the card-hour plan, written by the portal
}

// FilesProps is a task's files page: the list and, for those who may
// write, the upload and new-file forms.
type FilesProps struct {
	TaskID   int64
	TaskName string
	TeamName string
	Files    []FileRow
	CanWrite bool
	MaxMiB   string
	Upload   Form // path, message
	NewFile  Form // path, content, message
	PlanPath string
}

// FileVersionRow is one version in a file's history.
type FileVersionRow struct {
	No           int
	VersionID    string
	Author       string
	At           time.Time
	Message      string
	Source       string
	Size         int64
	SHA256       string
	RestoredFrom int // 0 when not a rollback
	Latest       bool
}

// FileProps is a file's page: its history, one version's content, the
// diff chooser and the rollback buttons.
type FileProps struct {
	TaskID    int64
	TaskName  string
	Path      string
	Generated bool
	CanWrite  bool
	Versions  []FileVersionRow // this page of the history, newest first
	Total     int              // versions in all
	PageNum   int
	Pages     int
	Shown     FileVersionRow // the version whose content is shown
	Text      bool
	Lines     []string
	Truncated bool // only the first lines are shown
	DiffFrom  int
	DiffTo    int
	Rollback  Form // message, with errors when a rollback was refused
}

// DiffLine is one line of a diff: '=' context, '-' removed, '+' added.
type DiffLine struct {
	Kind      string
	Old, New  int // line numbers, 0 where the line is not on that side
	Text      string
	NoNewline bool // the file ends here without a newline
}

// DiffHunk is a run of changes with their context.
type DiffHunk struct {
	OldStart, OldLines, NewStart, NewLines int
	Lines                                  []DiffLine
}

// Header is the hunk's "@@ -a,b +c,d @@" line.
func (h DiffHunk) Header() string {
	return "@@ -" + strconv.Itoa(h.OldStart) + "," + strconv.Itoa(h.OldLines) + " +" + strconv.Itoa(h.NewStart) + "," + strconv.Itoa(h.NewLines) + " @@"
}

// FileDiffProps compares two versions of a file.
type FileDiffProps struct {
	TaskID   int64
	TaskName string
	Path     string
	From, To FileVersionRow
	Total    int
	Binary   bool // either side is not text: no line diff
	TooLarge bool // too many lines to compare
	Hunks    []DiffHunk
	Added    int
	Removed  int
}

// FileEditProps is the in-browser editor of a text file.
type FileEditProps struct {
	TaskID   int64
	TaskName string
	Path     string
	BaseNo   int
	Form     Form // content, message
	MaxMiB   string
}

// BookingFileRow is one file version a booking ran with.
type BookingFileRow struct {
	TaskID  int64
	Path    string
	No      int
	At      time.Time
	Author  string
	Message string
	SHA256  string
}

// BookingFilesProps lists the file versions a booking ran with.
type BookingFilesProps struct {
	BookingID int64
	TaskID    int64
	TaskName  string
	Start     time.Time
	Rows      []BookingFileRow
}

// FileURL links to a file's page (action "show", "edit", "diff",
// "rollback", "raw") with each path segment escaped.
func FileURL(taskID int64, action, p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/tasks/" + I64(taskID) + "/files/" + action + "/" + strings.Join(segs, "/")
}

// FileVersionURL links to one version on the file's page.
func FileVersionURL(taskID int64, p string, no int) string {
	return FileURL(taskID, "show", p) + "?version=" + Itoa(no)
}

// FileDiffURL compares two versions.
func FileDiffURL(taskID int64, p string, from, to int) string {
	return FileURL(taskID, "diff", p) + "?from=" + Itoa(from) + "&to=" + Itoa(to)
}

// FileRawURL downloads a version.
func FileRawURL(taskID int64, p string, no int) string {
	return FileURL(taskID, "raw", p) + "?version=" + Itoa(no)
}

func fileSafeURL(s string) templ.SafeURL { return templ.SafeURL(s) }

// fileKind names what a file is by its name, for the icon-less badge.
func fileKind(p string, generated bool) string {
	if generated {
		return "plan"
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".sh", ".bash", ".py", ".pl", ".rb", ".js", ".ts", ".go", ".lua", ".r", ".jl", ".ps1", ".bat", ".cmd", ".slurm", ".sbatch":
		return "script"
	case ".yaml", ".yml", ".json", ".toml", ".ini", ".cfg", ".conf", ".env", ".properties", ".xml", ".hcl":
		return "config"
	}
	return "other"
}

// Bytes shows a size in B, KiB or MiB.
func Bytes(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// shortSHA is the first 12 hex digits of a checksum.
func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// fileDiffClass styles a diff line.
func fileDiffClass(kind string) string {
	switch kind {
	case "+":
		return "fl-add"
	case "-":
		return "fl-del"
	}
	return "fl-ctx"
}

// diffSign is the mark before a diff line: blank for context.
func diffSign(kind string) string {
	if kind == "=" {
		return " "
	}
	return kind
}

// lineNo shows a line number, blank for 0.
func lineNo(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// versionOptions are the choices of the diff selects, newest first.
func versionOptions(p Page, total int) []Option {
	out := make([]Option, 0, total)
	for n := total; n >= 1; n-- {
		out = append(out, Option{Value: Itoa(n), Label: p.T("files.version_n", n)})
	}
	return out
}

// pageURL is the file page at history page n, keeping the version shown.
func filePageURL(taskID int64, p string, shown, page int) templ.SafeURL {
	return templ.SafeURL(FileVersionURL(taskID, p, shown) + "&page=" + Itoa(page))
}
