package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// Tokens the benchmark gives `bunting server` through INIT_*_API_TOKENS.
const (
	serverAdminToken  = "*:*.loadtest-admin-secret"
	serverClientToken = "default:development.loadtest-client-secret"
	serverEnvironment = "development"
	serverProject     = "default"
)

// startServer runs `bunting server` on SQLite in dir (or on the database
// an extra DATABASE_URL=… names) and waits for /health; extra holds more
// VAR=value settings.
func startServer(bin, dir string, extra ...string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "server")
	cmd.Env = append(minimalEnv(),
		"PORT="+strconv.Itoa(port),
		"DATABASE_PATH="+filepath.Join(dir, "bunting.db"),
		"INIT_ADMIN_API_TOKENS="+serverAdminToken,
		"INIT_CLIENT_API_TOKENS="+serverClientToken,
		"LOG_LEVEL=error",
		"TMPDIR="+dir,
	)
	cmd.Env = append(cmd.Env, extra...)
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), logs: logs}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + p.addr + "/health")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("bunting server did not become healthy: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// adminClient drives the server's Unleash-compatible admin API.
type adminClient struct {
	base string
	http *http.Client
}

// call sends a JSON body and decodes a JSON answer into out (when not nil).
func (a *adminClient) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", serverAdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// seed creates the payload's segments and flags (strategies, variants,
// dependencies, enabled state) through the admin API, the way an operator
// would, in the development environment of the default project.
func seed(addr string, cf *engine.ClientFeatures) error {
	a := &adminClient{base: "http://" + addr, http: &http.Client{Timeout: 30 * time.Second}}
	segmentIDs := make(map[int]int, len(cf.Segments))
	for _, s := range cf.Segments {
		var created struct {
			ID int `json:"id"`
		}
		if err := a.call("POST", "/api/admin/segments", map[string]any{"name": s.Name, "constraints": s.Constraints}, &created); err != nil {
			return err
		}
		segmentIDs[s.ID] = created.ID
	}
	jobs := make(chan engine.Feature)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for f := range jobs {
				if err := seedFeature(a, f, segmentIDs); err != nil {
					errs <- err
					for range jobs { // drain
					}
					return
				}
			}
		})
	}
	for _, f := range cf.Features {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := errors.Join(collect(errs)...); err != nil {
		return err
	}
	for _, f := range cf.Features {
		for _, d := range f.Dependencies {
			if err := a.call("POST", featurePath(f.Name)+"/dependencies", d, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func collect(errs <-chan error) []error {
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}

func featurePath(name string) string {
	return "/api/admin/projects/" + serverProject + "/features/" + url.PathEscape(name)
}

// seedFeature creates one flag with its strategies and variants.
func seedFeature(a *adminClient, f engine.Feature, segmentIDs map[int]int) error {
	create := map[string]any{"name": f.Name, "type": f.Type, "impressionData": f.ImpressionData}
	if f.Description != nil {
		create["description"] = *f.Description
	}
	if err := a.call("POST", "/api/admin/projects/"+serverProject+"/features", create, nil); err != nil {
		return err
	}
	env := featurePath(f.Name) + "/environments/" + serverEnvironment
	for _, s := range f.Strategies {
		segments := make([]int, 0, len(s.Segments))
		for _, id := range s.Segments {
			segments = append(segments, segmentIDs[id])
		}
		body := map[string]any{"name": s.Name, "parameters": s.Parameters, "constraints": s.Constraints,
			"segments": segments, "variants": s.Variants, "disabled": s.Disabled}
		if err := a.call("POST", env+"/strategies", body, nil); err != nil {
			return err
		}
	}
	if len(f.Variants) > 0 {
		if err := a.call("PUT", env+"/variants", f.Variants, nil); err != nil {
			return err
		}
	}
	if f.Enabled {
		return a.call("POST", env+"/on", nil, nil)
	}
	return nil
}

// serverScenarios are the issues' client-features figures: the full
// response, the 304 answer to a matching If-None-Match, and the full
// response gzipped (against a baseline replaying the same gzip bytes).
func serverScenarios(addr string) ([]scenario, error) {
	auth := map[string]string{"Authorization": serverClientToken}
	full := request{method: "GET", target: "/api/client/features", header: auth}
	first, err := fetch(addr, full)
	if err != nil {
		return nil, err
	}
	etag := first.Header.Get("ETag")
	if first.Status != http.StatusOK || etag == "" {
		return nil, fmt.Errorf("GET /api/client/features: status %d, ETag %q", first.Status, etag)
	}
	notModified := request{method: "GET", target: "/api/client/features", status: http.StatusNotModified,
		header: map[string]string{"Authorization": serverClientToken, "If-None-Match": etag}}
	return []scenario{
		{name: "server: GET /api/client/features (full)", target: 0.6, requests: []request{full}},
		{name: "server: GET /api/client/features (304)", target: 0.8, requests: []request{notModified}},
		{name: "server: GET /api/client/features (full, gzip)", target: 0.8, requests: gzipped([]request{full})},
	}, nil
}

// runServerBenchmark seeds a server with n generated flags and compares
// its client-features endpoint with a baseline.
func runServerBenchmark(cfg config, bin, dir string, n int, rep *report, progress io.Writer) error {
	srvDir := filepath.Join(dir, "server")
	if err := mkdir(srvDir); err != nil {
		return err
	}
	srv, err := startServer(bin, srvDir)
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Fprintf(progress, "seeding the server with %d flags…\n", n)
	if err := seed(srv.addr, serverCompatible(enginetest.Generate(n, cfg.seed))); err != nil {
		return fmt.Errorf("seeding: %w\n%s", err, srv.logs)
	}
	scs, err := serverScenarios(srv.addr)
	if err != nil {
		return err
	}
	return compare(cfg, dir, fmt.Sprintf("server-%d", n), n, srv, scs, rep, progress)
}

// serverCompatible rewrites what the admin API (like Unleash 8's) does not
// accept: IN_CIDR, which only SDK-side engines know, becomes IN with the
// same values; the removed gradualRolloutUserId/SessionId strategies become
// the flexibleRollout they were migrated to, and userWithId a default
// strategy with a userId IN constraint, and an inverted REGEX a plain one.
// The payload keeps its size and shape.
func serverCompatible(cf *engine.ClientFeatures) *engine.ClientFeatures {
	fix := func(cs []engine.Constraint) {
		for i := range cs {
			if cs[i].Operator == "IN_CIDR" {
				cs[i].Operator = "IN"
			}
			if cs[i].Operator == "REGEX" {
				cs[i].Inverted = false
			}
		}
	}
	for i := range cf.Segments {
		fix(cf.Segments[i].Constraints)
	}
	for i := range cf.Features {
		for j := range cf.Features[i].Strategies {
			st := &cf.Features[i].Strategies[j]
			fix(st.Constraints)
			if stickiness, ok := map[string]string{"gradualRolloutUserId": "userId", "gradualRolloutSessionId": "sessionId"}[st.Name]; ok {
				st.Name = "flexibleRollout"
				st.Parameters = engine.Parameters{"rollout": st.Parameters["percentage"], "stickiness": stickiness, "groupId": st.Parameters["groupId"]}
			}
			if st.Name == "userWithId" {
				var ids []string
				for _, id := range strings.Split(st.Parameters["userIds"], ",") {
					ids = append(ids, strings.TrimSpace(id))
				}
				st.Name, st.Parameters = "default", engine.Parameters{}
				st.Constraints = append(st.Constraints, engine.Constraint{ContextName: "userId", Operator: "IN", Values: ids})
			}
		}
	}
	return cf
}
