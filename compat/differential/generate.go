package differential

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
)

// Scenario is the sequence of admin calls generated from one seed.
type Scenario struct {
	Seed int64
	// Prefix starts the name of every flag, segment and strategy type the
	// scenario creates, so that scenarios share a server without meeting.
	Prefix string
	Calls  []Call
	// Flags are the flags the scenario creates, in creation order.
	Flags []string
	// Sentinel is the scenario's last flag, on for everyone: a client that
	// sees it has seen every earlier call.
	Sentinel string
	// Parents are the flags each flag was ever made to depend on.
	Parents map[string][]string
}

// Project and Environment the scenarios configure (Unleash's open-source
// edition has only the default project).
const (
	Project     = "default"
	Environment = "development"
)

// Generate returns the scenario of seed. hostname is the machine's host
// name, which applicationHostname strategies sometimes list.
func Generate(seed int64, hostname string) *Scenario {
	g := &generator{
		rng:      rand.New(rand.NewPCG(uint64(seed), 0x5eed)),
		s:        &Scenario{Seed: seed, Prefix: fmt.Sprintf("diff%d", seed), Parents: map[string][]string{}},
		hostname: hostname,
	}
	g.run()
	return g.s
}

type generator struct {
	rng      *rand.Rand
	s        *Scenario
	hostname string
	flags    []*flagState
	segments int
	custom   string
}

// flagState is what the generator expects a flag to be after the calls so
// far, had the reference accepted the calls it meant to be accepted.
type flagState struct {
	name       string
	strategies []string // placeholder names, in the order they were added
	added      int
	parents    []string
	children   int
	archived   bool
	// fixed flags are left alone by the random calls.
	fixed bool
}

func (g *generator) run() {
	g.custom = g.s.Prefix + "-custom"
	g.add(Call{Method: "POST", Path: "/api/admin/strategies", Note: "a custom strategy type", Body: mustJSON(map[string]any{
		"name": g.custom, "description": "differential",
		"parameters": []map[string]any{{"name": "level", "type": "string", "description": "", "required": false}},
	})})
	for range 2 + g.rng.IntN(3) {
		g.createSegment()
	}
	g.contextFlags()
	for range 8 + g.rng.IntN(5) {
		f := g.createFlag()
		for range g.rng.IntN(4) {
			g.addStrategy(f)
		}
		if g.rng.IntN(4) != 0 {
			g.toggle(f, true)
		}
	}
	ops := []struct {
		weight int
		op     func()
	}{
		{10, func() { g.addStrategy(g.liveFlag()) }},
		{8, g.updateStrategy},
		{3, g.deleteStrategy},
		{3, g.reorderStrategies},
		{6, func() { g.toggle(g.liveFlag(), g.rng.IntN(3) != 0) }},
		{5, g.updateMetadata},
		{5, g.addDependency},
		{2, g.deleteDependency},
		{3, g.updateSegment},
		{8, g.invalidCall},
		{1, g.archive},
		{2, func() { g.createFlag() }},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	for range 35 + g.rng.IntN(15) {
		n := g.rng.IntN(total)
		for _, o := range ops {
			if n < o.weight {
				o.op()
				break
			}
			n -= o.weight
		}
	}
	sentinel := g.flag("sentinel")
	g.add(Call{Method: "POST", Path: featuresPath(), Flag: sentinel.name, Note: "the sentinel flag",
		Body: mustJSON(map[string]any{"name": sentinel.name, "type": "operational"})})
	g.add(Call{Method: "POST", Path: envPath(sentinel.name) + "/strategies", Flag: sentinel.name, Body: `{"name":"default"}`})
	g.add(Call{Method: "POST", Path: envPath(sentinel.name) + "/on", Flag: sentinel.name})
	g.s.Sentinel = sentinel.name
}

func (g *generator) add(c Call) {
	c.Index = len(g.s.Calls)
	g.s.Calls = append(g.s.Calls, c)
}

func featuresPath() string { return "/api/admin/projects/" + Project + "/features" }

func featurePath(flag string) string { return featuresPath() + "/" + url.PathEscape(flag) }

func envPath(flag string) string {
	return featurePath(flag) + "/environments/" + Environment
}

func (g *generator) flag(suffix string) *flagState {
	f := &flagState{name: fmt.Sprintf("%s-%s", g.s.Prefix, suffix)}
	g.flags = append(g.flags, f)
	g.s.Flags = append(g.s.Flags, f.name)
	return f
}

// liveFlag picks a flag that is neither archived nor fixed.
func (g *generator) liveFlag() *flagState {
	for {
		f := g.flags[g.rng.IntN(len(g.flags))]
		if !f.archived && !f.fixed {
			return f
		}
	}
}

func (g *generator) chance(percent int) bool { return g.rng.IntN(100) < percent }

func pick[T any](g *generator, options []T) T { return options[g.rng.IntN(len(options))] }

var flagTypes = []string{"release", "experiment", "operational", "kill-switch", "permission", "sunset"}

func (g *generator) createFlag() *flagState {
	f := g.flag(fmt.Sprintf("f%02d", len(g.flags)))
	body := map[string]any{"name": f.name}
	if g.chance(80) {
		body["type"] = pick(g, flagTypes)
	}
	if g.chance(40) {
		body["description"] = "flag " + f.name
	}
	if g.chance(30) {
		body["impressionData"] = g.chance(50)
	}
	g.add(Call{Method: "POST", Path: featuresPath(), Flag: f.name, Body: mustJSON(body), Note: "create a flag"})
	return f
}

// contextFlags adds, on for everyone, a flag per context field that the
// frontend APIs fill in or take from the request (appName, environment,
// remoteAddress, currentTime), each with a default strategy tested on that
// field alone (the values include the frontend API's defaults), and left
// alone by the later calls, so that every scenario compares how they are
// read.
func (g *generator) contextFlags() {
	defaults := map[string]string{"appName": "frontend-api", "environment": "default", "remoteAddress": "127.0.0.1"}
	for _, field := range []string{"appName", "environment", "remoteAddress", "currentTime"} {
		f := g.flag("ctx-" + strings.ToLower(field))
		f.fixed = true
		g.add(Call{Method: "POST", Path: featuresPath(), Flag: f.name, Note: "a flag tested on " + field,
			Body: mustJSON(map[string]any{"name": f.name, "type": pick(g, flagTypes)})})
		var c map[string]any
		if field == "currentTime" {
			c = g.constraintOn("DATE_AFTER", "DATE_BEFORE")
		} else {
			values := append(g.sample(vocabulary(field), 2, true), pick(g, []string{"", " "})+defaults[field])
			c = map[string]any{"contextName": field, "operator": pick(g, []string{"IN", "NOT_IN"}), "values": values}
		}
		name := fmt.Sprintf("%s.%d", f.name, f.added)
		f.added++
		f.strategies = append(f.strategies, name)
		g.add(Call{Method: "POST", Path: envPath(f.name) + "/strategies", Flag: f.name, Creates: kindStrategy + ":" + name,
			Body: mustJSON(map[string]any{"name": "default", "constraints": []any{c}}), Note: "a strategy tested on " + field})
		g.toggle(f, true)
	}
}

func (g *generator) toggle(f *flagState, on bool) {
	path, note := envPath(f.name)+"/off", "turn off"
	if on {
		path, note = envPath(f.name)+"/on", "turn on"
		if g.chance(40) {
			path += "?shouldActivateDisabledStrategies=true"
			note += ", re-enabling disabled strategies"
		}
	}
	g.add(Call{Method: "POST", Path: path, Flag: f.name, Note: note})
}

func (g *generator) updateMetadata() {
	f := g.liveFlag()
	body := map[string]any{}
	if g.chance(50) {
		body["name"] = f.name
	}
	if g.chance(50) {
		body["type"] = pick(g, flagTypes)
	}
	if g.chance(50) {
		body["description"] = pick(g, []string{"updated", "", "another description"})
	}
	if g.chance(50) {
		body["impressionData"] = g.chance(50)
	}
	g.add(Call{Method: "PUT", Path: featurePath(f.name), Flag: f.name, Body: mustJSON(body), Note: "metadata PUT, some fields omitted"})
}

func (g *generator) archive() {
	f := g.liveFlag()
	if f.children > 0 || len(g.flags) < 4 {
		return
	}
	f.archived = true
	g.add(Call{Method: "DELETE", Path: featurePath(f.name), Flag: f.name, Note: "archive"})
}

// strategy returns a random valid strategy body for flag f.
func (g *generator) strategy(f *flagState, forUpdate bool) map[string]any {
	s := map[string]any{}
	kind := pick(g, []string{"flexibleRollout", "flexibleRollout", "flexibleRollout", "default", "default", "remoteAddress", "applicationHostname", g.custom})
	s["name"] = kind
	switch kind {
	case "flexibleRollout":
		p := map[string]any{}
		stickiness := pick(g, []string{"default", "default", "userId", "sessionId", "clientId"})
		rollout := pick(g, []int{0, 10, 25, 33, 50, 50, 75, 90, 100, 100})
		if g.chance(10) && (rollout == 0 || rollout == 100) {
			stickiness = "random"
		}
		if g.chance(85) {
			p["rollout"] = fmt.Sprint(rollout)
		}
		if g.chance(80) {
			p["stickiness"] = stickiness
		}
		if g.chance(60) {
			p["groupId"] = pick(g, []string{f.name, f.name, "shared-group", g.s.Prefix + "-other"})
		}
		s["parameters"] = p
	case "remoteAddress":
		s["parameters"] = map[string]any{"IPs": pick(g, []string{"10.0.0.5", "10.0.0.0/8, 127.0.0.1", "192.168.1.0/24,172.16.0.1", " 10.1.2.3 , 192.168.1.20", "127.0.0.1"})}
	case "applicationHostname":
		s["parameters"] = map[string]any{"hostNames": pick(g, []string{"localhost", g.hostname, "other-host, " + g.hostname, "nowhere"})}
	case g.custom:
		s["parameters"] = map[string]any{"level": "3"}
	}
	if n := pick(g, []int{0, 0, 0, 0, 1, 1, 1, 2, 2, 3}); n > 0 {
		cs := make([]any, n)
		for i := range cs {
			cs[i] = g.constraint()
		}
		s["constraints"] = cs
	} else if g.chance(30) {
		s["constraints"] = []any{}
	}
	if g.chance(40) {
		s["variants"] = g.variants(false)
	}
	if g.segments > 0 && (g.chance(30) || forUpdate && g.chance(30)) {
		s["segments"] = g.segmentRefs()
	}
	if g.chance(25) {
		s["title"] = pick(g, []string{"Beta users", "Canary", ""})
	}
	if g.chance(20) {
		s["disabled"] = true
	} else if g.chance(10) {
		s["disabled"] = false
	}
	if g.chance(25) {
		s["sortOrder"] = g.rng.IntN(10)
	}
	return s
}

// segmentRefs picks a non-empty subset of the scenario's segments.
func (g *generator) segmentRefs() []any {
	var refs []any
	for i := range g.segments {
		if g.chance(50) {
			refs = append(refs, segmentRef(i))
		}
	}
	if len(refs) == 0 {
		refs = append(refs, segmentRef(g.rng.IntN(g.segments)))
	}
	return refs
}

var variantNames = []string{"zulu", "alpha", "mike", "bravo", "yankee", "charlie", "Echo"}

// variants returns 1–3 valid variants in random (so mostly not
// alphabetical) order.
func (g *generator) variants(overrides bool) []any {
	names := slices.Clone(variantNames)
	g.rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	n := 1 + g.rng.IntN(3)
	out := make([]any, n)
	fixed := 0
	for i := range n {
		v := map[string]any{"name": names[i], "weightType": "variable", "weight": 0,
			"stickiness": pick(g, []string{"default", "default", "userId", "sessionId", "clientId"})}
		if i > 0 && g.chance(30) && fixed < 600 {
			w := pick(g, []int{100, 200, 300})
			fixed += w
			v["weightType"], v["weight"] = "fix", w
		} else {
			v["weight"] = pick(g, []int{0, 333, 500, 1000})
		}
		switch g.rng.IntN(6) {
		case 0:
			v["payload"] = map[string]any{"type": "string", "value": "gold-" + names[i]}
		case 1:
			v["payload"] = map[string]any{"type": "json", "value": `{"variant":"` + names[i] + `","n":1}`}
		case 2:
			v["payload"] = map[string]any{"type": "csv", "value": "a,b," + names[i]}
		case 3:
			v["payload"] = map[string]any{"type": "number", "value": fmt.Sprint(g.rng.IntN(100))}
		}
		if overrides && g.chance(30) {
			v["overrides"] = []any{map[string]any{"contextName": "userId", "values": []string{"u1", "u7"}}}
		}
		out[i] = v
	}
	return out
}

// Context vocabulary shared by constraints and generated contexts.
var (
	regions   = []string{"eu", "us", "EU", "apac", "eu-west"}
	plans     = []string{"free", "pro", "Pro", "enterprise"}
	versions  = []string{"1.0.0", "1.2.3", "1.10.0", "2.0.0-beta.1", "2.0.0-rc.1", "2.0.0", "v1.2.3", "not-semver", "3.1.4+build.5"}
	ages      = []string{"5", "17", "18", "18.0", "42", "-3", "abc", "1e2", " 7 ", "0"}
	emails    = []string{"ann@example.com", "BOB@EXAMPLE.COM", "cy@test.org", "dee@example.org"}
	addresses = []string{"10.0.0.5", "10.1.2.3", "192.168.1.20", "127.0.0.1", "172.16.0.1", "2001:db8::1", "::1"}
	appNames  = []string{"web", "ios", "frontend-api"}
	envNames  = []string{"development", "production", "default"}
	times     = []string{"2005-01-01T00:00:00.000Z", "2092-06-01T12:00:00Z"}
)

func userIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("u%d", i)
	}
	return out
}

// sample returns 1–n distinct values of from, some padded with spaces.
func (g *generator) sample(from []string, n int, pad bool) []string {
	vals := slices.Clone(from)
	g.rng.Shuffle(len(vals), func(i, j int) { vals[i], vals[j] = vals[j], vals[i] })
	vals = vals[:1+g.rng.IntN(min(n, len(vals)))]
	for i := range vals {
		if pad && g.chance(15) {
			vals[i] = pick(g, []string{" ", "", "  "}) + vals[i] + pick(g, []string{" ", ""})
		}
	}
	return vals
}

// constraint returns a random valid constraint.
func (g *generator) constraint() map[string]any {
	return g.constraintOn("IN", "IN", "NOT_IN", "NOT_IN", "STR_STARTS_WITH", "STR_ENDS_WITH", "STR_CONTAINS",
		"NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE", "DATE_AFTER", "DATE_BEFORE",
		"SEMVER_EQ", "SEMVER_GT", "SEMVER_GTE", "SEMVER_LT", "SEMVER_LTE", "REGEX")
}

// constraintOn returns a random valid constraint with one of operators.
func (g *generator) constraintOn(operators ...string) map[string]any {
	c := map[string]any{}
	op := pick(g, operators)
	c["operator"] = op
	switch op {
	case "IN", "NOT_IN":
		field := pick(g, []string{"userId", "region", "plan", "appName", "environment", "remoteAddress", "clientId", "version", "sessionId"})
		c["contextName"] = field
		c["values"] = g.sample(vocabulary(field), 4, true)
	case "STR_STARTS_WITH", "STR_ENDS_WITH", "STR_CONTAINS":
		c["contextName"] = pick(g, []string{"email", "region", "plan", "userId"})
		c["values"] = g.sample([]string{"u1", "e", "BOB", "ann", "@example.com", ".org", "U", "example", "@", "ro", "eu", "pr"}, 3, true)
	case "NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE":
		c["contextName"] = "age"
		c["value"] = pick(g, []string{"18", "17.5", "0", "-1", "42", "100"})
	case "DATE_AFTER", "DATE_BEFORE":
		c["contextName"] = "currentTime"
		c["value"] = pick(g, []string{"2000-01-01T00:00:00.000Z", "2010-05-05T10:00:00Z", "2090-01-01T00:00:00.000Z", "2095-12-31T23:59:59+02:00"})
	case "SEMVER_EQ", "SEMVER_GT", "SEMVER_GTE", "SEMVER_LT", "SEMVER_LTE":
		c["contextName"] = "version"
		c["value"] = pick(g, []string{"1.2.3", "2.0.0-beta.1", "1.10.0", "2.0.0", "0.9.9"})
	case "REGEX":
		c["contextName"] = pick(g, []string{"email", "userId", "region"})
		c["value"] = pick(g, []string{`^u[0-9]$`, `example\.(com|org)$`, `^EU$`, `bob`, `^[a-z]+$`, `\d{2}`})
	}
	if op != "REGEX" && g.chance(25) {
		c["inverted"] = true
	} else if g.chance(10) {
		c["inverted"] = false
	}
	if g.chance(30) {
		c["caseInsensitive"] = true
	} else if g.chance(10) {
		c["caseInsensitive"] = false
	}
	return c
}

// vocabulary is the set of values contexts take for field.
func vocabulary(field string) []string {
	switch field {
	case "userId":
		return userIDs(12)
	case "region":
		return regions
	case "plan":
		return plans
	case "appName":
		return appNames
	case "environment":
		return envNames
	case "remoteAddress":
		return addresses
	case "clientId":
		return []string{"c1", "c2", "c3", "c4"}
	case "version":
		return versions
	case "sessionId":
		return []string{"s1", "s2", "s3", "s4", "s5"}
	}
	return nil
}

func (g *generator) createSegment() {
	n := g.segments
	g.segments++
	cs := make([]any, 1+g.rng.IntN(2))
	for i := range cs {
		cs[i] = g.constraint()
	}
	g.add(Call{Method: "POST", Path: "/api/admin/segments", Creates: fmt.Sprintf("%s:%d", kindSegment, n), Note: "create a segment",
		Body: mustJSON(map[string]any{"name": fmt.Sprintf("%s-seg%d", g.s.Prefix, n), "constraints": cs})})
}

func (g *generator) updateSegment() {
	if g.segments == 0 {
		return
	}
	n := g.rng.IntN(g.segments)
	cs := make([]any, g.rng.IntN(3))
	for i := range cs {
		cs[i] = g.constraint()
	}
	g.add(Call{Method: "PUT", Path: fmt.Sprintf("/api/admin/segments/{%s:%d}", kindSegment, n), Note: "update a segment",
		Body: mustJSON(map[string]any{"name": fmt.Sprintf("%s-seg%d", g.s.Prefix, n), "constraints": cs})})
}

func (g *generator) addStrategy(f *flagState) {
	name := fmt.Sprintf("%s.%d", f.name, f.added)
	f.added++
	f.strategies = append(f.strategies, name)
	g.add(Call{Method: "POST", Path: envPath(f.name) + "/strategies", Flag: f.name, Creates: kindStrategy + ":" + name,
		Body: mustJSON(g.strategy(f, false)), Note: "add a strategy"})
}

// someStrategy picks a flag with strategies and one of them.
func (g *generator) someStrategy() (*flagState, int, bool) {
	for range 10 {
		f := g.liveFlag()
		if len(f.strategies) > 0 {
			return f, g.rng.IntN(len(f.strategies)), true
		}
	}
	return nil, 0, false
}

func (g *generator) updateStrategy() {
	f, i, ok := g.someStrategy()
	if !ok {
		return
	}
	body := g.strategy(f, true)
	note := "strategy PUT"
	if _, ok := body["segments"]; !ok {
		note += " without segments"
	}
	if _, ok := body["sortOrder"]; ok {
		note += " with sortOrder"
	}
	g.add(Call{Method: "PUT", Path: envPath(f.name) + "/strategies/" + strategyPathRef(f.strategies[i]), Flag: f.name,
		Body: mustJSON(body), Note: note})
}

func (g *generator) deleteStrategy() {
	f, i, ok := g.someStrategy()
	if !ok {
		return
	}
	name := f.strategies[i]
	f.strategies = slices.Delete(f.strategies, i, i+1)
	g.add(Call{Method: "DELETE", Path: envPath(f.name) + "/strategies/" + strategyPathRef(name), Flag: f.name, Note: "delete a strategy"})
}

func (g *generator) reorderStrategies() {
	f, _, ok := g.someStrategy()
	if !ok {
		return
	}
	order := slices.Clone(f.strategies)
	g.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	body := make([]any, len(order))
	for i, name := range order {
		body[i] = map[string]any{"id": strategyRef(name), "sortOrder": i}
	}
	g.add(Call{Method: "POST", Path: envPath(f.name) + "/strategies/set-sort-order", Flag: f.name, Body: mustJSON(body), Note: "set the strategies' order"})
}

func (g *generator) addDependency() {
	child, parent := g.liveFlag(), g.liveFlag()
	if child == parent || child.children > 0 || len(parent.parents) > 0 || slices.Contains(child.parents, parent.name) {
		return
	}
	body := map[string]any{"feature": parent.name}
	switch g.rng.IntN(4) {
	case 0:
		body["enabled"] = false
	case 1:
		body["enabled"] = true
		body["variants"] = g.sample(variantNames, 2, false)
	case 2:
		body["variants"] = []string{"disabled"}
	}
	// A new dependency replaces the child's others (Unleash 8 keeps one
	// parent per flag).
	for _, p := range child.parents {
		g.byName(p).children--
	}
	child.parents = []string{parent.name}
	parent.children++
	if !slices.Contains(g.s.Parents[child.name], parent.name) {
		g.s.Parents[child.name] = append(g.s.Parents[child.name], parent.name)
	}
	g.add(Call{Method: "POST", Path: featurePath(child.name) + "/dependencies", Flag: child.name, Refers: parent.name, Body: mustJSON(body), Note: "add a dependency"})
}

func (g *generator) deleteDependency() {
	for range 10 {
		f := g.liveFlag()
		if len(f.parents) == 0 {
			continue
		}
		if g.chance(50) {
			g.add(Call{Method: "DELETE", Path: featurePath(f.name) + "/dependencies", Flag: f.name, Note: "delete all dependencies"})
			for _, p := range f.parents {
				g.byName(p).children--
			}
			f.parents = nil
			return
		}
		p := f.parents[0]
		f.parents = f.parents[1:]
		g.byName(p).children--
		g.add(Call{Method: "DELETE", Path: featurePath(f.name) + "/dependencies/" + url.PathEscape(p), Flag: f.name, Note: "delete a dependency"})
		return
	}
}

func (g *generator) byName(name string) *flagState {
	for _, f := range g.flags {
		if f.name == name {
			return f
		}
	}
	panic("differential: no flag " + name)
}

// invalidCall adds a call that the reference refuses.
func (g *generator) invalidCall() {
	f := g.liveFlag()
	bad := g.invalidConstraint()
	kinds := []func() Call{
		func() Call { // a strategy with an invalid constraint
			s := g.strategy(f, false)
			s["constraints"] = []any{bad.c}
			return Call{Method: "POST", Path: envPath(f.name) + "/strategies", Flag: f.name, Body: mustJSON(s), Note: "strategy with " + bad.note}
		},
		func() Call { // a segment with an invalid constraint
			return Call{Method: "POST", Path: "/api/admin/segments", Note: "segment with " + bad.note,
				Body: mustJSON(map[string]any{"name": fmt.Sprintf("%s-badseg%d", g.s.Prefix, len(g.s.Calls)), "constraints": []any{bad.c}})}
		},
		func() Call { // a strategy variant without stickiness or weightType
			s := g.strategy(f, false)
			vs := g.variants(false)
			field := pick(g, []string{"stickiness", "weightType"})
			delete(vs[0].(map[string]any), field)
			s["variants"] = vs
			return Call{Method: "POST", Path: envPath(f.name) + "/strategies", Flag: f.name, Body: mustJSON(s), Note: "strategy variant without " + field}
		},
		func() Call {
			return Call{Method: "POST", Path: envPath(f.name) + "/strategies", Flag: f.name, Body: `{"name":"userWithId","parameters":{"userIds":"u1"}}`, Note: "a strategy type Unleash 8 no longer has"}
		},
		func() Call {
			return Call{Method: "PUT", Path: featurePath(f.name), Flag: f.name, Body: `{"type":"no-such-type"}`, Note: "unknown flag type"}
		},
		func() Call {
			return Call{Method: "POST", Path: featuresPath(), Refers: f.name, Body: mustJSON(map[string]any{"name": f.name}), Note: "a flag name in use"}
		},
		func() Call {
			return Call{Method: "POST", Path: featuresPath(), Body: `{"name":"has space"}`, Note: "a flag name that is not URL-safe"}
		},
		func() Call {
			return Call{Method: "POST", Path: featurePath(f.name) + "/dependencies", Flag: f.name, Refers: g.s.Prefix + "-missing",
				Body: mustJSON(map[string]any{"feature": g.s.Prefix + "-missing"}), Note: "a dependency on a flag that does not exist"}
		},
		func() Call {
			s := g.strategy(f, false)
			vs := g.variants(false)
			vs[0].(map[string]any)["payload"] = map[string]any{"type": "json", "value": "{not json"}
			s["variants"] = vs
			return Call{Method: "POST", Path: envPath(f.name) + "/strategies", Flag: f.name, Body: mustJSON(s), Note: "a json payload that is not JSON"}
		},
	}
	c := pick(g, kinds)()
	c.Refused = true
	g.add(c)
}

type badConstraint struct {
	c    map[string]any
	note string
}

// invalidConstraint returns a constraint the reference refuses.
func (g *generator) invalidConstraint() badConstraint {
	options := []badConstraint{
		{map[string]any{"contextName": "age", "operator": pick(g, []string{"NUM_EQ", "NUM_GT", "NUM_LTE"}), "value": pick(g, []string{"abc", "12abc", "one"})}, "a NUM_* value that is not a number"},
		{map[string]any{"contextName": "currentTime", "operator": pick(g, []string{"DATE_AFTER", "DATE_BEFORE"}), "value": pick(g, []string{"next tuesday", "2024-13-45", "yesterday"})}, "an unparseable DATE_* value"},
		{map[string]any{"contextName": "version", "operator": pick(g, []string{"SEMVER_EQ", "SEMVER_GT", "SEMVER_LT"}), "value": pick(g, []string{"v1.2.3", "1.2", "banana", "1.2.3.4"})}, "an invalid SEMVER_* version"},
		{map[string]any{"contextName": "region", "operator": pick(g, []string{"IN", "NOT_IN", "STR_CONTAINS"}), "value": "eu"}, "a multi-value operator given only value"},
		{map[string]any{"contextName": "region", "operator": pick(g, []string{"IN", "NOT_IN"}), "values": []string{}}, "IN/NOT_IN with empty values"},
		{map[string]any{"contextName": "email", "operator": "REGEX", "value": "^a", "inverted": true}, "an inverted REGEX"},
		{map[string]any{"contextName": "email", "operator": "REGEX", "value": "(unclosed"}, "an invalid REGEX"},
		{map[string]any{"contextName": "region", "operator": pick(g, []string{"IN_CIDR", "BETWEEN"}), "values": []string{"eu"}}, "an unknown operator"},
		{map[string]any{"contextName": "region", "operator": "IN", "values": []string{"eu", ""}}, "an empty string among values"},
		{map[string]any{"contextName": "region", "operator": "STR_CONTAINS", "values": []string{strings.Repeat("é", 101)}}, "a value over 100 characters"},
	}
	return pick(g, options)
}

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}
