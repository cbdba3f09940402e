// Package assets embeds the stylesheets, scripts and vendored files the
// portal serves under /assets/, so the binary needs nothing beside it.
package assets

import "embed"

// FS holds css/, js/, vendor/ and the favicon.
//
//go:embed css js vendor favicon.svg
var FS embed.FS
