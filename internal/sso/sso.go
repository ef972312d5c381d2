// Package sso is single sign-on through an OpenID Connect provider: its
// settings (in Unleash's shape, stored with a sealed client secret), the
// authorization-code flow with PKCE, state and nonce, the checks on the ID
// token (go-oidc: issuer, audience, expiry, signature from the provider's
// cached key set), who may sign in (an existing person by email, or one
// auto-created with the default root role at an allowed domain), the claim
// that names their groups, single sign-out, and whether password sign-in
// is switched off. It calls internal/domain for people and sessions; the
// HTTP side lives in internal/server/ssoapi.
package sso

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/internal/config"
	"github.com/bunting-flags/bunting/internal/secretbox"
	"github.com/bunting-flags/bunting/internal/store"
)

// Config holds the options of single sign-on: the OIDC settings a fresh
// install starts with (OIDC_*, Unleash's variables) and the box that seals
// the client secret.
type Config struct {
	// Seed are the OIDC settings from the environment, stored when the
	// database holds none yet (SeedFromEnv).
	Seed EnvSettings
	// PasswordSignInDisabled switches password sign-in off on a fresh
	// install (all but the break-glass admin).
	PasswordSignInDisabled bool
	// Secrets seals the client secret (internal/secretbox: SECRETS_KEY or
	// the key file next to the SQLite file). Set by the server, not an
	// option; nil cannot seal.
	Secrets *secretbox.Box
	// BreakGlassUser may sign in with a password even when password
	// sign-in is off (the first admin, INIT_ADMIN_USER). Set by the server.
	BreakGlassUser string
	// ProviderTimeout bounds each call to the identity provider.
	ProviderTimeout time.Duration
}

// EnvSettings are the OIDC_* variables.
type EnvSettings struct {
	Enabled, AutoCreate, EnableGroupSyncing, AddGroupsScope, EnableSingleSignOut, EnablePKCE bool
	DiscoverURL, ClientID, Secret, EmailDomains, DefaultRootRole, GroupJSONPath              string
	IDTokenSigningAlgorithm, AcrValues, ProviderName                                         string
}

// Options are the single sign-on options, bound to c, for the server's
// table (internal/config).
func (c *Config) Options() []config.Option {
	e := &c.Seed
	return []config.Option{
		{Name: "OIDC_ENABLED", Env: []string{"OIDC_ENABLED"}, Default: "false", Usage: "sign in with an OpenID Connect provider (with the other OIDC_* variables: stored on a fresh install, then changed in the admin API or web UI)", Value: config.Bool(&e.Enabled)},
		{Name: "OIDC_DISCOVER_URL", Env: []string{"OIDC_DISCOVER_URL"}, Usage: "the provider's discovery document (https://…/.well-known/openid-configuration)", Value: config.String(&e.DiscoverURL)},
		{Name: "OIDC_CLIENT_ID", Env: []string{"OIDC_CLIENT_ID"}, Usage: "Bunting's client id at the provider", Value: config.String(&e.ClientID)},
		{Name: "OIDC_CLIENT_SECRET", Env: []string{"OIDC_CLIENT_SECRET"}, Usage: "Bunting's client secret at the provider (stored encrypted)", Value: config.String(&e.Secret)},
		{Name: "OIDC_AUTO_CREATE", Env: []string{"OIDC_AUTO_CREATE"}, Default: "false", Usage: "create people who sign in for the first time", Value: config.Bool(&e.AutoCreate)},
		{Name: "OIDC_AUTO_CREATE_EMAIL_DOMAINS", Env: []string{"OIDC_AUTO_CREATE_EMAIL_DOMAINS"}, Shown: "any domain", Usage: "comma list of email domains whose people may be created", Value: config.String(&e.EmailDomains)},
		{Name: "OIDC_DEFAULT_ROOT_ROLE", Env: []string{"OIDC_DEFAULT_ROOT_ROLE"}, Default: "Viewer", Usage: "root role of people created at sign-in: Admin, Editor or Viewer", Value: oneOf(&e.DefaultRootRole, "Admin", "Editor", "Viewer")},
		{Name: "OIDC_ENABLE_GROUP_SYNCING", Env: []string{"OIDC_ENABLE_GROUP_SYNCING"}, Default: "false", Usage: "match the groups claim to groups' SSO mappings at every sign-in", Value: config.Bool(&e.EnableGroupSyncing)},
		{Name: "OIDC_GROUP_JSON_PATH", Env: []string{"OIDC_GROUP_JSON_PATH"}, Default: "groups", Usage: "where the ID token (or userinfo) names the groups, e.g. groups or realm_access.roles", Value: config.String(&e.GroupJSONPath)},
		{Name: "OIDC_ADD_GROUPS_SCOPE", Env: []string{"OIDC_ADD_GROUPS_SCOPE"}, Default: "false", Usage: "also ask for the groups scope", Value: config.Bool(&e.AddGroupsScope)},
		{Name: "OIDC_ACR_VALUES", Env: []string{"OIDC_ACR_VALUES"}, Usage: "acr_values sent with the sign-in request (space-separated)", Value: config.String(&e.AcrValues)},
		{Name: "OIDC_ID_TOKEN_SIGNING_ALGORITHM", Env: []string{"OIDC_ID_TOKEN_SIGNING_ALGORITHM"}, Default: "RS256", Usage: "the algorithm ID tokens must be signed with (RS256, RS384, RS512, ES256, PS256, EdDSA, …)", Value: oneOf(&e.IDTokenSigningAlgorithm, SigningAlgorithms...)},
		{Name: "OIDC_ENABLE_SINGLE_SIGN_OUT", Env: []string{"OIDC_ENABLE_SINGLE_SIGN_OUT"}, Default: "false", Usage: "signing out of Bunting also signs out at the provider (when it has an end_session_endpoint)", Value: config.Bool(&e.EnableSingleSignOut)},
		{Name: "OIDC_ENABLE_PKCE", Env: []string{"OIDC_ENABLE_PKCE"}, Default: "true", Usage: "send a PKCE code challenge (S256) with the sign-in request", Value: config.Bool(&e.EnablePKCE)},
		{Name: "OIDC_PROVIDER_NAME", Env: []string{"OIDC_PROVIDER_NAME"}, Shown: "the discovery URL's host", Usage: "the name on the sign-in button (Sign in with …)", Value: config.String(&e.ProviderName)},
		{Name: "DISABLE_PASSWORD_SIGN_IN", Env: []string{"DISABLE_PASSWORD_SIGN_IN"}, Default: "false", Usage: "switch password sign-in off on a fresh install, for everyone but the break-glass admin (INIT_ADMIN_USER)", Value: config.Bool(&c.PasswordSignInDisabled)},
		{Name: "oidc-timeout", Env: []string{"OIDC_PROVIDER_TIMEOUT"}, Default: "10s", Usage: "longest call to the identity provider (discovery, keys, token, userinfo)", Value: config.Duration(&c.ProviderTimeout)},
	}
}

// oneOf is one of values in any case, stored as values spells it.
func oneOf(p *string, values ...string) config.Value {
	return config.Func(func(v string) error {
		for _, ok := range values {
			if strings.EqualFold(strings.TrimSpace(v), ok) {
				*p = ok
				return nil
			}
		}
		return fmt.Errorf("not one of %s", strings.Join(values, ", "))
	})
}

// Validate checks values that parse but make no sense.
func (c Config) Validate() error {
	if c.ProviderTimeout <= 0 {
		return fmt.Errorf("OIDC_PROVIDER_TIMEOUT must be positive")
	}
	return nil
}

// Service runs single sign-on for one server instance.
type Service struct {
	store  *store.Store
	cfg    Config
	keys   keyring
	log    *slog.Logger
	client *http.Client
	// groups receives claimed groups (SetGroupSyncer); nil: none.
	groups GroupSyncer

	mu sync.Mutex
	// rp is the relying party for the stored settings' version, built at
	// the first sign-in after a change (provider.go).
	rp *relyingParty
}

// New builds the service on st.
func New(cfg Config, st *store.Store, log *slog.Logger) (*Service, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.ProviderTimeout <= 0 {
		cfg.ProviderTimeout = 10 * time.Second
	}
	return &Service{store: st, cfg: cfg, keys: keyring{box: cfg.Secrets}, log: log, client: &http.Client{Timeout: cfg.ProviderTimeout}}, nil
}

// SetGroupSyncer hands claimed groups to g at every sign-in with group
// syncing on.
func (svc *Service) SetGroupSyncer(g GroupSyncer) { svc.groups = g }

// SetHTTPClient replaces the client that calls the identity provider
// (tests, or a proxy).
func (svc *Service) SetHTTPClient(c *http.Client) {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	svc.client, svc.rp = c, nil
}

// SeedFromEnv stores the OIDC_* settings (and DISABLE_PASSWORD_SIGN_IN)
// as the system when the database holds no settings yet and the
// environment names a provider; later starts leave stored settings alone,
// so that changes made in the admin API stay.
func (svc *Service) SeedFromEnv(ctx context.Context, actor store.Actor) error {
	e := svc.cfg.Seed
	return svc.store.Tx(ctx, func(tx *store.Tx) error {
		if e.Enabled || e.DiscoverURL != "" || e.ClientID != "" {
			v, err := tx.AuthSettingsVersion(settingsName)
			if err != nil {
				return err
			}
			if v == 0 {
				in := SettingsInput{Enabled: &e.Enabled, DiscoverURL: &e.DiscoverURL, ClientID: &e.ClientID, Secret: &e.Secret,
					AutoCreate: &e.AutoCreate, EmailDomains: &e.EmailDomains, DefaultRootRole: &e.DefaultRootRole,
					EnableSingleSignOut: &e.EnableSingleSignOut, EnableGroupSyncing: &e.EnableGroupSyncing, GroupJSONPath: &e.GroupJSONPath,
					AddGroupsScope: &e.AddGroupsScope, IDTokenSigningAlgorithm: &e.IDTokenSigningAlgorithm, AcrValues: &e.AcrValues,
					EnablePKCE: &e.EnablePKCE, ProviderName: &e.ProviderName}
				if _, err := svc.updateSettings(tx, actor, in); err != nil {
					return fmt.Errorf("OIDC_* settings: %w", err)
				}
			}
		}
		if svc.cfg.PasswordSignInDisabled {
			v, err := tx.AuthSettingsVersion(simpleName)
			if err != nil {
				return err
			}
			if v == 0 {
				disabled := true
				if _, err := svc.updateSimple(tx, actor, SimpleSettings{Disabled: &disabled}); err != nil {
					return fmt.Errorf("DISABLE_PASSWORD_SIGN_IN: %w", err)
				}
			}
		}
		return nil
	})
}
