package sso

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// LoginTTL is how long a sign-in may take at the provider.
const LoginTTL = 10 * time.Minute

// Start is a sign-in about to go to the provider: the URL to send the
// browser to, and the secret of the cookie that binds the callback to
// this browser.
type Start struct {
	AuthURL string
	Binding string
}

// Begin starts a sign-in: a fresh state, nonce and PKCE verifier, stored
// (hashed where they are credentials) for whichever instance gets the
// callback. redirectURL is this server's callback URL, next where the
// person goes once signed in (already checked by the caller).
func (svc *Service) Begin(ctx context.Context, redirectURL, next string) (Start, error) {
	q := svc.store.Q(ctx)
	rp, err := svc.current(ctx, q)
	if err != nil {
		return Start{}, err
	}
	state, nonce, binding := domain.RandomHex(32), domain.RandomHex(32), domain.RandomHex(32)
	verifier := oauth2.GenerateVerifier()
	err = q.InsertSSOLogin(store.SSOLogin{StateHash: store.HashSecret(state), BindingHash: store.HashSecret(binding),
		Nonce: nonce, Verifier: verifier, Next: next, ExpiresAt: svc.store.Now().Add(LoginTTL)})
	if err != nil {
		return Start{}, err
	}
	oc := rp.oauth
	oc.RedirectURL = redirectURL
	opts := []oauth2.AuthCodeOption{oidc.Nonce(nonce)}
	if rp.settings.EnablePKCE {
		opts = append(opts, oauth2.S256ChallengeOption(verifier))
	}
	if rp.settings.AcrValues != "" {
		opts = append(opts, oauth2.SetAuthURLParam("acr_values", rp.settings.AcrValues))
	}
	return Start{AuthURL: oc.AuthCodeURL(state, opts...), Binding: binding}, nil
}

// Refusal is why a sign-in through the provider was refused: a code the
// sign-in page turns back into its message (Message), and the message.
// The person gets no session.
type Refusal struct {
	Code string
	// Detail is for the log (what the provider or the library said).
	Detail string
}

func (r *Refusal) Error() string { return Message(r.Code) }

// Refusal codes.
const (
	RefusedState     = "state"
	RefusedProvider  = "provider"
	RefusedExchange  = "exchange"
	RefusedToken     = "token"
	RefusedExpired   = "expired"
	RefusedAudience  = "audience"
	RefusedIssuer    = "issuer"
	RefusedSignature = "signature"
	RefusedNonce     = "nonce"
	RefusedEmail     = "email"
	RefusedDomain    = "domain"
	RefusedNoAccount = "no-account"
	RefusedInactive  = "deactivated"
	RefusedOff       = "off"
)

var messages = map[string]string{
	RefusedState:     "This sign-in was not started in this browser, was already used, or has expired (unknown state). Start again from the sign-in page.",
	RefusedProvider:  "The identity provider refused the sign-in.",
	RefusedExchange:  "The identity provider did not accept the sign-in code. Start again from the sign-in page.",
	RefusedToken:     "The identity provider's ID token could not be verified.",
	RefusedExpired:   "The identity provider's ID token has expired. Check that the server's clock is right, and start again.",
	RefusedAudience:  "The identity provider's ID token was issued to another application (wrong audience).",
	RefusedIssuer:    "The ID token was issued by another identity provider (wrong issuer).",
	RefusedSignature: "The ID token's signature does not match the identity provider's keys.",
	RefusedNonce:     "The ID token was issued for another sign-in (its nonce does not match): it may be replayed.",
	RefusedEmail:     "The identity provider did not give a verified email address, which Bunting needs to know who you are.",
	RefusedDomain:    "Your email address is not in a domain allowed to sign in here. Ask an admin to add you.",
	RefusedNoAccount: "There is no Bunting user with your email address. Ask an admin to add you.",
	RefusedInactive:  "This account is deactivated. Ask an admin to reactivate it.",
	RefusedOff:       "Sign-in with an identity provider is not enabled on this server.",
}

// Message is the sign-in page's text for a refusal code ("" for an
// unknown code).
func Message(code string) string { return messages[code] }

func refuse(code, detail string) error { return &Refusal{Code: code, Detail: detail} }

// Signed is a finished sign-in: the session to set and where to go.
type Signed struct {
	Session domain.Session
	Next    string
}

// Complete finishes a sign-in at the callback: the state must name a
// sign-in under way that started in this browser (binding), the code is
// exchanged with the PKCE verifier, the ID token verified (issuer,
// audience, expiry, signature) and its nonce compared; then the person is
// found by email or created, their groups handed to the GroupSyncer, and a
// session started. Every refusal is a *Refusal.
func (svc *Service) Complete(ctx context.Context, redirectURL string, query url.Values, binding string) (Signed, error) {
	q := svc.store.Q(ctx)
	state := query.Get("state")
	if state == "" || len(state) > 200 {
		return Signed{}, refuse(RefusedState, "no state")
	}
	pending, err := q.TakeSSOLogin(store.HashSecret(state))
	if apierr.IsKind(err, apierr.KindNotFound) {
		return Signed{}, refuse(RefusedState, "unknown or expired state")
	}
	if err != nil {
		return Signed{}, err
	}
	if binding == "" || !domain.SecretsEqual(store.HashSecret(binding), pending.BindingHash) {
		return Signed{}, refuse(RefusedState, "the browser-binding cookie does not match the state")
	}
	if e := query.Get("error"); e != "" {
		return Signed{}, refuse(RefusedProvider, e+": "+query.Get("error_description"))
	}
	rp, err := svc.current(ctx, q)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return Signed{}, refuse(RefusedOff, "disabled")
	}
	if err != nil {
		return Signed{}, err
	}
	code := query.Get("code")
	if code == "" {
		return Signed{}, refuse(RefusedExchange, "no code")
	}
	oc := rp.oauth
	oc.RedirectURL = redirectURL
	var opts []oauth2.AuthCodeOption
	if rp.settings.EnablePKCE {
		opts = append(opts, oauth2.VerifierOption(pending.Verifier))
	}
	cctx := oidc.ClientContext(ctx, svc.httpClient())
	token, err := oc.Exchange(cctx, code, opts...)
	if err != nil {
		return Signed{}, refuse(RefusedExchange, err.Error())
	}
	raw, _ := token.Extra("id_token").(string)
	if raw == "" {
		return Signed{}, refuse(RefusedToken, "the token answer has no id_token")
	}
	idt, err := rp.verifier.Verify(cctx, raw)
	if err != nil {
		return Signed{}, verifyRefusal(err)
	}
	if !domain.SecretsEqual(idt.Nonce, pending.Nonce) {
		return Signed{}, refuse(RefusedNonce, "nonce "+idt.Nonce)
	}
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return Signed{}, refuse(RefusedToken, err.Error())
	}
	var groupPath GroupPath
	if rp.settings.EnableGroupSyncing {
		groupPath, _ = ParseGroupPath(rp.settings.GroupJSONPath)
	}
	if needUserInfo(claims, groupPath) && rp.provider.UserInfoEndpoint() != "" {
		if err := addUserInfo(cctx, rp, token, idt.Subject, claims); err != nil {
			return Signed{}, err
		}
	}
	email, _ := claims["email"].(string)
	email = strings.TrimSpace(email)
	if verified, ok := claims["email_verified"].(bool); email == "" || (ok && !verified) {
		return Signed{}, refuse(RefusedEmail, "email "+email)
	}
	name, _ := claims["name"].(string)
	var acct store.Account
	err = svc.store.Tx(ctx, func(tx *store.Tx) error {
		var err error
		acct, err = svc.person(tx, rp.settings, email, name)
		if err != nil || groupPath == nil {
			return err
		}
		groups, found := ClaimedGroups(claims, groupPath)
		if !found {
			svc.log.Warn("OIDC group syncing: the claims hold nothing at groupJsonPath", "groupJsonPath", rp.settings.GroupJSONPath)
		}
		if svc.groups == nil {
			return nil
		}
		return svc.groups.SyncGroups(tx, acct.User, groups)
	})
	if err != nil {
		return Signed{}, err
	}
	sess, err := domain.StartSession(q, acct, svc.store.Now())
	if err != nil {
		return Signed{}, err
	}
	if rp.settings.EnableSingleSignOut && rp.endSession != "" {
		if err := q.SetSessionIDToken(store.HashSecret(sess.Secret), raw); err != nil {
			return Signed{}, err
		}
	}
	return Signed{Session: sess, Next: pending.Next}, nil
}

// person finds who signs in by email, or creates them when auto-creation
// allows (their email at an allowed domain).
func (svc *Service) person(tx *store.Tx, s Settings, email, name string) (store.Account, error) {
	acct, _, err := tx.AccountByLogin(email)
	switch {
	case err == nil:
		if acct.Deactivated {
			return acct, refuse(RefusedInactive, email)
		}
		return acct, nil
	case !apierr.IsKind(err, apierr.KindNotFound):
		return acct, err
	case !s.AutoCreate:
		return acct, refuse(RefusedNoAccount, email)
	case !s.allowsEmail(email):
		return acct, refuse(RefusedDomain, email)
	}
	return domain.CreateSSOAccount(tx, email, name, int64(s.DefaultRootRoleID))
}

// needUserInfo reports whether the ID token lacks what Bunting needs (the
// email, or the groups when group syncing is on), which many providers put
// in the userinfo answer only.
func needUserInfo(claims map[string]any, groupPath GroupPath) bool {
	if e, _ := claims["email"].(string); e == "" {
		return true
	}
	if groupPath != nil {
		_, ok := groupPath.Lookup(claims)
		return !ok
	}
	return false
}

// addUserInfo adds the userinfo claims the ID token lacks; the userinfo
// answer must be about the same subject.
func addUserInfo(ctx context.Context, rp *relyingParty, token *oauth2.Token, subject string, claims map[string]any) error {
	ui, err := rp.provider.UserInfo(ctx, oauth2.StaticTokenSource(token))
	if err != nil {
		return refuse(RefusedToken, "userinfo: "+err.Error())
	}
	if ui.Subject != subject {
		return refuse(RefusedToken, "userinfo is about another subject")
	}
	extra := map[string]any{}
	if err := ui.Claims(&extra); err != nil {
		return refuse(RefusedToken, "userinfo: "+err.Error())
	}
	for k, v := range extra {
		if _, ok := claims[k]; !ok {
			claims[k] = v
		}
	}
	return nil
}

// verifyRefusal names what go-oidc refused in an ID token.
func verifyRefusal(err error) error {
	var expired *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &expired):
		return refuse(RefusedExpired, msg)
	case strings.Contains(msg, "expected audience"):
		return refuse(RefusedAudience, msg)
	case strings.Contains(msg, "issued by a different provider"):
		return refuse(RefusedIssuer, msg)
	case strings.Contains(msg, "failed to verify signature"):
		return refuse(RefusedSignature, msg)
	}
	return refuse(RefusedToken, msg)
}

// httpClient is the client for calls to the provider.
func (svc *Service) httpClient() *http.Client {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	return svc.client
}

// SignOutURL is where a browser goes after signing out of a session that
// the provider started, to end the provider's session too (single
// sign-out): "" when the session was a password sign-in, single sign-out
// is off or the provider has no end_session_endpoint. afterURL is where
// the provider sends the browser back.
func (svc *Service) SignOutURL(ctx context.Context, sessionSecret, afterURL string) (string, error) {
	q := svc.store.Q(ctx)
	raw, err := q.SessionIDToken(store.HashSecret(sessionSecret))
	if err != nil || raw == "" {
		return "", err
	}
	rp, err := svc.current(ctx, q)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return "", nil
	}
	if err != nil || !rp.settings.EnableSingleSignOut || rp.endSession == "" {
		return "", err
	}
	u, err := url.Parse(rp.endSession)
	if err != nil {
		return "", nil
	}
	v := u.Query()
	v.Set("id_token_hint", raw)
	v.Set("client_id", rp.settings.ClientID)
	v.Set("post_logout_redirect_uri", afterURL)
	u.RawQuery = v.Encode()
	return u.String(), nil
}

// Option is one way to sign in, for the sign-in page.
type Option struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Message string `json:"message"`
	Path    string `json:"path"`
}

// SignInOptions is what the sign-in page offers.
type SignInOptions struct {
	// PasswordSignIn is false when password sign-in is off (the
	// break-glass admin may still use it).
	PasswordSignIn bool     `json:"passwordSignIn"`
	Options        []Option `json:"options"`
	// Error is the message of a refused sign-in (the page's ?sso_error=).
	Error string `json:"error,omitempty"`
}

// Options answers what the sign-in page offers; errorCode is a refusal
// code to turn into its message.
func (svc *Service) Options(ctx context.Context, errorCode string) (SignInOptions, error) {
	q := svc.store.Q(ctx)
	out := SignInOptions{PasswordSignIn: true, Options: []Option{}, Error: Message(errorCode)}
	s, _, err := svc.loadSettings(q)
	if err != nil {
		return out, err
	}
	if s.Enabled {
		name := s.buttonName()
		out.Options = append(out.Options, Option{Type: "oidc", Name: name, Message: "Sign in with " + name, Path: "/auth/oidc/login"})
	}
	simple, err := svc.loadSimple(q)
	if err != nil {
		return out, err
	}
	out.PasswordSignIn = !simple.Disabled
	return out, nil
}
