package account_test

import (
	"testing"

	"cardhour/server/servertest"
)

// env is a portal on its own database (servertest), with the methods the
// tests of this package add.
type env struct{ *servertest.Env }

type (
	envOptions = servertest.Options
	response   = servertest.Response
	account    = servertest.Account
	client     = servertest.Client
)

const adminPassword = servertest.AdminPassword

var roles = servertest.Roles

func newEnv(tb testing.TB, o envOptions) *env { return &env{servertest.New(tb, o)} }
