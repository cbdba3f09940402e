// Package migrations holds the schema as versioned SQL, one folder per
// dialect, applied with goose. The two folders must describe the same tables
// and columns; a store test compares them.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed mysql/*.sql sqlite/*.sql
var files embed.FS

// For returns the migrations of dialect ("mysql" or "sqlite").
func For(dialect string) (fs.FS, error) {
	return fs.Sub(files, dialect)
}
