package server

import (
	"fmt"

	"cardhour/config"
	"cardhour/directory/ldap"
	"cardhour/directory/oidc"
	"cardhour/server/account"
)

// directories builds the company directories of cfg: an LDAP directory
// behind the password form, an OpenID Connect provider behind the
// "Sign in with …" button. Neither is reached here: a directory that is
// down at start does not keep the portal from serving (sign-ins through
// it answer 503 until it is back).
func directories(cfg config.Config) (account.Directories, error) {
	d := account.Directories{DefaultRole: cfg.DirectoryDefaultRole}
	if cfg.LDAP.On() {
		l, err := ldap.New(cfg.LDAP.Config)
		if err != nil {
			return d, fmt.Errorf("server.directories: %w", err)
		}
		d.LDAP, d.SyncEvery = l, cfg.LDAP.SyncInterval
	}
	if cfg.OIDC.Issuer != "" {
		o, err := oidc.New(oidc.Config(cfg.OIDC), nil)
		if err != nil {
			return d, fmt.Errorf("server.directories: %w", err)
		}
		d.OIDC = o
	}
	return d, nil
}
