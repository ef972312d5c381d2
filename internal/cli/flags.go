package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bunting-flags/bunting/internal/config"
	"github.com/bunting-flags/bunting/internal/flagsio"
)

// `bunting flags` keeps a project's flags in one environment in a file
// (git), in the document of the admin API's features-batch export, and
// brings a server in line with it through the features-batch import: one
// transaction, with the same checks and events as the admin API's own
// routes.

// Exit codes of `bunting flags diff`: no changes, changes, an error.
const (
	exitNoChanges = 0
	exitChanges   = 2
	exitError     = 1
	// exitUsage is a flags command that does not exist (as for bunting's
	// own commands).
	exitUsage = 2
)

// flagsConfig is the configuration of the flags subcommands.
type flagsConfig struct {
	URL, Token           string
	Project, Environment string
	File                 string
	Prune                bool
}

// Options is the option table of `bunting flags` (docs/configuration.md
// is generated from it).
func (c *flagsConfig) Options() []config.Option {
	return []config.Option{
		{Name: "url", Env: []string{"BUNTING_URL"}, Flag: "url", Default: "http://localhost:4242", Usage: "the Bunting server's address", Value: config.NonEmpty(&c.URL)},
		{Name: "token", Env: []string{"BUNTING_API_TOKEN"}, Flag: "token", Shown: "— (required)", Usage: "an admin API token or a personal access token (import checks each change's permission)", Value: config.String(&c.Token)},
		{Name: "project", Env: []string{"BUNTING_PROJECT"}, Flag: "project", Default: "default", Usage: "the project the file describes", Value: config.NonEmpty(&c.Project)},
		{Name: "environment", Env: []string{"BUNTING_ENVIRONMENT"}, Flag: "environment", Default: "development", Usage: "the environment the file describes", Value: config.NonEmpty(&c.Environment)},
		{Name: "file", Flag: "f", Shown: "— (diff, apply: required; export: standard output)", Usage: "the flags file: YAML when it ends in .yaml or .yml, else JSON (export also takes -o)", Value: config.String(&c.File)},
		{Name: "prune", Flag: "prune", Default: "false", Usage: "diff, apply: archive the project's flags the file does not list", Value: config.Bool(&c.Prune)},
	}
}

// runFlags dispatches `bunting flags export|diff|apply`; it returns the
// exit code.
func runFlags(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		flagsUsage(stderr)
		return exitUsage
	}
	sub, rest := args[0], args[1:]
	if sub != "export" && sub != "diff" && sub != "apply" {
		fmt.Fprintf(stderr, "bunting: unknown flags command %q\n\n", sub)
		flagsUsage(stderr)
		return exitUsage
	}
	var c flagsConfig
	opts := c.Options()
	config.Defaults(opts)
	var out string
	name := "bunting flags " + sub
	fs := config.FlagSet(name, opts, stderr)
	if sub == "export" {
		fs.StringVar(&out, "o", "", "the file to write (same as -f)")
	}
	err := config.FromEnv(opts, env)
	if err == nil {
		err = fs.Parse(rest)
		if err == nil && fs.NArg() > 0 {
			err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil && out != "" {
		c.File = out
	}
	if err == nil && c.Token == "" {
		err = errors.New("a token is needed: set BUNTING_API_TOKEN or -token")
	}
	if err == nil && sub != "export" && c.File == "" {
		err = fmt.Errorf("%s needs -f FILE", name)
	}
	if err != nil {
		fmt.Fprintln(stderr, "bunting:", err)
		return exitError
	}
	cl := &flagsClient{base: strings.TrimRight(c.URL, "/"), token: c.Token, http: &http.Client{Timeout: 60 * time.Second}}
	switch sub {
	case "export":
		err = flagsExport(ctx, cl, c, stdout)
	case "diff", "apply":
		var changes bool
		changes, err = flagsPlan(ctx, cl, c, sub == "apply", stdout)
		if err == nil && changes && sub == "diff" {
			return exitChanges
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "bunting:", err)
		return exitError
	}
	return exitNoChanges
}

func flagsUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: bunting flags <command> [flags]

Commands:
  export   write a project's flags in one environment to a file (-o FILE) or standard output
  diff     show what applying a file (-f FILE) would create, change and archive;
           exit code 0: no changes, 2: changes, 1: an error
  apply    make the server match the file (-f FILE), all in one transaction;
           -prune archives the project's flags the file does not list

Run "bunting flags <command> -h" for the flags. The server and token come from
-url and -token, or BUNTING_URL and BUNTING_API_TOKEN.
`)
}

// flagsClient calls the admin API.
type flagsClient struct {
	base, token string
	http        *http.Client
}

// post sends body as JSON and decodes a 200 answer into out (when not
// nil); another status is an error carrying the server's message.
func (c *flagsClient) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", c.token)
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		var e struct{ Name, Message string }
		hint := ""
		if res.StatusCode == http.StatusRequestEntityTooLarge {
			hint = " (the file is larger than the server's IMPORT_BODY_LIMIT allows: raise it, see docs/flags-as-code.md)"
		}
		if json.Unmarshal(data, &e) == nil && e.Message != "" {
			return fmt.Errorf("%s: %d %s: %s%s", path, res.StatusCode, e.Name, e.Message, hint)
		}
		return fmt.Errorf("%s: %s", path, res.Status)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: the answer is not the expected JSON: %w", path, err)
	}
	return nil
}

func (c *flagsClient) export(ctx context.Context, project, env string) (flagsio.Document, error) {
	var doc flagsio.Document
	err := c.post(ctx, "/api/admin/features-batch/export", flagsio.ExportQuery{Project: project, Environment: env}, &doc)
	return doc, err
}

// flagsExport writes the project's flags. Strategy ids are left out: the
// import gives strategies new ids, and a file in git should not change
// when nothing but ids did.
func flagsExport(ctx context.Context, cl *flagsClient, c flagsConfig, stdout io.Writer) error {
	doc, err := cl.export(ctx, c.Project, c.Environment)
	if err != nil {
		return err
	}
	for i := range doc.FeatureStrategies {
		doc.FeatureStrategies[i].ID = ""
	}
	b, err := encodeFlagsFile(c.File, doc)
	if err != nil {
		return err
	}
	if c.File == "" || c.File == "-" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(c.File, b, 0o644)
}

func isYAMLFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// encodeFlagsFile writes the document as JSON, or as YAML with the same
// property names for a .yaml/.yml file.
func encodeFlagsFile(name string, doc flagsio.Document) ([]byte, error) {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil || !isYAMLFile(name) {
		return append(b, '\n'), err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	return yaml.Marshal(generic)
}

// readFlagsFile reads a JSON or YAML flags file.
func readFlagsFile(name string) (flagsio.Document, error) {
	var doc flagsio.Document
	raw, err := os.ReadFile(name)
	if err != nil {
		return doc, err
	}
	if isYAMLFile(name) {
		var generic any
		if err := yaml.Unmarshal(raw, &generic); err != nil {
			return doc, fmt.Errorf("%s is not valid YAML: %w", name, err)
		}
		if raw, err = json.Marshal(generic); err != nil {
			return doc, fmt.Errorf("%s: %w", name, err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil {
		return doc, fmt.Errorf("%s is not a flags document: %w", name, err)
	}
	return doc, nil
}

// flagsPlan compares the file with the server and prints the plan; with
// apply it then imports the file (when anything changes). It reports
// whether anything changes.
func flagsPlan(ctx context.Context, cl *flagsClient, c flagsConfig, apply bool, stdout io.Writer) (bool, error) {
	want, err := readFlagsFile(c.File)
	if err != nil {
		return false, err
	}
	req := flagsio.ImportRequest{Project: c.Project, Environment: c.Environment, Data: &want}
	var v flagsio.Validation
	if err := cl.post(ctx, "/api/admin/features-batch/validate", req, &v); err != nil {
		return false, err
	}
	// Errors stop both; missing permissions only stop apply, so that a
	// read-only token can check in CI that the server matches the file.
	refusals := v.Errors
	if apply {
		refusals = append(refusals, v.Permissions...)
	}
	if len(refusals) > 0 {
		var b strings.Builder
		for _, m := range refusals {
			fmt.Fprintf(&b, "\n  %s %s", m.Message, strings.Join(m.AffectedItems, ", "))
		}
		return false, fmt.Errorf("the server would refuse %s:%s", c.File, b.String())
	}
	have, err := cl.export(ctx, c.Project, c.Environment)
	if err != nil {
		return false, err
	}
	p := plan(have, want, c.Prune)
	p.print(stdout, c)
	for _, m := range v.Permissions {
		if p.changes() {
			fmt.Fprintf(stdout, "Applying it needs permissions this token lacks: %s\n", strings.Join(m.AffectedItems, ", "))
		}
	}
	if !p.changes() || !apply {
		return p.changes(), nil
	}
	path := "/api/admin/features-batch/import"
	if c.Prune {
		path += "?" + url.Values{"prune": {"true"}}.Encode()
	}
	if err := cl.post(ctx, path, req, nil); err != nil {
		return true, err
	}
	fmt.Fprintln(stdout, "Applied.")
	return true, nil
}

// flagPlan is what happens to the flags: created, changed (with what
// changes), archived, and left alone though the file lacks them.
type flagPlan struct {
	create, archive, untouched []string
	change                     map[string][]string
}

func (p flagPlan) changes() bool {
	return len(p.create)+len(p.archive)+len(p.change) > 0
}

func (p flagPlan) print(w io.Writer, c flagsConfig) {
	for _, f := range p.create {
		fmt.Fprintf(w, "+ create  %s\n", f)
	}
	names := make([]string, 0, len(p.change))
	for f := range p.change {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		fmt.Fprintf(w, "~ change  %s (%s)\n", f, strings.Join(p.change[f], ", "))
	}
	for _, f := range p.archive {
		fmt.Fprintf(w, "- archive %s\n", f)
	}
	for _, f := range p.untouched {
		fmt.Fprintf(w, "  keep    %s (not in the file; -prune archives it)\n", f)
	}
	if !p.changes() {
		fmt.Fprintf(w, "No changes: project %s in %s matches %s.\n", c.Project, c.Environment, c.File)
		return
	}
	fmt.Fprintf(w, "Plan for project %s in %s: %d to create, %d to change, %d to archive.\n", c.Project, c.Environment, len(p.create), len(p.change), len(p.archive))
}

// plan compares each flag's parts in the server's export (have) and the
// file (want).
func plan(have, want flagsio.Document, prune bool) flagPlan {
	p := flagPlan{change: map[string][]string{}}
	hv, wv := flagViews(have), flagViews(want)
	for _, f := range want.Features {
		h, ok := hv[f.Name]
		if !ok {
			p.create = appendOnce(p.create, f.Name)
			continue
		}
		w := wv[f.Name]
		for _, part := range []string{"metadata", "strategies", "enabled", "variants", "tags", "dependencies"} {
			if !bytes.Equal(h[part], w[part]) {
				p.change[f.Name] = append(p.change[f.Name], part)
			}
		}
	}
	for _, f := range have.Features {
		if _, ok := wv[f.Name]; ok {
			continue
		}
		if prune {
			p.archive = append(p.archive, f.Name)
		} else {
			p.untouched = append(p.untouched, f.Name)
		}
	}
	return p
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// flagViews is each flag's parts as comparable JSON: segments by name,
// strategies without ids in their order, tags sorted.
func flagViews(doc flagsio.Document) map[string]map[string][]byte {
	segName := map[int]string{}
	for _, s := range doc.Segments {
		segName[s.ID] = s.Name
	}
	enc := func(v any) []byte { b, _ := json.Marshal(v); return b }
	views := map[string]map[string][]byte{}
	for _, f := range doc.Features {
		typ := f.Type
		if typ == "" {
			typ = "release"
		}
		desc := ""
		if f.Description != nil {
			desc = *f.Description
		}
		views[f.Name] = map[string][]byte{"metadata": enc([]any{typ, desc, f.Stale, f.ImpressionData})}
	}
	type strategy struct {
		Name, Title          string
		Disabled             bool
		Parameters           map[string]string
		Constraints, Variant any
		Segments             []string
	}
	strategies := map[string][]strategy{}
	ordered := slices.Clone(doc.FeatureStrategies)
	slices.SortStableFunc(ordered, func(a, b flagsio.Strategy) int {
		if a.SortOrder == nil || b.SortOrder == nil {
			return 0
		}
		return int(*a.SortOrder) - int(*b.SortOrder)
	})
	for _, s := range ordered {
		var segs []string
		for _, id := range s.Segments {
			segs = append(segs, segName[id])
		}
		title := ""
		if s.Title != nil {
			title = *s.Title
		}
		var variants, constraints []json.RawMessage
		for _, v := range s.Variants {
			variants = append(variants, enc(v.Variant))
		}
		for _, c := range s.Constraints {
			constraints = append(constraints, enc(c.Constraint))
		}
		params := map[string]string(s.Parameters)
		if params == nil {
			params = map[string]string{}
		}
		strategies[s.FeatureName] = append(strategies[s.FeatureName], strategy{Name: s.Name, Title: title, Disabled: s.Disabled,
			Parameters: params, Constraints: constraints, Variant: variants, Segments: segs})
	}
	tags := map[string][]string{}
	for _, t := range doc.FeatureTags {
		tags[t.FeatureName] = append(tags[t.FeatureName], t.TagType+":"+t.TagValue)
	}
	deps := map[string]any{}
	for _, d := range doc.Dependencies {
		if len(d.Dependencies) > 0 {
			deps[d.Feature] = d.Dependencies
		}
	}
	envs := map[string]flagsio.FeatureEnv{}
	for _, e := range doc.FeatureEnvironments {
		name := e.FeatureName
		if name == "" {
			name = e.Name
		}
		envs[name] = e
	}
	for name, v := range views {
		v["strategies"] = enc(strategies[name])
		t := tags[name]
		slices.Sort(t)
		v["tags"] = enc(t)
		v["dependencies"] = enc(deps[name])
		e := envs[name]
		v["enabled"] = enc(e.Enabled)
		var variants []json.RawMessage
		for _, x := range e.Variants {
			variants = append(variants, enc(x.Variant))
		}
		v["variants"] = enc(variants)
	}
	return views
}
