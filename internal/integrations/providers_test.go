package integrations_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// loadSchema reads a schema of testdata, with its local "#/name"
// references inlined.
func loadSchema(t *testing.T, name string) *openapi3.Schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatal(err)
	}
	var inline func(v any) any
	inline = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
				return inline(root[strings.TrimPrefix(ref, "#/")])
			}
			out := map[string]any{}
			for k, e := range x {
				out[k] = inline(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = inline(e)
			}
			return out
		}
		return v
	}
	top := inline(root).(map[string]any)
	for _, k := range []string{"block", "text", "button"} {
		delete(top, k)
	}
	b, _ := json.Marshal(top)
	var s openapi3.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func checkSchema(t *testing.T, s *openapi3.Schema, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	if err := s.VisitJSON(v, openapi3.MultiErrors()); err != nil {
		t.Fatalf("the payload does not have the documented shape: %v\n%s", err, body)
	}
}

// Slack, Teams and Datadog get payloads of their documented shapes,
// saying who changed which flag where, with a link to the flag.
func TestProviderPayloads(t *testing.T) {
	testutil.Node(t)
	modules := testutil.NodeModules(t, "adaptivecards")
	slackSchema, ddSchema, teamsSchema := loadSchema(t, "slack-message.schema.json"), loadSchema(t, "datadog-event.schema.json"), loadSchema(t, "teams-message.schema.json")
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		slack, teams, dd := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
		events := []string{"feature-environment-enabled"}
		createAddon(t, h, map[string]any{"provider": "slack", "events": events,
			"parameters": map[string]any{"url": slack.URL + "/services/T0/B0/secret", "defaultChannel": "releases", "username": "flags"}})
		createAddon(t, h, map[string]any{"provider": "teams", "events": events, "parameters": map[string]any{"url": teams.URL + "/workflows/x"}})
		createAddon(t, h, map[string]any{"provider": "datadog", "events": events,
			"parameters": map[string]any{"url": dd.URL + "/api/v1/events", "apiKey": "dd-key", "sourceTypeName": "bunting"}})
		createFlag(t, h, "default", "new-checkout")
		h.Do(t, "POST", "/api/admin/features/new-checkout/tags", h.AdminToken, map[string]any{"type": "simple", "value": "payments"}).Want(t, 201)
		toggle(t, h, "default", "new-checkout", "production", true)
		link := "https://flags.example.com/bunting/projects/default/flags/new-checkout"

		s := slack.waitHits(t, 1, 10*time.Second)[0]
		checkSchema(t, slackSchema, s.Body)
		var sm struct {
			Text, Channel, Username string
			Blocks                  []struct {
				Type     string
				Text     struct{ Text string }
				Elements []map[string]any
			}
		}
		_ = json.Unmarshal(s.Body, &sm)
		if sm.Channel != "#releases" || sm.Username != "flags" || len(sm.Blocks) != 3 ||
			sm.Blocks[0].Text.Text != "*admin* enabled the flag <"+link+"|*new-checkout*> in *production* (project *default*)" ||
			sm.Blocks[2].Elements[0]["url"] != link || !strings.Contains(sm.Text, "admin enabled the flag new-checkout in production") {
			t.Fatalf("slack message: %s", s.Body)
		}

		tm := teams.waitHits(t, 1, 10*time.Second)[0]
		checkSchema(t, teamsSchema, tm.Body)
		var env struct {
			Attachments []struct{ Content json.RawMessage }
		}
		_ = json.Unmarshal(tm.Body, &env)
		cmd := exec.Command("node", filepath.Join("..", "..", "test", "node", "adaptive-card.js"))
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
		cmd.Stdin = bytes.NewReader(env.Attachments[0].Content)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("adaptivecards: %v", err)
		}
		var parsed struct {
			Events []map[string]any
			Card   map[string]any
		}
		if err := json.Unmarshal(out, &parsed); err != nil {
			t.Fatal(err)
		}
		if len(parsed.Events) != 0 {
			t.Fatalf("Microsoft's adaptivecards library objects to the card: %v\n%s", parsed.Events, env.Attachments[0].Content)
		}
		card, _ := json.Marshal(parsed.Card)
		for _, want := range []string{"FactSet", "new-checkout", "production", "Action.OpenUrl", link} {
			if !strings.Contains(string(card), want) {
				t.Fatalf("the parsed card lacks %q: %s", want, card)
			}
		}

		d := dd.waitHits(t, 1, 10*time.Second)[0]
		checkSchema(t, ddSchema, d.Body)
		var de struct {
			Title, Text    string
			SourceTypeName string `json:"source_type_name"`
			Tags           []string
		}
		_ = json.Unmarshal(d.Body, &de)
		for _, tag := range []string{"project:default", "environment:production", "flag:new-checkout", "event:feature-environment-enabled", "simple:payments"} {
			if !slices.Contains(de.Tags, tag) {
				t.Fatalf("datadog tags %v lack %s", de.Tags, tag)
			}
		}
		if d.Header.Get("DD-API-KEY") != "dd-key" || !strings.HasPrefix(de.Text, "%%% \n") || !strings.Contains(de.Text, link) || de.SourceTypeName != "bunting" {
			t.Fatalf("datadog event: %s (headers %v)", d.Body, d.Header)
		}

		// A change the chat providers cannot describe specially still
		// makes a valid message; so does one without a flag.
		h.Do(t, "PUT", "/api/admin/addons/1", h.AdminToken, map[string]any{"provider": "slack", "events": []string{}, "parameters": map[string]any{"url": "*****"}}).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"id": "mobile", "name": "Mobile"}).Want(t, 201)
		hits := slack.waitHits(t, 3, 10*time.Second)
		for _, ht := range hits[1:] {
			checkSchema(t, slackSchema, ht.Body)
		}
		if !strings.Contains(string(hits[2].Body), "project created") {
			t.Fatalf("a project's message: %s", hits[2].Body)
		}
	}, allowLoopback, func(c *server.Config) { c.BaseURL = "https://flags.example.com/bunting" })
}
