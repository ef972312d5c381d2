package differential

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/bunting-flags/bunting/compat/harness"
)

// Kinds of difference.
const (
	KindStatus   = "status class"
	KindStored   = "stored configuration"
	KindFeatures = "client features"
	KindSDK      = "Node SDK evaluation"
	KindFrontend = "frontend API"
)

// Kinds lists the kinds of difference in report order.
var Kinds = []string{KindStatus, KindStored, KindFeatures, KindSDK, KindFrontend}

// Difference is one way in which Bunting answered otherwise than the
// reference.
type Difference struct {
	Kind string
	// Subject is the flag ("flag f") or segment ("segment 2") concerned,
	// if any.
	Subject string
	// Call is the call after which it appeared, when known.
	Call *Call
	// Follows, when set, is an earlier difference of the same subject this
	// one probably follows from; the report then keeps it short.
	Follows *Difference
	// Detail is a minimal diff.
	Detail string
}

// String describes the difference for a failure message.
func (d *Difference) String() string {
	s := fmt.Sprintf("[%s] %s", d.Kind, d.Subject)
	if d.Call != nil {
		s += ", call " + d.Call.String()
	}
	if f := d.Follows; f != nil {
		first, _, _ := strings.Cut(d.Detail, "\n")
		after := "all calls"
		if f.Call != nil {
			after = fmt.Sprintf("call #%d", f.Call.Index)
		}
		return s + fmt.Sprintf("\n  %s\n  (follows the %s difference after %s)", strings.TrimSpace(first), f.Kind, after)
	}
	return s + "\n" + d.Detail
}

// Report is what one seed's run found.
type Report struct {
	Seed int64
	// Calls is the number of admin calls, Refused how many the reference
	// refused.
	Calls, Refused int
	// FeaturePayloads is the number of client features payloads compared.
	FeaturePayloads int
	// SDKChecks is the number of flag × context pairs compared through the
	// Node SDK (each is an isEnabled and a getVariant), SDKContexts the
	// contexts among them.
	SDKChecks, SDKContexts int
	// FrontendChecks is the number of flag × context pairs compared through
	// the frontend APIs, FrontendContexts the contexts (requests per side).
	FrontendChecks, FrontendContexts int
	// SDKEnabled and FrontendListed count the compared evaluations that
	// were on at the reference (a comparison of only offs proves little).
	SDKEnabled, FrontendListed int
	Differences                []*Difference
	// Notes are observations that are not differences (a call meant to be
	// refused that the reference accepted).
	Notes []string
	// Timings say how long each step took.
	Timings []string
	// Evened counts, per deliberate difference, the frontend comparisons
	// it left out or narrowed to the flag's state.
	Evened map[string]int

	// first is the first difference of each kind and subject.
	first map[[2]string]*Difference
	// refFeatures are the reference's client features, by flag name.
	refFeatures map[string]any
}

// Count is the number of differences of kind.
func (r *Report) Count(kind string) int {
	n := 0
	for _, d := range r.Differences {
		if d.Kind == kind {
			n++
		}
	}
	return n
}

// Summary is a one-line account of the run.
func (r *Report) Summary() string {
	var kinds []string
	for _, k := range Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, r.Count(k)))
	}
	var evened []string
	for _, d := range DeliberateDifferences {
		if n := r.Evened[d.Name]; n > 0 {
			evened = append(evened, fmt.Sprintf("%s %d", d.Name, n))
		}
	}
	return fmt.Sprintf("seed %d: %d calls (%d refused by Unleash), %d client features payloads, %d SDK evaluations (%d contexts, %d on), %d frontend evaluations (%d contexts, %d on; deliberate differences evened out: %s); differences: %s; took %s",
		r.Seed, r.Calls, r.Refused, r.FeaturePayloads, r.SDKChecks, r.SDKContexts, r.SDKEnabled, r.FrontendChecks, r.FrontendContexts, r.FrontendListed,
		cmp.Or(strings.Join(evened, ", "), "none"), strings.Join(kinds, ", "), strings.Join(r.Timings, ", "))
}

// add records a difference that follows the difference follows (nil
// when it is a new one).
func (r *Report) add(kind, subject string, call *Call, follows *Difference, format string, args ...any) *Difference {
	d := &Difference{Kind: kind, Subject: subject, Call: call, Follows: follows, Detail: fmt.Sprintf(format, args...)}
	if r.first == nil {
		r.first = map[[2]string]*Difference{}
	}
	if _, ok := r.first[[2]string{kind, subject}]; !ok && subject != "" {
		r.first[[2]string{kind, subject}] = d
	}
	r.Differences = append(r.Differences, d)
	return d
}

// earlier returns the first difference of one of kinds about one of
// subjects, or nil.
func (r *Report) earlier(kinds []string, subjects ...string) *Difference {
	for _, k := range kinds {
		for _, s := range subjects {
			if d := r.first[[2]string{k, s}]; d != nil && s != "" {
				return d
			}
		}
	}
	return nil
}

// Options size a run.
type Options struct {
	// SDKContexts and FrontendContexts are the numbers of random contexts
	// evaluated through the Node SDK and through the frontend APIs.
	SDKContexts, FrontendContexts int
	// Database is the Bunting server's database (harness.SQLite or
	// harness.Postgres).
	Database string
}

// side is one server a scenario runs on.
type side struct {
	name string
	up   *harness.Upstream
	ids  IDs
}

var httpClient = &http.Client{Timeout: 20 * time.Second}

// do sends one request with the side's admin token.
func (sd *side) do(method, path, body string) (int, []byte, error) {
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, sd.up.BaseURL+path, reader)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", sd.up.AdminToken)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %s %s: %w", sd.name, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// both runs f for the reference and the system under test at once.
func both[T any](ref, sut *side, f func(*side) T) (T, T) {
	var a, b T
	var wg sync.WaitGroup
	wg.Go(func() { a = f(ref) })
	b = f(sut)
	wg.Wait()
	return a, b
}

// RunSeed applies the scenario of seed to the reference (a running
// Unleash, shared by all seeds: scenarios never meet, their names differ)
// and to a fresh Bunting server, and compares them.
func RunSeed(t *testing.T, reference *harness.Upstream, seed int64, opts Options) *Report {
	hostname, _ := os.Hostname()
	if h := os.Getenv("HOSTNAME"); h != "" {
		hostname = h
	}
	s := Generate(seed, hostname)
	r := &Report{Seed: seed, Calls: len(s.Calls), Evened: map[string]int{}}
	start := time.Now()
	lap := func(what string) {
		r.Timings = append(r.Timings, fmt.Sprintf("%s %.1fs", what, time.Since(start).Seconds()))
		start = time.Now()
	}
	ref := &side{name: "unleash", up: reference, ids: IDs{}}
	sut := &side{name: "bunting", up: harness.StartBuntingServer(t, opts.Database), ids: IDs{}}
	lap("Bunting start")
	apply(t, s, ref, sut, r)
	lap("calls")
	compareClientFeatures(t, s, ref, sut, r)
	lap("client features")
	compareSDKs(t, s, ref, sut, opts.SDKContexts, r)
	lap("SDKs")
	compareFrontends(t, s, ref, sut, opts.FrontendContexts, r)
	lap("frontend APIs")
	for _, c := range []struct {
		what    string
		on, all int
	}{{"Node SDK", r.SDKEnabled, r.SDKChecks}, {"frontend API", r.FrontendListed, r.FrontendChecks}} {
		if c.on == 0 || c.on == c.all {
			t.Errorf("seed %d: a degenerate comparison: %d of %d %s evaluations on", seed, c.on, c.all, c.what)
		}
	}
	return r
}

// answer is a side's answer to one request.
type answer struct {
	status int
	body   []byte
	err    error
}

// apply sends every call to both servers, compares the status classes and,
// after each call that changes a flag or a segment, what both store.
func apply(t *testing.T, s *Scenario, ref, sut *side, r *Report) {
	differing := map[string]bool{}
	for i := range s.Calls {
		c := &s.Calls[i]
		a, b := both(ref, sut, func(sd *side) answer { return send(sd, c) })
		for _, x := range []answer{a, b} {
			if x.err != nil {
				t.Fatalf("seed %d, call %s: %v", s.Seed, c, x.err)
			}
		}
		if a.status/100 != 2 {
			r.Refused++
		} else if c.Refused {
			r.Notes = append(r.Notes, fmt.Sprintf("call %s: meant to be refused, Unleash answered %d", c, a.status))
		}
		subject, path := storedSubject(c)
		var status *Difference
		if a.status/100 != b.status/100 {
			status = r.add(KindStatus, subject, c, r.earlier([]string{KindStatus, KindStored}, subject, referred(c)),
				"  unleash %d %s\n  bunting %d %s", a.status, clip(a.body), b.status, clip(b.body))
		}
		if subject == "" || a.status/100 != 2 && b.status/100 != 2 {
			continue // nothing changed on either side
		}
		views, err := readStored(path, ref, sut)
		if err != nil {
			t.Fatalf("seed %d, after call %s: %v", s.Seed, c, err)
		}
		diff := flatDiff(views[0], views[1])
		if diff != "" && !differing[subject] {
			r.add(KindStored, subject, c, status, "%s", diff)
		}
		differing[subject] = diff != ""
	}
}

// referred names the other flag call c refers to (a dependency's parent),
// as a subject.
func referred(c *Call) string {
	if c.Refers == "" {
		return ""
	}
	return "flag " + c.Refers
}

// storedSubject names what call c changes and where to read it back.
func storedSubject(c *Call) (subject, path string) {
	switch {
	case c.Flag != "":
		return "flag " + c.Flag, featurePath(c.Flag)
	case strings.HasPrefix(c.Creates, kindSegment+":"):
		return "segment " + strings.TrimPrefix(c.Creates, kindSegment+":"), "/api/admin/segments/{" + c.Creates + "}"
	case strings.HasPrefix(c.Path, "/api/admin/segments/{"):
		return "segment " + strings.TrimSuffix(strings.TrimPrefix(c.Path, "/api/admin/segments/{"+kindSegment+":"), "}"), c.Path
	}
	return "", ""
}

// send makes call c on one side and records the id its answer defines.
func send(sd *side, c *Call) answer {
	path, body := sd.ids.Resolve(c.Path, c.Body)
	status, data, err := sd.do(c.Method, path, body)
	if c.Creates != "" && status/100 == 2 {
		var created struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(data, &created) == nil && created.ID != nil {
			sd.ids[c.Creates] = idString(created.ID)
		}
	}
	return answer{status, data, err}
}

// readStored reads what both sides store at path, projected onto what
// matters (a 404 becomes {"status": 404}).
func readStored(path string, ref, sut *side) ([2]any, error) {
	type view struct {
		v   any
		err error
	}
	a, b := both(ref, sut, func(sd *side) view {
		p, _ := sd.ids.Resolve(path, "")
		status, data, err := sd.do(http.MethodGet, p, "")
		if err != nil || status != http.StatusOK {
			return view{map[string]any{"status": status}, err}
		}
		var v map[string]any
		if strings.HasPrefix(path, "/api/admin/segments/") {
			v, err = StoredSegment(data)
		} else {
			v, err = StoredFlag(data, sd.ids)
		}
		if err != nil {
			err = fmt.Errorf("%s: GET %s: %w", sd.name, p, err)
		}
		return view{v, err}
	})
	return [2]any{a.v, b.v}, cmp.Or(a.err, b.err)
}

// clip shortens an answer body for a report.
func clip(body []byte) string {
	const limit = 240
	body = bytes.TrimSpace(body)
	if len(body) > limit {
		return string(body[:limit]) + "…"
	}
	return string(body)
}

// FetchClientFeatures fetches GET /api/client/features from up, with
// Unleash-Client-Spec when spec is not empty.
func FetchClientFeatures(up *harness.Upstream, spec string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, up.APIURL()+"/client/features", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", up.ClientToken)
	if spec != "" {
		req.Header.Set("Unleash-Client-Spec", spec)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: GET /api/client/features: status %d, body %s", up.Kind, resp.StatusCode, clip(data))
	}
	return data, err
}

// syncTimeout bounds how long a server's client and frontend APIs may take
// to show the last admin call (Unleash refreshes them on a revision poll).
const syncTimeout = 60 * time.Second

// nudgeEvery is how often waitSynced makes a change on the side it waits
// for: Unleash refreshes its frontend API's flags when its revision
// advances, and refreshes that overlap can leave it a change behind until
// the next one.
const nudgeEvery = 5 * time.Second

// waitSynced waits until check passes for the side, making a change of no
// consequence (a flag of its own switched on or off, outside the
// scenario's flags) every nudgeEvery while it does not.
func waitSynced(t *testing.T, s *Scenario, sd *side, what string, check func() error) {
	t.Helper()
	nudge := s.Prefix + "-nudge"
	deadline, next, on := time.Now().Add(syncTimeout), time.Now().Add(nudgeEvery), false
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("seed %d: %s on %s: not within %s: %v", s.Seed, what, sd.name, syncTimeout, err)
		}
		if time.Now().After(next) {
			if !on {
				_, _, _ = sd.do(http.MethodPost, featuresPath(), mustJSON(map[string]any{"name": nudge}))
			}
			on = !on
			action := map[bool]string{true: "/on", false: "/off"}[on]
			if _, _, err := sd.do(http.MethodPost, envPath(nudge)+action, ""); err != nil {
				t.Fatalf("seed %d: nudge %s: %v", s.Seed, sd.name, err)
			}
			next = time.Now().Add(nudgeEvery)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// compareClientFeatures waits until both client APIs serve the sentinel
// flag (and so every change before it), then compares both client
// features payloads, with and without Unleash-Client-Spec, flag by flag.
func compareClientFeatures(t *testing.T, s *Scenario, ref, sut *side, r *Report) {
	keep := func(name string) bool { return strings.HasPrefix(name, s.Prefix+"-") }
	for _, sd := range []*side{ref, sut} {
		waitSynced(t, s, sd, "the client API serves "+s.Sentinel, func() error {
			data, err := FetchClientFeatures(sd.up, "5.2.0")
			if err == nil && !bytes.Contains(data, []byte(`"`+s.Sentinel+`"`)) {
				err = fmt.Errorf("not yet")
			}
			return err
		})
	}
	for _, spec := range []string{"5.2.0", ""} {
		var views [2]map[string]any
		for i, sd := range []*side{ref, sut} {
			data, err := FetchClientFeatures(sd.up, spec)
			if err == nil {
				views[i], err = ClientFeatures(data, keep, sd.ids)
			}
			if err != nil {
				t.Fatalf("seed %d: %s: %v", s.Seed, sd.name, err)
			}
		}
		r.FeaturePayloads++
		label := "with Unleash-Client-Spec " + spec
		if spec == "" {
			label = "without Unleash-Client-Spec (segments inlined)"
		}
		a, b := featuresByName(views[0]), featuresByName(views[1])
		r.refFeatures = a
		for _, name := range s.Flags {
			if diff := flatDiff(a[name], b[name]); diff != "" {
				r.add(KindFeatures, "flag "+name, lastCallOn(s, name), r.earlier([]string{KindFeatures, KindStored, KindStatus}, "flag "+name),
					"%s:\n%s", label, diff)
			}
		}
		// Which segments a payload lists depends on which strategies use
		// them (compared above, with the segments inlined without the
		// header); the segments both list must be the same.
		segments := func(view map[string]any) map[string]any {
			m := map[string]any{}
			list, _ := view["segments"].([]any)
			for _, sg := range list {
				m[fmt.Sprint(sg.(map[string]any)["id"])] = sg
			}
			delete(view, "segments")
			return m
		}
		sa, sb := segments(views[0]), segments(views[1])
		for id, sg := range sa {
			if other, ok := sb[id]; ok {
				if diff := flatDiff(sg, other); diff != "" {
					r.add(KindFeatures, id, nil, r.earlier([]string{KindStored, KindStatus}, id), "%s, %s:\n%s", label, id, diff)
				}
			}
		}
		if diff := flatDiff(views[0], views[1]); diff != "" {
			r.add(KindFeatures, "", nil, nil, "%s, outside the features:\n%s", label, diff)
		}
	}
}

// featuresByName takes the features out of a ClientFeatures view, by name.
func featuresByName(view map[string]any) map[string]any {
	m := map[string]any{}
	for _, f := range view["features"].([]any) {
		m[fmt.Sprint(f.(map[string]any)["name"])] = f
	}
	delete(view, "features")
	return m
}

// lastCallOn is the last call that changed flag, or nil.
func lastCallOn(s *Scenario, flag string) *Call {
	for i := len(s.Calls) - 1; i >= 0; i-- {
		if s.Calls[i].Flag == flag {
			return &s.Calls[i]
		}
	}
	return nil
}

// sdkBatch bounds the checks sent to a driver in one command.
const sdkBatch = 2000

// perFlag keeps the first evaluation difference of each flag and counts
// the contexts in which the flag differs.
type perFlag struct {
	first  map[string]*Difference
	counts map[string]int
}

func (p *perFlag) add(r *Report, kind string, s *Scenario, flag string, format string, args ...any) {
	if p.first == nil {
		p.first, p.counts = map[string]*Difference{}, map[string]int{}
	}
	if p.counts[flag]++; p.counts[flag] == 1 {
		// An evaluation differs because of the flag's or a parent's
		// client features (the same SDK reads both), or else because the
		// two servers evaluate alike configurations otherwise.
		subjects := []string{"flag " + flag}
		for _, parent := range s.Parents[flag] {
			subjects = append(subjects, "flag "+parent)
		}
		d := r.add(kind, "flag "+flag, lastCallOn(s, flag), r.earlier([]string{KindFeatures}, subjects...), format, args...)
		if d.Follows == nil {
			// Nothing else differs: show the configuration evaluated.
			data, _ := json.Marshal(r.refFeatures[flag])
			d.Detail += "\n  the flag as Unleash serves it: " + string(data)
		}
		p.first[flag] = d
	}
}

// finish appends the counts to the details.
func (p *perFlag) finish(contexts int) {
	for flag, d := range p.first {
		d.Detail += fmt.Sprintf("\n  (%d of %d contexts differ for this flag)", p.counts[flag], contexts)
	}
}

// compareSDKs evaluates every scenario flag in n random contexts with one
// Node SDK reading each server, and compares isEnabled and getVariant.
func compareSDKs(t *testing.T, s *Scenario, ref, sut *side, n int, r *Report) {
	var sdks [2]*harness.NodeDriver
	for i, sd := range []*side{ref, sut} {
		sdks[i] = harness.StartQuietNodeSDK(t, sd.up.ClientEndpoint(), "differential-sdk")
		waitSynced(t, s, sd, "the Node SDK sees "+s.Sentinel, func() error {
			got, err := sdks[i].Evaluate([]harness.Check{{Flag: s.Sentinel, Context: harness.Context{SessionID: "s"}}})
			if err == nil && (len(got) != 1 || !got[0].Enabled) {
				err = fmt.Errorf("answer %+v", got)
			}
			return err
		})
	}
	contexts := Contexts(s.Seed, n, false)
	var checks []harness.Check
	for _, c := range contexts {
		for _, flag := range s.Flags {
			checks = append(checks, harness.Check{Flag: flag, Context: c})
		}
	}
	r.SDKContexts = len(contexts)
	var diffs perFlag
	for start := 0; start < len(checks); start += sdkBatch {
		batch := checks[start:min(start+sdkBatch, len(checks))]
		var answers [2][]harness.Evaluation
		for i, sdk := range sdks {
			var err error
			if answers[i], err = sdk.EvaluateSeeded(batch); err != nil {
				t.Fatalf("seed %d: %v", s.Seed, err)
			}
		}
		for j, check := range batch {
			r.SDKChecks++
			if answers[0][j].Enabled {
				r.SDKEnabled++
			}
			a, b := describeEvaluation(answers[0][j]), describeEvaluation(answers[1][j])
			if a != b {
				diffs.add(r, KindSDK, s, check.Flag, "  context %s\n  unleash %s\n  bunting %s", describeContext(check.Context), a, b)
			}
		}
	}
	diffs.finish(len(contexts))
}

// frontendDeliberate says which deliberate difference, if any, may make
// the frontend APIs answer differently for flag in context c, judging by
// the flag and its parents as the reference serves them to SDKs (segments
// inlined), and whether it only concerns the variant: a dependency that
// requires a parent that is off to be off (ParentOff), a remoteAddress
// strategy whose IPs list starts or ends with a space (OuterSpaceIPs), a
// currentTime in the context with DATE_* constraints (CurrentTime), or
// strategy variants without a groupId parameter (StrategyVariantGroup:
// only the variant, unless a dependency asks for the parent's variant).
func frontendDeliberate(features map[string]any, flag string, c harness.Context) (d *Deliberate, variantOnly bool) {
	f, _ := features[flag].(map[string]any)
	deps, _ := f["dependencies"].([]any)
	type related struct {
		feature  map[string]any
		variants bool // whether its variant decides the flag's state
	}
	all := []related{{f, false}}
	for _, d := range deps {
		dep := d.(map[string]any)
		parent, _ := features[fmt.Sprint(dep["feature"])].(map[string]any)
		if dep["enabled"] == false && parent != nil && parent["enabled"] == false {
			return &ParentOff, false
		}
		wanted, _ := dep["variants"].([]any)
		all = append(all, related{parent, len(wanted) > 0})
	}
	for _, r := range all {
		strategies, _ := r.feature["strategies"].([]any)
		for _, st := range strategies {
			strategy := st.(map[string]any)
			params, _ := strategy["parameters"].(map[string]any)
			if ips, _ := params["IPs"].(string); strategy["name"] == "remoteAddress" && paddedEntryMatches(ips, c) {
				return &OuterSpaceIPs, false
			}
			constraints, _ := strategy["constraints"].([]any)
			for _, con := range constraints {
				if c.CurrentTime != "" && strings.HasPrefix(fmt.Sprint(con.(map[string]any)["operator"]), "DATE_") {
					return &CurrentTime, false
				}
			}
		}
	}
	for i, r := range all {
		strategies, _ := r.feature["strategies"].([]any)
		for _, st := range strategies {
			strategy := st.(map[string]any)
			params, _ := strategy["parameters"].(map[string]any)
			variants, _ := strategy["variants"].([]any)
			if _, ok := params["groupId"]; !ok && len(variants) > 0 && (i == 0 || r.variants) {
				return &StrategyVariantGroup, i == 0
			}
		}
	}
	return nil, false
}

// withoutVariant drops the variant from a frontend toggle's description.
func withoutVariant(toggle string) string {
	before, _, _ := strings.Cut(toggle, " variant=")
	return before
}

// paddedEntryMatches says whether the first or last entry of a
// remoteAddress strategy's IPs list has a space outside it (kept by the
// Node SDK) and would, trimmed, match the context's address (the caller's,
// 127.0.0.1, when the context has none).
func paddedEntryMatches(ips string, c harness.Context) bool {
	addr, err := netip.ParseAddr(cmp.Or(c.RemoteAddress, "127.0.0.1"))
	if err != nil {
		return false
	}
	entries := strings.Split(ips, ",")
	for i, e := range entries {
		outer := i == 0 && strings.TrimLeftFunc(e, unicode.IsSpace) != e ||
			i == len(entries)-1 && strings.TrimRightFunc(e, unicode.IsSpace) != e
		if !outer {
			continue
		}
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil && p.Contains(addr) {
			return true
		}
		if a, err := netip.ParseAddr(e); err == nil && a == addr {
			return true
		}
	}
	return false
}

func describeEvaluation(e harness.Evaluation) string {
	return fmt.Sprintf("enabled=%v variant=%s", e.Enabled, describeVariant(&e.Variant))
}

func describeVariant(v *harness.ProxyVariant) string {
	if v == nil {
		return "none"
	}
	s := fmt.Sprintf("%s/%v", v.Name, v.Enabled)
	if v.Payload != nil {
		s += fmt.Sprintf(" payload %s:%s", v.Payload.Type, v.Payload.Value)
	}
	return s
}

func describeContext(c harness.Context) string {
	data, _ := json.Marshal(c)
	return string(data)
}

// compareFrontends asks both frontend APIs for n random complete contexts
// (GET for half, POST for the other half) and compares the scenario's
// flags in the answers.
func compareFrontends(t *testing.T, s *Scenario, ref, sut *side, n int, r *Report) {
	var clients [2]*harness.ProxyClient
	for i, sd := range []*side{ref, sut} {
		clients[i] = harness.NewProxyClient(sd.up.BaseURL+"/api/frontend", sd.up.FrontendToken)
		client := clients[i]
		waitSynced(t, s, sd, "the frontend API lists "+s.Sentinel, func() error {
			toggles, err := client.Get(harness.Context{UserID: "u1", SessionID: "s1"})
			if err == nil && !slices.ContainsFunc(toggles, func(tg harness.ProxyToggle) bool { return tg.Name == s.Sentinel && tg.Enabled }) {
				err = fmt.Errorf("not listed yet")
			}
			return err
		})
	}
	flags := map[string]bool{}
	for _, f := range s.Flags {
		flags[f] = true
	}
	var diffs perFlag
	contexts := Contexts(s.Seed+1_000_003, n, true)
	for i, c := range contexts {
		method := http.MethodGet
		if i%2 == 1 {
			method = http.MethodPost
		}
		type view struct {
			toggles map[string]string
			err     error
		}
		a, b := both(ref, sut, func(sd *side) view {
			client := clients[0]
			if sd == sut {
				client = clients[1]
			}
			var toggles []harness.ProxyToggle
			var err error
			if method == http.MethodGet {
				toggles, err = client.Get(c)
			} else {
				toggles, err = client.Post(c, nil)
			}
			out := map[string]string{}
			for _, tg := range toggles {
				if flags[tg.Name] {
					impression := "absent"
					if tg.ImpressionData != nil {
						impression = fmt.Sprint(*tg.ImpressionData)
					}
					out[tg.Name] = fmt.Sprintf("enabled=%v impressionData=%s variant=%s", tg.Enabled, impression, describeVariant(tg.Variant))
				}
			}
			return view{out, err}
		})
		if err := cmp.Or(a.err, b.err); err != nil {
			t.Fatalf("seed %d: frontend API: %v", s.Seed, err)
		}
		r.FrontendContexts++
		for _, f := range s.Flags {
			x, y := cmp.Or(a.toggles[f], "not listed"), cmp.Or(b.toggles[f], "not listed")
			if d, variantOnly := frontendDeliberate(r.refFeatures, f, c); d != nil {
				r.Evened[d.Name]++
				if !variantOnly {
					continue
				}
				x, y = withoutVariant(x), withoutVariant(y)
			}
			r.FrontendChecks++
			if a.toggles[f] != "" {
				r.FrontendListed++
			}
			if x != y {
				diffs.add(r, KindFrontend, s, f, "  %s /api/frontend, context %s\n  unleash %s\n  bunting %s", method, describeContext(c), x, y)
			}
		}
	}
	diffs.finish(len(contexts))
}
