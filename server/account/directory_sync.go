package account

import (
	"context"

	"github.com/labstack/echo/v4"

	"cardhour/directory"
	"cardhour/errs"
	"cardhour/server/area"
	"cardhour/server/request"
	"cardhour/store"
	"cardhour/web"
)

// Jobs is the periodic LDAP sync, once across the replicas.
func (a *Area) Jobs() []area.Job {
	if a.dirs.LDAP == nil || a.dirs.SyncEvery <= 0 {
		return nil
	}
	return []area.Job{{Name: "directory sync", Every: a.dirs.SyncEvery, Once: "directory-sync", Run: func(ctx context.Context) error {
		_, err := a.SyncDirectory(ctx)
		return err
	}}}
}

// SyncDirectory checks every LDAP account against the directory: one the
// directory no longer has is disabled (its sessions end and its API
// tokens stop at once; its bookings stay in the ledger), the others get
// their groups' teams and role as at a sign-in. A directory that cannot
// answer disables no one: the run stops and says so, and the next one
// tries again. Each run's result is in the audit log.
func (a *Area) SyncDirectory(ctx context.Context) (store.DirectorySyncResult, error) {
	res := store.DirectorySyncResult{Provider: directory.LDAP}
	if a.dirs.LDAP == nil {
		return res, errs.E(errs.NotFound, "account.SyncDirectory", "directory.ldap_off")
	}
	ctx = store.WithActor(ctx, store.Actor{Username: "directory-sync"})
	accounts, err := a.Store.FindExternalAccounts(ctx, directory.LDAP)
	if err != nil {
		return res, err
	}
	var stop error
	for _, acc := range accounts {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		id, err := a.dirs.LDAP.Lookup(ctx, acc.Identity.Username)
		switch {
		case errs.Is(err, errs.NotFound):
			if err := a.Store.DisableGoneUser(ctx, acc.User.ID, directory.LDAP); err != nil {
				res.Failed++
				a.Log.Warn("directory sync: disabling a departed account failed", "user", acc.User.Username, "err", err)
				continue
			}
			res.Disabled++
		case err != nil:
			stop = err
		default:
			changed, err := a.Store.ApplyDirectoryGroups(ctx, acc.User.ID, id, a.dirs.DefaultRole)
			if err != nil {
				res.Failed++
				a.Log.Warn("directory sync: applying groups failed", "user", acc.User.Username, "err", err)
				continue
			}
			if changed {
				res.Changed++
			}
		}
		if stop != nil {
			res.Err = stop.Error()
			break
		}
		res.Checked++
	}
	if err := a.Store.RecordDirectorySync(ctx, res); err != nil {
		return res, err
	}
	return res, stop
}

// syncNow is the admin page's "sync now": its result as the page's
// message; a directory that is away is said so, not a 500.
func (a *Area) syncNow(c echo.Context) error {
	lang := request.Lang(c)
	res, err := a.SyncDirectory(c.Request().Context())
	if err != nil {
		if !errs.Is(err, errs.Unavailable) {
			return err
		}
		return a.Pages.RedirectWithFlash(c, "/admin/directory", web.T(lang, "directory.sync_unreachable"))
	}
	return a.Pages.RedirectWithFlash(c, "/admin/directory", web.T(lang, "directory.sync_done", res.Checked, res.Changed, res.Disabled))
}
