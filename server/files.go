package server

import "reflect"

// registerFiles adds task files: versions, diffs, rollback, and their API.
func (s *Server) registerFiles() {}

// filesAPIOps documents the files' /api/v1 operations.
func filesAPIOps() []apiOp { return nil }

// filesAPISchemas are the component schemas of filesAPIOps.
func filesAPISchemas() map[string]reflect.Type { return nil }
