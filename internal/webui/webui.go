// Package webui serves Bunting's web UI: server-rendered pages
// (html/template) with htmx and a small script, all embedded in the binary.
//
// The UI owns no data and no rules. Pages read through the admin API's
// read endpoints, called in process with the visitor's session cookie, and
// every change is made by the browser calling the admin API itself (JSON,
// with the session's CSRF token), so permissions, validation and events
// run in exactly one place. See README.md in this directory.
package webui

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the UI.
type Options struct {
	// API is the admin API handler the pages read through (without any
	// base path).
	API http.Handler
	// BasePath is the prefix the browser sees (e.g. /bunting), or "".
	BasePath string
	// Log receives template errors.
	Log *slog.Logger
}

// Handler serves the UI's pages and static files.
type Handler struct {
	api  http.Handler
	base string
	log  *slog.Logger
	// pages are parsed when first drawn: each holds its own copy of the
	// layout's parse trees, some 170 kB, which a server whose UI is not
	// used (or uses a few pages) need not keep.
	pages  map[string]func() *template.Template
	mux    *http.ServeMux
	static http.Handler
}

// New builds the UI.
func New(o Options) (*Handler, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{api: o.API, base: o.BasePath, log: o.Log, pages: map[string]func() *template.Template{}, mux: http.NewServeMux()}
	funcs := template.FuncMap{
		"base":     func() string { return h.base },
		"when":     formatTime,
		"join":     strings.Join,
		"json":     func(v any) string { b, _ := json.MarshalIndent(v, "", "  "); return string(b) },
		"add":      func(a, b int) int { return a + b },
		"list":     func(v ...string) []string { return v },
		"pathEsc":  url.PathEscape,
		"queryEsc": url.QueryEscape,
		"has": func(list []string, s string) bool {
			for _, v := range list {
				if v == s {
					return true
				}
			}
			return false
		},
		"idstr": func(v any) string {
			switch n := v.(type) {
			case float64:
				return strconv.FormatFloat(n, 'f', -1, 64)
			case int64:
				return strconv.FormatInt(n, 10)
			}
			return fmt.Sprint(v)
		},
		"deref": func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		},
	}
	// Each screen's helpers join the shared ones; a name defined twice
	// would silently replace the other screen's helper and break its pages.
	for _, more := range []map[string]any{editorFuncs, integrationFuncs, renderFuncs} {
		for name, fn := range more {
			if _, taken := funcs[name]; taken {
				return nil, fmt.Errorf("webui: template function %q is defined twice", name)
			}
			funcs[name] = fn
		}
	}
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/render.html")
	if err != nil {
		return nil, err
	}
	names, _ := fs.Glob(templateFS, "templates/*.html")
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" || name == "partials" || name == "render" {
			continue
		}
		parse := func() (*template.Template, error) { return template.Must(layout.Clone()).ParseFS(templateFS, n) }
		if _, err := parse(); err != nil { // a broken template fails the start, not a page
			return nil, fmt.Errorf("webui: template %s: %w", n, err)
		}
		h.pages[name] = sync.OnceValue(func() *template.Template { return template.Must(parse()) })
	}
	sub, _ := fs.Sub(staticFS, "static")
	h.static = http.StripPrefix("/static/", http.FileServerFS(sub))
	h.routes()
	return h, nil
}

// ServeHTTP serves one UI request (paths without the base path).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Handles reports whether a request that no API route matched is the UI's:
// any GET or HEAD outside the API prefixes, and the sign-in form's post.
func Handles(r *http.Request) bool {
	if r.Method == http.MethodPost && r.URL.Path == "/login" {
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	for _, prefix := range []string{"/api/", "/auth/", "/internal-backstage/", "/docs/", "/proxy"} {
		if strings.HasPrefix(p, prefix) {
			return false
		}
	}
	return true
}

func formatTime(v any) string {
	switch t := v.(type) {
	case time.Time:
		return t.UTC().Format("2006-01-02 15:04 UTC")
	case *time.Time:
		if t == nil {
			return "never"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	case nil:
		return "never"
	case string:
		if pt, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return pt.UTC().Format("2006-01-02 15:04 UTC")
		}
		return t
	}
	return ""
}

// apiError is a non-2xx answer from the admin API.
type apiError struct {
	Status  int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// call runs one admin API request in process as the visitor (their cookie)
// and decodes the JSON answer into out. body, when not nil, is sent as
// JSON with the session's CSRF token (used only for the event search,
// which reads through POST).
func (h *Handler) call(r *http.Request, s *session, method, path string, body, out any) error {
	_, err := h.callETag(r, s, method, path, body, out)
	return err
}

// callETag is call that also returns the answer's ETag: the version of
// the flag or segment read, which the page's changes send as If-Match.
func (h *Handler) callETag(r *http.Request, s *session, method, path string, body, out any) (string, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return "", err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(r.Context(), method, path, rd)
	if err != nil {
		return "", err
	}
	req.Header.Set("Cookie", r.Header.Get("Cookie"))
	req.RemoteAddr = r.RemoteAddr
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		if s != nil {
			req.Header.Set("X-CSRF-Token", s.CSRFToken)
		}
	}
	rec := httptest.NewRecorder()
	h.api.ServeHTTP(rec, req)
	if rec.Code < 200 || rec.Code > 299 {
		var e struct{ Message string }
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		return "", &apiError{Status: rec.Code, Message: e.Message}
	}
	etag := rec.Header().Get("ETag")
	if out == nil {
		return etag, nil
	}
	return etag, json.Unmarshal(rec.Body.Bytes(), out)
}

// session is who is signed in, as GET /api/admin/user/session says.
type session struct {
	User struct {
		ID       int64  `json:"id"`
		Name     string `json:"name"`
		RootRole string `json:"rootRole"`
	} `json:"user"`
	CSRFToken   string   `json:"csrfToken"`
	Permissions []string `json:"permissions"`
	// MemberOf lists the projects the person holds a role in.
	MemberOf []string `json:"memberOf"`
	// Scopes are the permissions held in the projects a page asked about
	// (withScopes).
	Scopes map[string]struct {
		Project      []string            `json:"project"`
		Environments map[string][]string `json:"environments"`
	} `json:"scopes"`
}

// Can reports whether the person holds perm outside any project (to show
// or hide controls; the API decides).
func (s *session) Can(perm string) bool {
	return slices.Contains(s.Permissions, perm)
}

// CanIn reports whether the person holds perm in project (and env, for an
// environment permission; "" for a project permission), as the scopes the
// page asked for say.
func (s *session) CanIn(perm, project, env string) bool {
	if s.Can("ADMIN") {
		return true
	}
	sc, ok := s.Scopes[project]
	if !ok {
		return false
	}
	held := sc.Project
	if env != "" {
		held = sc.Environments[env]
	}
	return slices.Contains(held, perm)
}

// CanSwitch reports whether the person may use a flag's switch in env of
// project: UPDATE_FEATURE_ENVIRONMENT there and, to switch on a flag that
// has no enabled strategy there (the API then adds one, as Unleash does),
// CREATE_FEATURE_STRATEGY too. A switch that is on may always go off.
func (s *session) CanSwitch(project, env string, on, hasEnabledStrategies bool) bool {
	if !s.CanIn("UPDATE_FEATURE_ENVIRONMENT", project, env) {
		return false
	}
	return on || hasEnabledStrategies || s.CanIn("CREATE_FEATURE_STRATEGY", project, env)
}

// withScopes asks the API what the person holds in projects (only the
// permissions perms, when given) and keeps it in s for CanIn.
func (h *Handler) withScopes(r *http.Request, s *session, projects []string, perms ...string) error {
	if len(projects) == 0 {
		return nil
	}
	q := url.Values{"project": projects}
	if len(perms) > 0 {
		q["perm"] = perms
	}
	var scoped session
	if err := h.call(r, nil, "GET", "/api/admin/user/session?"+q.Encode(), nil, &scoped); err != nil {
		return err
	}
	s.Scopes = scoped.Scopes
	return nil
}

// page is what every template receives.
type page struct {
	Title   string
	Nav     string
	Session *session
	Data    any
	Query   url.Values
}

// render writes a full page, or only its "content" block for htmx requests
// that ask for a fragment (HX-Target set).
func (h *Handler) render(w http.ResponseWriter, r *http.Request, name string, p page) {
	h.renderStatus(w, r, http.StatusOK, name, p)
}

// pagePolicy is the pages' Content-Security-Policy: their own scripts and
// styles only, and no framing.
const pagePolicy = "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'"

// renderStatus is render with another status than 200 (error pages).
func (h *Handler) renderStatus(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	t := h.pages[name]()
	if p.Query == nil {
		p.Query = r.URL.Query()
	}
	var buf bytes.Buffer
	tmpl := "layout.html"
	if frag := r.Header.Get("HX-Target"); frag != "" && r.Header.Get("HX-Request") == "true" && t.Lookup(frag) != nil {
		tmpl = frag
	}
	if err := t.ExecuteTemplate(&buf, tmpl, p); err != nil {
		h.log.Error("web UI template failed", "page", name, "err", err)
		http.Error(w, "The page could not be drawn.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", pagePolicy)
	w.Header().Set("Vary", "HX-Request, HX-Target")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// withSession runs a page handler for a signed-in visitor, or sends them
// to the sign-in page.
func (h *Handler) withSession(fn func(w http.ResponseWriter, r *http.Request, s *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var s session
		if err := h.call(r, nil, "GET", "/api/admin/user/session", nil, &s); err != nil {
			var ae *apiError
			if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
				next := h.base + r.URL.RequestURI()
				http.Redirect(w, r, h.base+"/login?next="+url.QueryEscape(next), http.StatusSeeOther)
				return
			}
			h.fail(w, r, nil, err)
			return
		}
		fn(w, r, &s)
	}
}

// fail shows an API error as a page.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	status, msg := http.StatusInternalServerError, "Something went wrong."
	var ae *apiError
	if errors.As(err, &ae) {
		status, msg = ae.Status, ae.Message
	} else {
		h.log.Error("web UI page failed", "path", r.URL.Path, "err", err)
	}
	h.renderStatus(w, r, status, "error", page{Title: "Error", Session: s, Data: map[string]any{"Status": status, "Message": msg}})
}
