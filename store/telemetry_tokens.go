package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
)

// Telemetry token kinds. They live in api_tokens beside user tokens but act
// as no user: an agent token may only push samples, a board token may only
// watch the board. FindTokenUser refuses both.
const (
	TokenAgent = "agent"
	TokenBoard = "board"
)

// TelemetryTokenView is a telemetry token with the name of the admin who
// issued it.
type TelemetryTokenView struct {
	APIToken
	CreatedBy string `json:"created_by"`
}

func telemetryKind(kind string) bool { return kind == TokenAgent || kind == TokenBoard }

// requireAdmin loads the acting user inside tx and refuses anyone but an
// admin.
func requireAdmin(ctx context.Context, tx *gorm.DB, op string) (*User, error) {
	u, err := actorUser(ctx, tx, op)
	if err != nil {
		return nil, err
	}
	if u.Role != RoleAdmin {
		return nil, errs.E(errs.Forbidden, op, "auth.forbidden")
	}
	return u, nil
}

// Limits of an agent token's hosts.
const (
	MaxTokenHosts    = 64
	tokenHostsWidth  = 1000 // characters of api_tokens.hosts
	tokenHostsField  = "hosts"
	tokenHostInvalid = "token.host_invalid"
)

// tokenHostRule is the push endpoint's host rule, for the hosts an agent
// token may report.
var tokenHostRule = nameRule{field: tokenHostsField, pattern: hostNamePattern, lower: true, max: MaxTokenHosts, width: tokenHostsWidth,
	invalid: tokenHostInvalid, tooMany: "token.hosts_too_many", tooLong: "token.hosts_too_long"}

// CreateTelemetryToken issues an agent or board token; only admins may.
// The secret is returned once and stored only as its hash. hosts binds an
// agent token to the host names it may report (lowercased, duplicates
// dropped, at most MaxTokenHosts); an agent token issued without any is
// bound to the first host it reports (BindTokenHost). A board token takes
// no hosts.
func (s *Store) CreateTelemetryToken(ctx context.Context, kind, name string, hosts ...string) (*APIToken, string, error) {
	const op = "store.CreateTelemetryToken"
	name = strings.TrimSpace(name)
	if name == "" {
		name = kind
	}
	v := errs.NewValidation(op)
	v.Check(telemetryKind(kind), "kind", "token.kind_invalid")
	TokenLimits.checkLen(v, "name", name)
	if err := v.Err(); err != nil {
		return nil, "", err
	}
	bound, err := tokenHostRule.clean(op, hosts)
	if err != nil {
		return nil, "", err
	}
	if len(bound) > 0 && kind != TokenAgent {
		return nil, "", fieldErr(op, tokenHostsField, "token.hosts_agent_only")
	}
	prefix := "cha_"
	if kind == TokenBoard {
		prefix = "chb_"
	}
	secret, hash, err := newSecret(prefix)
	if err != nil {
		return nil, "", errs.Internalf(op, "random: %w", err)
	}
	var t *APIToken
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		u, err := requireAdmin(ctx, tx, op)
		if err != nil {
			return err
		}
		t = &APIToken{UserID: u.ID, Name: name, Kind: kind, Prefix: secret[:8], TokenHash: hash, CreatedAt: s.now(), Hosts: bound}
		if err := tx.Create(t).Error; err != nil {
			return err
		}
		return s.auditNoted(ctx, tx, "create", "api_token", t.ID, auditMsg("audit.sum.token_kind", argKey("telemetry.kind."+kind), argText(t.Name)), nil, t)
	})
	if err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// FindTelemetryToken resolves a secret to a live token of kind. Any other
// answer — unknown, revoked, another kind, its issuer disabled — is
// Unauthorized, so a caller cannot tell them apart; the message names the
// kind the caller asked for (a wall's board token is no API token).
func (s *Store) FindTelemetryToken(ctx context.Context, kind, secret string) (*APIToken, error) {
	const op = "store.FindTelemetryToken"
	invalid := "auth.agent_token_invalid"
	if kind == TokenBoard {
		invalid = "auth.board_token_invalid"
	}
	if secret == "" || !telemetryKind(kind) {
		return nil, errs.E(errs.Unauthorized, op, invalid)
	}
	var t APIToken
	err := s.read(ctx).Table("api_tokens t").Select("t.*").Joins("JOIN users u ON u.id = t.user_id").
		Where("t.token_hash = ? AND t.kind = ? AND t.revoked_at IS NULL AND u.disabled = ?", HashSecret(secret), kind, false).
		Take(&t).Error
	if err != nil {
		if e := translate(op, err); !errs.Is(e, errs.NotFound) {
			return nil, e
		}
		return nil, errs.E(errs.Unauthorized, op, invalid)
	}
	now := s.now()
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) > time.Minute {
		_ = s.read(ctx).Model(&APIToken{}).Where("id = ?", t.ID).Update("last_used_at", now).Error
	}
	return &t, nil
}

// FindTelemetryTokens lists every agent and board token, newest first.
func (s *Store) FindTelemetryTokens(ctx context.Context) ([]TelemetryTokenView, error) {
	var out []TelemetryTokenView
	err := s.read(ctx).Table("api_tokens t").Select("t.*, u.username AS created_by").Joins("JOIN users u ON u.id = t.user_id").
		Where("t.kind IN ?", []string{TokenAgent, TokenBoard}).Order("t.id DESC").Scan(&out).Error
	if err != nil {
		return nil, translate("store.FindTelemetryTokens", err)
	}
	return out, nil
}

// RevokeTelemetryToken disables an agent or board token; only admins may.
func (s *Store) RevokeTelemetryToken(ctx context.Context, id int64) error {
	const op = "store.RevokeTelemetryToken"
	err := s.tx(ctx, op, func(tx *gorm.DB) error {
		if _, err := requireAdmin(ctx, tx, op); err != nil {
			return err
		}
		var t APIToken
		if err := tx.Where("id = ? AND kind IN ?", id, []string{TokenAgent, TokenBoard}).First(&t).Error; err != nil {
			return withKey(translate(op, err), "token.not_found")
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.RevokeAPIToken(ctx, id, 0)
}

// MayReport tells whether the token may report samples of host (case
// does not matter). A token bound to no host yet may not: the caller binds
// it first (BindTokenHost).
func (t APIToken) MayReport(host string) bool { return t.Hosts.Has(host) }

// BindTokenHost records host as the host an agent token bound to none
// reports, and returns the hosts the token is bound to after the call. A
// token bound already keeps its hosts: of two processes binding two first
// hosts at once, one wins and both are told the winner (one UPDATE … WHERE
// hosts = ”). The binding is audited as made by the telemetry unless ctx
// names an actor.
func (s *Store) BindTokenHost(ctx context.Context, tokenID int64, host string) (bound []string, err error) {
	const op = "store.BindTokenHost"
	rule := tokenHostRule
	rule.field = "host" // the push's field that names it
	cleaned, err := rule.clean(op, []string{host})
	if err != nil {
		return nil, err
	}
	if len(cleaned) == 0 { // clean drops an empty name
		return nil, rule.invalidErr(op, "")
	}
	h := cleaned[0]
	ctx = orTelemetry(ctx)
	var t APIToken
	err = s.tx(ctx, op, func(tx *gorm.DB) error {
		t = APIToken{}
		res := tx.Model(&APIToken{}).Where("id = ? AND kind = ? AND hosts = ? AND revoked_at IS NULL", tokenID, TokenAgent, "").
			Update("hosts", h)
		if res.Error != nil {
			return res.Error
		}
		if err := tx.Where("id = ? AND kind = ?", tokenID, TokenAgent).First(&t).Error; err != nil {
			return withKey(translate(op, err), "token.not_found")
		}
		if res.RowsAffected == 0 {
			return nil
		}
		before := t
		before.Hosts = nil
		return s.audit(ctx, tx, "bind_host", "api_token", t.ID, t.Name+": "+h, before, t)
	})
	if err != nil {
		return nil, err
	}
	return t.Hosts, nil
}
