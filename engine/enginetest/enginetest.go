// Package enginetest generates realistic flag payloads and evaluation
// contexts for tests and benchmarks of code built on the engine, the way
// net/http/httptest serves tests of HTTP code.
//
// Everything is deterministic: the same size and seed give the same
// payload, byte for byte once encoded.
package enginetest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/engine"
)

// Vocabularies shared by payloads and contexts, so that generated
// constraints sometimes match generated contexts and sometimes do not.
var (
	areas        = []string{"checkout", "search", "onboarding", "billing", "profile", "feed", "payments", "growth"}
	nouns        = []string{"new-ui", "fast-path", "banner", "redesign", "beta", "experiment", "kill-switch", "limits"}
	countries    = []string{"NO", "SE", "DK", "DE", "FR", "US", "GB", "JP", "BR", "IN"}
	plans        = []string{"free", "pro", "team", "enterprise"}
	environments = []string{"production", "staging", "development"}
	appNames     = []string{"web", "ios", "android", "checkout-service", "admin"}
	appVersions  = []string{"1.9.0", "2.0.0-beta.2", "2.0.0", "2.1.3", "2.4.0-rc.1", "3.0.1", "3.2.0"}
	emailDomains = []string{"example.com", "Example.org", "corp.example.net", "mail.test"}
	tenants      = []string{"acme", "globex", "initech", "umbrella", "hooli", "stark"}
	stickinesses = []string{"default", "userId", "sessionId", "tenantId"}
)

// Generate returns a payload of n flags, as a server would send it to SDKs,
// with a realistic mix: mostly flexibleRollout strategies with every kind of
// stickiness, constraints of every operator family (IN/NOT_IN, STR_*,
// NUM_*, DATE_*, SEMVER_*, REGEX, IN_CIDR; some case-insensitive, some
// inverted), segments, feature and strategy variants with string, json and
// number payloads and overrides, some disabled flags, some dependencies on
// earlier flags and impressionData on some flags. Like a server's client
// payload, it has no disabled strategies.
func Generate(n int, seed int64) *engine.ClientFeatures {
	g := &generator{r: rand.New(rand.NewPCG(uint64(seed), 0x6275_6e74_696e_67))}
	cf := &engine.ClientFeatures{Version: 2, Features: make([]engine.Feature, 0, n)}
	nSegments := max(3, n/20)
	for id := 1; id <= nSegments; id++ {
		cf.Segments = append(cf.Segments, engine.Segment{
			ID:          id,
			Name:        fmt.Sprintf("segment-%d", id),
			Constraints: g.constraints(1 + g.r.IntN(2)),
		})
	}
	for i := range n {
		cf.Features = append(cf.Features, g.feature(i, cf.Features, nSegments))
	}
	return cf
}

type generator struct {
	r *rand.Rand
}

func (g *generator) pick(list []string) string { return list[g.r.IntN(len(list))] }

// chance is true with probability pct/100.
func (g *generator) chance(pct int) bool { return g.r.IntN(100) < pct }

func (g *generator) feature(i int, earlier []engine.Feature, nSegments int) engine.Feature {
	name := fmt.Sprintf("%s.%s-%d", g.pick(areas), g.pick(nouns), i)
	f := engine.Feature{
		Name:           name,
		Type:           g.pick([]string{"release", "experiment", "operational", "kill-switch", "permission"}),
		Project:        "default",
		Enabled:        !g.chance(10),
		ImpressionData: g.chance(20),
		Strategies:     []engine.Strategy{},
		Variants:       []engine.Variant{},
	}
	nStrategies := 1 + g.r.IntN(3)
	if g.chance(5) {
		nStrategies = 0
	}
	for s := range nStrategies {
		f.Strategies = append(f.Strategies, g.strategy(name, s, nSegments))
	}
	if g.chance(40) {
		f.Variants = g.variants(2+g.r.IntN(3), true)
	}
	if len(earlier) > 0 && g.chance(8) {
		f.Dependencies = g.dependencies(earlier)
	}
	return f
}

func (g *generator) strategy(flagName string, idx, nSegments int) engine.Strategy {
	s := engine.Strategy{
		ID:         fmt.Sprintf("%08x-0000-4000-8000-%012x", g.r.Uint32(), idx),
		SortOrder:  idx,
		Parameters: engine.Parameters{},
	}
	switch k := g.r.IntN(100); {
	case k < 65:
		s.Name = "flexibleRollout"
		s.Parameters["rollout"] = strconv.Itoa(g.pick100())
		s.Parameters["stickiness"] = g.pick(stickinesses)
		s.Parameters["groupId"] = flagName
	case k < 75:
		s.Name = "default"
	case k < 83:
		s.Name = "userWithId"
		ids := ""
		for j := range 1 + g.r.IntN(6) {
			if j > 0 {
				ids += ", "
			}
			ids += "user-" + strconv.Itoa(g.r.IntN(2000))
		}
		s.Parameters["userIds"] = ids
	case k < 89:
		s.Name = "remoteAddress"
		s.Parameters["IPs"] = "10.0.0.0/8, 192.168.1.17, 2001:db8::/32"
	case k < 95:
		s.Name = "gradualRolloutUserId"
		s.Parameters["percentage"] = strconv.Itoa(g.pick100())
		s.Parameters["groupId"] = flagName
	case k < 97:
		s.Name = "gradualRolloutSessionId"
		s.Parameters["percentage"] = strconv.Itoa(g.pick100())
		s.Parameters["groupId"] = flagName
	default:
		s.Name = "applicationHostname"
		s.Parameters["hostNames"] = "web-1, web-2"
	}
	if g.chance(70) {
		s.Constraints = g.constraints(1 + g.r.IntN(3))
	} else {
		s.Constraints = []engine.Constraint{}
	}
	if g.chance(20) {
		s.Segments = []int{1 + g.r.IntN(nSegments)}
	}
	if s.Name == "flexibleRollout" && g.chance(20) {
		// Unleash offers strategy variants on gradual rollouts.
		s.Variants = g.variants(1+g.r.IntN(3), false)
	}
	return s
}

// pick100 is a rollout percentage biased towards the usual values.
func (g *generator) pick100() int {
	common := []int{0, 5, 10, 25, 50, 75, 90, 100, 100}
	if g.chance(70) {
		return common[g.r.IntN(len(common))]
	}
	return g.r.IntN(101)
}

func (g *generator) constraints(n int) []engine.Constraint {
	out := make([]engine.Constraint, n)
	for i := range out {
		out[i] = g.constraint()
	}
	return out
}

// constraint draws one constraint of a random operator family over fields
// that Context and Contexts fill in.
func (g *generator) constraint() engine.Constraint {
	c := engine.Constraint{Inverted: g.chance(10)}
	switch g.r.IntN(8) {
	case 0: // IN / NOT_IN
		c.Operator = g.pick([]string{"IN", "NOT_IN"})
		switch g.r.IntN(4) {
		case 0:
			c.ContextName, c.Values = "country", g.subset(countries)
		case 1:
			c.ContextName, c.Values = "plan", g.subset(plans)
		case 2:
			c.ContextName, c.Values = "environment", g.subset(environments)
		default:
			c.ContextName, c.Values = "appName", g.subset(appNames)
		}
	case 1: // STR_*
		c.ContextName = "email"
		c.Operator = g.pick([]string{"STR_ENDS_WITH", "STR_STARTS_WITH", "STR_CONTAINS"})
		c.CaseInsensitive = g.chance(40)
		switch c.Operator {
		case "STR_ENDS_WITH":
			c.Values = []string{"@" + g.pick(emailDomains)}
		case "STR_STARTS_WITH":
			c.Values = []string{"user-1", "admin"}
		default:
			c.Values = []string{"example", "test"}
		}
	case 2: // NUM_*
		c.ContextName = "age"
		c.Operator = g.pick([]string{"NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE"})
		c.Value = strconv.Itoa(18 + g.r.IntN(50))
	case 3: // DATE_*
		c.ContextName = "currentTime"
		c.Operator = g.pick([]string{"DATE_AFTER", "DATE_BEFORE"})
		base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		c.Value = base.Add(time.Duration(g.r.IntN(10*365*24)) * time.Hour).Format(time.RFC3339)
	case 4: // SEMVER_*
		c.ContextName = "appVersion"
		c.Operator = g.pick([]string{"SEMVER_EQ", "SEMVER_GT", "SEMVER_GTE", "SEMVER_LT", "SEMVER_LTE"})
		c.Value = g.pick(appVersions)
	case 5: // REGEX
		c.ContextName = g.pick([]string{"email", "userId"})
		c.Operator = "REGEX"
		c.CaseInsensitive = g.chance(30)
		c.Value = g.pick([]string{`^user-\d{1,3}$`, `@example\.(com|org)$`, `^[a-m]`, `\d7$`})
	case 6: // IN_CIDR
		c.ContextName = "remoteAddress"
		c.Operator = "IN_CIDR"
		c.Values = g.subset([]string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "2001:db8::/32", "203.0.113.7"})
	default: // IN on userId / tenant, the most common real-world constraint
		c.Operator = "IN"
		if g.chance(50) {
			c.ContextName, c.Values = "tenantId", g.subset(tenants)
		} else {
			c.ContextName = "userId"
			for range 3 + g.r.IntN(12) {
				c.Values = append(c.Values, "user-"+strconv.Itoa(g.r.IntN(2000)))
			}
		}
	}
	return c
}

// subset is a non-empty random subset of list, in list order.
func (g *generator) subset(list []string) []string {
	var out []string
	for _, v := range list {
		if g.chance(40) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = append(out, g.pick(list))
	}
	return out
}

// variants draws n variants whose weights sum to 1000 (the server's
// normalisation), with payloads and, for feature variants, overrides.
func (g *generator) variants(n int, feature bool) []engine.Variant {
	stick := g.pick([]string{"default", "default", "userId", "sessionId", "tenantId"})
	out := make([]engine.Variant, n)
	left := 1000
	for i := range out {
		w := left / (n - i)
		left -= w
		v := engine.Variant{
			Name:       fmt.Sprintf("variant-%c", 'a'+i),
			Weight:     w,
			WeightType: "variable",
			Stickiness: stick,
		}
		switch g.r.IntN(4) {
		case 0:
			v.Payload = &engine.VariantPayload{Type: "string", Value: "copy-" + strconv.Itoa(g.r.IntN(100))}
		case 1:
			v.Payload = &engine.VariantPayload{Type: "json", Value: fmt.Sprintf(`{"color":"%s","limit":%d}`, g.pick([]string{"red", "green", "blue"}), g.r.IntN(500))}
		case 2:
			v.Payload = &engine.VariantPayload{Type: "number", Value: strconv.Itoa(g.r.IntN(1000))}
		}
		if feature && i == 0 && g.chance(25) {
			v.Overrides = []engine.Override{{ContextName: "userId", Values: []string{"user-1", "user-42"}}}
		}
		out[i] = v
	}
	return out
}

// dependencies makes the flag depend on one earlier flag that has no
// dependencies itself.
func (g *generator) dependencies(earlier []engine.Feature) []engine.Dependency {
	parent := earlier[g.r.IntN(len(earlier))]
	if len(parent.Dependencies) > 0 {
		return nil
	}
	d := engine.Dependency{Feature: parent.Name}
	switch g.r.IntN(4) {
	case 0:
		off := false
		d.Enabled = &off
	case 1:
		if len(parent.Variants) > 0 {
			d.Variants = []string{parent.Variants[0].Name}
		}
	}
	return []engine.Dependency{d}
}

// Context is one realistic, fully populated context (deterministic).
func Context() *engine.Context {
	return Contexts(1)[0]
}

// Contexts returns k realistic contexts, deterministic by k.
func Contexts(k int) []*engine.Context {
	r := rand.New(rand.NewPCG(42, uint64(k)))
	out := make([]*engine.Context, k)
	for i := range out {
		out[i] = RandomContext(r)
	}
	return out
}

// RandomContext draws one realistic context from r: ids, an IPv4 or IPv6
// address, environment, appName and the custom properties the generated
// constraints use (country, plan, email, age, appVersion, tenantId).
func RandomContext(r *rand.Rand) *engine.Context {
	g := &generator{r: r}
	user := "user-" + strconv.Itoa(r.IntN(2000))
	ctx := &engine.Context{
		UserID:      user,
		SessionID:   fmt.Sprintf("sess-%08x", r.Uint32()),
		Environment: g.pick(environments),
		AppName:     g.pick(appNames),
		Properties: map[string]string{
			"country":    g.pick(countries),
			"plan":       g.pick(plans),
			"email":      user + "@" + g.pick(emailDomains),
			"age":        strconv.Itoa(16 + r.IntN(60)),
			"appVersion": g.pick(appVersions),
			"tenantId":   g.pick(tenants),
		},
	}
	if g.chance(80) {
		ctx.RemoteAddress = fmt.Sprintf("10.%d.%d.%d", r.IntN(256), r.IntN(256), 1+r.IntN(254))
	} else {
		ctx.RemoteAddress = fmt.Sprintf("2001:db8::%x", r.IntN(0xffff))
	}
	if g.chance(10) {
		ctx.UserID = ""
	}
	return ctx
}
