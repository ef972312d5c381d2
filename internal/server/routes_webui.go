package server

import (
	"github.com/bunting-flags/bunting/internal/domain"
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/internal/httpgzip"
	"github.com/bunting-flags/bunting/internal/webui"
)

// registerWebUIRoutes adds what the web UI needs from the admin API:
// sign-in and sessions, people management (accounts.go) and the flag
// search that pages through thousands of flags (feature_search.go).
func (s *Server) webUIRoutes(r *router) {
	r.public("POST /auth/simple/login", s.login, withJSON)
	r.admin("POST /auth/logout", "", s.logout)
	r.admin("POST /auth/logout-everywhere", "", s.logoutEverywhere)
	r.admin("GET /api/admin/user/session", "", s.currentSession)
	r.admin("POST /api/admin/user/change-password", "", s.changeOwnPassword, withJSON)
	r.admin("GET /api/admin/user-admin", domain.PermAdmin, s.listAccounts)
	r.admin("POST /api/admin/user-admin", domain.PermAdmin, s.createAccount, withJSON)
	r.admin("PUT /api/admin/user-admin/{id}", domain.PermAdmin, s.updateAccount, withJSON)
	r.admin("DELETE /api/admin/user-admin/{id}", domain.PermAdmin, s.deleteAccount)
	r.admin("POST /api/admin/user-admin/{id}/reset-password", domain.PermAdmin, s.resetPassword, withJSON)
	r.admin("GET /api/admin/search/features", "", s.searchFeatures)
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
