package account

import (
	"context"
	"time"

	"cardhour/directory"
	"cardhour/directory/oidc"
)

// Directories are the company directories people may sign in through;
// a nil one is off.
type Directories struct {
	// LDAP checks passwords typed into the sign-in form against the
	// company directory and answers the periodic sync.
	LDAP PasswordDirectory
	// OIDC is the "Sign in with …" button.
	OIDC SingleSignOn
	// DefaultRole is the portal role of a directory account that no group
	// rule gives one.
	DefaultRole string
	// SyncEvery is how often the LDAP accounts are checked against the
	// directory; 0 = never.
	SyncEvery time.Duration
}

// PasswordDirectory is an LDAP / Active Directory (directory/ldap).
type PasswordDirectory interface {
	Authenticate(ctx context.Context, username, password string) (directory.Identity, error)
	// Lookup finds a person for the sync: errs.NotFound when they are
	// gone, errs.Unavailable when the directory cannot tell.
	Lookup(ctx context.Context, username string) (directory.Identity, error)
}

// SingleSignOn is an OpenID Connect provider (directory/oidc).
type SingleSignOn interface {
	Begin(ctx context.Context) (oidc.Start, error)
	Finish(ctx context.Context, code string, s oidc.Start) (directory.Identity, error)
	Label() string
}
