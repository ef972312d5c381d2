// Package ssoapi serves single sign-on over HTTP: the OIDC and password
// sign-in settings (Unleash's admin routes), the sign-in options the
// sign-in page shows, and the two legs of the browser's trip to the
// identity provider (/auth/oidc/login and /auth/oidc/callback). The rules
// live in internal/sso; sessions and their cookie are server/accounts'.
package ssoapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/localpath"
	"github.com/bunting-flags/bunting/internal/server/accounts"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/sso"
	"github.com/bunting-flags/bunting/internal/store"
)

// bindingCookie binds a sign-in's callback to the browser that started it.
const bindingCookie = "bunting_sso"

// API serves the single sign-on routes.
type API struct {
	sso      *sso.Service
	store    *store.Store
	accounts *accounts.API
	// basePath is where the server is mounted; baseURL its external
	// address (BUNTING_URL, with the base path), "" to derive it from each
	// request.
	basePath, baseURL string
	log               *slog.Logger
}

// New builds the surface and installs single sign-on's hooks into the
// password sign-in and sign-out of acc.
func New(svc *sso.Service, st *store.Store, acc *accounts.API, basePath, baseURL string, log *slog.Logger) *API {
	a := &API{sso: svc, store: st, accounts: acc, basePath: basePath, baseURL: strings.TrimRight(baseURL, "/"), log: log}
	acc.SetHooks(accounts.Hooks{
		PasswordAllowed: func(ctx context.Context, login string) error {
			return svc.PasswordSignInAllowed(st.Q(ctx), login)
		},
		SignOutURL: func(r *http.Request, secret string) (string, error) {
			return svc.SignOutURL(r.Context(), secret, a.external(r)+"/login")
		},
	})
	return a
}

// Register registers the routes.
func (a *API) Register(r route.Registrar) {
	r.Admin("GET /api/admin/auth/oidc/settings", domain.PermUpdateAuthConfiguration, a.getSettings,
		route.API("Auth", "The OpenID Connect settings", 200, nil, sso.Settings{}))
	for _, method := range []string{"POST", "PUT"} {
		r.Admin(method+" /api/admin/auth/oidc/settings", domain.PermUpdateAuthConfiguration, a.putSettings, route.JSON,
			route.API("Auth", "Change the OpenID Connect settings (properties left out keep their values; a blank or masked secret keeps the stored one)", 200, sso.SettingsInput{}, sso.Settings{}))
	}
	r.Admin("GET /api/admin/auth/simple/settings", domain.PermUpdateAuthConfiguration, a.getSimple,
		route.API("Auth", "Whether password sign-in is switched off", 200, nil, sso.Simple{}))
	for _, method := range []string{"POST", "PUT"} {
		r.Admin(method+" /api/admin/auth/simple/settings", domain.PermUpdateAuthConfiguration, a.putSimple, route.JSON,
			route.API("Auth", "Switch password sign-in off or on (the break-glass admin keeps it)", 200, sso.SimpleSettings{}, sso.Simple{}))
	}
	r.Public("GET /auth/options", a.options,
		route.API("Sessions", "How people may sign in here: password, identity providers; with ?sso_error=, the message of a refused sign-in", 200, nil, sso.SignInOptions{}))
	r.Public("GET /auth/oidc/login", a.login)
	r.Public("GET /auth/oidc/callback", a.callback)
}

func (a *API) getSettings(w http.ResponseWriter, r *http.Request) error {
	s, err := a.sso.Settings(a.store.Q(r.Context()), domain.PrincipalFrom(r.Context()))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return httpjson.Write(w, http.StatusOK, s)
}

func (a *API) putSettings(w http.ResponseWriter, r *http.Request) error {
	var in sso.SettingsInput
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	var s sso.Settings
	err := a.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		s, err = a.sso.UpdateSettings(tx, domain.PrincipalFrom(r.Context()), in)
		return err
	})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return httpjson.Write(w, http.StatusOK, s)
}

func (a *API) getSimple(w http.ResponseWriter, r *http.Request) error {
	s, err := a.sso.SimpleSettings(a.store.Q(r.Context()), domain.PrincipalFrom(r.Context()))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, s)
}

func (a *API) putSimple(w http.ResponseWriter, r *http.Request) error {
	var in sso.SimpleSettings
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	var s sso.Simple
	err := a.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		s, err = a.sso.UpdateSimpleSettings(tx, domain.PrincipalFrom(r.Context()), in)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, s)
}

func (a *API) options(w http.ResponseWriter, r *http.Request) error {
	o, err := a.sso.Options(r.Context(), r.URL.Query().Get("sso_error"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return httpjson.Write(w, http.StatusOK, o)
}

// login sends the browser to the identity provider, with the binding
// cookie set.
func (a *API) login(w http.ResponseWriter, r *http.Request) error {
	start, err := a.sso.Begin(r.Context(), a.callbackURL(r), a.next(r.URL.Query().Get("next")))
	if err != nil {
		if apierr.IsKind(err, apierr.KindNotFound) {
			return a.refused(w, r, &sso.Refusal{Code: sso.RefusedOff}, err)
		}
		return err
	}
	http.SetCookie(w, a.cookie(r, start.Binding, int(sso.LoginTTL.Seconds())))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, start.AuthURL, http.StatusFound)
	return nil
}

// callback finishes the sign-in: the session cookie and on to where the
// person was going, or the sign-in page with the refusal's message.
func (a *API) callback(w http.ResponseWriter, r *http.Request) error {
	binding := ""
	if c, err := r.Cookie(bindingCookie); err == nil {
		binding = c.Value
	}
	http.SetCookie(w, a.cookie(r, "", -1))
	w.Header().Set("Cache-Control", "no-store")
	signed, err := a.sso.Complete(r.Context(), a.callbackURL(r), r.URL.Query(), binding)
	var refusal *sso.Refusal
	if ok := asRefusal(err, &refusal); ok {
		return a.refused(w, r, refusal, err)
	}
	if err != nil {
		return err
	}
	a.accounts.SetSessionCookie(w, r, signed.Session.Secret)
	http.Redirect(w, r, signed.Next, http.StatusSeeOther)
	return nil
}

// refused answers a refused sign-in: browsers go back to the sign-in page,
// which shows the refusal's message (a code in the URL, so that nobody can
// put words on the page); other clients get the 401 with the message.
func (a *API) refused(w http.ResponseWriter, r *http.Request, ref *sso.Refusal, err error) error {
	a.log.Info("single sign-on refused", "reason", ref.Code, "detail", ref.Detail)
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, a.basePath+"/login?sso_error="+url.QueryEscape(ref.Code), http.StatusSeeOther)
		return nil
	}
	if ref.Code == sso.RefusedOff {
		return err
	}
	return apierr.Unauthenticated("%s", ref.Error())
}

func asRefusal(err error, out **sso.Refusal) bool {
	r, ok := err.(*sso.Refusal)
	if ok {
		*out = r
	}
	return ok
}

// external is the server's address as browsers reach it, with the base
// path: BUNTING_URL, else the request's scheme and host.
func (a *API) external(r *http.Request) string {
	if a.baseURL != "" {
		return a.baseURL
	}
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + a.basePath
}

// callbackURL is the redirect URI registered at the provider.
func (a *API) callbackURL(r *http.Request) string { return a.external(r) + "/auth/oidc/callback" }

// next keeps a destination only when it is a page of this server
// (localpath.Check, the same check as password sign-in's).
func (a *API) next(next string) string {
	if p, ok := localpath.Check(a.basePath, next); ok {
		return p
	}
	return a.basePath + "/"
}

// cookie builds the binding cookie (maxAge < 0 deletes it). SameSite=Lax
// lets it come back on the provider's top-level redirect.
func (a *API) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: bindingCookie, Value: value, Path: a.basePath + "/auth/oidc/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")}
}
