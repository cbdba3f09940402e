package objects

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Version ids this package makes itself (the local backend, and the S3
// backend where the bucket does not version) are "v", the creation time in
// Unix nanoseconds as 20 digits, "-" and 8 random hex digits: sorting them
// as text sorts them by age, and the random part keeps two processes
// writing the same key in the same nanosecond apart. No S3 store issues ids
// of this shape, so an id tells which way its version was stored even after
// a bucket's versioning was switched on.
var ownID = regexp.MustCompile(`^v[0-9]{20}-[0-9a-f]{8}$`)

// isOwnID tells whether id is one of ours.
func isOwnID(id string) bool { return ownID.MatchString(id) }

// idTime is the creation time an own id carries.
func idTime(id string) time.Time {
	n, err := strconv.ParseInt(id[1:21], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// idSource hands out strictly increasing own ids within a process, so two
// versions written in the same clock tick still sort in write order.
type idSource struct {
	mu   sync.Mutex
	last int64
	now  func() time.Time
}

func (s *idSource) next() string {
	s.mu.Lock()
	n := s.now().UnixNano()
	if n <= s.last {
		n = s.last + 1
	}
	s.last = n
	s.mu.Unlock()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("v%020d-%s", n, hex.EncodeToString(b))
}

// Names on disk and in unversioned buckets. A version is stored as "~" plus
// its id, a delete marker as that plus ".del", an unfinished write as
// "~tmp-…". A key segment that itself starts with "~" is stored with one
// more "~" in front, so no key can ever be mistaken for a version file.
const (
	versionPrefix = "~"
	markerSuffix  = ".del"
	tmpPrefix     = "~tmp-"
)

func escapeSegment(seg string) string {
	if strings.HasPrefix(seg, "~") {
		return "~" + seg
	}
	return seg
}

func unescapeSegment(seg string) string {
	if strings.HasPrefix(seg, "~~") {
		return seg[1:]
	}
	return seg
}

// escapeKey applies escapeSegment to each segment of key.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = escapeSegment(s)
	}
	return strings.Join(segs, "/")
}

// unescapeKey undoes escapeKey.
func unescapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = unescapeSegment(s)
	}
	return strings.Join(segs, "/")
}

// versionName is the stored name of a version or delete marker.
func versionName(id string, marker bool) string {
	if marker {
		return versionPrefix + id + markerSuffix
	}
	return versionPrefix + id
}

// parseVersionName reads a stored name back; ok is false for anything that
// is not a version (a key segment, a temporary file).
func parseVersionName(name string) (id string, marker bool, ok bool) {
	if !strings.HasPrefix(name, versionPrefix) || strings.HasPrefix(name, "~~") {
		return "", false, false
	}
	rest := name[len(versionPrefix):]
	if strings.HasSuffix(rest, markerSuffix) {
		rest, marker = strings.TrimSuffix(rest, markerSuffix), true
	}
	if !isOwnID(rest) {
		return "", false, false
	}
	return rest, marker, true
}
