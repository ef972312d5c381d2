package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func TestFeatureSearch(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		tok := h.AdminToken
		h.Do(t, "POST", "/api/admin/projects", tok, map[string]any{"id": "shop", "name": "Shop"}).Want(t, 201)
		for _, f := range []struct{ project, name, typ, desc string }{
			{"default", "alpha", "release", "First one"},
			{"default", "beta_5", "experiment", "50% of users"},
			{"shop", "checkout", "release", "the ALPHA checkout"},
			{"shop", "gone", "release", ""},
		} {
			h.Do(t, "POST", "/api/admin/projects/"+f.project+"/features", tok, map[string]any{"name": f.name, "type": f.typ, "description": f.desc}).Want(t, 201)
		}
		h.Do(t, "POST", "/api/admin/projects/default/features/alpha/environments/development/on", tok, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/features/alpha/tags", tok, map[string]any{"type": "simple", "value": "team-a"}).Want(t, 201)
		h.Do(t, "DELETE", "/api/admin/projects/shop/features/gone", tok, nil).Want(t, 202)

		names := func(query string) (out []string, total int) {
			var body struct {
				Features []struct {
					Name         string
					Environments []struct {
						Name    string
						Enabled bool
					}
					Tags []struct{ Type, Value string }
				}
				Total        int
				Environments []struct{ Name string }
			}
			h.Do(t, "GET", "/api/admin/search/features"+query, tok, nil).Want(t, 200).JSON(t, &body)
			for _, f := range body.Features {
				out = append(out, f.Name)
			}
			if len(body.Environments) == 0 {
				t.Errorf("%s: no environments for the filters", query)
			}
			return out, body.Total
		}
		for _, c := range []struct {
			query string
			want  string
			total int
		}{
			{"", "alpha beta_5 checkout", 3},
			{"?query=alpha", "alpha checkout", 2}, // name, or description in any case
			{"?query=a_", "beta_5", 1},            // LIKE wildcards are literal: not alpha
			{"?query=0%25", "beta_5", 1},          // "0%" in the description
			{"?query=a&project=shop", "checkout", 1},
			{"?type=experiment", "beta_5", 1},
			{"?tag=simple:team-a", "alpha", 1},
			{"?state=development:on", "alpha", 1},
			{"?state=development:off", "beta_5 checkout", 2},
			{"?archived=true", "gone", 1},
			{"?limit=1&offset=1", "beta_5", 3},
			{"?offset=10", "", 3},
		} {
			got, total := names(c.query)
			if strings.Join(got, " ") != c.want || total != c.total {
				t.Errorf("%s: got %v (total %d), want %q (total %d)", c.query, got, total, c.want, c.total)
			}
		}
		// Each switch says whether its environment has strategies, and
		// enabled ones (alpha got one when switched on; checkout has only a
		// disabled one; beta_5 none).
		h.Do(t, "POST", "/api/admin/projects/shop/features/checkout/environments/development/strategies", tok, map[string]any{"name": "default", "disabled": true}).Want(t, 200)
		var strategies struct {
			Features []struct {
				Name         string
				Environments []struct {
					Name                                string
					HasStrategies, HasEnabledStrategies bool
				}
			}
		}
		h.Do(t, "GET", "/api/admin/search/features", tok, nil).Want(t, 200).JSON(t, &strategies)
		var got []string
		for _, f := range strategies.Features {
			for _, e := range f.Environments {
				if e.Name == "development" {
					got = append(got, fmt.Sprintf("%s:%v/%v", f.Name, e.HasStrategies, e.HasEnabledStrategies))
				}
			}
		}
		if s := strings.Join(got, " "); s != "alpha:true/true beta_5:false/false checkout:true/false" {
			t.Errorf("development's strategies (has/has enabled): %s", s)
		}
		for _, bad := range []string{"?limit=0", "?limit=201", "?offset=-1", "?stale=maybe", "?state=development", "?tag=novalue", "?archived=x"} {
			h.Do(t, "GET", "/api/admin/search/features"+bad, tok, nil).WantError(t, 400, "ValidationError")
		}
		h.Do(t, "GET", "/api/admin/search/features", "", nil).WantError(t, 401, "AuthenticationRequired")
	})
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// TestWebUIServedAndBasePath checks the UI answers HTML at / (and sends
// strangers to sign in) while unknown API paths keep their JSON 404, and
// that BASE_PATH moves everything under a prefix.
func TestWebUIServedAndBasePath(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	h.Client = noRedirects
	res := h.Do(t, "GET", "/flags", "", nil).Want(t, 303)
	if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "/login?next=") {
		t.Errorf("a stranger is sent to %q", loc)
	}
	login := h.Do(t, "GET", "/login", "", nil).Want(t, 200)
	if !strings.Contains(string(login.Body), `<form id="login"`) || !strings.HasPrefix(login.Header.Get("Content-Type"), "text/html") {
		t.Errorf("/login is not the sign-in page: %s", login.Body)
	}
	h.Do(t, "GET", "/static/htmx.min.js", "", nil).Want(t, 200)
	h.Do(t, "GET", "/api/admin/nothing-here", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
	h.Do(t, "POST", "/flags", "", nil).WantError(t, 404, "NotFoundError")

	p := servertest.Start(t, servertest.NewSQLite(t), func(c *server.Config) { c.BasePath = "/bunting" })
	p.Client = noRedirects
	res = p.Do(t, "GET", "/bunting/flags", "", nil).Want(t, 303)
	if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "/bunting/login?next=%2Fbunting%2Fflags") {
		t.Errorf("behind /bunting a stranger is sent to %q", loc)
	}
	page := p.Do(t, "GET", "/bunting/login", "", nil).Want(t, 200)
	if !strings.Contains(string(page.Body), `src="/bunting/static/htmx.min.js"`) || !strings.Contains(string(page.Body), `data-api="/bunting/auth/simple/login"`) {
		t.Errorf("the sign-in page behind /bunting links outside it")
	}
	p.Do(t, "GET", "/bunting/api/admin/projects", p.AdminToken, nil).Want(t, 200)
	lr := p.Do(t, "POST", "/bunting/auth/simple/login", "", map[string]string{"username": servertest.AdminUser, "password": servertest.AdminPassword}).Want(t, 200)
	if !strings.Contains(lr.Header.Get("Set-Cookie"), "Path=/bunting") {
		t.Errorf("the cookie is not scoped to the base path: %q", lr.Header.Get("Set-Cookie"))
	}
	p.Do(t, "GET", "/api/admin/projects", p.AdminToken, nil).WantError(t, 404, "NotFoundError")
}
