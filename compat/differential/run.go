package differential

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/compat/harness"
)

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
