package webui

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/domain"
)

// eventView is an event as the event log and a flag's history show it: a
// sentence ("admin switched new-checkout on in production"), the strategy
// before and after in the flag page's rendering when a strategy changed,
// other changes as diff lines, and the raw JSON.
type eventView struct {
	event
	Sentence string
	// Before and After are the strategy's two states (either nil when the
	// strategy was added or removed, both nil for other events).
	Before, After *strategyView
	// VariantsBefore and VariantsAfter are a variants change's two splits.
	VariantsBefore, VariantsAfter []variantView
	Diff                          []diffLine
	Raw                           string
}

// describeEvents reads events for the log; segmentNames names segments.
func describeEvents(evs []event, segmentNames map[string]string) []eventView {
	out := make([]eventView, 0, len(evs))
	for _, e := range evs {
		out = append(out, describeEvent(e, segmentNames))
	}
	return out
}

func describeEvent(e event, segmentNames map[string]string) eventView {
	v := eventView{event: e}
	raw := map[string]json.RawMessage{}
	if len(e.Data) > 0 && string(e.Data) != "null" {
		raw["data"] = e.Data
	}
	if len(e.PreData) > 0 && string(e.PreData) != "null" {
		raw["preData"] = e.PreData
	}
	if b, err := json.MarshalIndent(raw, "", "  "); err == nil && len(raw) > 0 {
		v.Raw = string(b)
	}
	actor := e.CreatedBy
	if actor == "" {
		actor = "someone"
	}
	flag, env := deref(e.FeatureName), deref(e.Environment)
	in := ""
	if env != "" {
		in = " in " + env
	}
	strategy := func(raw json.RawMessage) *strategyView {
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return nil
		}
		sv := describeStrategy(m, segmentNames)
		return &sv
	}
	say := func(s string) { v.Sentence = actor + " " + s }
	switch e.Type {
	case "feature-environment-enabled":
		say("switched " + flag + " on" + in)
	case "feature-environment-disabled":
		say("switched " + flag + " off" + in)
	case "feature-created":
		say("created " + flag)
		if p := deref(e.Project); p != "" {
			v.Sentence += " in project " + p
		}
	case "feature-archived", "feature-revived", "feature-deleted":
		say(strings.TrimPrefix(e.Type, "feature-") + " " + flag)
	case "feature-strategy-add":
		v.After = strategy(e.Data)
		say("added " + article(kindOf(v.After)) + " to " + flag + in)
	case "feature-strategy-remove":
		v.Before = strategy(e.PreData)
		say("removed " + article(kindOf(v.Before)) + " from " + flag + in)
	case "feature-strategy-update":
		v.Before, v.After = strategy(e.PreData), strategy(e.Data)
		switch b, a := v.Before, v.After; {
		case b != nil && a != nil && b.Kind == a.Kind && b.HasPercent && a.HasPercent && b.Percent != a.Percent:
			say("changed the rollout of " + flag + in + " from " + formatPercent(b.Percent) + " to " + formatPercent(a.Percent))
		case b != nil && a != nil && b.Disabled != a.Disabled && !a.Disabled:
			say("enabled " + article(kindOf(a)) + " of " + flag + in)
		case b != nil && a != nil && b.Disabled != a.Disabled:
			say("disabled " + article(kindOf(a)) + " of " + flag + in)
		default:
			say("changed " + article(kindOf(a)) + " of " + flag + in)
		}
	case "strategy-order-changed":
		say("reordered the strategies of " + flag + in)
	case "feature-variants-updated", "feature-environment-variants-updated":
		say("changed the variants of " + flag + in)
		var pre, post struct {
			Variants []any `json:"variants"`
		}
		_ = json.Unmarshal(e.PreData, &pre)
		_ = json.Unmarshal(e.Data, &post)
		v.VariantsBefore, v.VariantsAfter = describeVariants(pre.Variants), describeVariants(post.Variants)
	case "feature-stale-on":
		say("marked " + flag + " as stale")
	case "feature-stale-off":
		say("marked " + flag + " as no longer stale")
	case "feature-potentially-stale-on":
		v.Sentence = flag + " became potentially stale"
	case "feature-metadata-updated", "feature-updated":
		say("changed the details of " + flag)
	case "feature-type-updated":
		say("changed the type of " + flag)
	case "feature-tagged", "feature-untagged":
		var tag struct{ Type, Value string }
		src := e.Data
		if e.Type == "feature-untagged" {
			src = e.PreData
		}
		_ = json.Unmarshal(src, &tag)
		verb := map[bool]string{true: "tagged ", false: "untagged "}[e.Type == "feature-tagged"]
		say(verb + flag + " " + strings.Trim(tag.Type+":"+tag.Value, ":"))
	case "feature-dependency-added":
		var dep struct{ Feature string }
		_ = json.Unmarshal(e.Data, &dep)
		say("made " + flag + " depend on " + dep.Feature)
	case "feature-dependency-removed", "feature-dependencies-removed":
		say("removed dependencies of " + flag)
	case "feature-project-change":
		say("moved " + flag + " to project " + deref(e.Project))
	default:
		v.Sentence = genericSentence(actor, e)
	}
	// What a flag was created with is in the raw JSON; the diff of every
	// property would bury the log.
	if v.Before == nil && v.After == nil && v.VariantsBefore == nil && v.VariantsAfter == nil && e.Type != "feature-created" {
		v.Diff = diffJSON(e.PreData, e.Data)
	}
	return v
}

// genericSentence phrases the other events from their type: "admin
// created segment beta-users", "admin: api token deleted".
func genericSentence(actor string, e event) string {
	var named struct {
		Name     string `json:"name"`
		Username string `json:"username"`
	}
	_ = json.Unmarshal(e.Data, &named)
	if named.Name == "" {
		_ = json.Unmarshal(e.PreData, &named)
	}
	subject := named.Name
	if subject == "" {
		subject = named.Username
	}
	if f := deref(e.FeatureName); f != "" {
		subject = f
	}
	i := strings.LastIndex(e.Type, "-")
	if i > 0 {
		verb, noun := e.Type[i+1:], strings.ReplaceAll(e.Type[:i], "-", " ")
		if slices.Contains([]string{"created", "updated", "deleted", "archived", "revived", "added", "removed", "approved", "rejected", "applied", "cancelled", "discarded", "scheduled"}, verb) {
			return strings.TrimSpace(actor + " " + verb + " " + noun + " " + subject)
		}
	}
	return strings.TrimSpace(actor + ": " + strings.ReplaceAll(e.Type, "-", " ") + " " + subject)
}

// kindOf is a strategy's kind in lower case for a sentence ("gradual
// rollout"), or "strategy".
func kindOf(v *strategyView) string {
	if v == nil || v.Kind == "" {
		return "strategy"
	}
	if v.Kind == "Standard" {
		return "standard strategy"
	}
	return strings.ToLower(v.Kind[:1]) + v.Kind[1:]
}

// article puts "a" or "an" before a noun.
func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiouAEIOU", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// eventTypeGroup is a labelled group of event types for the log's filter.
type eventTypeGroup struct {
	Label string
	Types []string
}

// eventTypeGroups sorts the specification's event types into groups by
// what they are about.
func eventTypeGroups() []eventTypeGroup {
	groups := []eventTypeGroup{{Label: "Flags"}, {Label: "Strategies and context"}, {Label: "Segments"}, {Label: "Projects and environments"},
		{Label: "Change requests"}, {Label: "People and access"}, {Label: "Tokens"}, {Label: "Integrations, signals and actions"}, {Label: "Other"}}
	prefixes := [][]string{
		{"feature-", "features-", "drop-feature"},
		{"strategy-", "drop-strategies", "context-field-", "default-strategy-"},
		{"segment-"},
		{"project-", "drop-projects", "environment-", "drop-environments"},
		{"change-"},
		{"user-", "role-", "group-", "service-account-", "public-signup-", "pat-"},
		{"api-token-", "signal-endpoint-token"},
		{"addon-", "signal-", "actions-"},
	}
	for _, t := range domain.EventTypes() {
		at := len(groups) - 1
		for i, ps := range prefixes {
			if slices.ContainsFunc(ps, func(p string) bool { return strings.HasPrefix(t, p) }) {
				at = i
				break
			}
		}
		groups[at].Types = append(groups[at].Types, t)
	}
	return slices.DeleteFunc(groups, func(g eventTypeGroup) bool { return len(g.Types) == 0 })
}
