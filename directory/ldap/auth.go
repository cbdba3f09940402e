package ldap

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	goldap "github.com/go-ldap/ldap/v3"

	"cardhour/directory"
	"cardhour/errs"
)

// maxUsername bounds what is sent to the directory; no directory's login
// names come near it.
const maxUsername = 256

// Authenticate checks username and password against the directory and
// returns who they are, with their groups as of now. A wrong password, an
// unknown login (or one matching several entries) and an empty password
// are all errs.Unauthorized "auth.bad_credentials"; a directory that
// cannot be reached or used is errs.Unavailable "directory.unreachable".
func (d *Directory) Authenticate(ctx context.Context, username, password string) (directory.Identity, error) {
	const op = "ldap.Authenticate"
	username = strings.TrimSpace(username)
	if username == "" || password == "" || len(username) > maxUsername {
		// Refused before dialling: an empty password would make the
		// user's bind an unauthenticated one, which succeeds.
		return directory.Identity{}, badCredentials(op, errors.New("empty or over-long login, or empty password"))
	}
	c, err := d.dial(ctx)
	if err != nil {
		return directory.Identity{}, unavailable(op, err)
	}
	defer c.close()
	if err := d.bindService(c); err != nil {
		return directory.Identity{}, unavailable(op, err)
	}
	entry, err := d.findUser(c, username)
	if err != nil {
		if errors.Is(err, errNoUser) || errors.Is(err, errManyUsers) {
			return directory.Identity{}, badCredentials(op, err)
		}
		return directory.Identity{}, unavailable(op, err)
	}
	if err := c.bind(entry.DN, password); err != nil {
		if refusedBind(err) {
			return directory.Identity{}, badCredentials(op, fmt.Errorf("bind as %s: %w", entry.DN, err))
		}
		return directory.Identity{}, unavailable(op, fmt.Errorf("bind as %s: %w", entry.DN, err))
	}
	// Groups are read as the service account again: a person may not be
	// allowed to read the groups they are in. Anonymous setups keep the
	// user's bind, which reads at least what anonymous can.
	if err := d.bindService(c); err != nil {
		return directory.Identity{}, unavailable(op, err)
	}
	id, err := d.identity(c, entry, username)
	if err != nil {
		return directory.Identity{}, unavailable(op, err)
	}
	return id, nil
}

// Lookup reads a person's entry and groups without their password, for the
// periodic sync. errs.NotFound "directory.user_gone" only when the
// directory answered that no entry matches: a directory that cannot be
// reached is errs.Unavailable, so a network blip never disables anyone.
// A login matching several entries is errs.Conflict "directory.user_ambiguous".
func (d *Directory) Lookup(ctx context.Context, username string) (directory.Identity, error) {
	const op = "ldap.Lookup"
	username = strings.TrimSpace(username)
	if username == "" || len(username) > maxUsername {
		return directory.Identity{}, errs.E(errs.Invalid, op, "directory.username_invalid")
	}
	c, err := d.dial(ctx)
	if err != nil {
		return directory.Identity{}, unavailable(op, err)
	}
	defer c.close()
	if err := d.bindService(c); err != nil {
		return directory.Identity{}, unavailable(op, err)
	}
	entry, err := d.findUser(c, username)
	switch {
	case errors.Is(err, errNoUser):
		return directory.Identity{}, &errs.Error{Code: errs.NotFound, Op: op, Key: "directory.user_gone", Err: err}
	case errors.Is(err, errManyUsers):
		return directory.Identity{}, &errs.Error{Code: errs.Conflict, Op: op, Key: "directory.user_ambiguous", Err: err}
	case err != nil:
		return directory.Identity{}, unavailable(op, err)
	}
	id, err := d.identity(c, entry, username)
	if err != nil {
		return directory.Identity{}, unavailable(op, err)
	}
	return id, nil
}

// Ping checks that the directory answers, the service account (or an
// anonymous search) is accepted and the user base exists: what a
// readiness check and the start-up log want to know.
func (d *Directory) Ping(ctx context.Context) error {
	const op = "ldap.Ping"
	c, err := d.dial(ctx)
	if err != nil {
		return unavailable(op, err)
	}
	defer c.close()
	if err := d.bindService(c); err != nil {
		return unavailable(op, err)
	}
	req := goldap.NewSearchRequest(d.cfg.UserBase, goldap.ScopeBaseObject, goldap.NeverDerefAliases,
		1, d.timeLimit(), false, "(objectClass=*)", []string{"1.1"}, nil)
	if err := c.step(func() error { _, err := c.l.Search(req); return err }); err != nil {
		return unavailable(op, fmt.Errorf("read the user base %s: %w", d.cfg.UserBase, err))
	}
	return nil
}

var (
	errNoUser    = errors.New("no entry matches the login")
	errManyUsers = errors.New("several entries match the login")
)

// findUser searches for the one entry of username. A size limit of 2 is
// enough to tell one from several.
func (d *Directory) findUser(c *conn, username string) (*goldap.Entry, error) {
	req := goldap.NewSearchRequest(d.cfg.UserBase, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases,
		2, d.timeLimit(), false, fill(d.cfg.UserFilter, username),
		[]string{d.cfg.UsernameAttr, d.cfg.NameAttr, d.cfg.MailAttr, "memberOf"}, nil)
	var res *goldap.SearchResult
	err := c.step(func() error {
		var err error
		res, err = c.l.Search(req)
		return err
	})
	switch {
	case goldap.IsErrorWithCode(err, goldap.LDAPResultSizeLimitExceeded):
		return nil, errManyUsers
	case err != nil:
		return nil, fmt.Errorf("search %s for the login: %w", d.cfg.UserBase, err)
	case len(res.Entries) == 0:
		return nil, errNoUser
	case len(res.Entries) > 1:
		return nil, errManyUsers
	}
	return res.Entries[0], nil
}

// identity builds the Identity of entry, with its groups: the memberOf
// values (Active Directory, OpenLDAP's memberof overlay) and, where a group
// base is set, the groups whose members name the entry's DN.
func (d *Directory) identity(c *conn, entry *goldap.Entry, typed string) (directory.Identity, error) {
	id := directory.Identity{
		Provider:    directory.LDAP,
		Subject:     entry.DN,
		Username:    strings.ToLower(strings.TrimSpace(entry.GetAttributeValue(d.cfg.UsernameAttr))),
		DisplayName: strings.TrimSpace(entry.GetAttributeValue(d.cfg.NameAttr)),
		Email:       strings.TrimSpace(entry.GetAttributeValue(d.cfg.MailAttr)),
	}
	if id.Username == "" {
		// The filter matched on something else (mail, say) and the entry
		// lacks the attribute: the name typed is the best there is.
		id.Username = strings.ToLower(typed)
	}
	if id.DisplayName == "" {
		id.DisplayName = id.Username
	}
	var groups groupSet
	for _, dn := range entry.GetAttributeValues("memberOf") {
		groups.add(dn, d.nameInDN(dn))
	}
	if d.cfg.GroupBase != "" {
		req := goldap.NewSearchRequest(d.cfg.GroupBase, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases,
			0, d.timeLimit(), false, fill(d.cfg.GroupFilter, entry.DN), []string{d.cfg.GroupAttr}, nil)
		var res *goldap.SearchResult
		err := c.step(func() error {
			var err error
			res, err = c.l.Search(req)
			return err
		})
		if err != nil {
			// Partial groups would read as removals: fail instead.
			return directory.Identity{}, fmt.Errorf("search %s for the groups of %s: %w", d.cfg.GroupBase, entry.DN, err)
		}
		for _, g := range res.Entries {
			name := g.GetAttributeValue(d.cfg.GroupAttr)
			if name == "" {
				name = d.nameInDN(g.DN)
			}
			groups.add(g.DN, name)
		}
	}
	id.Groups = groups.list
	return id, nil
}

// nameInDN is a group's name read from its DN (CN=gpu-train,OU=…): the
// value of the first RDN when its attribute is the group name attribute.
func (d *Directory) nameInDN(dn string) string {
	parsed, err := goldap.ParseDN(dn)
	if err != nil || len(parsed.RDNs) == 0 {
		return ""
	}
	for _, a := range parsed.RDNs[0].Attributes {
		if strings.EqualFold(a.Type, d.cfg.GroupAttr) {
			return a.Value
		}
	}
	return ""
}

// timeLimit is the server-side limit of a search, in whole seconds.
func (d *Directory) timeLimit() int {
	return int(math.Ceil(d.cfg.Timeout.Seconds()))
}

// groupSet keeps each group name and DN once, compared as directories do.
type groupSet struct{ list []string }

func (s *groupSet) add(values ...string) {
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		dup := false
		for _, have := range s.list {
			if strings.EqualFold(have, v) {
				dup = true
				break
			}
		}
		if !dup {
			s.list = append(s.list, v)
		}
	}
}
