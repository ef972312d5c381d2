package webui

import (
	"encoding/json"
	"testing"
)

// TestStrategiesReadAsPeopleSayThem: every built-in strategy type, a
// custom one, each operator with inverted and case-insensitive forms, and
// segments, read as sentences.
func TestStrategiesReadAsPeopleSayThem(t *testing.T) {
	segments := map[string]string{"7": "beta-users"}
	for _, c := range []struct{ json, want string }{
		{`{"name":"flexibleRollout","parameters":{"rollout":"50","stickiness":"userId","groupId":"x"},
		   "constraints":[{"contextName":"region","operator":"IN","values":["eu","uk"]}]}`,
			"Gradual rollout: 50 % of users (sticky on userId) where region is one of eu, uk"},
		{`{"name":"flexibleRollout","parameters":{"rollout":"100","stickiness":"default"},"segments":[7]}`,
			"Gradual rollout: 100 % of users (sticky on userId, else sessionId, else random) in segment beta-users"},
		{`{"name":"default","disabled":true}`, "Standard: on for everyone (disabled)"},
		{`{"name":"userWithId","parameters":{"userIds":"alice,bob , carol"}}`, "User IDs: users alice, bob, carol"},
		{`{"name":"gradualRolloutRandom","parameters":{"percentage":"12.5"}}`, "Random rollout: 12.5 % of requests, at random"},
		{`{"name":"gradualRolloutSessionId","parameters":{"percentage":"30","groupId":"g"}}`, "Gradual rollout by session: 30 % of sessions (sticky on sessionId)"},
		{`{"name":"gradualRolloutUserId","parameters":{"percentage":"70","groupId":"g"}}`, "Gradual rollout by user: 70 % of users (sticky on userId)"},
		{`{"name":"remoteAddress","parameters":{"IPs":"10.0.0.1,192.168.0.0/16"}}`, "IP addresses: requests from 10.0.0.1, 192.168.0.0/16"},
		{`{"name":"applicationHostname","parameters":{"hostNames":"web-1"}}`, "Hosts: applications on web-1"},
		{`{"name":"countries","parameters":{"list":"de,fr","mode":"strict"}}`, "countries: list = de,fr, mode = strict"},
		{`{"name":"default","constraints":[
			{"contextName":"email","operator":"STR_ENDS_WITH","values":["@x.io"],"caseInsensitive":true},
			{"contextName":"plan","operator":"IN","values":["free"],"inverted":true},
			{"contextName":"age","operator":"NUM_GT","value":"17"},
			{"contextName":"currentTime","operator":"DATE_AFTER","value":"2026-01-01T00:00:00Z"},
			{"contextName":"currentTime","operator":"DATE_BEFORE","value":"2027-01-01T00:00:00Z","inverted":true},
			{"contextName":"appVersion","operator":"SEMVER_LT","value":"2.0.0"},
			{"contextName":"userId","operator":"STR_STARTS_WITH","values":["a"],"inverted":true},
			{"contextName":"country","operator":"NOT_IN","values":["us"]}]}`,
			"Standard: on for everyone where email ends with @x.io (any case) and plan is not one of free and age is greater than 17" +
				" and currentTime is after 2026-01-01T00:00:00Z and currentTime is not before 2027-01-01T00:00:00Z" +
				" and appVersion is a version before 2.0.0 and userId does not start with a and country is not one of us"},
	} {
		var st any
		if err := json.Unmarshal([]byte(c.json), &st); err != nil {
			t.Fatal(err)
		}
		if got := describeStrategy(st, segments).Sentence(); got != c.want {
			t.Errorf("%s\nreads %q\nwant  %q", c.json, got, c.want)
		}
	}
	for op := range operatorWords {
		if operatorInWords(op, false) == op {
			t.Errorf("operator %s has no words", op)
		}
	}
	for _, op := range operators {
		if _, ok := operatorWords[op]; !ok {
			t.Errorf("the editor offers %s, which has no words", op)
		}
	}
}

// TestVariantSharesAreWeightsOfAThousand: Unleash's 333/333/334 reads as
// 33.3/33.3/33.4 %.
func TestVariantSharesAreWeightsOfAThousand(t *testing.T) {
	var vs any
	_ = json.Unmarshal([]byte(`[{"name":"a","weight":333},{"name":"b","weight":333},{"name":"c","weight":334,"weightType":"fix"}]`), &vs)
	got := describeVariants(vs)
	if len(got) != 3 || got[0].ShareText != "33.3 %" || got[2].ShareText != "33.4 %" || !got[2].Fixed || got[0].Fixed {
		t.Errorf("the split reads %+v", got)
	}
}

// TestServingTokens: the tokens that cover a project's environment, all
// projects' included; none is an empty, known list.
func TestServingTokens(t *testing.T) {
	var tokens []map[string]any
	_ = json.Unmarshal([]byte(`[
		{"tokenName":"quick","type":"client","projects":["*"],"environment":"development"},
		{"tokenName":"web","type":"frontend","projects":["shop"],"environment":"development"},
		{"tokenName":"other","type":"client","projects":["default"],"environment":"development"},
		{"tokenName":"admin","type":"admin","projects":["*"],"environment":"*"}]`), &tokens)
	got := servingTokens(tokens, "shop", []string{"development", "production"})
	if d := got["development"]; !d.Known || len(d.Tokens) != 2 || d.Tokens[0].Name != "quick" || d.Tokens[1].Name != "web" {
		t.Errorf("development is served by %+v", d)
	}
	if p := got["production"]; !p.Known || len(p.Tokens) != 0 {
		t.Errorf("production is served by %+v", p)
	}
	if u := servingTokens(nil, "shop", []string{"development"})["development"]; u.Known {
		t.Errorf("without the token list the page claims to know: %+v", u)
	}
}

// TestEventsReadAsSentences: switches, a rollout change and a generic
// event read as sentences; a strategy change keeps its two states.
func TestEventsReadAsSentences(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		e    event
		want string
	}{
		{event{Type: "feature-environment-enabled", CreatedBy: "admin", FeatureName: s("new-checkout"), Environment: s("production")},
			"admin switched new-checkout on in production"},
		{event{Type: "feature-strategy-update", CreatedBy: "admin", FeatureName: s("new-checkout"), Environment: s("development"),
			PreData: []byte(`{"name":"flexibleRollout","parameters":{"rollout":"25"}}`), Data: []byte(`{"name":"flexibleRollout","parameters":{"rollout":"50"}}`)},
			"admin changed the rollout of new-checkout in development from 25 % to 50 %"},
		{event{Type: "feature-strategy-add", CreatedBy: "admin", FeatureName: s("f"), Environment: s("development"), Data: []byte(`{"name":"default"}`)},
			"admin added a standard strategy to f in development"},
		{event{Type: "segment-created", CreatedBy: "admin", Data: []byte(`{"name":"beta-users"}`)}, "admin created segment beta-users"},
	} {
		if got := describeEvent(c.e, nil); got.Sentence != c.want {
			t.Errorf("%s reads %q, want %q", c.e.Type, got.Sentence, c.want)
		}
	}
	if got := describeEvent(event{Type: "feature-strategy-update", PreData: []byte(`{"name":"default"}`), Data: []byte(`{"name":"default","disabled":true}`)}, nil); got.Before == nil || got.After == nil || got.Diff != nil {
		t.Errorf("a strategy change shows %+v", got)
	}
}

// TestVariantEventsShowBothSplits: a variants change shows the split before
// and after, not a diff of weights.
func TestVariantEventsShowBothSplits(t *testing.T) {
	f, env := "f", "development"
	got := describeEvent(event{Type: "feature-environment-variants-updated", CreatedBy: "admin", FeatureName: &f, Environment: &env,
		PreData: []byte(`{"variants":[]}`), Data: []byte(`{"variants":[{"name":"a","weight":500},{"name":"b","weight":500}]}`)}, nil)
	if got.Sentence != "admin changed the variants of f in development" || len(got.VariantsBefore) != 0 || len(got.VariantsAfter) != 2 || got.VariantsAfter[1].ShareText != "50 %" || got.Diff != nil {
		t.Errorf("the variants change reads %+v", got)
	}
}
