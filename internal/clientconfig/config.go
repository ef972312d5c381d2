// Package clientconfig holds the flag configuration the server hands to
// SDKs, once, in the form they receive it: every flag of every
// environment encoded as the JSON the client API sends, with what the
// client API filters on (project, tags, segments). The client API joins
// these fragments into its answers, the streaming hub diffs and sends
// them, and the frontend API and OFREP compile their engine snapshots from
// them; nothing else keeps a copy of the configuration.
//
// A Config is immutable. A change to a few flags (the store says which,
// store.ClientDataSince) gives a new Config that shares every other flag
// with the one before (Apply), so that a change costs the flags it
// touched, not the whole configuration, and the revisions the streaming
// hub keeps to resume from cost little more than one.
package clientconfig

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/store"
)

// Flag is one flag in one environment, as SDKs receive it. It never
// changes once built; a Config that holds it may share it with others.
type Flag struct {
	Name    string
	Project string
	// JSON is the flag as the client API sends it to SDKs that take
	// segments by reference; Hash is its xxhash.
	JSON []byte
	Hash uint64
	// more holds what most flags do not have (nil then), so that a large
	// configuration of plain flags stays small.
	more *flagMore
}

// flagMore is the part of a Flag that most flags leave empty.
type flagMore struct {
	tags       [][2]string
	segmentIDs []int
	parents    []string
	variants   []string
	// inline is the flag with its segments' constraints inlined into its
	// strategies (for older SDKs); nil when it uses no segment, as the two
	// forms are then the same.
	inline     []byte
	inlineHash uint64
}

var noMore flagMore

func (f *Flag) extra() *flagMore {
	if f.more == nil {
		return &noMore
	}
	return f.more
}

// Tags are the flag's tags as [type, value] pairs.
func (f *Flag) Tags() [][2]string { return f.extra().tags }

// SegmentIDs are the segments its strategies use, in strategy order
// (repeated when two strategies use one).
func (f *Flag) SegmentIDs() []int { return f.extra().segmentIDs }

// Parents are the flags it depends on.
func (f *Flag) Parents() []string { return f.extra().parents }

// Encoded returns the flag's JSON and its hash, with segment constraints
// inlined or not.
func (f *Flag) Encoded(inline bool) ([]byte, uint64) {
	if m := f.more; inline && m != nil && m.inline != nil {
		return m.inline, m.inlineHash
	}
	return f.JSON, f.Hash
}

// Variants are the names of the flag's variants, of the environment and of
// its strategies (the slice must not be changed).
func (f *Flag) Variants() []string { return f.extra().variants }

// HasVariant reports whether v names one of the flag's variants (of the
// environment or of a strategy) or the "disabled" fallback.
func (f *Flag) HasVariant(v string) bool {
	return v == "disabled" || slices.Contains(f.extra().variants, v)
}

// Feature decodes the flag (segments by reference), for the engine.
func (f *Flag) Feature() (engine.Feature, error) {
	var out engine.Feature
	err := json.Unmarshal(f.JSON, &out)
	return out, err
}

// Segment is one segment as the client API sends it.
type Segment struct {
	engine.Segment
	JSON []byte
}

// Config is the client configuration at one revision.
type Config struct {
	// Revision is the highest event id the configuration includes;
	// Generation the store's generation when it was loaded; Recent the
	// store's count for ClientDataSince.
	Revision, Generation, Recent int64
	// lineage is the same for configurations derived by Apply from one
	// Build.
	lineage  uint64
	byEnv    map[string][]*Flag // sorted by name
	segments map[int]*Segment
	envs     map[string]bool
}

var lineages atomic.Uint64

// Lineage is the same for configurations that share flags (derived from
// one another by Apply) and differs for a configuration built anew.
func (c *Config) Lineage() uint64 { return c.lineage }

// Flags returns the flags of env sorted by name; the slice must not be
// changed.
func (c *Config) Flags(env string) []*Flag { return c.byEnv[env] }

// Lookup is Find, where a token for every environment (env "*" or "")
// sees a flag of any environment.
func (c *Config) Lookup(env, name string) *Flag {
	if env != "*" && env != "" {
		return c.Find(env, name)
	}
	for e := range c.byEnv {
		if f := c.Find(e, name); f != nil {
			return f
		}
	}
	return nil
}

// Find returns the flag called name in env, or nil.
func (c *Config) Find(env, name string) *Flag {
	flags := c.byEnv[env]
	i, found := slices.BinarySearchFunc(flags, name, func(f *Flag, n string) int { return strings.Compare(f.Name, n) })
	if !found {
		return nil
	}
	return flags[i]
}

// Size is the number of bytes of JSON the configuration holds.
func (c *Config) Size() int {
	n := 0
	for _, flags := range c.byEnv {
		for _, f := range flags {
			n += len(f.JSON)
			if f.more != nil {
				n += len(f.more.inline)
			}
		}
	}
	return n
}

// Segment returns the segment with id, or nil.
func (c *Config) Segment(id int) *Segment { return c.segments[id] }

// Environments lists the environments the configuration holds flags for.
func (c *Config) Environments() []string {
	out := make([]string, 0, len(c.byEnv))
	for env := range c.byEnv {
		out = append(out, env)
	}
	return out
}

// HasEnvironment reports whether env exists.
func (c *Config) HasEnvironment(env string) bool { return c.envs[env] }

// Dependents returns the flags, in any environment, that depend on one of
// names.
func (c *Config) Dependents(names []string) []string {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, flags := range c.byEnv {
		for _, f := range flags {
			for _, p := range f.Parents() {
				if want[p] && !seen[f.Name] {
					seen[f.Name] = true
					out = append(out, f.Name)
				}
			}
		}
	}
	return out
}

// Build encodes the whole client data d.
func Build(d *store.ClientData) *Config {
	c := &Config{Revision: d.Revision, Generation: d.Generation, Recent: d.Recent, lineage: lineages.Add(1), byEnv: map[string][]*Flag{},
		segments: make(map[int]*Segment, len(d.Segments)), envs: make(map[string]bool, len(d.EnvironmentNames))}
	for _, e := range d.EnvironmentNames {
		c.envs[e] = true
	}
	for _, sg := range d.Segments {
		s := &Segment{Segment: engine.Segment{ID: sg.ID, Name: sg.Name, Constraints: nonNil(sg.Constraints)}}
		s.JSON, _ = json.Marshal(s.Segment) // an engine.Segment always encodes
		c.segments[sg.ID] = s
	}
	for env, flags := range c.encode(d) {
		c.byEnv[env] = flags
		compact(flags)
	}
	return c
}

// compact moves the flags' encodings into one allocation. Encoding
// interleaves them with its garbage, so that once that is collected they
// would hold on to partly used pages: for 20,000 flags, about a third more
// memory than their size. The flags a later Apply replaces stay in the
// allocation until the next Build (at most its size).
func compact(flags []*Flag) {
	size := 0
	for _, f := range flags {
		size += len(f.JSON) + len(f.extra().inline)
	}
	buf := make([]byte, 0, size)
	move := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	for _, f := range flags {
		f.JSON = move(f.JSON)
		if f.more != nil {
			f.more.inline = move(f.more.inline)
		}
	}
}

// Apply returns the configuration with the partial data d (store.ClientData
// with Only set) in place of its flags: every flag d.Only names is
// replaced by its rows in d, or removed when d has none. The other flags
// are shared. Whole data (Only nil) is built anew.
func (c *Config) Apply(d *store.ClientData) *Config {
	if d.Only == nil {
		return Build(d)
	}
	if len(d.Only) == 0 { // no flag changed
		next := *c
		next.Revision, next.Generation, next.Recent = d.Revision, d.Generation, d.Recent
		return &next
	}
	next := &Config{Revision: d.Revision, Generation: d.Generation, Recent: d.Recent, lineage: c.lineage,
		byEnv: make(map[string][]*Flag, len(c.byEnv)), segments: c.segments, envs: c.envs}
	replaced := make(map[string]bool, len(d.Only))
	for _, n := range d.Only {
		replaced[n] = true
	}
	fresh := next.encode(d)
	for env, old := range c.byEnv {
		next.byEnv[env] = merge(old, replaced, fresh[env])
	}
	for env, flags := range fresh {
		if _, ok := c.byEnv[env]; !ok {
			next.byEnv[env] = flags
		}
	}
	return next
}

// merge is old without the replaced names, with fresh (sorted) merged in.
func merge(old []*Flag, replaced map[string]bool, fresh []*Flag) []*Flag {
	out := make([]*Flag, 0, len(old)+len(fresh))
	j := 0
	for _, f := range old {
		for j < len(fresh) && fresh[j].Name < f.Name {
			out = append(out, fresh[j])
			j++
		}
		if !replaced[f.Name] {
			out = append(out, f)
		}
	}
	return append(out, fresh[j:]...)
}

// encode shapes and encodes the flags of d, per environment, sorted by
// name; large configurations are encoded on every core.
func (c *Config) encode(d *store.ClientData) map[string][]*Flag {
	out := map[string][]*Flag{}
	var wg sync.WaitGroup
	for env, entries := range shape(d, false) {
		flags := make([]*Flag, len(entries))
		out[env] = flags
		step := max(encodeBatch, len(entries)/runtime.GOMAXPROCS(0)+1)
		for lo := 0; lo < len(entries); lo += step {
			wg.Go(func() {
				for i := lo; i < min(lo+step, len(entries)); i++ {
					flags[i] = c.newFlag(&entries[i])
				}
			})
		}
	}
	wg.Wait()
	return out
}

// encodeBatch is the fewest flags a goroutine encodes.
const encodeBatch = 1024

func (c *Config) newFlag(e *entry) *Flag {
	f := &Flag{Name: e.feature.Name, Project: e.feature.Project}
	m := &flagMore{tags: e.tags, segmentIDs: e.segmentIDs}
	for _, dep := range e.feature.Dependencies {
		m.parents = append(m.parents, dep.Feature)
	}
	for _, v := range e.feature.Variants {
		m.variants = append(m.variants, v.Name)
	}
	for _, st := range e.feature.Strategies {
		for _, v := range st.Variants {
			m.variants = append(m.variants, v.Name)
		}
	}
	if m.tags != nil || m.segmentIDs != nil || m.parents != nil || m.variants != nil {
		f.more = m
	}
	f.JSON, _ = json.Marshal(e.feature) // an engine.Feature always encodes
	f.Hash = xxhash.Sum64(f.JSON)
	if len(e.segmentIDs) == 0 {
		return f
	}
	inlined := e.feature
	inlined.Strategies = make([]engine.Strategy, len(e.feature.Strategies))
	for i, st := range e.feature.Strategies {
		st.Constraints = slices.Clone(st.Constraints)
		for _, id := range st.Segments {
			if sg := c.segments[id]; sg != nil {
				st.Constraints = append(st.Constraints, sg.Constraints...)
			}
		}
		st.Segments = nil
		inlined.Strategies[i] = st
	}
	m.inline, _ = json.Marshal(inlined)
	m.inlineHash = xxhash.Sum64(m.inline)
	return f
}

// entry is one flag of one environment, shaped from the store's rows.
type entry struct {
	feature    engine.Feature // segments by reference
	tags       [][2]string
	segmentIDs []int
}

// Features returns the flags of d per environment as SDKs receive them
// (segments by reference), sorted by name; explain keeps the disabled
// strategies and each strategy's id and title, which the playground
// reports and SDKs do not receive.
func Features(d *store.ClientData, explain bool) map[string][]engine.Feature {
	out := map[string][]engine.Feature{}
	for env, entries := range shape(d, explain) {
		fs := make([]engine.Feature, len(entries))
		for i := range entries {
			fs[i] = entries[i].feature
		}
		out[env] = fs
	}
	return out
}

// shape turns the store's rows into flags per environment, sorted by name.
func shape(d *store.ClientData, explain bool) map[string][]entry {
	features := make(map[string]*store.Feature, len(d.Features))
	for i := range d.Features {
		features[d.Features[i].Name] = &d.Features[i]
	}
	strategies := map[[2]string][]*store.Strategy{}
	for i := range d.Strategies {
		st := &d.Strategies[i]
		if !st.Disabled || explain {
			k := [2]string{st.FeatureName, st.Environment}
			strategies[k] = append(strategies[k], st)
		}
	}
	deps := map[string][]engine.Dependency{}
	for _, dep := range d.Dependencies {
		enabled := dep.Enabled
		cd := engine.Dependency{Feature: dep.Feature, Enabled: &enabled}
		if enabled {
			cd.Variants = nonNil(dep.Variants)
		}
		deps[dep.Child] = append(deps[dep.Child], cd)
	}
	out := map[string][]entry{}
	for _, fe := range d.Environments {
		f, ok := features[fe.FeatureName]
		if !ok {
			continue // archived
		}
		e := entry{tags: d.Tags[f.Name], feature: engine.Feature{Name: f.Name, Type: f.Type, Description: f.Description,
			Project: f.Project, Enabled: fe.Enabled, Stale: f.Stale, ImpressionData: f.ImpressionData,
			Variants: nonNil(fe.Variants), Dependencies: deps[f.Name], Strategies: []engine.Strategy{}}}
		for _, st := range strategies[[2]string{f.Name, fe.Environment}] {
			cs := engine.Strategy{Name: st.Name, Parameters: engine.Parameters(st.Parameters), Constraints: nonNil(st.Constraints),
				Variants: st.Variants, Segments: st.Segments}
			if explain {
				cs.ID, cs.Title, cs.Disabled = st.ID, st.Title, st.Disabled
			}
			e.feature.Strategies = append(e.feature.Strategies, cs)
			e.segmentIDs = append(e.segmentIDs, st.Segments...)
		}
		out[fe.Environment] = append(out[fe.Environment], e)
	}
	for env := range out {
		slices.SortFunc(out[env], func(a, b entry) int { return strings.Compare(a.feature.Name, b.feature.Name) })
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
