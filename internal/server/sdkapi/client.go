package sdkapi

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpgzip"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// clientSnapshot is the client API's view of the flags at one revision,
// shaped once so that requests are answered from memory.
type clientSnapshot struct {
	revision   int64
	generation int64
	// byEnv holds, per environment, the flags sorted by name in both
	// shapes: with segment references and with segments inlined.
	byEnv    map[string][]clientFlag
	segments map[int]engine.Segment
	// envs holds the environments that exist (streams of a deleted one end).
	envs map[string]bool
}

// clientFlag is one flag in one environment.
type clientFlag struct {
	withSegments engine.Feature
	inlined      engine.Feature
	tags         [][2]string
	segmentIDs   []int
}

// clientCache keeps the current snapshot and the encoded responses of the
// queries asked at its revision.
type clientCache struct {
	s         *API
	mu        sync.Mutex
	snap      *clientSnapshot
	responses map[string]*clientResponse
}

// clientResponse is an encoded GET /api/client/features answer, gzipped
// once when a client first asks for it so.
type clientResponse struct {
	etag string
	body *httpgzip.Cached
}

func newClientCache(s *API) *clientCache {
	return &clientCache{s: s, responses: map[string]*clientResponse{}}
}

// snapshot returns the current snapshot, rebuilding it when the store's
// revision moved past it. Concurrent callers wait for one rebuild.
func (c *clientCache) snapshot(r *http.Request) (*clientSnapshot, error) {
	return c.snapshotCtx(r.Context())
}

// snapshotCtx is snapshot outside a request. While the database is
// unavailable the last snapshot is kept: SDKs get the flags as they were.
func (c *clientCache) snapshotCtx(ctx context.Context) (*clientSnapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != nil && (c.snap.generation == c.s.store.Generation() || c.s.store.Unavailable() != nil) {
		return c.snap, nil
	}
	data, err := c.s.store.ClientData(c.s.store.Q(ctx))
	if err != nil {
		if c.snap != nil && apierr.IsKind(err, apierr.KindDatabaseUnavailable) {
			return c.snap, nil
		}
		return nil, err
	}
	c.snap = buildClientSnapshot(data)
	clear(c.responses)
	return c.snap, nil
}

func buildClientSnapshot(d *store.ClientData) *clientSnapshot { return buildSnapshot(d, false) }

// buildSnapshot shapes d; explain keeps the disabled strategies and each
// strategy's id and title (what the playground reports), which SDKs do
// not receive.
func buildSnapshot(d *store.ClientData, explain bool) *clientSnapshot {
	snap := &clientSnapshot{revision: d.Revision, generation: d.Generation, byEnv: map[string][]clientFlag{}, segments: map[int]engine.Segment{},
		envs: map[string]bool{}}
	for _, e := range d.EnvironmentNames {
		snap.envs[e] = true
	}
	for _, sg := range d.Segments {
		snap.segments[sg.ID] = engine.Segment{ID: sg.ID, Name: sg.Name, Constraints: domain.NonNil(sg.Constraints)}
	}
	features := map[string]store.Feature{}
	for _, f := range d.Features {
		features[f.Name] = f
	}
	strategies := map[[2]string][]store.Strategy{}
	for _, st := range d.Strategies {
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
			cd.Variants = domain.NonNil(dep.Variants)
		}
		deps[dep.Child] = append(deps[dep.Child], cd)
	}
	for _, fe := range d.Environments {
		f, ok := features[fe.FeatureName]
		if !ok {
			continue // archived
		}
		flag := clientFlag{tags: d.Tags[f.Name]}
		base := engine.Feature{Name: f.Name, Type: f.Type, Description: f.Description, Project: f.Project, Enabled: fe.Enabled,
			Stale: f.Stale, ImpressionData: f.ImpressionData, Variants: domain.NonNil(fe.Variants), Dependencies: deps[f.Name]}
		flag.withSegments, flag.inlined = base, base
		flag.withSegments.Strategies, flag.inlined.Strategies = []engine.Strategy{}, []engine.Strategy{}
		for _, st := range strategies[[2]string{f.Name, fe.Environment}] {
			cs := engine.Strategy{Name: st.Name, Parameters: engine.Parameters(st.Parameters), Constraints: domain.NonNil(st.Constraints),
				Variants: st.Variants}
			if explain {
				cs.ID, cs.Title, cs.Disabled = st.ID, st.Title, st.Disabled
			}
			withSeg := cs
			withSeg.Segments = st.Segments
			flag.withSegments.Strategies = append(flag.withSegments.Strategies, withSeg)
			inl := cs
			inl.Constraints = slices.Clone(cs.Constraints)
			for _, id := range st.Segments {
				inl.Constraints = append(inl.Constraints, snap.segments[id].Constraints...)
			}
			flag.inlined.Strategies = append(flag.inlined.Strategies, inl)
			flag.segmentIDs = append(flag.segmentIDs, st.Segments...)
		}
		snap.byEnv[fe.Environment] = append(snap.byEnv[fe.Environment], flag)
	}
	for env := range snap.byEnv {
		slices.SortFunc(snap.byEnv[env], func(a, b clientFlag) int { return strings.Compare(a.withSegments.Name, b.withSegments.Name) })
	}
	return snap
}

// clientQuery is the effective filter of one client request, after the
// token's scope overrides the parameters.
type clientQuery struct {
	env        string
	projects   []string
	namePrefix string
	tags       [][2]string
	inline     bool
	// none is set when the asked projects and the token's do not overlap.
	none bool
}

// strictSemver matches a full semantic version; it is compiled on first
// use rather than at start-up.
var strictSemver = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)
})

// parseClientQuery reads the token scope, the query parameters and the
// Unleash-Client-Spec header.
func parseClientQuery(r *http.Request) (clientQuery, error) {
	p := domain.PrincipalFrom(r.Context())
	q := clientQuery{env: p.Environment, inline: true}
	var values url.Values // SDKs usually send no query: nothing to parse
	if r.URL.RawQuery != "" {
		values = r.URL.Query()
	}
	if q.env == "*" || q.env == "" {
		q.env = values.Get("environment")
		if q.env == "" {
			q.env = "development"
		}
	}
	asked := values["project"]
	if p.AllProjects() {
		q.projects = asked
	} else if len(asked) == 0 && slices.IsSorted(p.Projects) {
		q.projects = p.Projects // only read from here on
	} else {
		q.projects = slices.Clone(p.Projects)
		if len(asked) > 0 {
			q.projects = slices.DeleteFunc(q.projects, func(proj string) bool { return !slices.Contains(asked, proj) })
			if len(q.projects) == 0 {
				q.projects, q.none = slices.Clone(asked), true
			}
		}
	}
	if !slices.IsSorted(q.projects) { // never true of the principal's own slice
		slices.Sort(q.projects)
	}
	q.namePrefix = values.Get("namePrefix")
	for _, t := range values["tag"] {
		typ, value, ok := strings.Cut(t, ":")
		if !ok || typ == "" || value == "" {
			return q, apierr.Validation("The `tag` query parameter must look like type:value. You sent %q.", t)
		}
		q.tags = append(q.tags, [2]string{typ, value})
	}
	if spec := r.Header.Get("Unleash-Client-Spec"); spec != "" {
		m := strictSemver().FindStringSubmatch(spec)
		if m == nil {
			return q, apierr.Validation("Invalid SemVer in the Unleash-Client-Spec header: %q.", spec)
		}
		major, _ := strconv.Atoi(m[1])
		minor, _ := strconv.Atoi(m[2])
		q.inline = major < 4 || (major == 4 && minor < 2)
	}
	return q, nil
}

func (q clientQuery) key() string { return string(q.appendKey(nil)) }

// appendKey appends the cache key of q to b.
func (q clientQuery) appendKey(b []byte) []byte {
	b = append(b, q.env...)
	for _, p := range q.projects {
		b = append(append(b, "\x00p"...), p...)
	}
	b = append(append(b, "\x00n"...), q.namePrefix...)
	for _, t := range q.tags {
		b = append(append(b, "\x00t"...), t[0]...)
		b = append(append(b, "\x00"...), t[1]...)
	}
	if q.inline {
		b = append(b, "\x00inline"...)
	}
	if q.none {
		b = append(b, "\x00none"...)
	}
	return b
}

func (q clientQuery) hash() string {
	h := fnv.New32a()
	h.Write([]byte(q.key()))
	return fmt.Sprintf("%08x", h.Sum32())
}

func (q clientQuery) matches(f *clientFlag) bool {
	if q.none {
		return false
	}
	name := f.withSegments.Name
	if q.namePrefix != "" && !strings.HasPrefix(name, q.namePrefix) {
		return false
	}
	if len(q.projects) > 0 && !slices.Contains(q.projects, f.withSegments.Project) {
		return false
	}
	if len(q.tags) > 0 && !slices.ContainsFunc(q.tags, func(t [2]string) bool { return slices.Contains(f.tags, t) }) {
		return false
	}
	return true
}

func (q clientQuery) echo() *engine.Query {
	out := &engine.Query{Project: q.projects, NamePrefix: q.namePrefix, Environment: q.env, InlineSegmentConstraints: q.inline}
	if len(out.Project) == 0 {
		out.Project = []string{"*"}
	}
	for _, t := range q.tags {
		out.Tag = append(out.Tag, []string{t[0], t[1]})
	}
	return out
}

// response returns the encoded answer for q, from cache when possible.
func (c *clientCache) response(r *http.Request, q clientQuery) (*clientResponse, error) {
	snap, err := c.snapshot(r)
	if err != nil {
		return nil, err
	}
	var buf [128]byte
	keyBytes := q.appendKey(buf[:0])
	c.mu.Lock()
	res, ok := c.responses[string(keyBytes)] // looked up without allocating
	c.mu.Unlock()
	if ok {
		return res, nil
	}
	key := string(keyBytes)
	res, err = encodeClientFeatures(snap, q)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.snap == snap {
		if len(c.responses) > 1000 {
			clear(c.responses)
		}
		c.responses[key] = res
	}
	c.mu.Unlock()
	return res, nil
}

// encodeClientFeatures encodes the payload for q. Its strong ETag is
// "<query hash>:<revision>:<content hash>", so two instances serving the
// same data agree, and any change of content changes it.
func encodeClientFeatures(snap *clientSnapshot, q clientQuery) (*clientResponse, error) {
	payload := engine.ClientFeatures{Version: 2, Features: []engine.Feature{}, Query: q.echo()}
	used := map[int]bool{}
	flags := snap.byEnv[q.env]
	for i := range flags {
		f := &flags[i]
		if !q.matches(f) {
			continue
		}
		if q.inline {
			payload.Features = append(payload.Features, f.inlined)
			continue
		}
		payload.Features = append(payload.Features, f.withSegments)
		for _, id := range f.segmentIDs {
			used[id] = true
		}
	}
	if !q.inline {
		payload.Segments = []engine.Segment{}
		ids := make([]int, 0, len(used))
		for id := range used {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			payload.Segments = append(payload.Segments, snap.segments[id])
		}
	}
	content, err := json.Marshal(payload)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	h := fnv.New32a()
	h.Write(content)
	etag := fmt.Sprintf("%q", fmt.Sprintf("%s:%d:%08x", q.hash(), snap.revision, h.Sum32()))
	payload.Meta = &engine.Meta{Revision: snap.revision, ETag: etag, QueryHash: q.hash()}
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, apierr.Internal(err)
	}
	if !q.inline && len(payload.Segments) == 0 {
		// Keep "segments":[] for clients that announced segment support.
		body = append(body[:len(body)-1], []byte(`,"segments":[]}`)...)
	}
	return &clientResponse{etag: etag, body: httpgzip.NewCached(body)}, nil
}

func (s *API) clientFeatures(w http.ResponseWriter, r *http.Request) error {
	q, err := parseClientQuery(r)
	if err != nil {
		return err
	}
	res, err := s.client.response(r, q)
	if err != nil {
		return err
	}
	h := w.Header()
	httpgzip.AddVary(h)
	if r.Header.Get("If-None-Match") == res.etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	body := res.body.Body
	if httpgzip.Wants(r, len(body)) {
		body = res.body.Gzipped()
		h["Content-Encoding"] = httpgzip.HeaderGzip
	}
	h.Set("ETag", res.etag)
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

func (s *API) clientFeature(w http.ResponseWriter, r *http.Request) error {
	q, err := parseClientQuery(r)
	if err != nil {
		return err
	}
	snap, err := s.client.snapshot(r)
	if err != nil {
		return err
	}
	name := r.PathValue("featureName")
	flags := snap.byEnv[q.env]
	i, found := slices.BinarySearchFunc(flags, name, func(f clientFlag, n string) int { return strings.Compare(f.withSegments.Name, n) })
	if !found || !q.matches(&flags[i]) {
		return apierr.NotFound("Could not find feature flag %s", name)
	}
	if q.inline {
		return httpjson.Write(w, http.StatusOK, flags[i].inlined)
	}
	return httpjson.Write(w, http.StatusOK, flags[i].withSegments)
}
