package main

import (
	"context"
	"crypto/subtle"
	"errors"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// store is the example's in-memory storage with this provider's client,
// PKCE required, and the groups claim.
type store struct {
	*storage.Storage
	users  *userFile
	client *client
}

// CreateAuthRequest refuses a request without an S256 PKCE challenge, so a
// test passing here shows the portal sends one.
func (s *store) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("this provider requires PKCE with S256")
	}
	return s.Storage.CreateAuthRequest(ctx, req, userID)
}

func (s *store) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if id != s.client.id {
		return nil, errors.New("client not found")
	}
	return s.client, nil
}

func (s *store) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if id != s.client.id || subtle.ConstantTimeCompare([]byte(secret), []byte(s.client.secret)) != 1 {
		return errors.New("invalid client id or secret")
	}
	return nil
}

// SetUserinfoFromRequest fills the ID token's claims.
func (s *store) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, req, scopes); err != nil {
		return err
	}
	s.addClaims(ui, req.GetSubject())
	return nil
}

// SetUserinfoFromToken fills the userinfo endpoint's answer.
func (s *store) SetUserinfoFromToken(ctx context.Context, ui *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, ui, tokenID, subject, origin); err != nil {
		return err
	}
	s.addClaims(ui, ui.Subject)
	return nil
}

// addClaims sets name as written in the file (the example joins first and
// last name) and the groups, always as an array, possibly empty.
func (s *store) addClaims(ui *oidc.UserInfo, sub string) {
	u := s.users.find(sub)
	if u == nil {
		return
	}
	if ui.Name != "" {
		ui.Name = u.Name
	}
	groups := u.Groups
	if groups == nil {
		groups = []string{}
	}
	ui.AppendClaims("groups", groups)
}
