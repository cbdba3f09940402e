package server

import (
	"net/http"
	"reflect"
)

// registerLedger adds the ledger, the monthly and yearly reports and their API.
func (s *Server) registerLedger() {
	const GET = http.MethodGet
	s.add(GET, "/ledger", Viewer, s.section("nav.ledger", "ledger"))
	s.add(GET, "/reports", Manager, s.section("nav.reports", "reports"))
}

// ledgerAPIOps documents the ledger's /api/v1 operations.
func ledgerAPIOps() []apiOp { return nil }

// ledgerAPISchemas are the component schemas of ledgerAPIOps.
func ledgerAPISchemas() map[string]reflect.Type { return nil }
