// Package files is the area of task files (计划、脚本、配置留版本): card-hour
// plans, scripts and configs kept with versions in object storage (a local
// directory, or S3 such as Tianyi OOS/ZOS) and their rows in the database;
// history, line diffs, rollback as a new version, the versions a booking
// ran with, the generated card-hour plan and the reconciliation of the
// database with the object store.
package files

import (
	"cardhour/server/area"
)

// Area serves the task files.
type Area struct {
	area.Deps
	files *service
}

// New builds the area on the object store the configuration names.
func New(d area.Deps) *Area {
	return &Area{Deps: d, files: newService(d.Config, d.Store, d.Log)}
}
