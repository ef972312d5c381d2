package sso

import (
	"encoding/json"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// simpleName is the auth_settings row of password sign-in, and simpleID
// the id its events carry (Unleash's).
const (
	simpleName = "simple"
	simpleID   = "unleash.auth.simple"
)

// Simple are the password sign-in settings in Unleash's shape
// (GET /api/admin/auth/simple/settings).
type Simple struct {
	Disabled bool `json:"disabled"`
}

// SimpleSettings changes them.
type SimpleSettings struct {
	Disabled *bool `json:"disabled"`
}

func (svc *Service) loadSimple(q store.Q) (Simple, error) {
	var s Simple
	row, err := q.AuthSettings(simpleName)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal([]byte(row.Document), &s); err != nil {
		return s, apierr.Internal(err)
	}
	return s, nil
}

// SimpleSettings returns the password sign-in settings as p (UPDATE_AUTH_CONFIGURATION) may
// read them.
func (svc *Service) SimpleSettings(q store.Q, p *domain.Principal) (Simple, error) {
	if err := p.Require(domain.PermUpdateAuthConfiguration, "", ""); err != nil {
		return Simple{}, err
	}
	return svc.loadSimple(q)
}

// UpdateSimpleSettings switches password sign-in on or off as p (UPDATE_AUTH_CONFIGURATION),
// with its event. It can be switched off only while OIDC is enabled, so
// that people keep a way in; the break-glass admin keeps theirs anyway.
func (svc *Service) UpdateSimpleSettings(tx *store.Tx, p *domain.Principal, in SimpleSettings) (Simple, error) {
	if err := p.Require(domain.PermUpdateAuthConfiguration, "", ""); err != nil {
		return Simple{}, err
	}
	return svc.updateSimple(tx, p.Actor(), in)
}

func (svc *Service) updateSimple(tx *store.Tx, actor store.Actor, in SimpleSettings) (Simple, error) {
	old, err := svc.loadSimple(tx.Q)
	if err != nil {
		return old, err
	}
	version, err := tx.AuthSettingsVersion(simpleName)
	if err != nil {
		return old, err
	}
	s := old
	if in.Disabled != nil {
		s.Disabled = *in.Disabled
	}
	if s.Disabled && !old.Disabled {
		oidc, _, err := svc.loadSettings(tx.Q)
		if err != nil {
			return old, err
		}
		if !oidc.Enabled {
			return old, apierr.Validation("Enable sign-in with OIDC before switching password sign-in off.")
		}
	}
	if s == old && version > 0 {
		return s, nil
	}
	b, _ := json.Marshal(s)
	if _, err := tx.PutAuthSettings(simpleName, string(b), ""); err != nil {
		return s, err
	}
	data := map[string]any{"id": simpleID, "disabled": s.Disabled}
	if version == 0 {
		return s, tx.Event(store.NewEvent{Type: "setting-created", Actor: actor, Data: data})
	}
	return s, tx.Event(store.NewEvent{Type: "setting-updated", Actor: actor, Data: data, PreData: map[string]any{"id": simpleID, "disabled": old.Disabled}})
}

// PasswordSignInAllowed refuses a password sign-in as login while password
// sign-in is off, unless login names the break-glass admin (by username
// or email).
func (svc *Service) PasswordSignInAllowed(q store.Q, login string) error {
	s, err := svc.loadSimple(q)
	if err != nil || !s.Disabled {
		return err
	}
	login = strings.TrimSpace(login)
	if bg := svc.cfg.BreakGlassUser; bg != "" && login != "" {
		if strings.EqualFold(login, bg) {
			return nil
		}
		if acct, _, err := q.AccountByLogin(login); err == nil && acct.Username != nil && *acct.Username == bg {
			return nil
		}
	}
	return apierr.Forbidden("Password sign-in is switched off on this server: sign in with your identity provider.")
}
