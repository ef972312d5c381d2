package integrations_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// Targets that are not public are refused, each with a clear error,
// unless INTEGRATION_ALLOWED_TARGETS lists them.
func TestSSRFTargetsRefused(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		port := testutil.FreePort(t)
		cases := map[string]string{
			fmt.Sprintf("https://127.0.0.1:%d/hook", port): "127.0.0.1, a loopback address",
			"https://10.1.2.3/hook":                        "10.1.2.3, a private address",
			"http://169.254.169.254/latest/meta-data/":     "169.254.169.254, a cloud metadata address",
			fmt.Sprintf("https://[::1]:%d/hook", port):     "::1, a loopback address",
			fmt.Sprintf("https://localhost:%d/hook", port): "localhost resolves to", // to 127.0.0.1 (or ::1)
			"https://192.168.1.10/hook":                    "a private address",
			"https://[::ffff:127.0.0.1]/hook":              "127.0.0.1, a loopback address",
			"https://0.0.0.0/hook":                         "0.0.0.0",
			"ftp://example.com/hook":                       "scheme must be https",
			"https://no-such-host.invalid/hook":            "does not resolve",
			"not a url":                                    "not an absolute URL",
		}
		for url, fragment := range cases {
			res := h.Do(t, "POST", "/api/admin/addons", h.AdminToken, webhook(url, nil))
			res.WantError(t, 400, "ValidationError", "`parameters.url` value is refused", fragment)
			if !strings.Contains(res.String(), "INTEGRATION_ALLOWED_TARGETS") && strings.Contains(fragment, "address") {
				t.Errorf("%s: the error does not say how to allow it: %s", url, res)
			}
		}
		// The same for Slack and Teams; Datadog's url too.
		for _, p := range []string{"slack", "teams", "datadog"} {
			params := map[string]any{"url": "https://10.0.0.1/x"}
			if p == "datadog" {
				params["apiKey"] = "k"
			}
			h.Do(t, "POST", "/api/admin/addons", h.AdminToken, map[string]any{"provider": p, "parameters": params}).
				WantError(t, 400, "ValidationError", "a private address")
		}
	})

	// With 127.0.0.1 allowed, a receiver there is fine, but a redirect to
	// another loopback address is not followed.
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ln := loopbackListener(t, "127.0.0.2")
		var other int
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other++ })}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		redirect := newReceiver(t, func(int, *http.Request) int { return 302 })
		redirect.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			redirect.mu.Lock()
			redirect.hits = append(redirect.hits, hit{Header: r.Header.Clone(), At: time.Now()})
			redirect.mu.Unlock()
			http.Redirect(w, r, "http://"+ln.Addr().String()+"/internal", http.StatusFound)
		})
		a := createAddon(t, h, webhook(redirect.URL, nil, "feature-created"))
		// Configuring the other loopback address directly is refused.
		h.Do(t, "POST", "/api/admin/addons", h.AdminToken, webhook("http://"+ln.Addr().String()+"/internal", nil)).
			WantError(t, 400, "ValidationError", "127.0.0.2, a loopback address")
		createFlag(t, h, "default", "redirected")
		testutil.Eventually(t, 10*time.Second, "the redirect in the log", func() bool { return len(addonLog(t, h, a["id"])) > 0 })
		log := addonLog(t, h, a["id"])
		d := log[0]["details"].(map[string]any)
		if log[0]["state"] != "failed" || d["statusCode"] != float64(302) || !strings.Contains(log[0]["stateDetails"].(string), "redirect, which is not followed") ||
			!strings.Contains(fmt.Sprint(d["answer"]), "not followed") {
			t.Fatalf("log: %v", log[0])
		}
		time.Sleep(200 * time.Millisecond)
		if other != 0 {
			t.Fatalf("the redirect was followed (%d requests at its target)", other)
		}
	}, allowLoopback)

	// Plain http needs the target listed (or INTEGRATION_ALLOW_HTTP).
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		h.Do(t, "POST", "/api/admin/addons", h.AdminToken, webhook("http://"+ln.Addr().String()+"/x", nil)).Want(t, 201)
	}, func(c *server.Config) { c.Integrations.AllowedTargets = []string{"localhost", "127.0.0.0/8"} })
}

// Bad input gets a 400 naming what is wrong, an unknown id a 404; the
// changes write addon-config events without parameters.
func TestAddonAPIValidationAndEvents(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		rc := newReceiver(t, nil)
		bad := []struct {
			body     any
			fragment string
		}{
			{map[string]any{"parameters": map[string]any{}}, "`provider` property is required"},
			{map[string]any{"provider": "pagerduty"}, "Unknown addon provider \"pagerduty\""},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{}}, "Missing required parameter `parameters.url`"},
			{map[string]any{"provider": "datadog", "parameters": map[string]any{}}, "Missing required parameter `parameters.apiKey`"},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": rc.URL, "nope": "x"}}, "has no parameter \"nope\""},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": rc.URL, "customHeaders": "{nope"}}, "`parameters.customHeaders` value is refused"},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": rc.URL, "customHeaders": `{"webhook-id": "x"}`}}, "set by Bunting"},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": rc.URL, "bodyTemplate": "{{#event}}"}}, "not a valid Mustache template"},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": rc.URL, "signingSecret": "secret"}}, "starts with whsec_"},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": rc.URL, "signingSecret": "whsec_QUJD"}}, "24 to 64 bytes"},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": rc.URL, "contentType": "not a type"}}, "not a media type"},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": rc.URL}, "events": []string{"feature-exploded"}}, "\"feature-exploded\", which is not an event type"},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": rc.URL}, "projects": []string{""}}, "`projects` property lists an empty"},
			{map[string]any{"provider": "webhook", "parameters": map[string]any{"url": map[string]any{}}}, "must be a string, a number or a boolean"},
			{map[string]any{"provider": "datadog", "parameters": map[string]any{"apiKey": "k", "site": "datadoghq.moon"}}, "not a Datadog site"},
		}
		for _, b := range bad {
			h.Do(t, "POST", "/api/admin/addons", h.AdminToken, b.body).WantError(t, 400, "ValidationError", b.fragment)
		}
		h.Do(t, "POST", "/api/admin/addons", h.AdminToken, `{"provider": "webhook", "enabled": "yes"}`).Want(t, 400)
		h.Do(t, "GET", "/api/admin/addons/999", h.AdminToken, nil).WantError(t, 404, "NotFoundError", "999")
		h.Do(t, "PUT", "/api/admin/addons/999", h.AdminToken, webhook(rc.URL, nil)).WantError(t, 404, "NotFoundError")
		h.Do(t, "DELETE", "/api/admin/addons/999", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/addons/999/events", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/addons/abc", h.AdminToken, nil).Want(t, 400)
		h.Do(t, "GET", "/api/admin/addons/1/events?limit=0", h.AdminToken, nil).Want(t, 400)

		// Only ADMIN.
		editor := h.UserToken(t, "ed", "Editor")
		h.Do(t, "GET", "/api/admin/addons", editor, nil).Want(t, 403)
		h.Do(t, "POST", "/api/admin/addons", editor, webhook(rc.URL, nil)).Want(t, 403)

		// A generated secret, an update that changes the provider, clears a
		// secret with "", and the events.
		a := createAddon(t, h, map[string]any{"provider": "slack", "description": "team channel", "events": []string{"feature-created"},
			"parameters": map[string]any{"url": rc.URL + "/services/T/B/XYZ", "defaultChannel": "releases", "customHeaders": `{"X-Team": "web"}`}})
		id := jsonID(a["id"])
		if a["parameters"].(map[string]any)["defaultChannel"] != "releases" || a["parameters"].(map[string]any)["customHeaders"] != "*****" {
			t.Fatalf("answer: %v", a)
		}
		h.Do(t, "PUT", "/api/admin/addons/"+id, h.AdminToken, webhook(rc.URL, nil)).WantError(t, 400, "ValidationError", "cannot become webhook")
		upd := h.Do(t, "PUT", "/api/admin/addons/"+id, h.AdminToken, map[string]any{"provider": "slack", "enabled": false,
			"parameters": map[string]any{"url": "*****", "customHeaders": ""}}).Want(t, 200).Map(t)
		p := upd["parameters"].(map[string]any)
		if _, ok := p["customHeaders"]; ok || p["url"] != "*****" || upd["enabled"] != false || p["defaultChannel"] != nil {
			t.Fatalf("after the update: %v", upd)
		}
		if ev := upd["events"].([]any); len(ev) != 1 {
			t.Fatalf("events left out of an update are kept: %v", upd["events"])
		}
		h.Do(t, "DELETE", "/api/admin/addons/"+id, h.AdminToken, nil).Want(t, 200)
		var events struct {
			Events []struct {
				Type          string
				Data, PreData map[string]any
			}
		}
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"query": "addon-config"}).Want(t, 200).JSON(t, &events)
		var types []string
		for _, e := range events.Events {
			types = append(types, e.Type)
			for _, d := range []map[string]any{e.Data, e.PreData} {
				if _, ok := d["parameters"]; ok {
					t.Fatalf("%s records parameters: %v", e.Type, d)
				}
			}
		}
		if strings.Join(types, ",") != "addon-config-deleted,addon-config-updated,addon-config-created" {
			t.Fatalf("events: %v", types)
		}
	}, allowLoopback)
}

// A test send reaches the receiver at once, whatever the filters, and its
// attempt is in the log.
func TestTestSend(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		rc := newReceiver(t, func(int, *http.Request) int { return 202 })
		a := createAddon(t, h, webhook(rc.URL, nil, "feature-archived"))
		res := h.Do(t, "POST", "/api/admin/addons/"+jsonID(a["id"])+"/test", h.AdminToken, nil).Want(t, 200).Map(t)
		if res["state"] != "success" || res["event"].(map[string]any)["type"] != "integration-test" || res["details"].(map[string]any)["statusCode"] != float64(202) {
			t.Fatalf("test send: %v", res)
		}
		if got := rc.got(); len(got) != 1 || !strings.HasPrefix(got[0].Header.Get("webhook-id"), "msg_test_") {
			t.Fatalf("receiver: %v", got)
		}
		if log := addonLog(t, h, a["id"]); len(log) != 1 || log[0]["id"] != res["id"] {
			t.Fatalf("log: %v", log)
		}
	}, allowLoopback)
}
