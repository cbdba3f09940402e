// Package objects keeps versioned files: every write of a key is a new,
// immutable version that can be read back later, so there is a trail and a
// way back (版本留痕，回滚有路). Two backends offer the same contract: a
// local directory (the embedded default, under the data dir) and any store
// speaking the S3 API (Tianyi Cloud OOS / ZOS, versitygw, MinIO, AWS).
//
// The package knows nothing of tasks or users: keys are opaque slash-separated
// names and the caller keeps the metadata (who, why) in its database.
package objects

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"cardhour/errs"
)

// Store is one versioned object store. Implementations are safe for
// concurrent use. Errors are coded: errs.NotFound for a missing key or
// version, errs.Invalid for a bad key, errs.Unavailable when the store
// cannot be reached (the caller may retry; nothing was written).
type Store interface {
	// Put writes data as the new latest version of key. It is all or
	// nothing: a failed Put leaves no version behind.
	Put(ctx context.Context, key string, data []byte) (Version, error)
	// Get opens a version of key; versionID "" is the latest. A key whose
	// latest version is a delete marker is not found.
	Get(ctx context.Context, key, versionID string) (io.ReadCloser, Version, error)
	// ListVersions lists every version of key, delete markers included,
	// newest first. A key that never existed has none (and no error).
	ListVersions(ctx context.Context, key string) ([]Version, error)
	// Delete hides key behind a delete marker; older versions stay.
	Delete(ctx context.Context, key string) (Version, error)
	// Copy makes the content of an older version the new latest version.
	Copy(ctx context.Context, key, fromVersionID string) (Version, error)
	// RemoveVersion erases one version for good. It exists to undo a Put
	// whose metadata could not be recorded; history is never pruned with it.
	RemoveVersion(ctx context.Context, key, versionID string) error
	// Walk calls fn for every version of every key under prefix, in no
	// particular order; reconciliation uses it.
	Walk(ctx context.Context, prefix string, fn func(Version) error) error
	// Describe checks the store and tells how it keeps versions.
	Describe(ctx context.Context) (Info, error)
}

// Version is one stored version of a key.
type Version struct {
	Key          string
	VersionID    string
	Size         int64
	SHA256       string // hex; "" where the backend cannot tell without reading
	ModTime      time.Time
	DeleteMarker bool
	IsLatest     bool
}

// Versioning modes.
const (
	// Native: the store versions objects itself (S3 bucket versioning, or
	// the local backend's version files).
	Native = "native"
	// ImmutableKeys: the bucket does not version, so each version is written
	// once under a key of its own and never overwritten.
	ImmutableKeys = "immutable-keys"
)

// Info describes a store for the start-up log and the admin.
type Info struct {
	Backend    string // "local" or "s3"
	Location   string // directory, or s3://bucket/prefix at endpoint
	Versioning string // Native or ImmutableKeys
	Detail     string // what the bucket's versioning status said
}

// MaxKeyBytes bounds a key; S3 allows 1024 bytes and the S3 backend adds
// its prefix and, without bucket versioning, a version suffix.
const MaxKeyBytes = 900

// maxSegmentBytes is what file systems allow per name (NAME_MAX).
const maxSegmentBytes = 200

// ValidateKey refuses keys that could escape a directory, collide with
// another key on a file system, or be read differently by two stores:
// empty segments, "." and "..", backslashes, control characters, invalid
// UTF-8, and names too long for a file system.
func ValidateKey(key string) error {
	const op = "objects.ValidateKey"
	bad := func(why string) error { return errs.Wrap(errs.Invalid, op, errors.New(why+": "+quoteKey(key))) }
	switch {
	case key == "":
		return bad("empty key")
	case len(key) > MaxKeyBytes:
		return bad("key too long")
	case !utf8.ValidString(key):
		return bad("key is not UTF-8")
	case strings.ContainsRune(key, '\\'):
		return bad("backslash in key")
	}
	for _, r := range key {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return bad("control character in key")
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch {
		case seg == "":
			return bad("empty segment in key")
		case seg == "." || seg == "..":
			return bad("dot segment in key")
		case len(seg) > maxSegmentBytes:
			return bad("segment too long")
		}
	}
	return nil
}

func quoteKey(k string) string {
	if len(k) > 80 {
		k = k[:80] + "…"
	}
	return "\"" + strings.ToValidUTF8(k, "?") + "\""
}

// notFound is the coded error for a missing key or version.
func notFound(op, key, versionID string) error {
	what := quoteKey(key)
	if versionID != "" {
		what += " version " + versionID
	}
	return errs.Wrap(errs.NotFound, op, errors.New("no object "+what))
}
