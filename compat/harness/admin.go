package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"
)

// Admin calls an upstream's admin API on the paths Unleash 8.x uses, so the
// same calls configure the real Unleash server and Bunting's.
type Admin struct {
	base   string
	token  string
	client *http.Client
}

// NewAdmin returns an admin client for the server at base using token.
func NewAdmin(base, token string) *Admin {
	return &Admin{base: base, token: token, client: &http.Client{Timeout: 15 * time.Second}}
}

// Constraint is an admin-API strategy or segment constraint.
type Constraint struct {
	ContextName     string   `json:"contextName"`
	Operator        string   `json:"operator"`
	Values          []string `json:"values,omitempty"`
	Value           string   `json:"value,omitempty"`
	Inverted        bool     `json:"inverted,omitempty"`
	CaseInsensitive bool     `json:"caseInsensitive,omitempty"`
}

// Payload is a variant payload.
type Payload struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Variant is a strategy variant.
type Variant struct {
	Name       string   `json:"name"`
	Weight     int      `json:"weight"`
	WeightType string   `json:"weightType"`
	Stickiness string   `json:"stickiness"`
	Payload    *Payload `json:"payload,omitempty"`
}

// Strategy is the body of "add a strategy to a flag's environment".
type Strategy struct {
	Name        string            `json:"name"`
	Parameters  map[string]string `json:"parameters,omitempty"`
	Constraints []Constraint      `json:"constraints,omitempty"`
	Variants    []Variant         `json:"variants,omitempty"`
	Segments    []int             `json:"segments,omitempty"`
}

// Do sends a JSON request and returns the status and body. It fails t only
// on transport errors.
func (a *Admin) Do(t testing.TB, method, path string, body any) (int, []byte) {
	t.Helper()
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("encode %s %s: %v", method, path, err)
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, a.base+path, reader)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	req.Header.Set("Authorization", a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, data
}

// mustDo is Do that fails t unless the status is one of ok, and decodes the
// body into out when out is not nil.
func (a *Admin) mustDo(t testing.TB, method, path string, body, out any, ok ...int) {
	t.Helper()
	status, data := a.Do(t, method, path, body)
	if !slices.Contains(ok, status) {
		t.Fatalf("%s %s: status %d (want %v), body %s", method, path, status, ok, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, data, err)
		}
	}
}

func featurePath(project, feature string) string {
	return "/api/admin/projects/" + url.PathEscape(project) + "/features/" + url.PathEscape(feature)
}

// CreateSegment creates a global segment and returns its id.
func (a *Admin) CreateSegment(t testing.TB, name string, constraints []Constraint) int {
	t.Helper()
	var seg struct {
		ID int `json:"id"`
	}
	a.mustDo(t, http.MethodPost, "/api/admin/segments", map[string]any{"name": name, "constraints": constraints}, &seg, 200, 201)
	if seg.ID == 0 {
		t.Fatalf("create segment %s: no id in the answer", name)
	}
	return seg.ID
}

// CreateFeature creates a release flag in project.
func (a *Admin) CreateFeature(t testing.TB, project, name string) {
	t.Helper()
	a.mustDo(t, http.MethodPost, "/api/admin/projects/"+url.PathEscape(project)+"/features",
		map[string]any{"name": name, "type": "release"}, nil, 200, 201)
}

// AddStrategy adds s to the flag's environment and returns the strategy id.
func (a *Admin) AddStrategy(t testing.TB, project, feature, env string, s Strategy) string {
	t.Helper()
	var out struct {
		ID string `json:"id"`
	}
	a.mustDo(t, http.MethodPost, featurePath(project, feature)+"/environments/"+url.PathEscape(env)+"/strategies", s, &out, 200, 201)
	return out.ID
}

// SetEnabled turns the flag on or off in env.
func (a *Admin) SetEnabled(t testing.TB, project, feature, env string, on bool) {
	t.Helper()
	action := "off"
	if on {
		action = "on"
	}
	a.mustDo(t, http.MethodPost, featurePath(project, feature)+"/environments/"+url.PathEscape(env)+"/"+action, nil, nil, 200, 202, 204)
}

// TagFeature adds the tag type:value to a flag.
func (a *Admin) TagFeature(t testing.TB, feature, tagType, value string) {
	t.Helper()
	a.mustDo(t, http.MethodPost, "/api/admin/features/"+url.PathEscape(feature)+"/tags",
		map[string]string{"type": tagType, "value": value}, nil, 200, 201)
}

// AppUsage is one application's usage of a flag, summed over the hours the
// admin API reports.
type AppUsage struct {
	Yes, No      int
	Environments []string
}

// Usage reads /api/admin/client-metrics/features/:name/raw (the hourly
// usage rows per application and environment, as Unleash 8.x and Bunting
// serve them) and sums them per application.
func (a *Admin) Usage(t testing.TB, feature string) (map[string]AppUsage, error) {
	t.Helper()
	status, data := a.Do(t, http.MethodGet, "/api/admin/client-metrics/features/"+url.PathEscape(feature)+"/raw", nil)
	if status != http.StatusOK {
		return nil, fmt.Errorf("client metrics of %s: status %d, body %s", feature, status, data)
	}
	var body struct {
		Data []struct {
			AppName     string `json:"appName"`
			Environment string `json:"environment"`
			Yes         int    `json:"yes"`
			No          int    `json:"no"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, fmt.Errorf("client metrics of %s: decode %s: %v", feature, data, err)
	}
	usage := map[string]AppUsage{}
	for _, row := range body.Data {
		if row.Yes == 0 && row.No == 0 {
			continue
		}
		u := usage[row.AppName]
		u.Yes += row.Yes
		u.No += row.No
		if !slices.Contains(u.Environments, row.Environment) {
			u.Environments = append(u.Environments, row.Environment)
		}
		usage[row.AppName] = u
	}
	return usage, nil
}

// WaitUsage waits until appName's usage of the flag, as the admin API
// reports it, has at least minYes and minNo evaluations in the scenario's
// environment. nudge, when not nil, runs before every look: it makes the
// client evaluate again, so that counts keep flowing. (Unleash drops the
// usage of flags it has known for less than 10 s: it caches flag names.)
func (a *Admin) WaitUsage(t testing.TB, feature, appName string, minYes, minNo int, timeout time.Duration, nudge func() error) AppUsage {
	t.Helper()
	var usage AppUsage
	Eventually(t, timeout, 500*time.Millisecond, "usage metrics of "+feature+" from "+appName, func() error {
		if nudge != nil {
			if err := nudge(); err != nil {
				return fmt.Errorf("nudge the client: %w", err)
			}
		}
		all, err := a.Usage(t, feature)
		if err != nil {
			return err
		}
		usage = all[appName]
		if usage.Yes < minYes || usage.No < minNo || !slices.Equal(usage.Environments, []string{Environment}) {
			return fmt.Errorf("usage so far by application %+v (want %s: yes≥%d, no≥%d in %s)", all, appName, minYes, minNo, Environment)
		}
		return nil
	})
	return usage
}

// WaitApplicationInstance waits until the admin API lists instanceID among
// the instances of application appName (what a client's register post and
// metrics posts record).
func (a *Admin) WaitApplicationInstance(t testing.TB, appName, instanceID string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, time.Second, "instance "+instanceID+" of application "+appName, func() error {
		status, data := a.Do(t, http.MethodGet, "/api/admin/metrics/applications/"+url.PathEscape(appName), nil)
		if status != http.StatusOK {
			return fmt.Errorf("status %d, body %s", status, data)
		}
		var app struct {
			Instances []applicationInstance `json:"instances"`
		}
		if err := json.Unmarshal(data, &app); err != nil {
			return fmt.Errorf("decode %s: %v", data, err)
		}
		if !slices.ContainsFunc(app.Instances, func(i applicationInstance) bool { return i.InstanceID == instanceID }) {
			return fmt.Errorf("instances %+v", app.Instances)
		}
		return nil
	})
}

type applicationInstance struct {
	InstanceID string `json:"instanceId"`
}

// WaitApplicationCreatedEvent waits until the event log has the
// application-created event of appName, first seen as instanceID. It uses
// the event search of the specification (POST /api/admin/events/search),
// which Unleash 8.x no longer has.
func (a *Admin) WaitApplicationCreatedEvent(t testing.TB, appName, instanceID string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, time.Second, "application-created event of "+appName, func() error {
		status, data := a.Do(t, http.MethodPost, "/api/admin/events/search", map[string]any{"type": "application-created", "query": appName})
		if status != http.StatusOK {
			return fmt.Errorf("status %d, body %s", status, data)
		}
		var body struct {
			Events []struct {
				Data struct {
					AppName    string `json:"appName"`
					InstanceID string `json:"instanceId"`
				} `json:"data"`
			} `json:"events"`
		}
		if err := json.Unmarshal(data, &body); err != nil {
			return fmt.Errorf("decode %s: %v", data, err)
		}
		for _, e := range body.Events {
			if e.Data.AppName == appName && e.Data.InstanceID == instanceID {
				return nil
			}
		}
		return fmt.Errorf("events %s", data)
	})
}
