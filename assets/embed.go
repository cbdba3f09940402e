// Package assets embeds the stylesheets, scripts and vendored files the
// portal serves under /assets/, so the binary needs nothing beside it, and
// serves them under content-hashed URLs (see Catalog) so that an upgrade
// never runs a cached copy of the previous release's JS or CSS.
package assets

import "embed"

// FS holds css/, js/, vendor/ and the favicon.
//
//go:embed css js vendor favicon.svg
var FS embed.FS
