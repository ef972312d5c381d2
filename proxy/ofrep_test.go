package proxy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"github.com/bunting-flags/bunting/internal/testutil"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// ofrepPayload has one flag of every kind the OFREP mapping tells apart.
const ofrepPayload = `{"version":2,"segments":[{"id":1,"name":"eu","constraints":[{"contextName":"country","operator":"IN","values":["NO","SE"]}]}],"features":[
{"name":"plain-on","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[]},
{"name":"no-strategies","enabled":true,"strategies":[],"variants":[]},
{"name":"targeted","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[{"contextName":"plan","operator":"IN","values":["pro"]}]}],"variants":[]},
{"name":"segmented","enabled":true,"strategies":[{"name":"default","parameters":{},"segments":[1]}],"variants":[]},
{"name":"mixed","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[{"contextName":"plan","operator":"IN","values":["pro"]}]},{"name":"userWithId","parameters":{"userIds":"u1"}}],"variants":[]},
{"name":"off-in-env","enabled":false,"strategies":[{"name":"default","parameters":{}}],"variants":[]},
{"name":"str","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[{"name":"blue","weight":1000,"payload":{"type":"string","value":"b"}}]},
{"name":"num","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[{"name":"n","weight":1000,"payload":{"type":"number","value":"42.5"}}]},
{"name":"obj","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[{"name":"o","weight":1000,"payload":{"type":"json","value":"{\"a\": [1, 2]}"}}]},
{"name":"csv","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[{"name":"c","weight":1000,"payload":{"type":"csv","value":"a,b"}}]},
{"name":"bare-variant","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[{"name":"only-name","weight":1000}]},
{"name":"bad-number","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[{"name":"x","weight":1000,"payload":{"type":"number","value":"forty"}}]},
{"name":"variant-off","enabled":false,"strategies":[{"name":"default","parameters":{}}],"variants":[{"name":"blue","weight":1000,"payload":{"type":"string","value":"b"}}]}
]}`

// ofrepBulk posts a bulk evaluation and decodes the flags by key.
func ofrepBulk(t *testing.T, r *running, body string, headers ...string) (*http.Response, map[string]map[string]any, map[string]any) {
	t.Helper()
	resp, raw := r.do(t, http.MethodPost, "/ofrep/v1/evaluate/flags", body, append([]string{"Authorization", clientKey}, headers...)...)
	if resp.StatusCode != http.StatusOK {
		return resp, nil, nil
	}
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &out), raw)
	flags := map[string]map[string]any{}
	for _, f := range out["flags"].([]any) {
		m := f.(map[string]any)
		flags[m["key"].(string)] = m
	}
	return resp, flags, out
}

func TestOFREPMapping(t *testing.T) {
	u := newFakeUpstream(t, ofrepPayload)
	r := startReady(t, testConfig(u))

	resp, flags, _ := ofrepBulk(t, r, `{"context":{"targetingKey":"u1","plan":"free","country":"NO"}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	want := map[string]map[string]any{
		"plain-on":      {"key": "plain-on", "value": true, "reason": "STATIC", "variant": "enabled"},
		"no-strategies": {"key": "no-strategies", "value": true, "reason": "STATIC", "variant": "enabled"},
		"targeted":      {"key": "targeted", "value": false, "reason": "TARGETING_MATCH", "variant": "disabled"},
		"segmented":     {"key": "segmented", "value": true, "reason": "TARGETING_MATCH", "variant": "enabled"},
		// userWithId (no constraints) turned it on: targetingKey is userId.
		"mixed":        {"key": "mixed", "value": true, "reason": "STATIC", "variant": "enabled"},
		"off-in-env":   {"key": "off-in-env", "value": false, "reason": "DISABLED", "variant": "disabled"},
		"str":          {"key": "str", "value": "b", "reason": "SPLIT", "variant": "blue", "metadata": map[string]any{"enabled": true, "payloadType": "string"}},
		"num":          {"key": "num", "value": 42.5, "reason": "SPLIT", "variant": "n", "metadata": map[string]any{"enabled": true, "payloadType": "number"}},
		"obj":          {"key": "obj", "value": map[string]any{"a": []any{1.0, 2.0}}, "reason": "SPLIT", "variant": "o", "metadata": map[string]any{"enabled": true, "payloadType": "json"}},
		"csv":          {"key": "csv", "value": "a,b", "reason": "SPLIT", "variant": "c", "metadata": map[string]any{"enabled": true, "payloadType": "csv"}},
		"bare-variant": {"key": "bare-variant", "value": "only-name", "reason": "SPLIT", "variant": "only-name", "metadata": map[string]any{"enabled": true}},
		"bad-number":   {"key": "bad-number", "errorCode": "PARSE_ERROR", "errorDetails": `variant "x" has a number payload that is not a number`},
		"variant-off":  {"key": "variant-off", "reason": "DISABLED", "metadata": map[string]any{"enabled": false}},
	}
	assert.Equal(t, want, flags)

	// The constraint holds now: the targeted strategy decides "mixed".
	_, flags, _ = ofrepBulk(t, r, `{"context":{"targetingKey":"u2","plan":"pro"}}`)
	assert.Equal(t, "TARGETING_MATCH", flags["mixed"]["reason"])
	assert.Equal(t, true, flags["targeted"]["value"])
	assert.Equal(t, false, flags["segmented"]["value"])

	// One flag.
	for key, w := range want {
		resp, body := r.post(t, "/ofrep/v1/evaluate/flags/"+key, `{"context":{"targetingKey":"u1","plan":"free","country":"NO"}}`)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		assert.Equal(t, w, got, key)
		status := http.StatusOK
		if key == "bad-number" {
			status = http.StatusBadRequest
		}
		assert.Equal(t, status, resp.StatusCode, key)
	}
	resp, body := r.post(t, "/ofrep/v1/evaluate/flags/nope", `{"context":{}}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.JSONEq(t, `{"key":"nope","errorCode":"FLAG_NOT_FOUND","errorDetails":"flag \"nope\" was not found"}`, body)
	// A key with a slash, escaped in the path.
	resp, _ = r.post(t, "/ofrep/v1/evaluate/flags/a%2Fb", `{"context":{}}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestOFREPContextAndErrors(t *testing.T) {
	u := newFakeUpstream(t, `{"version":2,"features":[
{"name":"by-user","enabled":true,"strategies":[{"name":"userWithId","parameters":{"userIds":"alice"}}],"variants":[]},
{"name":"by-prop","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[{"contextName":"age","operator":"NUM_GT","values":[],"value":"30"},{"contextName":"beta","operator":"IN","values":["true"]}]}],"variants":[]},
{"name":"by-session","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[{"contextName":"sessionId","operator":"IN","values":["s1"]}]}],"variants":[]},
{"name":"by-date","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[{"contextName":"currentTime","operator":"DATE_BEFORE","values":[],"value":"2001-01-01T00:00:00Z"}]}],"variants":[]}
]}`)
	r := startReady(t, testConfig(u))
	value := func(body, key string) any {
		t.Helper()
		resp, flags, _ := ofrepBulk(t, r, body)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		return flags[key]["value"]
	}
	assert.Equal(t, true, value(`{"context":{"targetingKey":"alice"}}`, "by-user"))
	assert.Equal(t, false, value(`{"context":{"targetingKey":"alice","userId":"bob"}}`, "by-user"), "userId wins over targetingKey")
	assert.Equal(t, true, value(`{"context":{"userId":"alice"}}`, "by-user"))
	assert.Equal(t, false, value(`{}`, "by-user"), "no context, no targetingKey")
	assert.Equal(t, true, value(`{"context":{"age":31,"beta":true}}`, "by-prop"), "numbers and booleans become strings")
	assert.Equal(t, false, value(`{"context":{"age":30,"beta":true}}`, "by-prop"))
	assert.Equal(t, true, value(`{"context":{"sessionId":"s1"}}`, "by-session"))
	assert.Equal(t, true, value(`{"context":{"currentTime":"2000-06-01"}}`, "by-date"))
	assert.Equal(t, false, value(`{"context":{}}`, "by-date"))

	for _, tc := range []struct {
		body, code string
		status     int
	}{
		{`{"context":`, "PARSE_ERROR", 400},
		{`not json`, "PARSE_ERROR", 400},
		{``, "PARSE_ERROR", 400},
		{`[1]`, "PARSE_ERROR", 400},
		{`{"context":[1]}`, "INVALID_CONTEXT", 400},
		{`{"context":"x"}`, "INVALID_CONTEXT", 400},
		{`{"context":{"targetingKey":{"a":1}}}`, "INVALID_CONTEXT", 400},
		{`{"context":{"userId":["a"]}}`, "INVALID_CONTEXT", 400},
		{`{"context":{"a":"` + strings.Repeat("x", 200*1024) + `"}}`, "GENERAL", 413},
	} {
		for _, path := range []string{"/ofrep/v1/evaluate/flags", "/ofrep/v1/evaluate/flags/by-user"} {
			resp, body := r.do(t, http.MethodPost, path, tc.body, "Authorization", clientKey)
			assert.Equal(t, tc.status, resp.StatusCode, "%s %.40s", path, tc.body)
			var e map[string]any
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			assert.Equal(t, tc.code, e["errorCode"], "%s %.40s", path, tc.body)
			assert.NotEmpty(t, e["errorDetails"])
			if strings.HasSuffix(path, "by-user") {
				assert.Equal(t, "by-user", e["key"])
			}
		}
	}
	resp, _ := r.do(t, http.MethodGet, "/ofrep/v1/evaluate/flags", "", "Authorization", clientKey)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	// The client key in each form OFREP providers send it; none, or a
	// wrong one, is a 401 as on /proxy.
	for _, h := range [][]string{
		{"Authorization", clientKey}, {"Authorization", "Bearer " + clientKey}, {"Authorization", "bearer other-key"},
		{"X-API-Key", clientKey},
	} {
		resp, _ := r.do(t, http.MethodPost, "/ofrep/v1/evaluate/flags", `{}`, h...)
		assert.Equal(t, http.StatusOK, resp.StatusCode, h)
	}
	for _, h := range [][]string{{}, {"Authorization", "Bearer nope"}, {"X-API-Key", "server-token"}, {"Authorization", "Basic " + clientKey}} {
		resp, _ := r.do(t, http.MethodPost, "/ofrep/v1/evaluate/flags", `{}`, h...)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, h)
		resp, _ = r.do(t, http.MethodPost, "/ofrep/v1/evaluate/flags/by-user", `{}`, h...)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, h)
	}
}

func TestOFREPNotReady(t *testing.T) {
	u := newFakeUpstream(t, ofrepPayload)
	u.setMode(modeFail)
	r := startProxy(t, testConfig(u))
	resp, _ := r.post(t, "/ofrep/v1/evaluate/flags", `{}`)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

func TestOFREPETag(t *testing.T) {
	u := newFakeUpstream(t, ofrepPayload)
	r := startReady(t, testConfig(u))
	body := `{"context":{"targetingKey":"u1","plan":"free"}}`
	resp, _, _ := ofrepBulk(t, r, body)
	etag := resp.Header.Get("ETag")
	require.NotEmpty(t, etag)

	resp, _, _ = ofrepBulk(t, r, body, "If-None-Match", etag)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode, "unchanged")
	assert.Equal(t, etag, resp.Header.Get("ETag"))
	// The same targetingKey with another attribute may change the answer:
	// a new ETag, even though no flag here reads "tier".
	resp, _, _ = ofrepBulk(t, r, `{"context":{"targetingKey":"u1","plan":"free","tier":"x"}}`, "If-None-Match", etag)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "context changed")
	assert.NotEqual(t, etag, resp.Header.Get("ETag"))
	// Attributes in another order are the same context.
	resp, _, _ = ofrepBulk(t, r, `{"context":{"plan":"free","targetingKey":"u1"}}`, "If-None-Match", etag)
	assert.Equal(t, http.StatusNotModified, resp.StatusCode)

	// A new configuration upstream that does not change this answer's
	// flags still changes the ETag.
	u.setPayload(strings.Replace(ofrepPayload, `"name":"csv"`, `"name":"csv","description":"changed"`, 1))
	testutil.Eventually(t, 5*time.Second, "a new ETag after the upstream change", func() bool {
		resp, _, _ := ofrepBulk(t, r, body, "If-None-Match", etag)
		return resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != etag
	})
}

func TestOFREPEventStream(t *testing.T) {
	u := newFakeUpstream(t, ofrepPayload)
	r := startReady(t, testConfig(u))
	_, _, out := ofrepBulk(t, r, `{"context":{"targetingKey":"u1"}}`)
	streams := out["eventStreams"].([]any)
	require.Len(t, streams, 1)
	es := streams[0].(map[string]any)
	assert.Equal(t, "sse", es["type"])
	uri := es["endpoint"].(map[string]any)["requestUri"].(string)
	require.True(t, strings.HasPrefix(uri, "/ofrep/v1/events?c="), uri)
	assert.NotContains(t, uri, clientKey)

	// A tampered or missing credential is refused.
	for _, bad := range []string{"/ofrep/v1/events", uri + "x", strings.Replace(uri, "c=", "c=A", 1)} {
		resp, err := http.Get(r.srv.URL + bad)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, bad)
	}

	resp, err := http.Get(r.srv.URL + uri)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
		close(events)
	}()
	select {
	case e := <-events:
		t.Fatalf("an event before any change: %s", e)
	case <-time.After(200 * time.Millisecond):
	}
	changed := time.Now()
	u.setPayload(strings.Replace(ofrepPayload, `"value":"b"`, `"value":"c"`, 1))
	select {
	case e := <-events:
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(e), &m))
		assert.Equal(t, "refetchEvaluation", m["type"])
		t.Logf("refetchEvaluation %v after the upstream change (refresh interval 50ms)", time.Since(changed))
	case <-time.After(3 * time.Second):
		t.Fatal("no refetchEvaluation after an upstream change")
	}
	_, flags, _ := ofrepBulk(t, r, `{"context":{"targetingKey":"u1"}}`)
	assert.Equal(t, "c", flags["str"]["value"])
}

// TestOFREPAgreesWithProxyAll evaluates 1,000 random contexts over the
// engine's generated fixture through OFREP's bulk endpoint and through
// POST /proxy/all, and compares them flag by flag.
func TestOFREPAgreesWithProxyAll(t *testing.T) {
	cf := enginetest.Generate(300, 7)
	payload, err := json.Marshal(cf)
	require.NoError(t, err)
	snap := engine.Compile(cf, engine.Options{})
	u := newFakeUpstream(t, string(payload))
	cfg := testConfig(u)
	cfg.EnableAllEndpoint = true
	r := startReady(t, cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	const now = "2026-06-01T12:00:00Z"
	compared := map[string]int{}
	for n := range ofrepAgreementContexts {
		ctx := enginetest.RandomContext(rng)
		if ctx.UserID == "" {
			// Without a userId, the variants sticky on userId are drawn at
			// random, on both paths alike: nothing to compare.
			ctx.UserID = fmt.Sprintf("anon-%d", n)
		}
		unleash := map[string]any{"userId": ctx.UserID, "sessionId": ctx.SessionID, "remoteAddress": ctx.RemoteAddress,
			"environment": ctx.Environment, "appName": ctx.AppName, "currentTime": now, "properties": ctx.Properties}
		of := map[string]any{"sessionId": ctx.SessionID, "remoteAddress": ctx.RemoteAddress, "environment": ctx.Environment,
			"appName": ctx.AppName, "currentTime": now}
		if ctx.UserID != "" {
			if n%2 == 0 {
				of["targetingKey"] = ctx.UserID
			} else {
				of["userId"] = ctx.UserID
			}
		}
		for k, v := range ctx.Properties {
			of[k] = v
		}
		ub, _ := json.Marshal(map[string]any{"context": unleash})
		ob, _ := json.Marshal(map[string]any{"context": of})
		resp, body := r.post(t, "/proxy/all", string(ub))
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		all := toggles(t, body)
		resp, flags, _ := ofrepBulk(t, r, string(ob))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Len(t, flags, len(all))
		for _, tg := range all {
			f, ok := flags[tg.Name]
			require.True(t, ok, tg.Name)
			i, _ := snap.Index(tg.Name)
			var kind string
			switch {
			case tg.Enabled && tg.Variant.Enabled:
				kind = "variant"
				assert.Equal(t, tg.Variant.Name, f["variant"], tg.Name)
				assert.Equal(t, "SPLIT", f["reason"], tg.Name)
				want := any(tg.Variant.Name)
				if p := tg.Variant.Payload; p != nil {
					want = p.Value
					switch p.Type {
					case "number":
						want, err = strconv.ParseFloat(p.Value.(string), 64)
						require.NoError(t, err)
					case "json":
						require.NoError(t, json.Unmarshal([]byte(p.Value.(string)), &want))
					}
				}
				assert.Equal(t, want, f["value"], tg.Name)
			case tg.Enabled:
				kind = "on"
				assert.Equal(t, true, f["value"], tg.Name)
				assert.Equal(t, "enabled", f["variant"], tg.Name)
				assert.Contains(t, []any{"STATIC", "TARGETING_MATCH"}, f["reason"], tg.Name)
			case snap.FlagHasVariants(i):
				kind = "variant-off"
				assert.NotContains(t, f, "value", tg.Name)
				assert.NotContains(t, f, "variant", tg.Name)
				assert.Equal(t, "DISABLED", f["reason"], tg.Name)
			default:
				kind = "off"
				assert.Equal(t, false, f["value"], tg.Name)
				assert.Equal(t, "disabled", f["variant"], tg.Name)
			}
			compared[kind]++
		}
		if t.Failed() {
			t.Fatalf("context %d disagrees: %s", n, ob)
		}
	}
	t.Logf("compared outcomes: %v", compared)
	for _, kind := range []string{"variant", "on", "variant-off", "off"} {
		assert.Greater(t, compared[kind], ofrepAgreementContexts, kind)
	}
}

// TestOFREPUsage checks OFREP evaluations are counted upstream as /proxy's
// are.
func TestOFREPUsage(t *testing.T) {
	u := newFakeUpstream(t, ofrepPayload)
	r := startReady(t, testConfig(u))
	for range 3 {
		resp, _, _ := ofrepBulk(t, r, `{"context":{"targetingKey":"u1"}}`)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	resp, _ := r.post(t, "/ofrep/v1/evaluate/flags/str", `{"context":{}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	testutil.Eventually(t, 5*time.Second, "OFREP usage upstream", func() bool {
		yes, no, blue := 0.0, 0.0, 0.0
		for _, m := range u.metricsPosts() {
			tg := m["bucket"].(map[string]any)["toggles"].(map[string]any)
			if c, ok := tg["str"].(map[string]any); ok {
				yes += c["yes"].(float64)
				blue += c["variants"].(map[string]any)["blue"].(float64)
			}
			if c, ok := tg["off-in-env"].(map[string]any); ok {
				no += c["no"].(float64)
			}
		}
		return yes == 4 && blue == 4 && no == 3
	})
}
