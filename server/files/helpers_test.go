package files_test

import (
	"testing"

	"cardhour/server/servertest"
)

// fleet is servertest's booking world, with the file calls these tests add.
type fleet struct{ *servertest.Fleet }

func newFleet(t *testing.T, o servertest.Options, cards int, quotaHours float64) *fleet {
	return &fleet{servertest.NewFleet(t, o, cards, quotaHours)}
}
