package server_test

import (
	"testing"

	"cardhour/server/servertest"
)

// env is a portal on its own database (servertest), with the methods the
// tests of this package add.
type env struct{ *servertest.Env }

func newEnv(tb testing.TB, o servertest.Options) *env { return &env{servertest.New(tb, o)} }
