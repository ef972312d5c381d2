package signals_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

type endpointJSON struct {
	ID              int64
	Name            string
	Description     *string
	Enabled         bool
	CreatedByUserID *int64
	URL             string
	Tokens          []map[string]any
}

func TestEndpointLifecycle(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		res := h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": "alerts", "description": "from the pager"}).Want(t, 201)
		var e endpointJSON
		res.JSON(t, &e)
		if e.ID == 0 || e.Name != "alerts" || !e.Enabled || e.Description == nil || *e.Description != "from the pager" ||
			!strings.HasSuffix(e.URL, "/api/signal-endpoint/alerts") || len(e.Tokens) != 0 {
			t.Fatalf("created endpoint: %s", res.Body)
		}
		if loc := res.Header.Get("Location"); loc != fmt.Sprintf("api/admin/signal-endpoints/%d", e.ID) {
			t.Fatalf("Location %q", loc)
		}
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": "alerts"}).WantError(t, 409, "NameExistsError", "alerts")
		for _, bad := range []string{"", "has space", "slash/inside", "über", strings.Repeat("a", 101)} {
			h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": bad}).WantError(t, 400, "ValidationError", "name")
		}
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": 7}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, `{"name":`).WantError(t, 400, "ValidationError")
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, `{"name":"x"}`, "Content-Type", "text/plain").WantError(t, 415, "ContentTypeError")

		path := fmt.Sprintf("/api/admin/signal-endpoints/%d", e.ID)
		h.Do(t, "PUT", path, h.AdminToken, map[string]any{"name": "pager", "description": nil, "enabled": false}).Want(t, 200).JSON(t, &e)
		if e.Name != "pager" || e.Enabled || e.Description != nil || !strings.HasSuffix(e.URL, "/api/signal-endpoint/pager") {
			t.Fatalf("updated endpoint: %+v", e)
		}
		h.Do(t, "POST", path+"/on", h.AdminToken, nil).Want(t, 200).JSON(t, &e)
		if !e.Enabled {
			t.Fatal("on did not enable")
		}
		h.Do(t, "POST", path+"/off", h.AdminToken, nil).Want(t, 200).JSON(t, &e)
		if e.Enabled {
			t.Fatal("off did not disable")
		}
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": "other"}).Want(t, 201)
		h.Do(t, "PUT", path, h.AdminToken, map[string]any{"name": "other"}).WantError(t, 409, "NameExistsError")

		var list struct{ SignalEndpoints []endpointJSON }
		h.Do(t, "GET", "/api/admin/signal-endpoints", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if len(list.SignalEndpoints) != 2 || list.SignalEndpoints[0].Name != "pager" || list.SignalEndpoints[1].Name != "other" {
			t.Fatalf("list: %+v", list)
		}
		h.Do(t, "DELETE", path, h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", path, h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "PUT", path, h.AdminToken, map[string]any{"name": "again"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/signal-endpoints/abc/on", h.AdminToken, nil).WantError(t, 404, "NotFoundError")

		for typ, want := range map[string]int{"signal-endpoint-created": 2, "signal-endpoint-updated": 3, "signal-endpoint-deleted": 1} {
			evs := events(t, h, typ)
			if len(evs) != want {
				t.Fatalf("%s: %d events, want %d", typ, len(evs), want)
			}
			if evs[0].CreatedBy != "admin" && evs[0].CreatedBy == "" {
				t.Fatalf("%s: createdBy %q", typ, evs[0].CreatedBy)
			}
		}
	})
}

func TestEndpointManagementNeedsAdmin(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		editor := h.UserToken(t, "ed", "Editor")
		id, _ := endpoint(t, h, "alerts")
		path := fmt.Sprintf("/api/admin/signal-endpoints/%d", id)
		calls := []struct{ method, path string }{
			{"GET", "/api/admin/signal-endpoints"}, {"POST", "/api/admin/signal-endpoints"}, {"PUT", path},
			{"DELETE", path}, {"POST", path + "/on"}, {"POST", path + "/off"}, {"GET", path + "/signals"},
			{"GET", path + "/tokens"}, {"POST", path + "/tokens"}, {"PUT", path + "/tokens/1"}, {"DELETE", path + "/tokens/1"},
			{"GET", "/api/admin/signals"}, {"GET", "/api/admin/projects/default/actions"}, {"POST", "/api/admin/projects/default/actions"},
		}
		for _, c := range calls {
			h.Do(t, c.method, c.path, editor, map[string]any{"name": "x"}).WantError(t, 403, "NoAccessError", "ADMIN")
			h.Do(t, c.method, c.path, h.ClientToken, map[string]any{"name": "x"}).WantError(t, 403, "NoAccessError")
			h.Do(t, c.method, c.path, "", map[string]any{"name": "x"}).WantError(t, 401, "AuthenticationRequired")
		}
		admin := h.UserToken(t, "root", "Admin")
		h.Do(t, "GET", "/api/admin/signal-endpoints", admin, nil).Want(t, 200)
	})
}

func TestEndpointLimit(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for i := range 5 {
			h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": fmt.Sprint("e", i)}).Want(t, 201)
		}
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": "e5"}).
			WantError(t, 400, "ExceedsLimitError", "signal endpoint", "limit of 5")
	})
}

// TestEndpointLimitUnderConcurrency creates endpoints from many goroutines
// at once: exactly the limit's worth succeed.
func TestEndpointLimitUnderConcurrency(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			created int
		)
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": fmt.Sprint("c", i)})
				if res.Status != 201 && res.Status != 400 {
					t.Errorf("status %s", res)
				}
				mu.Lock()
				defer mu.Unlock()
				if res.Status == 201 {
					created++
				}
			}()
		}
		wg.Wait()
		var list struct{ SignalEndpoints []any }
		h.Do(t, "GET", "/api/admin/signal-endpoints", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if created != 5 || len(list.SignalEndpoints) != 5 {
			t.Fatalf("%d created, %d stored; the limit is 5", created, len(list.SignalEndpoints))
		}
	})
}

// TestEndpointLimitConfigured is its own test: a second servertest.Run in
// one test names its subtests "sqlite#01", and the '#' cuts the SQLite
// file URI short.
func TestEndpointLimitConfigured(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": "a"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": "b"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": "c"}).
			WantError(t, 400, "ExceedsLimitError", "limit of 2")
	}, func(c *server.Config) { c.Signals.EndpointsLimit = 2 })
}

func TestLimitsFromEnvironment(t *testing.T) {
	env := map[string]string{
		"UNLEASH_SIGNAL_ENDPOINTS_LIMIT":         "7",
		"SIGNAL_TOKENS_PER_ENDPOINT_LIMIT":       "3",
		"SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND":  "4",
		"UNLEASH_ACTION_SETS_PER_PROJECT_LIMIT":  "8",
		"UNLEASH_ACTION_SET_FILTERS_LIMIT":       "2",
		"UNLEASH_ACTION_SET_FILTER_VALUES_LIMIT": "9",
		"UNLEASH_ACTION_SET_ACTIONS_LIMIT":       "11",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := server.ParseConfig(nil, lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Signals
	if s.EndpointsLimit != 7 || s.TokensPerEndpointLimit != 3 || s.RatePerSecond != 4 || s.ActionSetsPerProjectLimit != 8 ||
		s.FiltersLimit != 2 || s.FilterValuesLimit != 9 || s.ActionsLimit != 11 {
		t.Fatalf("parsed %+v", s)
	}
	env["SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND"] = "many"
	if _, err := server.ParseConfig(nil, lookup, nil); err == nil || !strings.Contains(err.Error(), "SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND") {
		t.Fatalf("bad rate accepted: %v", err)
	}
	env["SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND"] = "0"
	if _, err := server.ParseConfig(nil, lookup, nil); err == nil {
		t.Fatal("rate 0 accepted")
	}
}

func TestTokens(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		var e endpointJSON
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": "alerts"}).Want(t, 201).JSON(t, &e)
		base := fmt.Sprintf("/api/admin/signal-endpoints/%d/tokens", e.ID)
		res := h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "grafana"}).Want(t, 201)
		var tok struct {
			ID               int64
			Name             string
			SignalEndpointID int64
			Token            string
		}
		res.JSON(t, &tok)
		if tok.ID == 0 || tok.Name != "grafana" || tok.SignalEndpointID != e.ID || len(tok.Token) < 32 {
			t.Fatalf("created token: %s", res.Body)
		}
		// The secret is shown once: never in lists, endpoint views, events or the database.
		for _, path := range []string{base, "/api/admin/signal-endpoints", "/api/admin/events"} {
			body := h.Do(t, "GET", path, h.AdminToken, nil).Want(t, 200).Body
			if strings.Contains(string(body), tok.Token) {
				t.Fatalf("%s shows the secret: %s", path, body)
			}
			if path == base && !strings.Contains(string(body), `"grafana"`) {
				t.Fatalf("token list: %s", body)
			}
		}
		var stored int
		if err := h.Store.DB().QueryRow(`SELECT COUNT(*) FROM signal_endpoint_tokens WHERE secret_hash = $1`, tok.Token).Scan(&stored); err != nil || stored != 0 {
			t.Fatalf("secret stored in clear (%d, %v)", stored, err)
		}
		signal(t, h, "alerts", tok.Token, nil).Want(t, 200)

		h.Do(t, "PUT", fmt.Sprintf("%s/%d", base, tok.ID), h.AdminToken, map[string]any{"name": "prometheus"}).Want(t, 200)
		var list struct{ SignalEndpointTokens []map[string]any }
		h.Do(t, "GET", base, h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if len(list.SignalEndpointTokens) != 1 || list.SignalEndpointTokens[0]["name"] != "prometheus" || list.SignalEndpointTokens[0]["token"] != nil {
			t.Fatalf("renamed list: %+v", list)
		}
		h.Do(t, "PUT", fmt.Sprintf("%s/%d", base, tok.ID), h.AdminToken, map[string]any{"name": ""}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "PUT", base+"/999", h.AdminToken, map[string]any{"name": "x"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/signal-endpoints/999/tokens", h.AdminToken, map[string]any{"name": "x"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "DELETE", fmt.Sprintf("%s/%d", base, tok.ID), h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", fmt.Sprintf("%s/%d", base, tok.ID), h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		signal(t, h, "alerts", tok.Token, nil).WantError(t, 401, "AuthenticationRequired")

		for i := range 5 {
			h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": fmt.Sprint("t", i)}).Want(t, 201)
		}
		h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "t5"}).WantError(t, 400, "ExceedsLimitError", "token", "limit of 5")

		for typ, want := range map[string]int{"signal-endpoint-token-created": 6, "signal-endpoint-token-updated": 1, "signal-endpoint-token-deleted": 1} {
			if n := len(events(t, h, typ)); n != want {
				t.Fatalf("%s: %d events, want %d", typ, n, want)
			}
		}
	})
}
