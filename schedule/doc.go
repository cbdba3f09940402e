// Package schedule is cardhour's policy, free of I/O: sizing VRAM, choosing
// card types that fit with headroom, costing a booking, placing requests on
// cards without overlap, and ordering the queue (core first, data-ready
// first, backfill last). Everything here is table-tested; the store applies
// these rules inside its transactions.
package schedule
