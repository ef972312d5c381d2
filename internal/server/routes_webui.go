package server

import (
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpgzip"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/webui"
)

// webUIRoutes adds what the web UI needs from the admin API: sign-in and
// sessions and people management (accounts.go); the flag search that
// pages through thousands of flags is adminapi's (RegisterSearch).
func (s *Server) webUIRoutes(r route.Registrar) {
	r.Public("POST /auth/simple/login", s.login, route.JSON,
		route.API("Sessions", "Sign in with a username or email and a password (sets the session cookie)", 200, domain.SignInInput{}, domain.SessionView{}))
	r.Admin("POST /auth/logout", "", s.logout,
		route.API("Sessions", "Sign out (ends this session)", 204, nil, nil))
	r.Admin("POST /auth/logout-everywhere", "", s.logoutEverywhere,
		route.API("Sessions", "End every session of the calling user", 200, nil, sessionsEnded{}))
	r.Admin("GET /api/admin/user/session", "", s.currentSession,
		route.API("Sessions", "The signed-in person and their permissions", 200, nil, domain.SessionView{}))
	r.Admin("POST /api/admin/user/change-password", "", s.changeOwnPassword, route.JSON,
		route.API("Sessions", "Change the caller's password", 200, domain.PasswordInput{}, nil))
	r.Admin("GET /api/admin/user-admin", domain.PermAdmin, s.listAccounts,
		route.API("Users", "List people", 200, nil, accountList{}))
	r.Admin("POST /api/admin/user-admin", domain.PermAdmin, s.createAccount, route.JSON,
		route.API("Users", "Add a person", 201, domain.AccountInput{}, store.Account{}))
	r.Admin("PUT /api/admin/user-admin/{id}", domain.PermAdmin, s.updateAccount, route.JSON,
		route.API("Users", "Update a person", 200, domain.AccountInput{}, store.Account{}))
	r.Admin("DELETE /api/admin/user-admin/{id}", domain.PermAdmin, s.deleteAccount,
		route.API("Users", "Remove a person", 200, nil, nil))
	r.Admin("POST /api/admin/user-admin/{id}/reset-password", domain.PermAdmin, s.resetPassword, route.JSON,
		route.API("Users", "Set a person's password", 200, domain.PasswordInput{}, nil))
}

// mountWebUI builds the web UI, which reads through s.api (the routes
// without the base path), and serves everything under cfg.BasePath.
func (s *Server) mountWebUI() error {
	ui, err := webui.New(webui.Options{
		API:      http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.api.ServeHTTP(w, r) }),
		BasePath: s.cfg.BasePath,
		Log:      s.log,
	})
	if err != nil {
		return err
	}
	s.ui = httpgzip.Handler(ui)
	return nil
}

// withBasePath serves h under prefix: /prefix/x reaches h as /x, /prefix
// redirects to /prefix/, anything else is not found.
func (s *Server) withBasePath(h http.Handler) http.Handler {
	prefix := s.cfg.BasePath
	if prefix == "" {
		return h
	}
	strip := http.StripPrefix(prefix, h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == prefix:
			http.Redirect(w, r, prefix+"/", http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, prefix+"/"):
			strip.ServeHTTP(w, r)
		default:
			s.notFound(w, r)
		}
	})
}

// uiOrNotFound answers what no API route matched: the web UI's pages, or
// the JSON 404.
func (s *Server) uiOrNotFound(w http.ResponseWriter, r *http.Request) {
	if s.ui != nil && webui.Handles(r) {
		s.ui.ServeHTTP(w, r)
		return
	}
	s.notFound(w, r)
}
