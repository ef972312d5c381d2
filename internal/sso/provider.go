package sso

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// relyingParty is Bunting as the provider's client for one version of the
// settings: the discovered provider, the ID token verifier (whose key set
// go-oidc caches, and fetches again when a token names a key it does not
// hold) and the OAuth 2 client.
type relyingParty struct {
	version    int64
	settings   Settings
	provider   *oidc.Provider
	verifier   *oidc.IDTokenVerifier
	oauth      oauth2.Config
	endSession string
	// ctx carries the HTTP client for calls to the provider.
	ctx context.Context
}

// discovery is the part of the discovery document Bunting reads.
type discovery struct {
	Issuer        string   `json:"issuer"`
	AuthURL       string   `json:"authorization_endpoint"`
	TokenURL      string   `json:"token_endpoint"`
	JWKSURL       string   `json:"jwks_uri"`
	UserInfoURL   string   `json:"userinfo_endpoint"`
	EndSessionURL string   `json:"end_session_endpoint"`
	Algorithms    []string `json:"id_token_signing_alg_values_supported"`
}

// errNotEnabled is the answer while OIDC is off.
var errNotEnabled = apierr.NotFound("Sign-in with an identity provider is not enabled on this server.")

// current returns the relying party for the stored settings, building it
// again when they changed (on this instance or another: the version is
// read from the database at every sign-in).
func (svc *Service) current(ctx context.Context, q store.Q) (*relyingParty, error) {
	version, err := q.AuthSettingsVersion(settingsName)
	if err != nil {
		return nil, err
	}
	svc.mu.Lock()
	rp, client := svc.rp, svc.client
	svc.mu.Unlock()
	if rp != nil && rp.version == version {
		if !rp.settings.Enabled {
			return nil, errNotEnabled
		}
		return rp, nil
	}
	s, version, err := svc.loadSettings(q)
	if err != nil {
		return nil, err
	}
	if !s.Enabled {
		svc.keep(&relyingParty{version: version, settings: s})
		return nil, errNotEnabled
	}
	rp, err = discover(ctx, client, s, svc.store.Now)
	if err != nil {
		return nil, err
	}
	rp.version = version
	svc.keep(rp)
	return rp, nil
}

// keep caches rp unless a newer one is already cached.
func (svc *Service) keep(rp *relyingParty) {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if svc.rp == nil || svc.rp.version <= rp.version {
		svc.rp = rp
	}
}

// discover fetches the discovery document and builds the relying party.
func discover(ctx context.Context, client *http.Client, s Settings, now func() time.Time) (*relyingParty, error) {
	unreachable := func(why string, args ...any) error {
		return apierr.Unavailable("The identity provider's discovery document at %s could not be used: %s.", s.DiscoverURL, fmt.Sprintf(why, args...))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.DiscoverURL, nil)
	if err != nil {
		return nil, unreachable("%v", err)
	}
	req.Header.Set("Accept", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, unreachable("%v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, unreachable("it answered %s", res.Status)
	}
	var d discovery
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&d); err != nil {
		return nil, unreachable("it is not JSON (%v)", err)
	}
	if d.Issuer == "" || d.AuthURL == "" || d.TokenURL == "" || d.JWKSURL == "" {
		return nil, unreachable("it lacks issuer, authorization_endpoint, token_endpoint or jwks_uri")
	}
	pctx := oidc.ClientContext(context.Background(), client)
	provider := (&oidc.ProviderConfig{IssuerURL: d.Issuer, AuthURL: d.AuthURL, TokenURL: d.TokenURL, UserInfoURL: d.UserInfoURL,
		JWKSURL: d.JWKSURL, Algorithms: d.Algorithms}).NewProvider(pctx)
	verifier := provider.VerifierContext(pctx, &oidc.Config{ClientID: s.ClientID, SupportedSigningAlgs: []string{s.IDTokenSigningAlgorithm}, Now: now})
	scopes := []string{oidc.ScopeOpenID, "email", "profile"}
	if s.AddGroupsScope {
		scopes = append(scopes, "groups")
	}
	return &relyingParty{
		settings: s, provider: provider, verifier: verifier, endSession: d.EndSessionURL, ctx: pctx,
		oauth: oauth2.Config{ClientID: s.ClientID, ClientSecret: s.Secret, Endpoint: provider.Endpoint(), Scopes: scopes},
	}, nil
}
