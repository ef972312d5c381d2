package clientconfig_test

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/clientconfig"
	"github.com/bunting-flags/bunting/internal/store"
)

// data is the client data of n flags, each with a gradual rollout and two
// constraints in development and production (on in development); every
// tenth flag's strategy also uses segment 1, every seventh depends on the
// flag before it, every fifth has a tag.
func data(n int) *store.ClientData {
	d := &store.ClientData{Revision: 100, Generation: 1, EnvironmentNames: []string{"development", "production"},
		Tags:     map[string][][2]string{},
		Segments: []store.Segment{{ID: 1, Name: "nordics", Constraints: []engine.Constraint{{ContextName: "country", Operator: "IN", Values: []string{"NO", "SE"}}}}}}
	for i := range n {
		d.Features = append(d.Features, feature(i))
		for _, env := range d.EnvironmentNames {
			d.Environments = append(d.Environments, store.FeatureEnvironment{FeatureName: feature(i).Name, Environment: env, Enabled: env == "development"})
			d.Strategies = append(d.Strategies, strategy(i, env, strconv.Itoa(10+i%90)))
		}
		if i%7 == 6 {
			d.Dependencies = append(d.Dependencies, store.Dependency{Child: feature(i).Name, Feature: feature(i - 1).Name, Enabled: true})
		}
		if i%5 == 0 {
			d.Tags[feature(i).Name] = [][2]string{{"team", "t" + strconv.Itoa(i%3)}}
		}
	}
	return d
}

func feature(i int) store.Feature {
	desc := "flag number " + strconv.Itoa(i)
	return store.Feature{Name: fmt.Sprintf("flag-%05d", i), Project: "default", Type: "release", Description: &desc}
}

func strategy(i int, env, rollout string) store.Strategy {
	st := store.Strategy{ID: fmt.Sprintf("s-%d-%s", i, env), Name: "flexibleRollout", FeatureName: feature(i).Name, Environment: env,
		Parameters: map[string]string{"rollout": rollout, "stickiness": "default", "groupId": feature(i).Name},
		Constraints: []engine.Constraint{
			{ContextName: "country", Operator: "IN", Values: []string{"NO", "SE", "DK"}},
			{ContextName: "appVersion", Operator: "SEMVER_GT", Value: "1." + strconv.Itoa(i%20) + ".0"},
		}, Segments: []int{}, Variants: []engine.Variant{}}
	if i%10 == 0 {
		st.Segments = []int{1}
	}
	return st
}

// only is the partial data of d for the names: their rows alone.
func only(d *store.ClientData, rev int64, names ...string) *store.ClientData {
	p := &store.ClientData{Revision: rev, Generation: d.Generation + 1, EnvironmentNames: d.EnvironmentNames, Segments: d.Segments,
		Tags: map[string][][2]string{}, Only: names}
	for _, f := range d.Features {
		if slices.Contains(names, f.Name) {
			p.Features = append(p.Features, f)
		}
	}
	for _, fe := range d.Environments {
		if slices.Contains(names, fe.FeatureName) {
			p.Environments = append(p.Environments, fe)
		}
	}
	for _, st := range d.Strategies {
		if slices.Contains(names, st.FeatureName) {
			p.Strategies = append(p.Strategies, st)
		}
	}
	for _, dep := range d.Dependencies {
		if slices.Contains(names, dep.Child) {
			p.Dependencies = append(p.Dependencies, dep)
		}
	}
	for name, tags := range d.Tags {
		if slices.Contains(names, name) {
			p.Tags[name] = tags
		}
	}
	return p
}

// sameFlags fails unless a and b hold the same flags with the same JSON in
// both forms.
func sameFlags(t *testing.T, a, b *clientconfig.Config) {
	t.Helper()
	for _, env := range []string{"development", "production"} {
		fa, fb := a.Flags(env), b.Flags(env)
		if len(fa) != len(fb) {
			t.Fatalf("%s: %d flags, want %d", env, len(fa), len(fb))
		}
		for i := range fa {
			for _, inline := range []bool{false, true} {
				ja, _ := fa[i].Encoded(inline)
				jb, _ := fb[i].Encoded(inline)
				if fa[i].Name != fb[i].Name || !bytes.Equal(ja, jb) {
					t.Fatalf("%s flag %d (inline %v):\n%s\nwant\n%s", env, i, inline, ja, jb)
				}
			}
		}
	}
}

// TestApplyEqualsBuild: a configuration changed by Apply (a strategy
// changed, a flag archived, a flag created) holds exactly what a build of
// the whole changed data holds, and shares every flag the change did not
// touch with the configuration before.
func TestApplyEqualsBuild(t *testing.T) {
	d := data(300)
	before := clientconfig.Build(d)

	// flag-00042's rollout changes; flag-00100 is archived (its rows are
	// gone); flag-00300 is new.
	changed := data(300)
	for i := range changed.Strategies {
		if changed.Strategies[i].FeatureName == "flag-00042" {
			changed.Strategies[i] = strategy(42, changed.Strategies[i].Environment, "77")
		}
	}
	changed.Features = slices.DeleteFunc(changed.Features, func(f store.Feature) bool { return f.Name == "flag-00100" })
	changed.Features = append(changed.Features, feature(300))
	for _, env := range changed.EnvironmentNames {
		changed.Environments = append(changed.Environments, store.FeatureEnvironment{FeatureName: "flag-00300", Environment: env, Enabled: true})
		changed.Strategies = append(changed.Strategies, strategy(300, env, "5"))
	}
	changed.Revision = 101
	after := before.Apply(only(changed, 101, "flag-00042", "flag-00100", "flag-00300"))
	sameFlags(t, after, clientconfig.Build(changed))

	if after.Find("development", "flag-00100") != nil || after.Find("development", "flag-00300") == nil {
		t.Error("the archived flag is still there, or the new one is missing")
	}
	if after.Revision != 101 || after.Lineage() != before.Lineage() {
		t.Errorf("revision %d, lineage %d (before %d)", after.Revision, after.Lineage(), before.Lineage())
	}
	shared := 0
	for _, f := range before.Flags("development") {
		if after.Find("development", f.Name) == f {
			shared++
		}
	}
	if want := 300 - 2; shared != want {
		t.Errorf("%d flags shared with the configuration before, want %d (all but the changed and the archived)", shared, want)
	}
	if clientconfig.Build(changed).Lineage() == before.Lineage() {
		t.Error("a configuration built anew has the lineage of another")
	}
}

// TestInlineFormAndDependents: a flag whose strategy uses a segment gets
// the segment's constraints inlined in its inline form only; a flag
// without segments has one form; Dependents finds the children.
func TestInlineFormAndDependents(t *testing.T) {
	cfg := clientconfig.Build(data(30))
	withSegment := cfg.Find("development", "flag-00010")
	plain := cfg.Find("development", "flag-00011")
	ref, _ := withSegment.Encoded(false)
	inl, _ := withSegment.Encoded(true)
	if !bytes.Contains(ref, []byte(`"segments":[1]`)) || bytes.Contains(ref, []byte(`"SE"]}]`)) {
		t.Errorf("segment form: %s", ref)
	}
	if bytes.Contains(inl, []byte(`"segments"`)) || !bytes.Contains(inl, []byte(`{"contextName":"country","operator":"IN","values":["NO","SE"]`)) {
		t.Errorf("inline form: %s", inl)
	}
	a, _ := plain.Encoded(false)
	b, _ := plain.Encoded(true)
	if &a[0] != &b[0] {
		t.Error("a flag without segments has two copies of its JSON")
	}
	if got := cfg.Dependents([]string{"flag-00005"}); !slices.Equal(got, []string{"flag-00006"}) {
		t.Errorf("Dependents(flag-00005) = %v", got)
	}
	if !cfg.Find("development", "flag-00015").HasVariant("disabled") || cfg.Find("development", "flag-00015").HasVariant("blue") {
		t.Error("HasVariant")
	}
	if got := cfg.Find("production", "flag-00005").Tags(); len(got) != 1 || got[0] != [2]string{"team", "t2"} {
		t.Errorf("tags %v", got)
	}
}

// BenchmarkBuild20000 encodes 20,000 flags in two environments (what a
// server does at start-up, after loading the rows).
func BenchmarkBuild20000(b *testing.B) {
	d := data(20000)
	b.ReportAllocs()
	var cfg *clientconfig.Config
	for b.Loop() {
		cfg = clientconfig.Build(d)
	}
	// What the built configuration holds on to, in pages, once the
	// build's garbage is collected.
	d = nil
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapInuse)/(1<<20), "heap-inuse-MB")
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "heap-live-MB")
	runtime.KeepAlive(cfg)
}

// BenchmarkApplyOneFlag20000 changes one flag of 20,000 (after loading
// its rows).
func BenchmarkApplyOneFlag20000(b *testing.B) {
	d := data(20000)
	cfg := clientconfig.Build(d)
	changed := only(d, 101, "flag-10000")
	changed.Strategies[0].Parameters = map[string]string{"rollout": "1", "stickiness": "default", "groupId": "flag-10000"}
	b.ReportAllocs()
	for b.Loop() {
		cfg.Apply(changed)
	}
}
