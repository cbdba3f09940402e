package assets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// Prefix is the URL path under which the catalog's files are served.
const Prefix = "/assets/"

// hashLen is how many hex digits of a file's SHA-256 go into its URL: 48
// bits, far more than a release's handful of files can collide on.
const hashLen = 12

// Cache-Control values. A hashed URL names one content for ever, so it may be
// cached for a year without asking again. Any other URL (a plain name, or a
// hash that is not the current one) must be revalidated on every use: the
// ETag makes that a cheap 304, and an upgrade is seen at once.
const (
	cacheImmutable   = "public, max-age=31536000, immutable"
	cacheRevalidated = "no-cache"
)

// Catalog is an immutable index of a file tree: each file's bytes, content
// type and content hash, built once so requests never hash or read a file.
type Catalog struct {
	files  map[string]*file // by plain name, e.g. "css/app.css"
	hashed map[string]*file // by hashed name, e.g. "css/app.3f2a1c9b0d4e.css"
}

type file struct {
	name   string
	hashed string
	etag   string
	ctype  string
	data   []byte
}

// Hash is the short content hash that goes into a file's URL.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:hashLen]
}

// New reads every file of fsys and indexes it by plain and hashed name.
func New(fsys fs.FS) (*Catalog, error) {
	c := &Catalog{files: map[string]*file{}, hashed: map[string]*file{}}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		h := Hash(data)
		f := &file{name: name, hashed: hashedName(name, h), etag: `"` + h + `"`, ctype: contentType(name, data), data: data}
		c.files[name] = f
		c.hashed[f.hashed] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("assets.New: %w", err)
	}
	return c, nil
}

// Default is the catalog of the files embedded in the binary. It is derived
// from the binary alone, never from configuration, so one shared value is
// safe; it is built on first use.
var Default = sync.OnceValue(func() *Catalog {
	c, err := New(FS)
	if err != nil {
		panic(err) // the embedded tree is part of the binary: it always reads
	}
	return c
})

// URL is Default().URL(name).
func URL(name string) string { return Default().URL(name) }

// URL is the content-hashed URL of the file name ("css/app.css" →
// "/assets/css/app.3f2a1c9b0d4e.css"). A name the catalog lacks gets its
// plain URL, which answers 404, so a typo shows as a missing file rather
// than a broken page; the tests check every name the templates use.
func (c *Catalog) URL(name string) string {
	if f, ok := c.files[name]; ok {
		return Prefix + f.hashed
	}
	return Prefix + name
}

// Has tells whether the catalog holds the file name.
func (c *Catalog) Has(name string) bool {
	_, ok := c.files[name]
	return ok
}

// Names lists the plain names of every file, in no particular order.
func (c *Catalog) Names() []string {
	names := make([]string, 0, len(c.files))
	for n := range c.files {
		names = append(names, n)
	}
	return names
}

// hashedName puts the hash before the extension: "css/app.css" →
// "css/app.<hash>.css", "vendor/x/LICENSE" → "vendor/x/LICENSE.<hash>".
func hashedName(name, hash string) string {
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hash + ext
}

// unhash undoes hashedName for any hash, current or not.
func unhash(name string) (string, bool) {
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	if i := strings.LastIndexByte(stem, '.'); i >= 0 && isHash(stem[i+1:]) {
		return stem[:i] + ext, true
	}
	if isHash(strings.TrimPrefix(ext, ".")) { // a file without an extension
		return stem, true
	}
	return "", false
}

func isHash(s string) bool {
	if len(s) != hashLen {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

func contentType(name string, data []byte) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return http.DetectContentType(data)
}

// Handler serves the catalog under Prefix. A current hashed URL is cached
// for a year; a plain name, which relative references inside a stylesheet
// or script resolve to, and a stale hash (a page from the previous release)
// get the current file, revalidated on every use. Both carry the file's
// ETag, so If-None-Match answers 304. GET and HEAD only.
func (c *Catalog) Handler() http.Handler {
	return http.HandlerFunc(c.serve)
}

func (c *Catalog) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	f, cache := c.lookup(name)
	if f == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", cache)
	h.Set("ETag", f.etag)
	h.Set("Content-Type", f.ctype)
	// No modification time: the ETag alone decides what is fresh.
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.data))
}

func (c *Catalog) lookup(name string) (*file, string) {
	if f, ok := c.hashed[name]; ok {
		return f, cacheImmutable
	}
	if f, ok := c.files[name]; ok {
		return f, cacheRevalidated
	}
	if plain, ok := unhash(name); ok {
		if f, ok := c.files[plain]; ok {
			return f, cacheRevalidated
		}
	}
	return nil, ""
}
