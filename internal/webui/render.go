package webui

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// One way of showing targeting, used by every screen that shows it (the
// flag page, the event log, change requests, the playground, segments):
// a strategy reads as people say it ("Gradual rollout: 50 % of users
// (sticky on userId) where region is one of eu, uk"), not as the API's
// JSON. describeStrategy turns the JSON into a strategyView, and the
// template partial "strategy-view" (templates/render.html) draws it.

// strategyView is a strategy as people read it.
type strategyView struct {
	// Kind names the strategy type ("Gradual rollout").
	Kind  string
	Title string
	// Lead is what the type does with its parameters ("50 % of users
	// (sticky on userId)").
	Lead string
	// HasPercent is set when the strategy lets a share through; Percent
	// is that share (0–100) for the bar.
	HasPercent  bool
	Percent     float64
	Constraints []constraintView
	Segments    []string
	Variants    []variantView
	Disabled    bool
}

// Sentence is the strategy in one line of text.
func (v strategyView) Sentence() string {
	var b strings.Builder
	b.WriteString(v.Kind)
	if v.Lead != "" {
		b.WriteString(": " + v.Lead)
	}
	if len(v.Constraints) > 0 {
		parts := make([]string, len(v.Constraints))
		for i, c := range v.Constraints {
			parts[i] = c.Sentence()
		}
		b.WriteString(" where " + strings.Join(parts, " and "))
	}
	for i, s := range v.Segments {
		if i == 0 {
			b.WriteString(" in segment ")
		} else {
			b.WriteString(" and segment ")
		}
		b.WriteString(s)
	}
	if v.Disabled {
		b.WriteString(" (disabled)")
	}
	return b.String()
}

// constraintView is one constraint: the field, the operator in words and
// the values.
type constraintView struct {
	Field   string
	Op      string
	Values  []string
	AnyCase bool
}

// Sentence is the constraint as text ("region is one of eu, uk").
func (c constraintView) Sentence() string {
	s := c.Field + " " + c.Op + " " + strings.Join(c.Values, ", ")
	if c.AnyCase {
		s += " (any case)"
	}
	return s
}

// variantView is one variant with its share of the split.
type variantView struct {
	Name        string
	Weight      int
	Share       float64 // 0–100
	ShareText   string  // "33.3 %"
	Fixed       bool
	Stickiness  string
	PayloadType string
	Payload     string
}

// operatorWords are the constraint operators in words: as stated, and
// inverted.
var operatorWords = map[string][2]string{
	"IN":              {"is one of", "is not one of"},
	"NOT_IN":          {"is not one of", "is one of"},
	"STR_CONTAINS":    {"contains", "does not contain"},
	"STR_STARTS_WITH": {"starts with", "does not start with"},
	"STR_ENDS_WITH":   {"ends with", "does not end with"},
	"NUM_EQ":          {"equals", "does not equal"},
	"NUM_GT":          {"is greater than", "is not greater than"},
	"NUM_GTE":         {"is at least", "is less than"},
	"NUM_LT":          {"is less than", "is not less than"},
	"NUM_LTE":         {"is at most", "is more than"},
	"DATE_AFTER":      {"is after", "is not after"},
	"DATE_BEFORE":     {"is before", "is not before"},
	"SEMVER_EQ":       {"is version", "is not version"},
	"SEMVER_GT":       {"is a version after", "is not a version after"},
	"SEMVER_GTE":      {"is at least version", "is a version before"},
	"SEMVER_LT":       {"is a version before", "is not a version before"},
	"SEMVER_LTE":      {"is at most version", "is a version after"},
	"REGEX":           {"matches", "does not match"},
}

// operatorInWords is an operator as the constraint chips say it.
func operatorInWords(op string, inverted bool) string {
	w, ok := operatorWords[op]
	if !ok {
		if inverted {
			return "not " + op
		}
		return op
	}
	if inverted {
		return w[1]
	}
	return w[0]
}

// describeConstraint reads one constraint of the admin API's JSON (or a
// value that encodes to it).
func describeConstraint(c any) constraintView {
	m := asJSONObject(c)
	inverted, _ := m["inverted"].(bool)
	anyCase, _ := m["caseInsensitive"].(bool)
	op := str(m["operator"])
	v := constraintView{Field: str(m["contextName"]), Op: operatorInWords(op, inverted)}
	if vs, ok := m["values"].([]any); ok {
		for _, x := range vs {
			v.Values = append(v.Values, str(x))
		}
	}
	if one := str(m["value"]); one != "" && len(v.Values) == 0 {
		v.Values = []string{one}
	}
	// Case matters only to the string operators.
	v.AnyCase = anyCase && (strings.HasPrefix(op, "STR_") || op == "IN" || op == "NOT_IN")
	return v
}

// describeConstraints reads a list of constraints.
func describeConstraints(list any) []constraintView {
	vs, _ := list.([]any)
	out := make([]constraintView, 0, len(vs))
	for _, c := range vs {
		out = append(out, describeConstraint(c))
	}
	return out
}

// describeStrategy reads one strategy of the admin API's JSON; segments
// are named by segmentNames (id to name).
func describeStrategy(strategy any, segmentNames map[string]string) strategyView {
	m := asJSONObject(strategy)
	params, _ := m["parameters"].(map[string]any)
	p := func(k string) string { return strings.TrimSpace(str(params[k])) }
	v := strategyView{Title: str(m["title"]), Constraints: describeConstraints(m["constraints"])}
	v.Disabled, _ = m["disabled"].(bool)
	percent := func(k, of string) {
		n, err := strconv.ParseFloat(p(k), 64)
		if err != nil {
			n = 0
		}
		n = min(max(n, 0), 100)
		v.HasPercent, v.Percent = true, n
		v.Lead = formatPercent(n) + " of " + of
	}
	switch name := str(m["name"]); name {
	case "default", "":
		v.Kind, v.Lead = "Standard", "on for everyone"
	case "flexibleRollout":
		v.Kind = "Gradual rollout"
		percent("rollout", "users")
		stick := p("stickiness")
		if stick == "" || stick == "default" {
			v.Lead += " (sticky on userId, else sessionId, else random)"
		} else if stick == "random" {
			v.Lead += " (random on each request)"
		} else {
			v.Lead += " (sticky on " + stick + ")"
		}
	case "userWithId":
		v.Kind, v.Lead = "User IDs", "users "+commaList(p("userIds"))
	case "gradualRolloutRandom":
		v.Kind = "Random rollout"
		percent("percentage", "requests, at random")
	case "gradualRolloutSessionId":
		v.Kind = "Gradual rollout by session"
		percent("percentage", "sessions (sticky on sessionId)")
	case "gradualRolloutUserId":
		v.Kind = "Gradual rollout by user"
		percent("percentage", "users (sticky on userId)")
	case "remoteAddress":
		v.Kind, v.Lead = "IP addresses", "requests from "+commaList(p("IPs"))
	case "applicationHostname":
		v.Kind, v.Lead = "Hosts", "applications on "+commaList(p("hostNames"))
	default:
		v.Kind = name
		keys := make([]string, 0, len(params))
		for k := range params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+" = "+p(k))
		}
		v.Lead = strings.Join(parts, ", ")
	}
	if ids, ok := m["segments"].([]any); ok {
		for _, id := range ids {
			name := segmentNames[str(id)]
			if name == "" {
				name = "#" + str(id)
			}
			v.Segments = append(v.Segments, name)
		}
	}
	v.Variants = describeVariants(m["variants"])
	return v
}

// describeVariants reads variants and their shares: a variant's share is
// its weight of 1000, as the SDKs split.
func describeVariants(list any) []variantView {
	vs, _ := list.([]any)
	out := make([]variantView, 0, len(vs))
	for _, x := range vs {
		m, _ := x.(map[string]any)
		w, _ := m["weight"].(float64)
		share := w / 10
		v := variantView{Name: str(m["name"]), Weight: int(w), Share: share, ShareText: formatPercent(share),
			Fixed: str(m["weightType"]) == "fix", Stickiness: str(m["stickiness"])}
		if pl, ok := m["payload"].(map[string]any); ok {
			v.PayloadType, v.Payload = str(pl["type"]), str(pl["value"])
		}
		out = append(out, v)
	}
	return out
}

// formatPercent writes a share with at most one decimal ("33.3 %", "50 %").
func formatPercent(n float64) string {
	return strconv.FormatFloat(float64(int64(n*10+0.5))/10, 'f', -1, 64) + " %"
}

// commaList tidies a comma list parameter ("a,b" → "a, b").
func commaList(s string) string {
	parts := strings.Split(s, ",")
	out := parts[:0]
	for _, x := range parts {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, ", ")
}

// asJSONObject is v as a JSON object: v itself when it is one (the pages
// read the API's answers as maps), else v encoded and read back (typed
// answers such as the playground's).
func asJSONObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok || v == nil {
		return m
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// str is a JSON value as text ("" for null).
func str(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// renderFuncs are the template functions of the shared rendering.
var renderFuncs = map[string]any{
	// describeStrategy: see above; names is the page's segment names (nil
	// shows segment ids).
	"describeStrategy":   func(st any, names map[string]string) strategyView { return describeStrategy(st, names) },
	"describeConstraint": describeConstraint,
	// describeConstraints reads a segment's (or strategy's) constraints.
	"describeConstraints": describeConstraints,
	// describeVariants reads an environment's variants.
	"describeVariants": describeVariants,
	// operatorName is an operator as the editors offer it: its words and
	// its name ("is one of (IN)").
	"operatorName": func(op string) string { return operatorInWords(op, false) + " (" + op + ")" },
	// stickinessChoices and variantShare serve the editors.
	"stickinessChoices": stickinessChoices,
	"variantShare":      variantShare,
}

// tokenRef is an API token that can read a flag, as the flag page lists it.
type tokenRef struct {
	Name, Type, Scope string
}

// envServing is who can serve a flag in one environment: the client
// tokens (SDKs on servers and proxies such as `bunting proxy`) and the
// frontend tokens whose project and environment cover it. Known is false
// when the visitor may not read the tokens (nothing is said then).
type envServing struct {
	Known  bool
	Env    string
	Tokens []tokenRef
}

// servingTokens finds, for each environment of a flag of project, the
// client and frontend tokens that cover it. tokens is the admin API's token
// list, or nil when the visitor may not read it.
func servingTokens(tokens []map[string]any, project string, envs []string) map[string]envServing {
	out := make(map[string]envServing, len(envs))
	for _, env := range envs {
		sv := envServing{Known: tokens != nil, Env: env}
		for _, t := range tokens {
			typ := strings.ToLower(str(t["type"]))
			if typ != "client" && typ != "frontend" && typ != "backend" {
				continue
			}
			if e := str(t["environment"]); e != env && e != "*" {
				continue
			}
			ps, _ := t["projects"].([]any)
			if len(ps) == 0 {
				if p := str(t["project"]); p != "" {
					ps = []any{p}
				}
			}
			if !slices.ContainsFunc(ps, func(p any) bool { return str(p) == "*" || str(p) == project }) {
				continue
			}
			projects := make([]string, len(ps))
			for i, p := range ps {
				projects[i] = str(p)
			}
			sv.Tokens = append(sv.Tokens, tokenRef{Name: str(t["tokenName"]), Type: typ, Scope: strings.Join(projects, ",") + ":" + str(t["environment"])})
		}
		out[env] = sv
	}
	return out
}

// stickinessChoices are the stickiness a rollout or a variant may use:
// default, userId and sessionId, the context fields marked usable as
// stickiness, and random; each once (sessionId is also a context field).
func stickinessChoices(fields any) []string {
	out := []string{"default", "userId", "sessionId"}
	list, _ := fields.([]map[string]any)
	for _, f := range list {
		if stick, _ := f["stickiness"].(bool); stick && !slices.Contains(out, str(f["name"])) && str(f["name"]) != "random" {
			out = append(out, str(f["name"]))
		}
	}
	return append(out, "random")
}

// variantShare is a stored weight (of 1000) as the editor's percentage.
func variantShare(weight any) string {
	w, ok := weight.(float64)
	if !ok {
		return ""
	}
	return strconv.FormatFloat(w/10, 'f', -1, 64)
}
