package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bunting-flags/bunting/engine"
)

// specVersion is the pinned @unleash/client-specification version.
const specVersion = "6.1.0"

// specFile is one file of the client specification.
type specFile struct {
	Name         string          `json:"name"`
	State        json.RawMessage `json:"state"`
	Tests        []specTest      `json:"tests"`
	VariantTests []specVariant   `json:"variantTests"`
}

type specTest struct {
	Description string      `json:"description"`
	Context     specContext `json:"context"`
	ToggleName  string      `json:"toggleName"`
	Expected    bool        `json:"expectedResult"`
}

type specVariant struct {
	Description string      `json:"description"`
	Context     specContext `json:"context"`
	ToggleName  string      `json:"toggleName"`
	Expected    struct {
		Name           string                 `json:"name"`
		Payload        *engine.VariantPayload `json:"payload"`
		Enabled        bool                   `json:"enabled"`
		FeatureEnabled bool                   `json:"feature_enabled"`
	} `json:"expectedResult"`
}

// specContext is the spec's context; null properties mean "absent".
type specContext struct {
	UserID        string             `json:"userId"`
	SessionID     string             `json:"sessionId"`
	RemoteAddress string             `json:"remoteAddress"`
	Environment   string             `json:"environment"`
	AppName       string             `json:"appName"`
	CurrentTime   string             `json:"currentTime"`
	Properties    map[string]*string `json:"properties"`
}

func (c specContext) engineContext() *engine.Context {
	ctx := &engine.Context{
		UserID:        c.UserID,
		SessionID:     c.SessionID,
		RemoteAddress: c.RemoteAddress,
		Environment:   c.Environment,
		AppName:       c.AppName,
		CurrentTime:   c.CurrentTime,
	}
	for k, v := range c.Properties {
		if v == nil {
			continue
		}
		if ctx.Properties == nil {
			ctx.Properties = map[string]string{}
		}
		ctx.Properties[k] = *v
	}
	return ctx
}

// specDir finds the specification folder of the npm package, or "" when
// it is not installed.
func specDir() string {
	var roots []string
	if nm := os.Getenv("BUNTING_NODE_MODULES"); nm != "" {
		roots = append(roots, nm)
	}
	roots = append(roots, filepath.Join("..", "test", "node", "node_modules"))
	for _, root := range roots {
		dir := filepath.Join(root, "@unleash", "client-specification", "specifications")
		if _, err := os.Stat(filepath.Join(dir, "index.json")); err == nil {
			return dir
		}
	}
	return ""
}

// requireFixtures stops the test: a failure in CI or when fixtures are
// required, a skip otherwise.
func requireFixtures(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("BUNTING_REQUIRE_FIXTURES") == "1" || os.Getenv("CI") != "" {
		t.Fatalf("%s not found (BUNTING_NODE_MODULES=%q); run `make node-deps`", what, os.Getenv("BUNTING_NODE_MODULES"))
	}
	t.Skipf("%s not found; run `make node-deps` to install it", what)
}

// loadSpecFiles reads every specification file in index order.
func loadSpecFiles(t testing.TB) []specFile {
	t.Helper()
	dir := specDir()
	if dir == "" {
		requireFixtures(t, "@unleash/client-specification")
	}
	var names []string
	readJSON(t, filepath.Join(dir, "index.json"), &names)
	files := make([]specFile, len(names))
	for i, name := range names {
		readJSON(t, filepath.Join(dir, name), &files[i])
	}
	return files
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// decodeState decodes a full state, or folds a delta state's events
// (files 19 and 20) into one with ApplyDelta.
func decodeState(raw json.RawMessage) (*engine.ClientFeatures, error) {
	var delta struct {
		Events []engine.DeltaEvent `json:"events"`
	}
	if err := json.Unmarshal(raw, &delta); err != nil {
		return nil, err
	}
	if delta.Events == nil {
		var cf engine.ClientFeatures
		err := json.Unmarshal(raw, &cf)
		return &cf, err
	}
	return engine.ApplyDelta(nil, delta.Events)
}

// TestClientSpecification runs every case of the official client
// specification as a subtest named <file>/<description>.
func TestClientSpecification(t *testing.T) {
	files := loadSpecFiles(t)
	total, passed, tests, variantTests := 0, 0, 0, 0
	for _, file := range files {
		tests += len(file.Tests)
		variantTests += len(file.VariantTests)
		cf, err := decodeState(file.State)
		if err != nil {
			t.Fatalf("%s: state: %v", file.Name, err)
		}
		snap := engine.Compile(cf, engine.Options{})
		t.Run(file.Name, func(t *testing.T) {
			for _, tc := range file.Tests {
				total++
				if t.Run(tc.Description, func(t *testing.T) {
					got := snap.Evaluate(tc.ToggleName, tc.Context.engineContext())
					if got.Enabled != tc.Expected {
						t.Errorf("enabled = %v, want %v", got.Enabled, tc.Expected)
					}
				}) {
					passed++
				}
			}
			for _, tc := range file.VariantTests {
				total++
				if t.Run(tc.Description, func(t *testing.T) {
					checkSpecVariant(t, snap, tc)
				}) {
					passed++
				}
			}
		})
	}
	t.Logf("client-specification %s: %d/%d cases passed (%d tests + %d variantTests, %d files)",
		specVersion, passed, total, tests, variantTests, len(files))
	if tests != 227 || variantTests != 52 {
		t.Errorf("expected 227 tests + 52 variantTests in client-specification %s, found %d + %d", specVersion, tests, variantTests)
	}
}

func checkSpecVariant(t *testing.T, snap *engine.Snapshot, tc specVariant) {
	t.Helper()
	got := snap.Evaluate(tc.ToggleName, tc.Context.engineContext())
	v := got.Variant
	want := tc.Expected
	if v.Name != want.Name || v.Enabled != want.Enabled || v.FeatureEnabled != want.FeatureEnabled {
		t.Errorf("variant = {%q enabled=%v feature_enabled=%v}, want {%q enabled=%v feature_enabled=%v}",
			v.Name, v.Enabled, v.FeatureEnabled, want.Name, want.Enabled, want.FeatureEnabled)
	}
	if v.FeatureEnabled != got.Enabled {
		t.Errorf("feature_enabled %v disagrees with Enabled %v", v.FeatureEnabled, got.Enabled)
	}
	switch {
	case want.Payload == nil && v.Payload != nil:
		t.Errorf("payload = %+v, want none", *v.Payload)
	case want.Payload != nil && v.Payload == nil:
		t.Errorf("payload missing, want %+v", *want.Payload)
	case want.Payload != nil && *want.Payload != *v.Payload:
		t.Errorf("payload = %+v, want %+v", *v.Payload, *want.Payload)
	}
}

// TestClientSpecificationEvaluateAll runs every case of the client
// specification through EvaluateAll, with each payload as it is and padded
// with enabled filler flags to a size at which EvaluateAll settles
// constraint tests eagerly, so that both of its ways of walking strategies
// meet every case.
func TestClientSpecificationEvaluateAll(t *testing.T) {
	for _, file := range loadSpecFiles(t) {
		cf, err := decodeState(file.State)
		if err != nil {
			t.Fatalf("%s: state: %v", file.Name, err)
		}
		padded := *cf
		padded.Features = append([]engine.Feature(nil), cf.Features...)
		for i := len(padded.Features); i < 2*engine.EagerMinFlags; i++ {
			padded.Features = append(padded.Features, engine.Feature{
				Name: fmt.Sprintf("zz-filler-%d", i), Enabled: true,
				Strategies: []engine.Strategy{{Name: "default"}},
			})
		}
		for _, payload := range []*engine.ClientFeatures{cf, &padded} {
			snap := engine.Compile(payload, engine.Options{})
			evaluate := func(name string, ctx *engine.Context) engine.Result {
				i, ok := snap.Index(name)
				if !ok {
					return snap.Evaluate(name, ctx)
				}
				return snap.EvaluateAll(ctx, nil)[i]
			}
			t.Run(fmt.Sprintf("%s/%d flags", file.Name, len(payload.Features)), func(t *testing.T) {
				for _, tc := range file.Tests {
					if got := evaluate(tc.ToggleName, tc.Context.engineContext()); got.Enabled != tc.Expected {
						t.Errorf("%s: enabled = %v, want %v", tc.Description, got.Enabled, tc.Expected)
					}
				}
				for _, tc := range file.VariantTests {
					got := evaluate(tc.ToggleName, tc.Context.engineContext())
					if got.Variant.Name != tc.Expected.Name || got.Variant.Enabled != tc.Expected.Enabled || got.Enabled != tc.Expected.FeatureEnabled {
						t.Errorf("%s: variant %q enabled=%v feature %v, want %q enabled=%v feature %v", tc.Description,
							got.Variant.Name, got.Variant.Enabled, got.Enabled, tc.Expected.Name, tc.Expected.Enabled, tc.Expected.FeatureEnabled)
					}
				}
			})
		}
	}
}
