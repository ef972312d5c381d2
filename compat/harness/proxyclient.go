package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// ProxyClient calls a client proxy's /proxy endpoints the way the browser SDK
// does: context in the query string (GET) or the body (POST), the client key
// in the Authorization header.
type ProxyClient struct {
	// URL is the proxy endpoint, e.g. http://127.0.0.1:3000/proxy.
	URL    string
	Key    string
	client *http.Client
}

// NewProxyClient returns a client of the proxy endpoint url using key.
func NewProxyClient(url, key string) *ProxyClient {
	return &ProxyClient{URL: url, Key: key, client: &http.Client{Timeout: 10 * time.Second}}
}

// ProxyVariant is the variant of a proxy toggle.
type ProxyVariant struct {
	Name    string   `json:"name"`
	Enabled bool     `json:"enabled"`
	Payload *Payload `json:"payload,omitempty"`
}

// ProxyToggle is one element of a proxy response.
type ProxyToggle struct {
	Name           string        `json:"name"`
	Enabled        bool          `json:"enabled"`
	ImpressionData *bool         `json:"impressionData"`
	Variant        *ProxyVariant `json:"variant"`
}

// Query encodes ctx as the browser SDK does (properties in brackets).
func (c Context) Query() url.Values {
	q := url.Values{}
	if c.UserID != "" {
		q.Set("userId", c.UserID)
	}
	for k, v := range map[string]string{"sessionId": c.SessionID, "remoteAddress": c.RemoteAddress,
		"appName": c.AppName, "environment": c.Environment, "currentTime": c.CurrentTime} {
		if v != "" {
			q.Set(k, v)
		}
	}
	for k, v := range c.Properties {
		q.Set("properties["+k+"]", v)
	}
	return q
}

// Get calls GET /proxy with ctx.
func (p *ProxyClient) Get(ctx Context) ([]ProxyToggle, error) {
	req, err := http.NewRequest(http.MethodGet, p.URL+"?"+ctx.Query().Encode(), nil)
	if err != nil {
		return nil, err
	}
	return p.do(req)
}

// Post calls POST /proxy with ctx and, when names is not nil, a toggle list.
func (p *ProxyClient) Post(ctx Context, names []string) ([]ProxyToggle, error) {
	body := map[string]any{"context": ctx}
	if names != nil {
		body["toggles"] = names
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, p.URL, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return p.do(req)
}

func (p *ProxyClient) do(req *http.Request) ([]ProxyToggle, error) {
	req.Header.Set("Authorization", p.Key)
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: status %d, body %s", req.Method, req.URL.Path, resp.StatusCode, data)
	}
	var out struct {
		Toggles []ProxyToggle `json:"toggles"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s %s: decode %s: %v", req.Method, req.URL.Path, data, err)
	}
	return out.Toggles, nil
}

// CheckProxyCase checks that a proxy answers c as expected: GET /proxy and
// POST /proxy without a list return exactly the enabled scenario flags (flags
// outside the scenario are ignored), with their variants; POST /proxy with
// the list of every outcome's flag returns one element per name, in order.
func CheckProxyCase(t testing.TB, p *ProxyClient, c Case) {
	t.Helper()
	if err := VerifyProxyCase(p, c); err != nil {
		t.Error(err)
	}
}

// VerifyProxyCase is CheckProxyCase returning the first mismatch as an error.
func VerifyProxyCase(p *ProxyClient, c Case) error {
	get, err := p.Get(c.Context)
	if err != nil {
		return fmt.Errorf("case %q: %w", c.Name, err)
	}
	if err := verifyEnabledList(c, get); err != nil {
		return fmt.Errorf("case %q, GET: %w", c.Name, err)
	}
	postAll, err := p.Post(c.Context, nil)
	if err != nil {
		return fmt.Errorf("case %q: %w", c.Name, err)
	}
	if err := verifyEnabledList(c, postAll); err != nil {
		return fmt.Errorf("case %q, POST without toggles: %w", c.Name, err)
	}
	names := make([]string, len(c.Outcomes))
	for i, o := range c.Outcomes {
		names[i] = o.Flag
	}
	listed, err := p.Post(c.Context, names)
	if err != nil {
		return fmt.Errorf("case %q: %w", c.Name, err)
	}
	if len(listed) != len(names) {
		return fmt.Errorf("case %q, POST with toggles %v: got %d elements: %+v", c.Name, names, len(listed), listed)
	}
	for i, o := range c.Outcomes {
		got := listed[i]
		if got.Name != o.Flag || got.Enabled != o.Enabled {
			return fmt.Errorf("case %q, POST with toggles, element %d: got %s enabled=%v, want %s enabled=%v", c.Name, i, got.Name, got.Enabled, o.Flag, o.Enabled)
		}
		if got.ImpressionData == nil {
			return fmt.Errorf("case %q, POST with toggles: %s has no impressionData", c.Name, got.Name)
		}
		if o.Enabled {
			if err := verifyVariant(o, got.Variant); err != nil {
				return fmt.Errorf("case %q, POST with toggles: %w", c.Name, err)
			}
		}
	}
	return nil
}

func verifyEnabledList(c Case, toggles []ProxyToggle) error {
	var got []string
	byName := map[string]ProxyToggle{}
	for _, tg := range toggles {
		if !slices.Contains(ScenarioFlags, tg.Name) {
			continue
		}
		got = append(got, tg.Name)
		byName[tg.Name] = tg
	}
	want := c.Enabled()
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("enabled flags %v, want %v", got, want)
	}
	for _, o := range c.Outcomes {
		tg, ok := byName[o.Flag]
		if !ok {
			continue
		}
		if !tg.Enabled {
			return fmt.Errorf("%s listed with enabled=false", o.Flag)
		}
		if err := verifyVariant(o, tg.Variant); err != nil {
			return err
		}
	}
	return nil
}

func verifyVariant(o Outcome, v *ProxyVariant) error {
	if v == nil {
		return fmt.Errorf("%s has no variant", o.Flag)
	}
	if v.Name != o.Variant || v.Enabled != o.VariantEnabled() {
		return fmt.Errorf("%s variant %s enabled=%v, want %s enabled=%v", o.Flag, v.Name, v.Enabled, o.Variant, o.VariantEnabled())
	}
	if !samePayload(o.Payload, v.Payload) {
		return fmt.Errorf("%s variant payload %s, want %s", o.Flag, describePayload(v.Payload), describePayload(o.Payload))
	}
	return nil
}

func samePayload(a, b *Payload) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func describePayload(p *Payload) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprintf("%s:%s", p.Type, p.Value)
}

// VerifyEnabledCase checks only GET /proxy against c: exactly the enabled
// scenario flags, with their variants. Unleash's frontend API, which has no
// toggle-list form, is checked this way.
func VerifyEnabledCase(p *ProxyClient, c Case) error {
	get, err := p.Get(c.Context)
	if err != nil {
		return fmt.Errorf("case %q: %w", c.Name, err)
	}
	if err := verifyEnabledList(c, get); err != nil {
		return fmt.Errorf("case %q, GET: %w", c.Name, err)
	}
	return nil
}

// WaitProxyFlag waits until the proxy reports flag as enabled (or not) for
// ctx in GET /proxy.
func WaitProxyFlag(t testing.TB, p *ProxyClient, ctx Context, flag string, enabled bool, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, 250*time.Millisecond, fmt.Sprintf("%s enabled=%v through %s", flag, enabled, p.URL), func() error {
		toggles, err := p.Get(ctx)
		if err != nil {
			return err
		}
		found := slices.ContainsFunc(toggles, func(tg ProxyToggle) bool { return tg.Name == flag && tg.Enabled })
		if found != enabled {
			return fmt.Errorf("GET lists %s: %v", strings.Join(toggleNames(toggles), ","), found)
		}
		return nil
	})
}

func toggleNames(toggles []ProxyToggle) []string {
	names := make([]string, len(toggles))
	for i, tg := range toggles {
		names[i] = tg.Name
	}
	return names
}
