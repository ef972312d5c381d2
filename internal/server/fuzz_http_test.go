package server_test

import (
	"bytes"
	"compress/gzip"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// TestHTTPFuzz sends thousands of generated hostile requests to every route
// of the server's route table (Server.Routes), so a new route is covered
// without editing this test: wrong types, nulls, NUL characters and invalid
// UTF-8 in every string, key and path segment, huge and negative numbers,
// deep nesting, oversized bodies, hostile names and credentials. Bodies are
// grown from what the server itself says: objects read from its GET routes,
// property names found in its answers and error messages, and bodies it
// accepted, mutated. Every answer must come within 5 s, below 500, with a
// parseable body; nothing may panic or log an error; and afterwards every
// flag's state in every environment must equal what its last event says.
//
// BUNTING_FUZZ_HTTP_N sets the number of requests per database (default
// 6,000; `make fuzz-http` runs 60,000), BUNTING_FUZZ_HTTP_SEED the seed.
func TestHTTPFuzz(t *testing.T) {
	t.Parallel()
	n := 6000
	if v, err := strconv.Atoi(os.Getenv("BUNTING_FUZZ_HTTP_N")); err == nil && v > 0 {
		n = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("BUNTING_FUZZ_HTTP_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("BUNTING_FUZZ_HTTP_SEED=%d BUNTING_FUZZ_HTTP_N=%d", seed, n)
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		f := newHTTPFuzzer(t, h, seed)
		f.setup()
		stop := make(chan struct{})
		toggled := make(chan int)
		go func() { toggled <- f.toggle(stop) }()
		f.run(n, 4)
		close(stop)
		t.Logf("%d flag changes by the toggler during the run", <-toggled)
		f.report()
		f.checkLogs()
		checkFlagStatesMatchEvents(t, h)
	})
}

// fuzzHangLimit is how long a request may take before it counts as hung:
// long, because the fuzz test runs beside other work on a shared machine
// and says nothing about speed (the benchmarks do).
const fuzzHangLimit = time.Minute

type httpFuzzer struct {
	t      *testing.T
	h      *servertest.Harness
	seed   uint64
	routes []server.Route
	// bodyRoutes are the routes that take a body (POST, PUT, PATCH).
	bodyRoutes []server.Route
	client     *http.Client

	mu       sync.Mutex
	keys     []string               // property names seen in answers and error messages
	values   map[string][]any       // sample values by property name
	seeds    map[string][][]byte    // bodies by path template: objects read there, bodies accepted
	required map[string][]string    // properties the server said a route requires
	bindings []map[string]string    // path values of requests that succeeded
	lastErr  map[string]string      // the last 400 message by route pattern
	children map[string][]string    // path template → wildcards of the routes one level below
	sweep    []sweepItem            // variants of accepted bodies still to send
	swept    map[string]int         // accepted bodies swept, by route pattern
	statuses map[string]map[int]int // by route pattern
	total    map[int]int
	failures []string
	count    int
}

func newHTTPFuzzer(t *testing.T, h *servertest.Harness, seed uint64) *httpFuzzer {
	f := &httpFuzzer{
		t: t, h: h, seed: seed, routes: h.Server.Routes(),
		client:   &http.Client{Timeout: fuzzHangLimit, Transport: &http.Transport{MaxIdleConnsPerHost: 8}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		values:   map[string][]any{},
		seeds:    map[string][][]byte{},
		required: map[string][]string{},
		statuses: map[string]map[int]int{},
		total:    map[int]int{},
		lastErr:  map[string]string{},
		swept:    map[string]int{},
	}
	f.children = map[string][]string{}
	for _, rt := range f.routes {
		if m, _, _ := strings.Cut(rt.Pattern, " "); m == "POST" || m == "PUT" || m == "PATCH" {
			f.bodyRoutes = append(f.bodyRoutes, rt)
		}
		_, path, _ := strings.Cut(rt.Pattern, " ")
		i := strings.LastIndexByte(path, '/')
		if last := path[i+1:]; i > 0 && strings.HasPrefix(last, "{") && strings.HasSuffix(last, "}") {
			name := strings.Trim(last, "{}.")
			if !slices.Contains(f.children[path[:i]], name) {
				f.children[path[:i]] = append(f.children[path[:i]], name)
			}
		}
	}
	if len(f.routes) < 100 {
		t.Fatalf("the route table lists %d routes; expected the whole surface", len(f.routes))
	}
	// Shapes every Unleash-style API uses, so that the first bodies are not
	// all refused for their outline: a JSON Patch operation and a constraint.
	f.addSeed("", []byte(`[{"op":"replace","path":"/description","value":"x"}]`))
	f.addSeed("", []byte(`{"contextName":"userId","operator":"IN","values":["a"]}`))
	return f
}

// setup makes a few resources through the API and reads every GET route,
// so that path values and bodies start from real data.
func (f *httpFuzzer) setup() {
	h, t := f.h, f.t
	for _, name := range []string{"fz-a", "fz-b"} {
		createFlag(t, h, name)
		h.Do(t, "POST", envPath(name, "development")+"/strategies", h.AdminToken, map[string]any{"name": "default"}).Want(t, 200)
		h.Do(t, "POST", envPath(name, "development")+"/on", h.AdminToken, nil).Want(t, 200)
	}
	h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "fz-seg", "constraints": []any{}}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/tags", h.AdminToken, map[string]any{"type": "simple", "value": "fz tag"}).Want(t, 201)
	rng := rand.New(rand.NewPCG(f.seed, 1))
	for round := 0; round < 2; round++ {
		for _, rt := range f.routes {
			method, path, ok := strings.Cut(rt.Pattern, " ")
			if !ok || method != "GET" || (round == 0 && strings.Contains(path, "{")) {
				continue
			}
			q := fuzzRequest{method: "GET", token: f.tokenFor(rt)}
			q.path, q.wildcards = f.fillPath(rng, path, false)
			f.send(rt, q)
		}
	}
}

// toggle turns a few flags of its own on and off until stop closes, so
// that the final check has states and events to compare while the fuzzer
// archives, deletes, drops and imports around them. It returns the number
// of changes acknowledged.
func (f *httpFuzzer) toggle(stop <-chan struct{}) int {
	changes := 0
	post := func(path string, body []byte) int {
		req, _ := http.NewRequest("POST", f.h.URL+path, bytes.NewReader(body))
		req.Header.Set("Authorization", f.h.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := f.client.Do(req)
		if err != nil {
			f.mu.Lock()
			f.fail("toggler: POST %s: %v", path, err)
			f.mu.Unlock()
			return 0
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 500 {
			f.mu.Lock()
			f.fail("toggler: POST %s: %d %s", path, res.StatusCode, b)
			f.mu.Unlock()
		}
		return res.StatusCode
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return changes
		default:
		}
		name := "fz-keep-" + strconv.Itoa(i%4)
		if post(envPath(name, "development")+"/"+[]string{"on", "off"}[i/4%2], nil) == 200 {
			changes++
			continue
		}
		// The fuzzer took something away: put it back.
		post(featuresURL, []byte(`{"name":"`+name+`"}`))
		post("/api/admin/environments", []byte(`{"name":"development","type":"development"}`))
		post(projectPath+"/environments", []byte(`{"environment":"development"}`))
		post("/api/admin/archive/revive/"+name, nil)
	}
}

// run sends n requests from workers goroutines.
func (f *httpFuzzer) run(n, workers int) {
	var next sync.Mutex
	sent := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(f.seed, uint64(w)+2))
			for {
				next.Lock()
				if sent >= n {
					next.Unlock()
					return
				}
				sent++
				next.Unlock()
				if item, ok := f.nextSweep(rng); ok {
					f.send(item.rt, item.q)
					continue
				}
				rt := f.routes[rng.IntN(len(f.routes))]
				if rng.IntN(2) == 0 { // half the time one that takes a body
					rt = f.bodyRoutes[rng.IntN(len(f.bodyRoutes))]
				}
				f.send(rt, f.generate(rng, rt))
			}
		}(w)
	}
	wg.Wait()
}

// sweepItem is one variant of an accepted body.
type sweepItem struct {
	rt server.Route
	q  fuzzRequest
}

// nextSweep takes a queued variant for one request in three.
func (f *httpFuzzer) nextSweep(rng *rand.Rand) (sweepItem, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sweep) == 0 || rng.IntN(3) > 0 {
		return sweepItem{}, false
	}
	i := rng.IntN(len(f.sweep))
	item := f.sweep[i]
	f.sweep[i] = f.sweep[len(f.sweep)-1]
	f.sweep = f.sweep[:len(f.sweep)-1]
	return item, true
}

// sweepsPerRoute is how many accepted bodies of one route are swept.
const sweepsPerRoute = 2

// queueSweep queues variants of a body the route accepted, each with one
// value replaced: the same text with a NUL or broken UTF-8 inside, numbers
// just past the 32- and 64-bit ranges, null, another type. Only that value
// is wrong, so the request gets as far as the database. Names the fuzzer
// made up (fz-…) are made up afresh in each, so that creations do not stop
// at "already exists".
func (f *httpFuzzer) queueSweep(rt server.Route, q fuzzRequest) {
	if f.swept[rt.Pattern] >= sweepsPerRoute || len(f.sweep) > 2000 {
		return
	}
	f.swept[rt.Pattern]++
	var doc any
	dec := json.NewDecoder(bytes.NewReader(q.body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil {
		return
	}
	var leaves [][]any // paths: string keys and int indexes
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(c, append(slices.Clone(path), k))
			}
		case []any:
			for i, c := range x {
				if i < 3 {
					walk(c, append(slices.Clone(path), i))
				}
			}
		default:
			leaves = append(leaves, path)
		}
	}
	walk(doc, nil)
	if len(leaves) > 12 {
		rand.Shuffle(len(leaves), func(i, j int) { leaves[i], leaves[j] = leaves[j], leaves[i] })
		leaves = leaves[:12]
	}
	for _, path := range leaves {
		var replacements []any
		switch old := get(doc, path).(type) {
		case string:
			replacements = []any{old + "\x00", "\xff" + old, json.Number("1")}
		case json.Number:
			replacements = []any{json.Number("2147483648"), json.Number("-2147483649"), json.Number("9223372036854775808"), json.Number("1.5"), "1"}
		case bool:
			replacements = []any{"true", json.Number("1")}
		default:
			replacements = []any{"\x00", json.Number("2147483648")}
		}
		replacements = append(replacements, nil)
		for _, r := range replacements {
			variant := refresh(deepCopy(doc))
			set(variant, path, r)
			v := q
			v.query, v.headers, v.body = "", nil, encodeFuzz(variant)
			f.sweep = append(f.sweep, sweepItem{rt, v})
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = deepCopy(c)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, c := range x {
			a[i] = deepCopy(c)
		}
		return a
	}
	return v
}

// refresh replaces the names the fuzzer made up with new ones.
func refresh(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = refresh(c)
		}
	case []any:
		for i, c := range x {
			x[i] = refresh(c)
		}
	case string:
		if strings.HasPrefix(x, "fz-") && len(x) < 12 {
			return "fz-" + strconv.FormatUint(rand.Uint64()%1e6, 36)
		}
	}
	return v
}

func get(v any, path []any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

func set(v any, path []any, val any) {
	if len(path) == 0 {
		return
	}
	parent := get(v, path[:len(path)-1])
	switch k := path[len(path)-1].(type) {
	case string:
		parent.(map[string]any)[k] = val
	case int:
		parent.([]any)[k] = val
	}
}

type fuzzRequest struct {
	method, path, query, token string
	body                       []byte
	contentType                string
	headers                    [][2]string
	wildcards                  map[string]string // the path values, unescaped
}

func (q fuzzRequest) String() string {
	s := q.method + " " + q.path
	if q.query != "" {
		s += "?" + q.query
	}
	if q.body != nil {
		b := q.body
		if len(b) > 300 {
			b = append(b[:300:300], "…"...)
		}
		s += fmt.Sprintf(" (%s, %d bytes) %q", q.contentType, len(q.body), b)
	}
	return s
}

// generate makes one hostile request for a route.
func (f *httpFuzzer) generate(rng *rand.Rand, rt server.Route) fuzzRequest {
	method, path, ok := strings.Cut(rt.Pattern, " ")
	if !ok { // a pattern for every method (the catch-all)
		method = pick(rng, []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "BREW"})
		path = "/" + pick(rng, []string{"api", "api/admin", "api/client", "proxy", "x"}) + "/{x}"
	}
	q := fuzzRequest{method: method, token: f.tokenFor(rt)}
	q.path, q.wildcards = f.fillPath(rng, path, rng.IntN(3) == 0)
	switch rng.IntN(12) {
	case 0:
		q.token = ""
	case 1:
		q.token = pick(rng, []string{f.h.ClientToken, f.h.FrontendToken, f.h.AdminToken, "Bearer " + f.h.AdminToken, "*:*.nope", "user:nope",
			"\xff\xfe", strings.Repeat("x", 5000), "Bearer", "Bearer  ", "default:development.\xc3\x28"})
	}
	if rng.IntN(3) == 0 {
		q.query = f.genQuery(rng)
	}
	if method == "POST" || method == "PUT" || method == "PATCH" || rng.IntN(10) == 0 {
		q.body = f.genBody(rng, rt, path)
		q.contentType = "application/json"
		if rng.IntN(10) == 0 {
			q.contentType = pick(rng, []string{"", "text/plain", "text/yaml", "application/x-www-form-urlencoded", "application/json; charset=latin1",
				"application/merge-patch+json", "application/json\xff", "multipart/form-data; boundary=x"})
		}
	}
	if rng.IntN(8) == 0 {
		q.headers = append(q.headers, [2]string{pick(rng, []string{"X-Request-Id", "If-None-Match", "Origin", "Accept-Encoding", "Unleash-AppName"}),
			pick(rng, []string{"\xff\xfe", "<script>", strings.Repeat("y", 64), strings.Repeat("z", 4000), "W/\"x\"", "*", "gzip;q=2"})})
	}
	return q
}

// tokenFor is the credential a route's surface accepts.
func (f *httpFuzzer) tokenFor(rt server.Route) string {
	switch rt.Surface {
	case "admin":
		return f.h.AdminToken
	case "client":
		return f.h.ClientToken
	case "frontend":
		return f.h.FrontendToken
	}
	return ""
}

// hostileSegments are path values, already escaped as they go in the URL.
var hostileSegments = []string{"", "..", "../", "%2E%2E", "%2F", "a%2Fb", "%2F..%2F", "%00", "a%00b", "%FF", "%C3%28", "%ED%A0%80",
	"%E2%80%AE", "%20", "%0A", "a%3Fb", "a%23b", "%25", "'%3B--", "%F0%9F%98%80", "0", "-1", "2147483648", "9223372036854775808",
	"1e400", "null", "undefined", strings.Repeat("a", 5000), strings.Repeat("%C3%A9", 2500)}

// fillPath replaces the pattern's wildcards with values that worked
// together before (the path values of a request that succeeded), values
// seen in answers, or, when hostile, sometimes with hostile ones. It
// returns the path and the values used (nil when a hostile one was).
func (f *httpFuzzer) fillPath(rng *rand.Rand, pattern string, hostile bool) (string, map[string]string) {
	var b strings.Builder
	used := map[string]string{}
	var known map[string]string
	f.mu.Lock()
	if len(f.bindings) > 0 && rng.IntN(4) > 0 {
		// One of those that fill the most wildcards.
		var best []map[string]string
		most := 0
		for _, b := range f.bindings {
			n := 0
			for name := range b {
				if strings.Contains(pattern, "{"+name+"}") {
					n++
				}
			}
			if n > most {
				best, most = best[:0], n
			}
			if n == most {
				best = append(best, b)
			}
		}
		known = best[rng.IntN(len(best))]
	}
	f.mu.Unlock()
	for rest := pattern; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		b.WriteString(rest[:i])
		name := strings.TrimSuffix(rest[i+1:i+j], "...")
		rest = rest[i+j+1:]
		if hostile && rng.IntN(2) == 0 {
			b.WriteString(pick(rng, hostileSegments))
			used = nil
			continue
		}
		v, ok := known[name]
		if !ok {
			v = f.pathValue(rng, name)
		}
		if used != nil {
			used[name] = v
		}
		b.WriteString(url.PathEscape(v))
	}
	return b.String(), used
}

// pathValue picks a value seen in answers for a path wildcard, by its name
// or a related property name.
func (f *httpFuzzer) pathValue(rng *rand.Rand, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var cands []any
	for _, k := range []string{name, strings.TrimSuffix(name, "Id"), strings.TrimSuffix(name, "Name"), map[bool]string{true: "id", false: "name"}[strings.HasSuffix(name, "Id")], "name", "id"} {
		if vs := f.values[k]; len(vs) > 0 {
			cands = vs
			break
		}
	}
	for tries := 0; tries < 4 && len(cands) > 0; tries++ {
		switch v := cands[rng.IntN(len(cands))].(type) {
		case string:
			if v != "" && len(v) <= 100 {
				return v
			}
		case json.Number:
			return v.String()
		}
	}
	return "fz-" + strconv.Itoa(rng.IntN(5))
}

// queryKeys are parameter names the APIs read.
var queryKeys = []string{"query", "type", "project", "feature", "limit", "offset", "format", "download", "namePrefix", "tag", "environment",
	"from", "to", "keep", "drop", "strategies", "featureToggles", "shouldActivateDisabledStrategies", "inlineSegmentConstraints", "userId",
	"properties[x]", "appName", "sessionId", "remoteAddress", "currentTime", "\xff", "a%00b"}

func (f *httpFuzzer) genQuery(rng *rand.Rand) string {
	var parts []string
	for n := 1 + rng.IntN(3); n > 0; n-- {
		k := pick(rng, queryKeys)
		var v string
		switch rng.IntN(3) {
		case 0:
			v = pick(rng, hostileSegments)
		case 1:
			v = url.QueryEscape(fmt.Sprint(hostileScalar(rng)))
		default:
			v = url.QueryEscape(f.pathValue(rng, k))
		}
		parts = append(parts, url.QueryEscape(k)+"="+v)
	}
	return strings.Join(parts, "&")
}

// genBody makes a body: a known good one mutated, an object of learned
// properties, or something hostile as a whole.
func (f *httpFuzzer) genBody(rng *rand.Rand, rt server.Route, path string) []byte {
	switch r := rng.IntN(20); {
	case r < 9:
		if seed := f.pickSeed(rng, path); seed != nil {
			var v any
			dec := json.NewDecoder(bytes.NewReader(seed))
			dec.UseNumber()
			if dec.Decode(&v) == nil {
				for m := pick(rng, []int{0, 0, 1, 1, 1, 2, 3}); m > 0; m-- {
					v = f.mutate(rng, v, "", 0)
				}
				if _, isObject := v.(map[string]any); isObject && rng.IntN(5) == 0 {
					v = []any{v} // the routes that take a list of them
				}
				return encodeFuzz(v)
			}
		}
		fallthrough
	case r < 15:
		obj := map[string]any{}
		f.mu.Lock()
		req := slices.Clone(f.required[rt.Pattern])
		f.mu.Unlock()
		for _, k := range req {
			obj[k] = f.plausible(rng, k)
		}
		for n := rng.IntN(4); n > 0; n-- {
			k := f.randomKey(rng)
			obj[k] = f.value(rng, k, 0)
		}
		if rng.IntN(6) == 0 {
			return encodeFuzz([]any{obj})
		}
		return encodeFuzz(obj)
	case r < 17:
		return encodeFuzz(f.value(rng, f.randomKey(rng), 0))
	default:
		return hostileDocument(rng)
	}
}

// hostileDocument is a whole body no handler should choke on.
func hostileDocument(rng *rand.Rand) []byte {
	switch rng.IntN(12) {
	case 0:
		return []byte(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
	case 1:
		return []byte(strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000))
	case 2:
		return bytes.Repeat([]byte("x"), 100*1024+10) // over the default body limit
	case 3:
		return []byte(`{"name":"` + strings.Repeat("a", 100*1024) + `"}`)
	case 4:
		return []byte("[" + strings.Repeat(`{"id":"x","sortOrder":1},`, 3000) + "1]")
	case 5:
		return []byte(`{"name":"a` + "\xff\xfe" + `"}`)
	case 6:
		return []byte(`{"a\u0000b":1,"name":"x\u0000"}`)
	case 7:
		return []byte("\xef\xbb\xbf{}") // a byte-order mark
	case 8:
		return []byte(`{"name":"x","name":"y","__proto__":{"admin":true}}`)
	case 9:
		return []byte(`{"a":NaN,"b":Infinity,"c":0x10}`)
	case 10:
		return []byte("")
	default:
		return []byte(pick(rng, []string{"null", "true", "0", `"x"`, "{", "}", "[", "{}", "[]", "{\"a\":}", "\x00", " \n "}))
	}
}

// value makes a value for a property: plausible, hostile or nested.
func (f *httpFuzzer) value(rng *rand.Rand, key string, depth int) any {
	switch r := rng.IntN(10); {
	case r < 4:
		return f.plausible(rng, key)
	case r < 8 || depth > 3:
		return hostileScalar(rng)
	case r < 9:
		arr := []any{}
		for n := rng.IntN(4); n > 0; n-- {
			arr = append(arr, f.value(rng, key, depth+1))
		}
		return arr
	default:
		obj := map[string]any{}
		for n := rng.IntN(4); n > 0; n-- {
			k := f.randomKey(rng)
			obj[k] = f.value(rng, k, depth+1)
		}
		return obj
	}
}

// plausible is a value the server has shown for this property, or a fresh
// URL-friendly name.
func (f *httpFuzzer) plausible(rng *rand.Rand, key string) any {
	f.mu.Lock()
	vs := f.values[key]
	var v any
	if len(vs) > 0 && rng.IntN(4) > 0 {
		v = vs[rng.IntN(len(vs))]
	}
	f.mu.Unlock()
	if v != nil {
		return v
	}
	if rng.IntN(4) == 0 {
		return json.Number(strconv.Itoa(rng.IntN(5)))
	}
	return "fz-" + strconv.FormatUint(rng.Uint64()%1e6, 36)
}

// hostileScalar is a string or number meant to break something.
func hostileScalar(rng *rand.Rand) any {
	if rng.IntN(2) == 0 {
		return json.Number(pick(rng, []string{"2147483648", "-2147483649", "2147483647", "-2147483648", "4294967296", "9223372036854775807",
			"9223372036854775808", "-9223372036854775809", "1e400", "-1e400", "1e-400", "-1", "0", "-0", "1.5", "1E2", "100000000000000000000000000000"}))
	}
	switch rng.IntN(12) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return []any{}
	case 3:
		return map[string]any{}
	}
	return pick(rng, []string{"\x00", "a\x00b", "\xff", "ok\xc3\x28", "\xed\xa0\x80", "\xc0\xaf", strings.Repeat("x", 5000), strings.Repeat("é", 2500),
		"", " ", "../", "..", "%2F", "a/b", "<script>alert(1)</script>", "'; DROP TABLE features; --", "\"", "\\", "\U0001F600", "\u202e",
		"null", "true", "1e400", "2147483648", "-1", "IN", "default", "development", "${jndi:x}", "\r\nX-Injected: 1"})
}

// mutate changes one random place of v; key is the property v is in.
func (f *httpFuzzer) mutate(rng *rand.Rand, v any, key string, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 || rng.IntN(6) == 0 {
			k := f.randomKey(rng)
			x[k] = f.value(rng, k, depth)
			return x
		}
		k := pick(rng, slices.Sorted(maps.Keys(x)))
		switch rng.IntN(16) {
		case 0, 1:
			delete(x, k)
		case 2:
			x[k+pick(rng, []string{"\x00", "\xff"})] = x[k]
			delete(x, k)
		default:
			x[k] = f.mutate(rng, x[k], k, depth+1)
		}
		return x
	case []any:
		if len(x) == 0 || rng.IntN(5) == 0 {
			return append(x, f.value(rng, key, depth))
		}
		i := rng.IntN(len(x))
		x[i] = f.mutate(rng, x[i], key, depth+1)
		return x
	}
	if str, ok := v.(string); ok && rng.IntN(3) == 0 {
		// The same text with a NUL or a broken UTF-8 sequence inside: it
		// passes the checks of free text and reaches the database.
		i := rng.IntN(len(str) + 1)
		return str[:i] + pick(rng, []string{"\x00", "\xff", "\xc3\x28", "\xed\xa0\x80"}) + str[i:]
	}
	if _, ok := v.(json.Number); ok && rng.IntN(2) == 0 {
		return json.Number(pick(rng, boundaryNumbers)) // where a column's range ends
	}
	switch rng.IntN(4) {
	case 0:
		return f.plausible(rng, key)
	case 1:
		return f.value(rng, key, depth)
	}
	return hostileScalar(rng)
}

// boundaryNumbers are just past the ranges of 32- and 64-bit integers.
var boundaryNumbers = []string{"2147483648", "-2147483649", "4294967296", "9223372036854775808", "-9223372036854775809", "1e400", "1.5", "-1"}

func (f *httpFuzzer) randomKey(rng *rand.Rand) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.keys) == 0 || rng.IntN(20) == 0 {
		return pick(rng, []string{"", "\x00", "\xff", strings.Repeat("k", 5000), "__proto__", "constructor"})
	}
	return f.keys[rng.IntN(len(f.keys))]
}

// pickSeed picks a body to mutate: one seen at the route's path, or at its
// parent (the collection a set-sort-order or clone works on), or any.
func (f *httpFuzzer) pickSeed(rng *rand.Rand, path string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	own := f.seeds[path]
	if parent := f.seeds[path[:max(strings.LastIndexByte(path, '/'), 0)]]; len(parent) > 0 && (len(own) == 0 || rng.IntN(3) == 0) {
		own = parent
	}
	if len(own) > 0 && rng.IntN(5) > 0 {
		return own[rng.IntN(len(own))]
	}
	if shared := f.seeds[""]; len(shared) > 0 {
		return shared[rng.IntN(len(shared))]
	}
	return nil
}

func (f *httpFuzzer) addSeed(path string, b []byte) {
	if len(b) > 4096 {
		return
	}
	s := f.seeds[path]
	if len(s) >= 40 {
		s[rand.IntN(len(s))] = b
		return
	}
	f.seeds[path] = append(s, b)
}

// send performs a request and checks the answer.
func (f *httpFuzzer) send(rt server.Route, q fuzzRequest) {
	target := f.h.URL + q.path
	if q.query != "" {
		target += "?" + q.query
	}
	var body io.Reader
	if q.body != nil {
		body = bytes.NewReader(q.body)
	}
	req, err := http.NewRequest(q.method, target, body)
	if err != nil {
		return // not a request any client can send
	}
	if q.token != "" {
		req.Header.Set("Authorization", q.token)
	}
	if q.contentType != "" {
		req.Header.Set("Content-Type", q.contentType)
	}
	for _, hv := range q.headers {
		req.Header.Set(hv[0], hv[1])
	}
	start := time.Now()
	res, err := f.client.Do(req)
	var resBody []byte
	if err == nil {
		if res.StatusCode == 200 && res.Header.Get("Content-Type") == "text/event-stream" {
			resBody, err = readFirstEvent(res.Body) // a stream stays open: its first event is the answer
		} else {
			resBody, err = io.ReadAll(res.Body)
		}
		res.Body.Close()
	}
	took := time.Since(start)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count++
	if err != nil {
		if strings.Contains(err.Error(), "invalid header field") || strings.Contains(err.Error(), "invalid method") {
			return // refused by the client itself
		}
		f.fail("%s: %v after %v", q, err, took.Round(time.Millisecond))
		return
	}
	if f.statuses[rt.Pattern] == nil {
		f.statuses[rt.Pattern] = map[int]int{}
	}
	f.statuses[rt.Pattern][res.StatusCode]++
	f.total[res.StatusCode]++
	if took > fuzzHangLimit {
		f.fail("%s: hung for %v", q, took)
	}
	if res.StatusCode >= 500 {
		f.fail("%s: %d %s", q, res.StatusCode, resBody)
		return
	}
	f.learn(rt, q, res.StatusCode, f.checkAnswer(q, res, resBody))
}

// checkAnswer requires a parseable answer: valid JSON when it says JSON,
// the error body on errors, and header values that are plain text. It
// returns the body, decoded when it came compressed.
func (f *httpFuzzer) checkAnswer(q fuzzRequest, res *http.Response, body []byte) []byte {
	for name, vs := range res.Header {
		for _, v := range vs {
			for i := 0; i < len(v); i++ {
				if c := v[i]; c < 0x20 && c != '\t' || c >= 0x7f {
					f.fail("%s: header %s has byte %#x: %q", q, name, c, v)
					break
				}
			}
		}
	}
	if loc := res.Header.Get("Location"); loc != "" {
		if _, err := url.Parse(loc); err != nil {
			f.fail("%s: Location %q: %v", q, loc, err)
		}
	}
	if enc := res.Header.Get("Content-Encoding"); enc != "" && q.method != "HEAD" {
		// Compressed because the request's Accept-Encoding allowed it.
		if enc != "gzip" {
			f.fail("%s: unexpected Content-Encoding %q", q, enc)
			return body
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			body, err = io.ReadAll(zr)
		}
		if err != nil {
			f.fail("%s: %d gzip answer does not decode: %v", q, res.StatusCode, err)
			return body
		}
	}
	ct := res.Header.Get("Content-Type")
	isJSON := strings.HasPrefix(ct, "application/json")
	if isJSON && q.method != "HEAD" && len(body) > 0 && !json.Valid(body) {
		f.fail("%s: %d answer is not JSON: %q", q, res.StatusCode, body)
		return body
	}
	if res.StatusCode >= 400 && q.method != "HEAD" && res.StatusCode != http.StatusMethodNotAllowed {
		var e struct{ ID, Name, Message, ErrorCode, ErrorDetails string }
		if strings.Contains(q.String(), " /ofrep/") && isJSON && json.Unmarshal(body, &e) == nil && e.ErrorCode != "" && e.ErrorDetails != "" {
			return body // OpenFeature's error shape (internal/ofrep)
		}
		if !isJSON || json.Unmarshal(body, &e) != nil || e.Name == "" || e.Message == "" {
			f.fail("%s: %d without the error body: %s %q", q, res.StatusCode, ct, body)
		}
	}
	return body
}

var propertyInMessage = regexp.MustCompile("`([A-Za-z][A-Za-z0-9_]*)(?:[.\\[`])")

// learn keeps property names and values from an answer, the properties an
// error says are required, and accepted bodies as seeds.
func (f *httpFuzzer) learn(rt server.Route, q fuzzRequest, status int, body []byte) {
	_, template, _ := strings.Cut(rt.Pattern, " ")
	if status >= 200 && status < 300 && q.body != nil && json.Valid(q.body) {
		f.addSeed(template, q.body)
		if q.method != "GET" && q.method != "DELETE" {
			f.queueSweep(rt, q)
		}
	}
	if status >= 200 && status < 300 && len(q.wildcards) > 0 && q.method != "DELETE" {
		f.addBinding(q.wildcards)
	}
	if status == 400 {
		var e struct{ Message string }
		if json.Unmarshal(body, &e) == nil {
			f.lastErr[rt.Pattern] = fmt.Sprintf("%.150s ← %s", e.Message, q)
			for _, m := range propertyInMessage.FindAllStringSubmatch(e.Message, -1) {
				f.addKey(m[1])
				if strings.Contains(e.Message, "required") && !slices.Contains(f.required[rt.Pattern], m[1]) && len(f.required[rt.Pattern]) < 8 {
					f.required[rt.Pattern] = append(f.required[rt.Pattern], m[1])
				}
			}
		}
		return
	}
	if status != 200 && status != 201 {
		return
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return
	}
	f.harvest(template, v, 0)
	if q.method == "GET" && q.wildcards != nil {
		f.bindItems(template, q.wildcards, v, 0)
	}
}

// bindItems learns path values for the routes one level below a
// collection (template + "/{x}"): each object the collection lists gives
// x its property of that name, or its id or name.
func (f *httpFuzzer) bindItems(template string, wildcards map[string]string, v any, depth int) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if i < 10 && depth < 3 {
				f.bindItems(template, wildcards, e, depth+1)
			}
		}
	case map[string]any:
		for _, param := range f.children[template] {
			var val any
			for _, k := range []string{param, strings.TrimSuffix(param, "Id"), "id", "name"} {
				if val = x[k]; val != nil {
					break
				}
			}
			s, ok := val.(string)
			if n, isNumber := val.(json.Number); isNumber {
				s, ok = n.String(), true
			}
			if !ok || s == "" || f.ownCredential(s) {
				continue
			}
			b := map[string]string{param: s}
			for k, v := range wildcards {
				b[k] = v
			}
			f.addBinding(b)
		}
		if depth < 2 {
			for _, child := range x {
				f.bindItems(template, wildcards, child, depth+1)
			}
		}
	}
}

func (f *httpFuzzer) addBinding(b map[string]string) {
	if len(f.bindings) < 500 {
		f.bindings = append(f.bindings, b)
	} else {
		f.bindings[rand.IntN(len(f.bindings))] = b
	}
}

func (f *httpFuzzer) harvest(template string, v any, depth int) {
	switch x := v.(type) {
	case map[string]any:
		if depth <= 2 {
			if b, err := json.Marshal(x); err == nil {
				f.addSeed(template, b)
			}
		}
		for k, child := range x {
			if !identifier(k) {
				continue
			}
			f.addKey(k)
			switch c := child.(type) {
			case string:
				if len(c) <= 64 {
					f.addValue(k, c)
				}
			case json.Number:
				f.addValue(k, c)
			case bool:
				f.addValue(k, c)
			}
			f.harvest(template, child, depth+1)
		}
	case []any:
		for i, child := range x {
			if i < 20 {
				f.harvest(template, child, depth+1)
			}
		}
	}
}

// identifier reports a property name worth learning (not a path or a
// document key of the OpenAPI document).
func identifier(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return k != "" && len(k) <= 40
}

func (f *httpFuzzer) addKey(k string) {
	if len(f.keys) < 2000 && !slices.Contains(f.keys, k) {
		f.keys = append(f.keys, k)
	}
}

// ownCredential reports whether v is one of the harness's tokens, or the
// id the token list gives one (its stored hash): a request that revoked it
// would leave every later request a 401.
func (f *httpFuzzer) ownCredential(v string) bool {
	for _, t := range []string{f.h.AdminToken, f.h.ClientToken, f.h.FrontendToken} {
		if v == t || v == store.HashSecret(t) {
			return true
		}
	}
	return false
}

func (f *httpFuzzer) addValue(k string, v any) {
	vs := f.values[k]
	if slices.Contains(vs, v) || strings.HasPrefix(fmt.Sprint(v), "user:") || f.ownCredential(fmt.Sprint(v)) {
		return // the fuzzer keeps its own credentials
	}
	if len(vs) >= 50 {
		vs[rand.IntN(len(vs))] = v
		return
	}
	f.values[k] = append(vs, v)
}

func (f *httpFuzzer) fail(format string, args ...any) {
	if len(f.failures) < 40 {
		f.failures = append(f.failures, fmt.Sprintf(format, args...))
	}
}

// report logs the counts and fails on every problem found.
func (f *httpFuzzer) report() {
	f.mu.Lock()
	defer f.mu.Unlock()
	codes := make([]int, 0, len(f.total))
	for c := range f.total {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", c, f.total[c]))
	}
	accepted := 0
	for _, rt := range f.routes {
		for c, n := range f.statuses[rt.Pattern] {
			if c >= 200 && c < 300 && n > 0 {
				accepted++
				break
			}
		}
	}
	f.t.Logf("%s: %d requests over %d routes (%d of them answered 2xx at least once); statuses %s",
		f.h.DB.Kind, f.count, len(f.routes), accepted, strings.Join(parts, " "))
	if testing.Verbose() {
		for _, rt := range f.routes {
			f.t.Logf("  %-90s %v\n      %.300s", rt.Pattern, f.statuses[rt.Pattern], f.lastErr[rt.Pattern])
		}
	}
	for _, msg := range f.failures {
		f.t.Error(msg)
	}
	// A fuzzer that only meets 401s and 404s proves nothing: most routes
	// must have accepted something.
	if accepted*2 < len(f.routes) {
		f.t.Errorf("only %d of %d routes ever answered 2xx: the generated requests do not reach the handlers", accepted, len(f.routes))
	}
}

// checkLogs fails on any panic or error the server logged.
func (f *httpFuzzer) checkLogs() {
	for _, line := range strings.Split(f.h.Logs(), "\n") {
		if strings.Contains(line, "panic") || strings.Contains(line, "level=ERROR") {
			f.t.Errorf("server log: %.500s", line)
		}
	}
}

// checkFlagStatesMatchEvents replays the events that set a flag's state in
// an environment — created, revived, on/off, and the removals of flags and
// environments — and compares with the stored states. An import makes the
// states it touches unknown (its events do not carry them).
func checkFlagStatesMatchEvents(t *testing.T, h *servertest.Harness) {
	t.Helper()
	db := h.Store.DB()
	type key struct{ flag, env string }
	const unknown = -1
	want := map[key]int{}           // 0 off, 1 on, unknown
	flagDefault := map[string]int{} // for environments without an entry
	flagProject := map[string]string{}
	rows, err := db.Query(`SELECT type, feature_name, project, environment FROM events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	forget := func(match func(key) bool) {
		for k := range want {
			if match(k) {
				delete(want, k)
			}
		}
	}
	events := 0
	for rows.Next() {
		var typ string
		var flag, project, env sql.NullString
		if err := rows.Scan(&typ, &flag, &project, &env); err != nil {
			t.Fatal(err)
		}
		events++
		fl := flag.String
		switch typ {
		case "feature-created", "feature-revived", "feature-import":
			forget(func(k key) bool { return k.flag == fl })
			flagDefault[fl], flagProject[fl] = 0, project.String
			if typ == "feature-import" {
				flagDefault[fl] = unknown
			}
		case "feature-deleted":
			forget(func(k key) bool { return k.flag == fl })
			delete(flagDefault, fl)
		case "drop-features":
			clear(want)
			clear(flagDefault)
		case "feature-environment-enabled", "feature-environment-disabled":
			want[key{fl, env.String}] = map[bool]int{true: 1, false: 0}[typ == "feature-environment-enabled"]
		case "environment-deleted":
			forget(func(k key) bool { return k.env == env.String })
		case "project-environment-removed":
			forget(func(k key) bool { return k.env == env.String && flagProject[k.flag] == project.String })
		case "environment-import":
			for f := range flagDefault {
				want[key{f, env.String}] = unknown
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	states, err := db.Query(`SELECT feature_name, environment, enabled FROM feature_environments ORDER BY feature_name, environment`)
	if err != nil {
		t.Fatal(err)
	}
	defer states.Close()
	checked := 0
	for states.Next() {
		var k key
		var on bool
		if err := states.Scan(&k.flag, &k.env, &on); err != nil {
			t.Fatal(err)
		}
		w, ok := want[k]
		if !ok {
			w, ok = flagDefault[k.flag]
		}
		if !ok || w == unknown {
			continue
		}
		checked++
		if (w == 1) != on {
			t.Errorf("flag %q in %q is enabled=%v but its last event says %v", k.flag, k.env, on, w == 1)
		}
	}
	t.Logf("%d events replayed; %d flag states checked against them", events, checked)
	if checked == 0 {
		t.Errorf("no flag state could be checked")
	}
}

// encodeFuzz writes v as JSON, keeping strings byte for byte: invalid UTF-8
// is sent raw and NUL as \u0000 (encoding/json would repair both).
func encodeFuzz(v any) []byte {
	var b bytes.Buffer
	writeFuzzJSON(&b, v)
	return b.Bytes()
}

func writeFuzzJSON(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		b.WriteString(string(x))
	case string:
		b.WriteByte('"')
		for i := 0; i < len(x); i++ {
			switch c := x[i]; {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20:
				fmt.Fprintf(b, `\u%04x`, c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeFuzzJSON(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		sep := byte('{')
		for _, k := range slices.Sorted(maps.Keys(x)) {
			b.WriteByte(sep)
			writeFuzzJSON(b, k)
			b.WriteByte(':')
			writeFuzzJSON(b, x[k])
			sep = ','
		}
		if sep == '{' {
			b.WriteByte('{')
		}
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("encodeFuzz: %T", v))
	}
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// readFirstEvent reads a server-sent event stream up to the end of its
// first event.
func readFirstEvent(r io.Reader) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(out, []byte("\n\n")) {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
