package changerequests

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// describe says what change c does, in a sentence, and lists what it
// changes against the current configuration ("path: before → after",
// "+ path: value" for what it adds, "- path: value" for what it removes).
// The current configuration is read only while the request is open.
func describe(q store.Q, cr store.ChangeRequest, c store.ChangeRequestChange, open bool) (string, []string) {
	in := func(s string) string { return s + " in " + cr.Environment }
	var payload map[string]any
	_ = json.Unmarshal(c.Payload, &payload)
	switch c.Action {
	case ActionUpdateEnabled:
		on, _ := payload["enabled"].(bool)
		word := map[bool]string{true: "on", false: "off"}[on]
		var diff []string
		if fe, err := domain.LoadFeatureEnv(q, cr.Project, c.Feature, cr.Environment, true); open && err == nil {
			diff = []string{fmt.Sprintf("enabled: %t → %t", fe.FE.Enabled, on)}
		}
		return in(fmt.Sprintf("Turn flag %s %s", c.Feature, word)), diff
	case ActionAddStrategy:
		return in(fmt.Sprintf("Add a %s strategy%s to flag %s", str(payload["name"]), titled(payload), c.Feature)), added("", strategyDoc(payload))
	case ActionUpdateStrategy, ActionDeleteStrategy:
		id := str(payload["id"])
		var before map[string]any
		if open {
			if fe, err := domain.LoadFeatureEnv(q, cr.Project, c.Feature, cr.Environment, true); err == nil {
				if st, err := domain.StrategyIn(q, fe, id); err == nil {
					before = strategyDoc(toMap(st))
				}
			}
		}
		name := str(payload["name"])
		if name == "" && before != nil {
			name = str(before["name"])
		}
		if c.Action == ActionDeleteStrategy {
			return in(fmt.Sprintf("Delete the %s strategy %s of flag %s", name, short(id), c.Feature)), removed("", before)
		}
		if before == nil {
			return in(fmt.Sprintf("Change the %s strategy %s of flag %s", name, short(id), c.Feature)), added("", strategyDoc(payload))
		}
		after := strategyDoc(payload)
		return in(fmt.Sprintf("Change the %s strategy %s of flag %s", name, short(id), c.Feature)), diff("", pick(before, slices.Collect(maps.Keys(after))...), after)
	case ActionReorderStrategy:
		var orders []domain.StrategyOrder
		_ = json.Unmarshal(c.Payload, &orders)
		var lines []string
		for _, o := range orders {
			if o.SortOrder != nil {
				lines = append(lines, fmt.Sprintf("%s: sort order %d", short(o.ID), *o.SortOrder))
			}
		}
		return in(fmt.Sprintf("Reorder the strategies of flag %s", c.Feature)), lines
	case ActionPatchVariant:
		after := map[string]any{"variants": payload["variants"]}
		var names []string
		if vs, ok := payload["variants"].([]any); ok {
			for _, v := range vs {
				if m, ok := v.(map[string]any); ok {
					names = append(names, str(m["name"]))
				}
			}
		}
		sentence := in(fmt.Sprintf("Set the variants of flag %s to %s", c.Feature, listOr(names, "none")))
		if fe, err := domain.LoadFeatureEnv(q, cr.Project, c.Feature, cr.Environment, true); open && err == nil {
			return sentence, diff("", map[string]any{"variants": toAny(domain.NonNil(fe.FE.Variants))}, after)
		}
		return sentence, added("", after)
	case ActionArchiveFeature:
		return fmt.Sprintf("Archive flag %s (in every environment)", c.Feature), nil
	case ActionAddDependency:
		parent := str(payload["feature"])
		cond := "enabled"
		if e, ok := payload["enabled"].(bool); ok && !e {
			cond = "disabled"
		}
		if vs, ok := payload["variants"].([]any); ok && len(vs) > 0 && cond == "enabled" {
			var names []string
			for _, v := range vs {
				names = append(names, str(v))
			}
			cond += " with variant " + listOr(names, "")
		}
		return fmt.Sprintf("Make flag %s depend on flag %s being %s", c.Feature, parent, cond), nil
	case ActionDeleteDependency:
		if parent := str(payload["feature"]); parent != "" {
			return fmt.Sprintf("Remove flag %s's dependency on flag %s", c.Feature, parent), nil
		}
		return fmt.Sprintf("Remove every dependency of flag %s", c.Feature), nil
	case ActionUpdateSegment, ActionDeleteSegment:
		var before map[string]any
		name := str(payload["name"])
		if sg, err := q.Segment(c.SegmentID); err == nil {
			if name == "" {
				name = sg.Name
			}
			if open {
				before = segmentDoc(toMap(sg))
			}
		}
		if c.Action == ActionDeleteSegment {
			return fmt.Sprintf("Delete segment %s", name), removed("", before)
		}
		if before == nil {
			return fmt.Sprintf("Change segment %s", name), added("", segmentDoc(payload))
		}
		after := segmentDoc(payload)
		return fmt.Sprintf("Change segment %s", name), diff("", pick(before, slices.Collect(maps.Keys(after))...), after)
	}
	return c.Action, nil
}

// strategyDoc keeps what a strategy's change sets.
func strategyDoc(m map[string]any) map[string]any {
	return pick(m, "name", "title", "disabled", "parameters", "constraints", "segments", "variants")
}

// segmentDoc keeps what a segment's change sets.
func segmentDoc(m map[string]any) map[string]any {
	return pick(m, "name", "description", "project", "constraints")
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			out[k] = v
		}
	}
	return out
}

func toMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func toAny(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case nil:
		return ""
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

func titled(m map[string]any) string {
	if t := str(m["title"]); t != "" {
		return fmt.Sprintf(" (%q)", t)
	}
	return ""
}

// short shortens an id for a sentence.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func listOr(names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	return strings.Join(names, ", ")
}

// flatten lists a JSON value's leaves by path.
func flatten(prefix string, v any, out map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 && prefix != "" {
			out[prefix] = "{}"
		}
		for k, x := range t {
			flatten(join(prefix, k), x, out)
		}
	case []any:
		if len(t) == 0 && prefix != "" {
			out[prefix] = "[]"
		}
		for i, x := range t {
			flatten(prefix+"["+strconv.Itoa(i)+"]", x, out)
		}
	default:
		b, _ := json.Marshal(t)
		out[prefix] = string(b)
	}
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// diff lists the leaves that differ between before and after.
func diff(prefix string, before, after map[string]any) []string {
	if before == nil {
		before = map[string]any{}
	}
	if after == nil {
		after = map[string]any{}
	}
	b, a := map[string]string{}, map[string]string{}
	flatten(prefix, toAny(before), b)
	flatten(prefix, toAny(after), a)
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		bv, inB := b[k]
		av, inA := a[k]
		switch {
		case inA && inB && av != bv:
			out = append(out, fmt.Sprintf("%s: %s → %s", k, bv, av))
		case inA && !inB:
			out = append(out, fmt.Sprintf("+ %s: %s", k, av))
		case inB && !inA:
			out = append(out, fmt.Sprintf("- %s: %s", k, bv))
		}
	}
	return out
}

func added(prefix string, after map[string]any) []string {
	return diff(prefix, nil, after)
}

func removed(prefix string, before map[string]any) []string {
	if before == nil {
		return nil
	}
	return diff(prefix, before, nil)
}
