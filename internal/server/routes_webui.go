package server

import (
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/internal/httpgzip"
	"github.com/bunting-flags/bunting/internal/webui"
)

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
