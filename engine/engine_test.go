package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/engine"
)

// compileJSON compiles a payload written as JSON, the way it arrives.
func compileJSON(t testing.TB, payload string, opts engine.Options) *engine.Snapshot {
	t.Helper()
	var cf engine.ClientFeatures
	if err := json.Unmarshal([]byte(payload), &cf); err != nil {
		t.Fatalf("payload: %v", err)
	}
	return engine.Compile(&cf, opts)
}

// oneConstraintFlag is a payload with flag "f": default strategy gated by
// one constraint.
func oneConstraintFlag(c engine.Constraint) *engine.ClientFeatures {
	return &engine.ClientFeatures{Version: 2, Features: []engine.Feature{{
		Name: "f", Enabled: true,
		Strategies: []engine.Strategy{{Name: "default", Constraints: []engine.Constraint{c}}},
	}}}
}

func props(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestInvalidConstraintValues: an operand that does not parse compiles to a
// constraint that fails, and inverted then makes it hold; an unknown
// operator fails either way.
func TestInvalidConstraintValues(t *testing.T) {
	ctx := &engine.Context{UserID: "u1", RemoteAddress: "10.1.2.3", CurrentTime: "2024-05-01T00:00:00Z",
		Properties: props("n", "5", "v", "1.2.3", "s", "hello")}
	tests := []struct {
		name string
		c    engine.Constraint
		want bool // not inverted; inverted wants !want unless unknown
	}{
		{"NUM_EQ not a number", engine.Constraint{ContextName: "n", Operator: "NUM_EQ", Value: "five"}, false},
		{"NUM_GT empty", engine.Constraint{ContextName: "n", Operator: "NUM_GT", Value: ""}, false},
		{"NUM_LT hex", engine.Constraint{ContextName: "n", Operator: "NUM_LT", Value: "0x10"}, false},
		{"NUM_LTE NaN", engine.Constraint{ContextName: "n", Operator: "NUM_LTE", Value: "NaN"}, false},
		{"NUM_GTE in values only", engine.Constraint{ContextName: "n", Operator: "NUM_GTE", Values: []string{"1"}}, false},
		{"DATE_AFTER garbage", engine.Constraint{ContextName: "currentTime", Operator: "DATE_AFTER", Value: "yesterday"}, false},
		{"DATE_BEFORE empty", engine.Constraint{ContextName: "currentTime", Operator: "DATE_BEFORE", Value: ""}, false},
		{"SEMVER_EQ garbage", engine.Constraint{ContextName: "v", Operator: "SEMVER_EQ", Value: "one.two"}, false},
		{"SEMVER_GT short", engine.Constraint{ContextName: "v", Operator: "SEMVER_GT", Value: "1.2"}, false},
		{"SEMVER_LT leading v", engine.Constraint{ContextName: "v", Operator: "SEMVER_LT", Value: "v1.2.4"}, false},
		{"SEMVER_GTE empty", engine.Constraint{ContextName: "v", Operator: "SEMVER_GTE", Value: ""}, false},
		{"SEMVER_LTE leading zero", engine.Constraint{ContextName: "v", Operator: "SEMVER_LTE", Value: "01.2.3"}, false},
		{"REGEX lookahead", engine.Constraint{ContextName: "s", Operator: "REGEX", Value: "h(?=e)"}, false},
		{"REGEX backreference", engine.Constraint{ContextName: "s", Operator: "REGEX", Value: `(l)\1`}, false},
		{"REGEX unbalanced", engine.Constraint{ContextName: "s", Operator: "REGEX", Value: "(hel"}, false},
		{"IN_CIDR only invalid", engine.Constraint{ContextName: "remoteAddress", Operator: "IN_CIDR", Values: []string{"10.0.0.0/33", "nope"}}, false},
		{"IN_CIDR empty", engine.Constraint{ContextName: "remoteAddress", Operator: "IN_CIDR"}, false},
		{"IN empty list", engine.Constraint{ContextName: "userId", Operator: "IN"}, false},
		{"NOT_IN empty list", engine.Constraint{ContextName: "userId", Operator: "NOT_IN"}, true},
		{"STR_CONTAINS no values", engine.Constraint{ContextName: "s", Operator: "STR_CONTAINS"}, false},
	}
	for _, tc := range tests {
		for _, inverted := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/inverted=%v", tc.name, inverted), func(t *testing.T) {
				c := tc.c
				c.Inverted = inverted
				snap := engine.Compile(oneConstraintFlag(c), engine.Options{})
				want := tc.want != inverted
				if got := snap.Evaluate("f", ctx).Enabled; got != want {
					t.Fatalf("enabled = %v, want %v", got, want)
				}
				if got := engine.CompileConstraints([]engine.Constraint{c}, engine.Options{}).Match(ctx); got != want {
					t.Fatalf("Matcher.Match = %v, want %v", got, want)
				}
			})
		}
	}
	for _, op := range []string{"NOT_A_VALID_OPERATOR", "", "in", "STR_MATCHES"} {
		for _, inverted := range []bool{false, true} {
			c := engine.Constraint{ContextName: "userId", Operator: op, Values: []string{"u1"}, Value: "u1", Inverted: inverted}
			if engine.Compile(oneConstraintFlag(c), engine.Options{}).Evaluate("f", ctx).Enabled {
				t.Errorf("unknown operator %q (inverted=%v) enabled the flag", op, inverted)
			}
		}
	}
}

// TestMissingFields: only NOT_IN holds on a missing field; inverted
// negates every known operator.
func TestMissingFields(t *testing.T) {
	ops := map[string]engine.Constraint{
		"IN":              {Values: []string{"x"}},
		"NOT_IN":          {Values: []string{"x"}},
		"STR_STARTS_WITH": {Values: []string{"x"}},
		"STR_ENDS_WITH":   {Values: []string{"x"}},
		"STR_CONTAINS":    {Values: []string{""}},
		"NUM_EQ":          {Value: "1"},
		"NUM_LT":          {Value: "1"},
		"DATE_AFTER":      {Value: "2020-01-01T00:00:00Z"},
		"SEMVER_EQ":       {Value: "1.0.0"},
		"SEMVER_LTE":      {Value: "1.0.0"},
		"REGEX":           {Value: ".*"},
		"IN_CIDR":         {Values: []string{"0.0.0.0/0", "::/0"}},
	}
	empty := &engine.Context{}
	for op, c := range ops {
		for _, inverted := range []bool{false, true} {
			c.ContextName, c.Operator, c.Inverted = "missingField", op, inverted
			want := (op == "NOT_IN") != inverted
			if got := engine.Compile(oneConstraintFlag(c), engine.Options{}).Evaluate("f", empty).Enabled; got != want {
				t.Errorf("%s on missing field, inverted=%v: enabled = %v, want %v", op, inverted, got, want)
			}
		}
	}
}

// TestFieldLookup: built-in fields first, then properties under the same
// name when the built-in is unset; other names read properties only, where
// an empty string is a present value. IN and NOT_IN values are cleaned as
// the Node SDK cleans them: empty ones dropped, the others trimmed.
func TestFieldLookup(t *testing.T) {
	in := func(field string, values ...string) engine.Constraint {
		return engine.Constraint{ContextName: field, Operator: "IN", Values: values}
	}
	tests := []struct {
		name string
		c    engine.Constraint
		ctx  engine.Context
		want bool
	}{
		{"built-in set", in("userId", "a"), engine.Context{UserID: "a", Properties: props("userId", "b")}, true},
		{"built-in wins over property", in("userId", "b"), engine.Context{UserID: "a", Properties: props("userId", "b")}, false},
		{"built-in unset falls back to property", in("userId", "b"), engine.Context{Properties: props("userId", "b")}, true},
		{"environment from property", in("environment", "prod"), engine.Context{Properties: props("environment", "prod")}, true},
		{"appName", in("appName", "web"), engine.Context{AppName: "web"}, true},
		{"sessionId", in("sessionId", "s1"), engine.Context{SessionID: "s1"}, true},
		{"remoteAddress", in("remoteAddress", "1.2.3.4"), engine.Context{RemoteAddress: "1.2.3.4"}, true},
		{"currentTime", in("currentTime", "2024-01-01T00:00:00Z"), engine.Context{CurrentTime: "2024-01-01T00:00:00Z"}, true},
		{"custom property", in("plan", "pro"), engine.Context{Properties: props("plan", "pro")}, true},
		{"custom names are case-sensitive", in("Plan", "pro"), engine.Context{Properties: props("plan", "pro")}, false},
		{"empty property is present", in("plan", " "), engine.Context{Properties: props("plan", "")}, true},
		{"empty property with NOT_IN", engine.Constraint{ContextName: "plan", Operator: "NOT_IN", Values: []string{" "}}, engine.Context{Properties: props("plan", "")}, false},
		{"values are trimmed", in("plan", " pro\t"), engine.Context{Properties: props("plan", "pro")}, true},
		{"context values are not", in("plan", "pro"), engine.Context{Properties: props("plan", " pro")}, false},
		{"empty values are dropped", in("plan", ""), engine.Context{Properties: props("plan", "")}, false},
		{"NOT_IN with only empty values", engine.Constraint{ContextName: "plan", Operator: "NOT_IN", Values: []string{""}}, engine.Context{Properties: props("plan", "")}, true},
		{"large IN list trimmed", in("userId", append(manyIDs(100), " id-x ")...), engine.Context{UserID: "id-x"}, true},
		{"IN ignores caseInsensitive", engine.Constraint{ContextName: "plan", Operator: "IN", Values: []string{"PRO"}, CaseInsensitive: true}, engine.Context{Properties: props("plan", "pro")}, false},
		{"large IN list", in("userId", manyIDs(100)...), engine.Context{UserID: "id-77"}, true},
		{"large IN list miss", in("userId", manyIDs(100)...), engine.Context{UserID: "id-100"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := engine.Compile(oneConstraintFlag(tc.c), engine.Options{}).Evaluate("f", &tc.ctx).Enabled; got != tc.want {
				t.Fatalf("enabled = %v, want %v", got, tc.want)
			}
		})
	}
}

func manyIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("id-%d", i)
	}
	return out
}

// TestStringOperators covers case folding, including non-ASCII values, and
// the cleaning of values: empty ones dropped, the others trimmed of what
// JavaScript's trim removes (a no-break space, not U+0085).
func TestStringOperators(t *testing.T) {
	tests := []struct {
		op     string
		values []string
		fold   bool
		v      string
		want   bool
	}{
		{"STR_STARTS_WITH", []string{"Hello"}, false, "hello world", false},
		{"STR_STARTS_WITH", []string{"Hello"}, true, "hello world", true},
		{"STR_STARTS_WITH", []string{"hello"}, true, "HELLO world", true},
		{"STR_ENDS_WITH", []string{"@Example.com"}, true, "ANNA@EXAMPLE.COM", true},
		{"STR_ENDS_WITH", []string{"@Example.com"}, false, "anna@example.com", false},
		{"STR_CONTAINS", []string{"MID"}, true, "aamidaa", true},
		{"STR_CONTAINS", []string{"x", "dd"}, false, "addb", true},
		{"STR_CONTAINS", []string{"toolong"}, true, "short", false},
		{"STR_STARTS_WITH", []string{"ÅS"}, true, "åsgård", true},
		{"STR_ENDS_WITH", []string{"GÅRD"}, true, "Åsgård", true},
		{"STR_CONTAINS", []string{"ÜBER"}, true, "das ist über", true},
		{"STR_CONTAINS", []string{"über"}, true, "UBER", false},
		{"STR_CONTAINS", []string{""}, false, "anything", false},
		{"STR_CONTAINS", []string{" "}, false, "anything", true},
		{"STR_STARTS_WITH", []string{" hel", ""}, false, "hello", true},
		{"STR_ENDS_WITH", []string{"LO\u00a0"}, true, "hello", true},
		{"STR_ENDS_WITH", []string{"lo\u0085"}, false, "hello", false},
	}
	for _, tc := range tests {
		c := engine.Constraint{ContextName: "s", Operator: tc.op, Values: tc.values, CaseInsensitive: tc.fold}
		ctx := &engine.Context{Properties: props("s", tc.v)}
		if got := engine.CompileConstraints([]engine.Constraint{c}, engine.Options{}).Match(ctx); got != tc.want {
			t.Errorf("%s %q (fold=%v) on %q = %v, want %v", tc.op, tc.values, tc.fold, tc.v, got, tc.want)
		}
	}
}

// TestNumberAndDateOperators covers parsing details of NUM_* and DATE_*.
func TestNumberAndDateOperators(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	opts := engine.Options{Now: func() time.Time { return now }}
	tests := []struct {
		c    engine.Constraint
		ctx  engine.Context
		want bool
	}{
		{engine.Constraint{ContextName: "n", Operator: "NUM_EQ", Value: "12"}, engine.Context{Properties: props("n", "12.0")}, true},
		{engine.Constraint{ContextName: "n", Operator: "NUM_EQ", Value: " 12 "}, engine.Context{Properties: props("n", " 12")}, true},
		{engine.Constraint{ContextName: "n", Operator: "NUM_GT", Value: "-1.5"}, engine.Context{Properties: props("n", "-1")}, true},
		{engine.Constraint{ContextName: "n", Operator: "NUM_GTE", Value: "1e3"}, engine.Context{Properties: props("n", "1000")}, true},
		{engine.Constraint{ContextName: "n", Operator: "NUM_LT", Value: "5"}, engine.Context{Properties: props("n", "")}, false},
		{engine.Constraint{ContextName: "n", Operator: "NUM_LT", Value: "5"}, engine.Context{Properties: props("n", "four")}, false},
		{engine.Constraint{ContextName: "n", Operator: "NUM_LTE", Value: "5"}, engine.Context{Properties: props("n", "5")}, true},
		// currentTime defaults to Options.Now.
		{engine.Constraint{ContextName: "currentTime", Operator: "DATE_AFTER", Value: "2025-06-01T11:59:59Z"}, engine.Context{}, true},
		{engine.Constraint{ContextName: "currentTime", Operator: "DATE_BEFORE", Value: "2025-06-01T12:00:00Z"}, engine.Context{}, false},
		{engine.Constraint{ContextName: "currentTime", Operator: "DATE_AFTER", Value: "2025-06-01T12:00:00Z"}, engine.Context{}, false},
		{engine.Constraint{ContextName: "currentTime", Operator: "DATE_AFTER", Value: "2025-06-01T13:00:00+02:00"}, engine.Context{}, true},
		{engine.Constraint{ContextName: "currentTime", Operator: "DATE_BEFORE", Value: "2030-01-01T00:00:00.000Z"}, engine.Context{CurrentTime: "2029-12-31T23:59:59.999Z"}, true},
		{engine.Constraint{ContextName: "currentTime", Operator: "DATE_BEFORE", Value: "2030-01-01T00:00:00Z"}, engine.Context{CurrentTime: "not a date"}, false},
		{engine.Constraint{ContextName: "currentTime", Operator: "DATE_AFTER", Value: "2020-01-01"}, engine.Context{}, true},
		// A date in another field: that field, and missing is false.
		{engine.Constraint{ContextName: "signup", Operator: "DATE_AFTER", Value: "2020-01-01T00:00:00Z"}, engine.Context{Properties: props("signup", "2021-01-01T00:00:00Z")}, true},
		{engine.Constraint{ContextName: "signup", Operator: "DATE_AFTER", Value: "2020-01-01T00:00:00Z"}, engine.Context{}, false},
	}
	for i, tc := range tests {
		got := engine.CompileConstraints([]engine.Constraint{tc.c}, opts).Match(&tc.ctx)
		if got != tc.want {
			t.Errorf("case %d: %s %q on %+v = %v, want %v", i, tc.c.Operator, tc.c.Value, tc.ctx, got, tc.want)
		}
	}
}

// TestNonASCIIUserIDs: rollouts hash the UTF-8 bytes of the id. "groupA:åäö"
// hashes (seed 0) to 1434271075, normalised 76; Node's UTF-16 low-byte
// hashing would give 67.
func TestNonASCIIUserIDs(t *testing.T) {
	for _, tc := range []struct {
		rollout string
		want    bool
	}{{"75", false}, {"76", true}, {"67", false}} {
		snap := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{
			Name: "f", Enabled: true,
			Strategies: []engine.Strategy{{Name: "flexibleRollout", Parameters: engine.Parameters{
				"rollout": tc.rollout, "stickiness": "userId", "groupId": "groupA"}}},
		}}}, engine.Options{})
		if got := snap.Evaluate("f", &engine.Context{UserID: "åäö"}).Enabled; got != tc.want {
			t.Errorf("rollout %s for userId åäö: enabled = %v, want %v", tc.rollout, got, tc.want)
		}
	}
	// Other non-ASCII ids evaluate consistently and never panic.
	snap := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{
		Name: "f", Enabled: true,
		Strategies: []engine.Strategy{{Name: "gradualRolloutUserId", Parameters: engine.Parameters{"percentage": "50", "groupId": "g"}}},
		Variants:   []engine.Variant{{Name: "a", Weight: 1}, {Name: "b", Weight: 1}},
	}}}, engine.Options{})
	for _, id := range []string{"日本語ユーザー", "emoji-😀", "\xff\xfe invalid utf-8", strings.Repeat("ø", 500)} {
		a := snap.Evaluate("f", &engine.Context{UserID: id})
		b := snap.Evaluate("f", &engine.Context{UserID: id})
		if a.Enabled != b.Enabled || a.Variant != b.Variant {
			t.Errorf("userId %q: not sticky", id)
		}
	}
}

// TestMissingSegment: a strategy that references an unknown segment is
// false, and the flag's other strategies still count.
func TestMissingSegment(t *testing.T) {
	snap := compileJSON(t, `{"version":2,"segments":[{"id":1,"constraints":[{"contextName":"plan","operator":"IN","values":["pro"]}]}],
	 "features":[
	  {"name":"only-missing","enabled":true,"strategies":[{"name":"default","segments":[7]}]},
	  {"name":"missing-then-ok","enabled":true,"strategies":[
	     {"name":"default","segments":[1,7],"variants":[{"name":"wrong","weight":1}]},
	     {"name":"default","segments":[1],"variants":[{"name":"right","weight":1}]}]},
	  {"name":"present","enabled":true,"strategies":[{"name":"default","segments":[1]}]}]}`, engine.Options{})
	pro := &engine.Context{Properties: props("plan", "pro")}
	if snap.Evaluate("only-missing", pro).Enabled {
		t.Error("strategy with a missing segment enabled the flag")
	}
	r := snap.Evaluate("missing-then-ok", pro)
	if !r.Enabled || r.Variant.Name != "right" {
		t.Errorf("missing-then-ok = %v/%s, want true/right", r.Enabled, r.Variant.Name)
	}
	if !snap.Evaluate("present", pro).Enabled || snap.Evaluate("present", &engine.Context{}).Enabled {
		t.Error("segment constraint not applied")
	}
}

// TestZeroTotalWeight: variants whose weights sum to 0 give the disabled
// variant with feature_enabled true.
func TestZeroTotalWeight(t *testing.T) {
	snap := compileJSON(t, `{"features":[
	  {"name":"f","enabled":true,"strategies":[],"variants":[{"name":"a","weight":0},{"name":"b","weight":0,"overrides":[{"contextName":"userId","values":["u1"]}]}]},
	  {"name":"s","enabled":true,"strategies":[{"name":"default","variants":[{"name":"x","weight":0}]}],"variants":[{"name":"feature","weight":1}]},
	  {"name":"some-zero","enabled":true,"strategies":[],"variants":[{"name":"zero","weight":0},{"name":"one","weight":1}]}]}`, engine.Options{})
	for _, name := range []string{"f", "s"} {
		for _, ctx := range []*engine.Context{{UserID: "u1"}, {UserID: "u2"}, {}} {
			r := snap.Evaluate(name, ctx)
			if !r.Enabled || r.Variant.Name != "disabled" || r.Variant.Enabled || !r.Variant.FeatureEnabled {
				t.Errorf("%s %+v: got %v %+v, want enabled with disabled variant (feature_enabled)", name, ctx, r.Enabled, *r.Variant)
			}
		}
	}
	for i := range 50 {
		if v := snap.Evaluate("some-zero", &engine.Context{UserID: fmt.Sprint(i)}).Variant; v.Name != "one" {
			t.Fatalf("zero-weight variant chosen: %s", v.Name)
		}
	}
}

// TestZeroRollout: 0 % never enables, 100 % always does, for every kind of
// stickiness.
func TestZeroRollout(t *testing.T) {
	for _, sticky := range []string{"default", "userId", "sessionId", "random", "tenant"} {
		for _, pct := range []string{"0", "100"} {
			snap := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{
				{Name: "flex", Enabled: true, Strategies: []engine.Strategy{{Name: "flexibleRollout",
					Parameters: engine.Parameters{"rollout": pct, "stickiness": sticky, "groupId": "g"}}}},
				{Name: "user", Enabled: true, Strategies: []engine.Strategy{{Name: "gradualRolloutUserId",
					Parameters: engine.Parameters{"percentage": pct, "groupId": "g"}}}},
				{Name: "session", Enabled: true, Strategies: []engine.Strategy{{Name: "gradualRolloutSessionId",
					Parameters: engine.Parameters{"percentage": pct, "groupId": "g"}}}},
				{Name: "random", Enabled: true, Strategies: []engine.Strategy{{Name: "gradualRolloutRandom",
					Parameters: engine.Parameters{"percentage": pct}}}},
			}}, engine.Options{})
			want := pct == "100"
			for i := range 200 {
				ctx := &engine.Context{UserID: fmt.Sprint("u", i), SessionID: fmt.Sprint("s", i), Properties: props("tenant", fmt.Sprint("t", i))}
				for _, r := range snap.EvaluateAll(ctx, nil) {
					if r.Enabled != want {
						t.Fatalf("stickiness %s, %s%%: %s enabled = %v", sticky, pct, r.Name, r.Enabled)
					}
				}
			}
		}
	}
}

// TestRolloutDistribution: a 30 % rollout enables roughly 30 % of users.
func TestRolloutDistribution(t *testing.T) {
	snap := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{Name: "f", Enabled: true,
		Strategies: []engine.Strategy{{Name: "flexibleRollout", Parameters: engine.Parameters{"rollout": "30", "groupId": "f"}}}}}}, engine.Options{})
	on := 0
	for i := range 10000 {
		if snap.Evaluate("f", &engine.Context{UserID: fmt.Sprint("user-", i)}).Enabled {
			on++
		}
	}
	if on < 2800 || on > 3200 {
		t.Fatalf("30%% rollout enabled %d of 10000 users", on)
	}
}

// TestFiftyStrategies: the first enabled strategy wins and carries its
// variants, however many strategies come before it.
func TestFiftyStrategies(t *testing.T) {
	f := engine.Feature{Name: "many", Enabled: true, Variants: []engine.Variant{{Name: "feature", Weight: 1}}}
	for i := range 50 {
		f.Strategies = append(f.Strategies, engine.Strategy{
			Name:        "default",
			Constraints: []engine.Constraint{{ContextName: "n", Operator: "NUM_EQ", Value: fmt.Sprint(i)}},
			Variants:    []engine.Variant{{Name: fmt.Sprint("s", i), Weight: 1}},
		})
	}
	snap := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{f}}, engine.Options{})
	for _, i := range []int{0, 1, 25, 49} {
		r := snap.Evaluate("many", &engine.Context{Properties: props("n", fmt.Sprint(i))})
		if !r.Enabled || r.Variant.Name != fmt.Sprint("s", i) {
			t.Errorf("n=%d: got %v/%s", i, r.Enabled, r.Variant.Name)
		}
	}
	if snap.Evaluate("many", &engine.Context{Properties: props("n", "50")}).Enabled {
		t.Error("n=50 matched no strategy but was enabled")
	}
}

// TestDisabledStrategiesSkipped: a disabled strategy is never evaluated; a
// flag whose strategies are all disabled is off.
func TestDisabledStrategiesSkipped(t *testing.T) {
	snap := compileJSON(t, `{"features":[
	  {"name":"all-disabled","enabled":true,"strategies":[{"name":"default","disabled":true}]},
	  {"name":"second","enabled":true,"strategies":[
	     {"name":"default","disabled":true,"variants":[{"name":"wrong","weight":1}]},
	     {"name":"userWithId","parameters":{"userIds":"a"},"variants":[{"name":"right","weight":1}]}]}]}`, engine.Options{})
	if snap.Evaluate("all-disabled", &engine.Context{}).Enabled {
		t.Error("flag with only disabled strategies is enabled")
	}
	if snap.Evaluate("second", &engine.Context{UserID: "b"}).Enabled {
		t.Error("disabled default strategy was evaluated")
	}
	if r := snap.Evaluate("second", &engine.Context{UserID: "a"}); !r.Enabled || r.Variant.Name != "right" {
		t.Errorf("second for a = %v/%s", r.Enabled, r.Variant.Name)
	}
}

type customFunc func(map[string]string, *engine.Context) (bool, error)

func (f customFunc) IsEnabled(p map[string]string, ctx *engine.Context) (bool, error) {
	return f(p, ctx)
}

// TestCustomStrategies: registered implementations are called with the
// parameters; an error or a panic makes that strategy false without
// affecting the others; unregistered names are false.
func TestCustomStrategies(t *testing.T) {
	opts := engine.Options{CustomStrategies: map[string]engine.CustomStrategy{
		"byTeam": customFunc(func(p map[string]string, ctx *engine.Context) (bool, error) {
			return p["team"] == ctx.Properties["team"], nil
		}),
		"fails":  customFunc(func(map[string]string, *engine.Context) (bool, error) { return true, errors.New("boom") }),
		"panics": customFunc(func(map[string]string, *engine.Context) (bool, error) { panic("script crashed") }),
		"nilPanic": customFunc(func(p map[string]string, ctx *engine.Context) (bool, error) {
			var m map[string]int
			m["x"]++ // a runtime panic, not a deliberate one
			return true, nil
		}),
	}}
	snap := compileJSON(t, `{"features":[
	  {"name":"team","enabled":true,"strategies":[{"name":"byTeam","parameters":{"team":"core"}}]},
	  {"name":"fails","enabled":true,"strategies":[{"name":"fails"}]},
	  {"name":"panics","enabled":true,"strategies":[{"name":"panics"}]},
	  {"name":"nilPanic","enabled":true,"strategies":[{"name":"nilPanic"}]},
	  {"name":"panics-then-default","enabled":true,"strategies":[{"name":"panics"},{"name":"default","variants":[{"name":"ok","weight":1}]}]},
	  {"name":"unknown","enabled":true,"strategies":[{"name":"notRegistered"}]}]}`, opts)
	ctx := &engine.Context{Properties: props("team", "core")}
	want := map[string]bool{"team": true, "fails": false, "panics": false, "nilPanic": false, "panics-then-default": true, "unknown": false}
	for _, r := range snap.EvaluateAll(ctx, nil) {
		if r.Enabled != want[r.Name] {
			t.Errorf("%s: enabled = %v, want %v", r.Name, r.Enabled, want[r.Name])
		}
	}
	if r := snap.Evaluate("panics-then-default", ctx); r.Variant.Name != "ok" {
		t.Errorf("variant after a panicking strategy = %s", r.Variant.Name)
	}
	if snap.Evaluate("team", &engine.Context{Properties: props("team", "web")}).Enabled {
		t.Error("custom strategy ignored its parameters")
	}
}

// TestDependencies covers parent-flag edge cases beyond the specification.
func TestDependencies(t *testing.T) {
	snap := compileJSON(t, `{"features":[
	  {"name":"parent-on","enabled":true,"strategies":[],"variants":[{"name":"blue","weight":1}]},
	  {"name":"parent-off","enabled":false,"strategies":[]},
	  {"name":"parent-pro","enabled":true,"strategies":[{"name":"default","constraints":[{"contextName":"plan","operator":"IN","values":["pro"]}]}]},
	  {"name":"parent-plain","enabled":true,"strategies":[]},
	  {"name":"child-of-on","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-on"}]},
	  {"name":"child-of-off","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-off"}]},
	  {"name":"child-wants-off","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-off","enabled":false}]},
	  {"name":"child-wants-off-but-on","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-on","enabled":false,"variants":["blue"]}]},
	  {"name":"child-variant-blue","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-on","variants":["red","blue"]}]},
	  {"name":"child-variant-red","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-on","variants":["red"]}]},
	  {"name":"child-variant-disabled","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-plain","variants":["disabled"]}]},
	  {"name":"child-of-missing","enabled":true,"strategies":[],"dependencies":[{"feature":"nope"}]},
	  {"name":"child-of-pro","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-pro"}],"variants":[{"name":"v","weight":1}]},
	  {"name":"two-parents","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-on"},{"feature":"parent-off","enabled":false}]},
	  {"name":"two-parents-one-bad","enabled":true,"strategies":[],"dependencies":[{"feature":"parent-on"},{"feature":"parent-off"}]},
	  {"name":"grandchild","enabled":true,"strategies":[],"dependencies":[{"feature":"child-of-on"}]},
	  {"name":"self","enabled":true,"strategies":[],"dependencies":[{"feature":"self"}]},
	  {"name":"cycle-a","enabled":true,"strategies":[],"dependencies":[{"feature":"cycle-b"}]},
	  {"name":"cycle-b","enabled":true,"strategies":[],"dependencies":[{"feature":"cycle-a"}]},
	  {"name":"disabled-child","enabled":false,"strategies":[],"dependencies":[{"feature":"parent-on"}]}]}`, engine.Options{})
	want := map[string]bool{
		"child-of-on": true, "child-of-off": false, "child-wants-off": true, "child-wants-off-but-on": false,
		"child-variant-blue": true, "child-variant-red": false, "child-variant-disabled": true,
		"child-of-missing": false, "two-parents": true, "two-parents-one-bad": false,
		"grandchild": false, "self": false, "cycle-a": false, "cycle-b": false, "disabled-child": false,
	}
	ctx := &engine.Context{UserID: "u"}
	for name, w := range want {
		r := snap.Evaluate(name, ctx)
		if r.Enabled != w {
			t.Errorf("%s: enabled = %v, want %v", name, r.Enabled, w)
		}
		if !r.Enabled && (r.Variant.Name != "disabled" || r.Variant.FeatureEnabled) {
			t.Errorf("%s: off but variant %+v", name, *r.Variant)
		}
	}
	// The parent is evaluated with the child's context.
	if snap.Evaluate("child-of-pro", ctx).Enabled {
		t.Error("child-of-pro enabled although the parent is off for this context")
	}
	if r := snap.Evaluate("child-of-pro", &engine.Context{Properties: props("plan", "pro")}); !r.Enabled || r.Variant.Name != "v" {
		t.Errorf("child-of-pro for a pro user = %v/%s", r.Enabled, r.Variant.Name)
	}
}

// TestRemoteAddressStrategy covers IPv4, IPv6, CIDRs and invalid entries.
func TestRemoteAddressStrategy(t *testing.T) {
	snap := compileJSON(t, `{"features":[{"name":"ip","enabled":true,"strategies":[{"name":"remoteAddress",
	  "parameters":{"IPs":"192.168.1.1, not-an-ip, 10.0.0.0/8 ,2001:db8::/32, ::1, 300.1.1.1, fe80::/10"}}]}]}`, engine.Options{})
	tests := map[string]bool{
		"192.168.1.1":     true,
		"192.168.1.2":     false,
		"10.255.0.1":      true,
		"11.0.0.1":        false,
		"2001:db8::1":     true,
		"2001:db9::1":     false,
		"::1":             true,
		"::2":             false,
		"fe80::abcd":      true,
		"::ffff:10.1.2.3": true,
		" 10.1.1.1 ":      true,
		"":                false,
		"garbage":         false,
		"300.1.1.1":       false,
	}
	for addr, want := range tests {
		if got := snap.Evaluate("ip", &engine.Context{RemoteAddress: addr}).Enabled; got != want {
			t.Errorf("remoteAddress %q: enabled = %v, want %v", addr, got, want)
		}
	}
	none := compileJSON(t, `{"features":[{"name":"ip","enabled":true,"strategies":[{"name":"remoteAddress","parameters":{}}]}]}`, engine.Options{})
	if none.Evaluate("ip", &engine.Context{RemoteAddress: "10.0.0.1"}).Enabled {
		t.Error("remoteAddress without IPs enabled the flag")
	}
}

// TestInCIDROperator covers IN_CIDR beyond the specification.
func TestInCIDROperator(t *testing.T) {
	c := engine.Constraint{ContextName: "remoteAddress", Operator: "IN_CIDR",
		Values: []string{"10.0.0.0/8", "bogus", " 192.168.0.5 ", "2001:db8::/48", "::ffff:172.16.0.0/108"}}
	m := engine.CompileConstraints([]engine.Constraint{c}, engine.Options{})
	tests := map[string]bool{
		"10.9.9.9": true, "192.168.0.5": true, "192.168.0.6": false, "2001:db8:0:1::": true,
		"2001:db8:1::": false, "172.16.3.4": true, "172.32.0.1": false, "fe80::1%eth0": false,
	}
	for addr, want := range tests {
		if got := m.Match(&engine.Context{RemoteAddress: addr}); got != want {
			t.Errorf("IN_CIDR %q = %v, want %v", addr, got, want)
		}
	}
	// A property may carry the address too.
	c.ContextName = "clientIp"
	if !engine.CompileConstraints([]engine.Constraint{c}, engine.Options{}).Match(&engine.Context{Properties: props("clientIp", "10.1.1.1")}) {
		t.Error("IN_CIDR on a custom field")
	}
}

// TestApplicationHostname: membership of Options.Hostname, case-insensitive,
// entries trimmed.
func TestApplicationHostname(t *testing.T) {
	payload := `{"features":[
	  {"name":"h","enabled":true,"strategies":[{"name":"applicationHostname","parameters":{"hostNames":"web-1, Web-2 ,api"}}]},
	  {"name":"none","enabled":true,"strategies":[{"name":"applicationHostname","parameters":{}}]}]}`
	for host, want := range map[string]bool{"web-1": true, "WEB-2": true, "api": true, "web-3": false, "ap": false} {
		snap := compileJSON(t, payload, engine.Options{Hostname: host})
		if got := snap.Evaluate("h", &engine.Context{}).Enabled; got != want {
			t.Errorf("hostname %q: enabled = %v, want %v", host, got, want)
		}
		if snap.Evaluate("none", &engine.Context{}).Enabled {
			t.Errorf("hostname %q: strategy without hostNames enabled", host)
		}
	}
	t.Setenv("HOSTNAME", "from-env")
	snap := compileJSON(t, `{"features":[{"name":"h","enabled":true,"strategies":[{"name":"applicationHostname","parameters":{"hostNames":"from-env"}}]}]}`, engine.Options{})
	if !snap.Evaluate("h", &engine.Context{}).Enabled {
		t.Error("$HOSTNAME not used when Options.Hostname is empty")
	}
}

// TestUserWithID covers list parsing.
func TestUserWithID(t *testing.T) {
	snap := compileJSON(t, `{"features":[{"name":"u","enabled":true,"strategies":[{"name":"userWithId","parameters":{"userIds":" a ,b,, c"}}]}]}`, engine.Options{})
	for id, want := range map[string]bool{"a": true, "b": true, "c": true, "": false, " a": false, "d": false} {
		if got := snap.Evaluate("u", &engine.Context{UserID: id}).Enabled; got != want {
			t.Errorf("userId %q: enabled = %v, want %v", id, got, want)
		}
	}
}

// TestVariantsResolution covers stickiness, overrides and payload copies.
func TestVariantsResolution(t *testing.T) {
	snap := compileJSON(t, `{"features":[
	  {"name":"v","enabled":true,"strategies":[],"variants":[
	     {"name":"a","weight":500,"stickiness":"tenant","payload":{"type":"json","value":"{\"k\":1}"},
	      "overrides":[{"contextName":"userId","values":["vip"]},{"contextName":"plan","values":["pro"]}]},
	     {"name":"b","weight":500,"stickiness":"tenant"}]},
	  {"name":"strat","enabled":true,"strategies":[{"name":"flexibleRollout","parameters":{"rollout":"100","stickiness":"tenant","groupId":"grp"},
	     "variants":[{"name":"x","weight":50},{"name":"y","weight":50}]}],"variants":[{"name":"feature","weight":1}]}]}`, engine.Options{})
	if r := snap.Evaluate("v", &engine.Context{UserID: "vip"}); r.Variant.Name != "a" || r.Variant.Payload == nil || r.Variant.Payload.Value != `{"k":1}` {
		t.Errorf("override by userId: %+v", *r.Variant)
	}
	if r := snap.Evaluate("v", &engine.Context{Properties: props("plan", "pro", "tenant", "t")}); r.Variant.Name != "a" {
		t.Errorf("override by property: %s", r.Variant.Name)
	}
	// Custom stickiness is sticky per tenant, and both variants occur.
	seen := map[string]bool{}
	for i := range 100 {
		ctx := &engine.Context{UserID: fmt.Sprint("u", i), Properties: props("tenant", fmt.Sprint("t", i%10))}
		r1 := snap.Evaluate("v", ctx)
		r2 := snap.Evaluate("v", &engine.Context{UserID: "other", Properties: props("tenant", fmt.Sprint("t", i%10))})
		if r1.Variant != r2.Variant {
			t.Fatalf("tenant stickiness not sticky for t%d", i%10)
		}
		seen[r1.Variant.Name] = true
		if s := snap.Evaluate("strat", ctx); s.Variant.Name != "x" && s.Variant.Name != "y" {
			t.Fatalf("strategy variants not used: %s", s.Variant.Name)
		}
	}
	if !seen["a"] || !seen["b"] {
		t.Errorf("variants seen: %v", seen)
	}
	// The snapshot's payloads are copies: changing the input does not
	// change results.
	snap.Features().Features[0].Variants[0].Payload.Value = "mutated"
	if r := snap.Evaluate("v", &engine.Context{UserID: "vip"}); r.Variant.Payload.Value != `{"k":1}` {
		t.Error("variant payload aliases the input payload")
	}
}

// TestSnapshotAccessors covers Len, Name, Index, Variant IDs and missing
// flags.
func TestSnapshotAccessors(t *testing.T) {
	snap := compileJSON(t, `{"features":[
	  {"name":"a","enabled":true,"strategies":[],"variants":[{"name":"v1","weight":1},{"name":"v2","weight":1}]},
	  {"name":"ø-utf8","enabled":false,"strategies":[{"name":"default","variants":[{"name":"s1","weight":1}]}],"impressionData":true},
	  {"name":"a","enabled":false,"strategies":[]}]}`, engine.Options{})
	if snap.Len() != 3 || snap.Name(1) != "ø-utf8" {
		t.Fatalf("Len/Name: %d %q", snap.Len(), snap.Name(1))
	}
	if i, ok := snap.Index("a"); !ok || i != 2 {
		t.Errorf("Index(a) = %d %v, want the last duplicate (2)", i, ok)
	}
	if _, ok := snap.Index("missing"); ok {
		t.Error("Index(missing) found")
	}
	r := snap.Evaluate("missing", &engine.Context{})
	if r.Found || r.Enabled || r.Index != -1 || r.Name != "missing" || r.Variant.Name != "disabled" || r.Variant.FeatureEnabled {
		t.Errorf("missing flag: %+v %+v", r, *r.Variant)
	}
	if r := snap.Evaluate("ø-utf8", nil); !r.Found || r.Enabled || !r.ImpressionData {
		t.Errorf("ø-utf8: %+v", r)
	}
	// IDs are dense and Variant(id) round-trips; the shared disabled
	// variants have IDs too.
	if snap.VariantCount() != 2+3 {
		t.Errorf("VariantCount = %d, want 5", snap.VariantCount())
	}
	for id := range snap.VariantCount() {
		if v := snap.Variant(id); v == nil || v.ID != id {
			t.Errorf("Variant(%d) = %+v", id, v)
		}
	}
	if snap.Variant(-1) != nil || snap.Variant(snap.VariantCount()) != nil {
		t.Error("out-of-range Variant not nil")
	}
	// Each variant belongs to the flag it was declared on (strategy
	// variants too); the shared ones and IDs out of range to none.
	for id, want := range []int{-1, -1, 0, 0, 1} {
		if got := snap.VariantFlag(id); got != want {
			t.Errorf("VariantFlag(%d) = %d, want %d", id, got, want)
		}
	}
	if snap.VariantFlag(-1) != -1 || snap.VariantFlag(snap.VariantCount()) != -1 {
		t.Error("out-of-range VariantFlag not -1")
	}
	all := snap.EvaluateAll(&engine.Context{}, nil)
	if len(all) != 3 || !all[0].Enabled || all[0].Variant.FeatureEnabled != true || all[2].Enabled {
		t.Errorf("EvaluateAll: %+v", all)
	}
	on, off := all[0], all[2]
	if snap.Variant(off.Variant.ID) != off.Variant || snap.Variant(on.Variant.ID) != on.Variant {
		t.Error("result variants are not the snapshot's")
	}
	if engine.Compile(nil, engine.Options{}).Len() != 0 {
		t.Error("nil payload")
	}
}

// TestEmptyStrategiesAndDisabledFlag: an enabled flag with no strategies is
// on for everyone; a disabled flag is off whatever its strategies.
func TestEmptyStrategiesAndDisabledFlag(t *testing.T) {
	snap := compileJSON(t, `{"features":[
	  {"name":"on","enabled":true,"strategies":[]},
	  {"name":"no-key","enabled":true},
	  {"name":"off","enabled":false,"strategies":[{"name":"default"}],"variants":[{"name":"v","weight":1}]}]}`, engine.Options{})
	if !snap.Evaluate("on", nil).Enabled || !snap.Evaluate("no-key", nil).Enabled {
		t.Error("flag without strategies is off")
	}
	if r := snap.Evaluate("off", nil); r.Enabled || r.Variant.Name != "disabled" || r.Variant.FeatureEnabled {
		t.Errorf("disabled flag: %+v", r)
	}
}

// TestParametersAcceptNumbers: numeric and boolean parameters (sent by some
// servers) work like their string forms.
func TestParametersAcceptNumbers(t *testing.T) {
	snap := compileJSON(t, `{"features":[{"name":"f","enabled":true,"strategies":[{"name":"flexibleRollout","parameters":{"rollout":100,"stickiness":"default","groupId":"f"}}]}]}`, engine.Options{})
	if !snap.Evaluate("f", &engine.Context{UserID: "x"}).Enabled {
		t.Error("numeric rollout parameter ignored")
	}
}

// TestGroupIDFallback: a flexibleRollout or strategy-variant list without a
// groupId (or with an empty one) hashes under the flag name.
func TestGroupIDFallback(t *testing.T) {
	// "Feature.flexibleRollout.10:174" normalises to 10, ":499" to 32.
	for _, params := range []engine.Parameters{
		{"rollout": "10"},
		{"rollout": "10", "groupId": ""},
		{"rollout": "10", "groupId": "Feature.flexibleRollout.10"},
	} {
		snap := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{Name: "Feature.flexibleRollout.10", Enabled: true,
			Strategies: []engine.Strategy{{Name: "flexibleRollout", Parameters: params}}}}}, engine.Options{})
		if !snap.Evaluate("Feature.flexibleRollout.10", &engine.Context{UserID: "174"}).Enabled ||
			snap.Evaluate("Feature.flexibleRollout.10", &engine.Context{UserID: "499"}).Enabled {
			t.Errorf("parameters %v: not hashed under the flag name", params)
		}
	}
	// Strategy variants: users 232, 607, 656 of "Feature.Variants.C" with
	// weights 33/33/33 land on variant1, variant2, variant3.
	variants := []engine.Variant{{Name: "variant1", Weight: 33}, {Name: "variant2", Weight: 33}, {Name: "variant3", Weight: 33}}
	snap := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{Name: "Feature.Variants.C", Enabled: true,
		Strategies: []engine.Strategy{{Name: "default", Variants: variants}}}}}, engine.Options{})
	for user, want := range map[string]string{"232": "variant1", "607": "variant2", "656": "variant3"} {
		if got := snap.Evaluate("Feature.Variants.C", &engine.Context{UserID: user}).Variant.Name; got != want {
			t.Errorf("user %s: strategy variant %s, want %s", user, got, want)
		}
	}
}

// TestCompileCopiesPayload: changing the payload after Compile does not
// change results.
func TestCompileCopiesPayload(t *testing.T) {
	var cf engine.ClientFeatures
	if err := json.Unmarshal([]byte(`{"features":[
	  {"name":"p","enabled":true,"strategies":[]},
	  {"name":"f","enabled":true,"dependencies":[{"feature":"p","variants":["disabled"]}],
	   "strategies":[{"name":"default","constraints":[{"contextName":"plan","operator":"IN","values":["pro"]}]}],
	   "variants":[{"name":"a","weight":1,"overrides":[{"contextName":"userId","values":["vip"]}]},{"name":"b","weight":1}]}]}`), &cf); err != nil {
		t.Fatal(err)
	}
	snap := engine.Compile(&cf, engine.Options{})
	ctx := &engine.Context{UserID: "vip", Properties: props("plan", "pro")}
	before := snap.Evaluate("f", ctx)
	f := &cf.Features[1]
	f.Strategies[0].Constraints[0].Values[0] = "free"
	f.Variants[0].Overrides[0].Values[0] = "nobody"
	f.Dependencies[0].Variants[0] = "other"
	after := snap.Evaluate("f", ctx)
	if !before.Enabled || before.Variant.Name != "a" || after != before {
		t.Errorf("before %+v, after changing the payload %+v", before, after)
	}
}

func TestConstraintJSONAlwaysHasValues(t *testing.T) {
	b, err := json.Marshal(engine.Constraint{ContextName: "userId", Operator: "IN"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"contextName":"userId","operator":"IN","values":[],"caseInsensitive":false,"inverted":false}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}
