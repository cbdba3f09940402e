package oidc

import (
	"errors"
	"fmt"
	"strings"

	"cardhour/directory"
)

// needsUserinfo tells whether the ID token lacks a claim the identity is
// built from; many providers put groups, and some the username, only in
// userinfo.
func (p *Provider) needsUserinfo(claims map[string]any) bool {
	for _, c := range []string{p.cfg.UsernameClaim, p.cfg.GroupsClaim, "email", "name"} {
		if _, ok := claims[c]; !ok {
			return true
		}
	}
	return false
}

// identity builds the Identity from verified claims. The username is never
// guessed from another claim (an email's local part may belong to someone
// else at another domain): without it the sign-in is refused.
func (p *Provider) identity(issuer, sub string, claims map[string]any) (directory.Identity, error) {
	if sub == "" {
		return directory.Identity{}, refused(opFinish, errors.New("ID token has no sub"))
	}
	username, _ := claims[p.cfg.UsernameClaim].(string)
	username = strings.ToLower(strings.TrimSpace(username))
	if username == "" {
		return directory.Identity{}, refused(opFinish, fmt.Errorf("the claim %q (CARDHOUR_OIDC_USERNAME_CLAIM) is missing or not a string", p.cfg.UsernameClaim))
	}
	groups, err := groupList(claims[p.cfg.GroupsClaim])
	if err != nil {
		return directory.Identity{}, refused(opFinish, fmt.Errorf("the claim %q (CARDHOUR_OIDC_GROUPS_CLAIM): %w", p.cfg.GroupsClaim, err))
	}
	name, _ := claims["name"].(string)
	email, _ := claims["email"].(string)
	// An address the provider says it has not verified is anyone's claim;
	// notices must not go there.
	if v, ok := claims["email_verified"].(bool); ok && !v {
		email = ""
	}
	return directory.Identity{
		Provider:    directory.OIDC,
		Subject:     issuer + " " + sub,
		Username:    username,
		DisplayName: strings.TrimSpace(name),
		Email:       strings.TrimSpace(email),
		Groups:      groups,
	}, nil
}

// groupList reads a groups claim: absent, one string, or an array of
// strings.
func groupList(v any) ([]string, error) {
	switch g := v.(type) {
	case nil:
		return nil, nil
	case string:
		if g = strings.TrimSpace(g); g == "" {
			return nil, nil
		}
		return []string{g}, nil
	case []any:
		out := make([]string, 0, len(g))
		for _, e := range g {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("want a string or an array of strings, got an array holding %T", e)
			}
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a string or an array of strings, got %T", v)
}
