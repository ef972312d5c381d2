// Package accounts serves people who sign in with a password, and their browser sessions: the
// HTTP side of the first admin, sign-in, sessions, CSRF checks, sign-out
// here and everywhere, and the admin API for managing people. The rules
// live in internal/domain (accounts.go, sessions.go); this package
// decodes, runs them and answers, with the session cookie.
package accounts

import (
	"context"
	"encoding/json"

	"github.com/bunting-flags/bunting/internal/access"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/store"
)

const (
	// SessionCookie names the cookie that carries a browser session.
	SessionCookie = "bunting_session"
	// CSRFHeader carries the session's CSRF token on every change.
	CSRFHeader = "X-CSRF-Token"
)

// SessionPrincipal authenticates a request by its session cookie
// (domain.SessionPrincipal). ok is false when the request carries none.
// Changes (every method but GET, HEAD and OPTIONS) must send the session's
// CSRF token in X-CSRF-Token.
func (s *API) SessionPrincipal(r *http.Request) (p *domain.Principal, ok bool, err error) {
	c, cerr := r.Cookie(SessionCookie)
	if cerr != nil || c.Value == "" {
		return nil, false, nil
	}
	change := true
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		change = false
	}
	p, err = domain.SessionPrincipal(s.store.Q(r.Context()), c.Value, change, r.Header.Get(CSRFHeader), CSRFHeader)
	if err != nil {
		return nil, true, err
	}
	return p, true, s.withAccess(r, p)
}

// withAccess loads what p, a person, may do into p.Access.
func (s *API) withAccess(r *http.Request, p *domain.Principal) (err error) {
	p.Access, err = s.access.ForUser(r.Context(), *p.UserID)
	return err
}

// clientAddress is the request's remote IP (without port).
func clientAddress(r *http.Request) string {
	addr := r.RemoteAddr
	if i := strings.LastIndexByte(addr, ':'); i > 0 && !strings.HasSuffix(addr, "]") {
		addr = addr[:i]
	}
	return strings.Trim(addr, "[]")
}

// login signs a person in (domain.SignIn: rate limits, password, session)
// and sets the session cookie.
func (s *API) login(w http.ResponseWriter, r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "null" && !sameOrigin(o, r) {
		return apierr.Forbidden("Sign-in from another site was refused.")
	}
	var in domain.SignInInput
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	if s.hooks.PasswordAllowed != nil {
		if err := s.hooks.PasswordAllowed(r.Context(), in.Username); err != nil {
			return err
		}
	}
	sess, err := domain.SignIn(s.store.Q(r.Context()), s.logins, s.store.Now(), clientAddress(r), in)
	if err != nil {
		return err
	}
	http.SetCookie(w, s.sessionCookie(r, sess.Secret, int(domain.SessionTTL/time.Second)))
	if err := s.withAccess(r, sess.Principal); err != nil {
		return err
	}
	v, err := domain.ViewSession(s.store.Q(r.Context()), sess.Principal, sess.CSRF, nil, nil)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, v)
}

// sameOrigin reports whether an Origin header names this request's host.
func sameOrigin(origin string, r *http.Request) bool {
	_, rest, ok := strings.Cut(origin, "://")
	return ok && strings.EqualFold(rest, r.Host)
}

// sessionCookie builds the session cookie (maxAge < 0 deletes it).
func (s *API) sessionCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	path := s.basePath
	if path == "" {
		path = "/"
	}
	return &http.Cookie{
		Name: SessionCookie, Value: value, Path: path, MaxAge: maxAge, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
	}
}

// currentSession answers who is signed in, with the CSRF token the page
// sends back on changes and the permissions the person holds.
func (s *API) currentSession(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	csrf := ""
	if c, err := r.Cookie(SessionCookie); err == nil && p.Kind == domain.KindUser && r.Header.Get("Authorization") == "" {
		sess, err := s.store.Q(r.Context()).SessionByHash(store.HashSecret(c.Value))
		if err != nil {
			return err
		}
		csrf = sess.CSRF
	}
	w.Header().Set("Cache-Control", "no-store")
	query := r.URL.Query()
	v, err := domain.ViewSession(s.store.Q(r.Context()), p, csrf, splitList(query["project"]), splitList(query["perm"]))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, v)
}

// logout ends this browser's session.
func (s *API) logout(w http.ResponseWriter, r *http.Request) error {
	c, err := r.Cookie(SessionCookie)
	if err != nil || r.Header.Get("Authorization") != "" {
		return apierr.Validation("Only a browser session can sign out; this request used an API token.")
	}
	redirect := ""
	if s.hooks.SignOutURL != nil {
		if redirect, err = s.hooks.SignOutURL(r, c.Value); err != nil {
			return err
		}
	}
	if err := domain.SignOut(s.store.Q(r.Context()), c.Value); err != nil {
		return err
	}
	http.SetCookie(w, s.sessionCookie(r, "", -1))
	if redirect != "" {
		// Single sign-out: the page sends the browser on to the provider.
		return httpjson.Write(w, http.StatusOK, map[string]string{"redirectUrl": redirect})
	}
	return httpjson.WriteStatus(w, http.StatusNoContent)
}

// SetSessionCookie sets the cookie of a session started elsewhere (single
// sign-on).
func (s *API) SetSessionCookie(w http.ResponseWriter, r *http.Request, secret string) {
	http.SetCookie(w, s.sessionCookie(r, secret, int(domain.SessionTTL/time.Second)))
}

// Hooks let single sign-on take part in password sign-in and sign-out
// (internal/sso, wired by the server).
type Hooks struct {
	// PasswordAllowed refuses a password sign-in as login (password
	// sign-in switched off).
	PasswordAllowed func(ctx context.Context, login string) error
	// SignOutURL is where the browser goes once the session whose cookie
	// holds secret has ended ("" for the sign-in page).
	SignOutURL func(r *http.Request, secret string) (string, error)
}

// SetHooks installs h.
func (s *API) SetHooks(h Hooks) { s.hooks = h }

// logoutEverywhere ends every session of the calling person.
func (s *API) logoutEverywhere(w http.ResponseWriter, r *http.Request) error {
	n, err := domain.SignOutEverywhere(s.store.Q(r.Context()), domain.PrincipalFrom(r.Context()))
	if err != nil {
		return err
	}
	http.SetCookie(w, s.sessionCookie(r, "", -1))
	return httpjson.Write(w, http.StatusOK, map[string]int64{"sessionsEnded": n})
}

func (s *API) listAccounts(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	accts, err := q.Accounts()
	if err != nil {
		return err
	}
	roles, err := domain.RootRoles(q)
	if err != nil {
		return err
	}
	out := accountList{Users: make([]domain.UserView, 0, len(accts)), RootRoles: roles}
	for _, a := range accts {
		out.Users = append(out.Users, domain.ViewAccount(a))
	}
	return httpjson.Write(w, http.StatusOK, out)
}

// getAccount answers GET /api/admin/user-admin/{id}.
func (s *API) getAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	a, err := s.store.Q(r.Context()).Account(id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, domain.ViewAccount(a))
}

// searchAccounts answers GET /api/admin/user-admin/search?q=: people whose
// username, name or email contains q (at least 2 characters, else none),
// as Unleash answers it.
func (s *API) searchAccounts(w http.ResponseWriter, r *http.Request) error {
	text := r.URL.Query().Get("q")
	out := []domain.UserView{}
	if len([]rune(text)) < 2 {
		return httpjson.Write(w, http.StatusOK, out)
	}
	q := s.store.Q(r.Context())
	users, err := q.SearchUsers(text)
	if err != nil {
		return err
	}
	for _, u := range users {
		a, err := q.Account(u.ID)
		if err != nil {
			return err
		}
		out = append(out, domain.ViewAccount(a))
	}
	return httpjson.Write(w, http.StatusOK, out)
}

// createAccount answers POST /api/admin/user-admin (domain.CreateAccount):
// 201 with the person, and for someone created without a password a
// one-time link to set one (inviteLink).
func (s *API) createAccount(w http.ResponseWriter, r *http.Request) error {
	var in domain.AccountInput
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	var v domain.UserView
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		a, err := domain.CreateAccount(tx, p, in)
		if err != nil {
			return err
		}
		v = domain.ViewAccount(a)
		if !a.HasPassword {
			secret, _, err := domain.CreatePasswordLink(tx, p, a.ID, domain.InviteLinkTTL)
			if err != nil {
				return err
			}
			v.InviteLink = s.passwordLinkURL(r, secret)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sent := false
	v.EmailSent = &sent
	w.Header().Set("Location", strconv.FormatInt(v.ID, 10))
	return httpjson.Write(w, http.StatusCreated, v)
}

// updateAccount answers PUT /api/admin/user-admin/{id} (domain.UpdateAccount).
func (s *API) updateAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	var in domain.AccountInput
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	var a store.Account
	err = s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		a, err = domain.UpdateAccount(tx, domain.PrincipalFrom(r.Context()), id, in)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, domain.ViewAccount(a))
}

// passwordLink answers POST /api/admin/user-admin/reset-password (Unleash's
// route; body {"id": username, email or id}): a one-time link with which
// the person sets a new password, valid for a day. Bunting sends no mail:
// the admin passes the link on.
func (s *API) passwordLink(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		ID json.RawMessage `json:"id"`
	}
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	var who string
	if json.Unmarshal(in.ID, &who) != nil {
		var n int64
		if json.Unmarshal(in.ID, &n) != nil {
			return apierr.Validation("The `id` property is required: the person's username, email or id.")
		}
		who = strconv.FormatInt(n, 10)
	}
	var link passwordLinkAnswer
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		a, err := domain.FindAccount(tx.Q, who)
		if apierr.IsKind(err, apierr.KindNotFound) {
			if n, perr := strconv.ParseInt(who, 10, 64); perr == nil {
				a, err = tx.Account(n)
			}
		}
		if err != nil {
			return err
		}
		secret, expires, err := domain.CreatePasswordLink(tx, domain.PrincipalFrom(r.Context()), a.ID, domain.ResetLinkTTL)
		link = passwordLinkAnswer{URL: s.passwordLinkURL(r, secret), ExpiresAt: expires}
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, link)
}

// passwordLinkURL is the web UI page a link secret opens.
func (s *API) passwordLinkURL(r *http.Request, secret string) string {
	base := s.baseURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
			scheme = "https"
		}
		base = scheme + "://" + r.Host + s.basePath
	}
	return strings.TrimSuffix(base, "/") + "/reset-password?token=" + url.QueryEscape(secret)
}

// validatePasswordLink answers GET /auth/reset/validate?token=: whose
// link it is (401 when it does not work).
func (s *API) validatePasswordLink(w http.ResponseWriter, r *http.Request) error {
	a, err := domain.PasswordLinkAccount(s.store.Q(r.Context()), r.URL.Query().Get("token"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, passwordLinkOwner{ID: a.ID, Username: a.Username, Email: a.Email, Name: a.Name})
}

// usePasswordLink answers POST /auth/reset/password {token, password}:
// sets the password and uses the link up.
func (s *API) usePasswordLink(w http.ResponseWriter, r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != "null" && !sameOrigin(o, r) {
		return apierr.Forbidden("Setting a password from another site was refused.")
	}
	var in struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.UsePasswordLink(tx, in.Token, in.Password) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// deleteAccount answers DELETE /api/admin/user-admin/{id} (domain.DeleteAccount).
func (s *API) deleteAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	return s.accountChange(w, r, func(tx *store.Tx, p *domain.Principal) error { return domain.DeleteAccount(tx, p, id) })
}

// resetPassword sets a person's password (admins) and ends their sessions
// (domain.ResetPassword).
func (s *API) resetPassword(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	var in domain.PasswordInput
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	return s.accountChange(w, r, func(tx *store.Tx, p *domain.Principal) error { return domain.ResetPassword(tx, p, id, in) })
}

// changeOwnPassword lets a signed-in person change their password, given
// the current one; their other sessions end (domain.ChangeOwnPassword).
func (s *API) changeOwnPassword(w http.ResponseWriter, r *http.Request) error {
	var in domain.PasswordInput
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	return s.accountChange(w, r, func(tx *store.Tx, p *domain.Principal) error { return domain.ChangeOwnPassword(tx, p, in) })
}

// accountChange runs op in a transaction as the caller and answers 200
// with an empty body.
func (s *API) accountChange(w http.ResponseWriter, r *http.Request, op func(*store.Tx, *domain.Principal) error) error {
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return op(tx, domain.PrincipalFrom(r.Context())) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// The answers of the people and session routes, named for the OpenAPI
// document.
type (
	sessionsEnded struct {
		SessionsEnded int64 `json:"sessionsEnded"`
	}
	accountList struct {
		Users     []domain.UserView `json:"users"`
		RootRoles []domain.RootRole `json:"rootRoles"`
	}
	passwordLinkAnswer struct {
		URL       string    `json:"resetPasswordUrl"`
		ExpiresAt time.Time `json:"expiresAt"`
	}
	passwordLinkRequest struct {
		ID string `json:"id"`
	}
	passwordLinkUse struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	passwordLinkOwner struct {
		ID       int64   `json:"id"`
		Username *string `json:"username,omitempty"`
		Email    *string `json:"email,omitempty"`
		Name     *string `json:"name,omitempty"`
	}
)

// API serves sign-in, sessions and the people routes.
type API struct {
	store *store.Store
	// basePath is the session cookie's path ("" = "/").
	basePath string
	// baseURL is where browsers reach the server (links), "" to take it
	// from the request.
	baseURL string
	// logins counts failed sign-ins (domain.SignIn).
	logins *domain.LoginLimiter
	// hooks are single sign-on's (SetHooks).
	hooks Hooks
	// access loads what a signed-in person may do.
	access *access.Service
}

// New builds the accounts surface on st; basePath is where the server is
// mounted (the session cookie's path).
func New(st *store.Store, basePath, baseURL string, acc *access.Service) *API {
	return &API{store: st, basePath: basePath, baseURL: baseURL, logins: domain.NewLoginLimiter(), access: acc}
}

// splitList reads a repeatable, comma-separated query parameter.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}
