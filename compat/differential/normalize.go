package differential

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Deliberate is a difference from Unleash 8.2.0 that Bunting keeps on
// purpose. docs/compatibility.md lists the same ones
// (TestDeliberateDifferencesDocumented checks it).
type Deliberate struct {
	Name, Reason string
}

// Deliberate differences, evened out by the comparisons (or left out of
// the scenarios) where the name is used.
var (
	// NoVariantsKey: Bunting leaves "variants" out of a strategy without
	// variants; Unleash sends []. SDKs read both as no variants.
	NoVariantsKey = Deliberate{"no-variants-key", "a strategy without variants has no `variants` key in the client features (Unleash sends `[]`); SDKs read both alike"}
	// NoInlineFalse: Bunting leaves query.inlineSegmentConstraints out when
	// false.
	NoInlineFalse = Deliberate{"no-inline-false", "`query.inlineSegmentConstraints` is left out of the client features when false; SDKs ignore `query`"}
	// ConstraintFlags: Bunting always sends inverted and caseInsensitive.
	ConstraintFlags = Deliberate{"constraint-flags", "every constraint carries `inverted` and `caseInsensitive` (Unleash only those the admin call set); absent means false to SDKs"}
	// EnvironmentVariants: Unleash 8 refuses feature-environment variants
	// (403 unless the flag already has some); Bunting keeps serving and
	// accepting them. Scenarios use strategy variants only.
	EnvironmentVariants = Deliberate{"environment-variants", "`PUT …/environments/:env/variants` (feature-environment variants) is accepted; Unleash 8 answers 403 unless the flag already has such variants (deprecated in favour of strategy variants), so the scenarios do not use it"}

	// SingleDependencies: Unleash's client features repeat a flag's
	// dependency once per strategy (and segment) row; Bunting lists it
	// once. SDKs AND the repeats, but the Node SDK evaluates the parent
	// once per repeat, so where the parent's rollout or variant is left to
	// chance it draws anew each time (compareSDKs evens that out).
	SingleDependencies = Deliberate{"single-dependencies", "a dependency appears once in the client features (Unleash repeats it once per strategy and segment row of the flag); SDKs AND the repeats, which change nothing unless the parent's rollout or variant is left to chance (random stickiness, or a stickiness field the context lacks): the Node SDK then draws the parent's choice anew for each repeat, so on Unleash a child requiring a parent variant is on less often than the parent's weights say"}
	// InlinedConstraintOrder: without Unleash-Client-Spec, segment
	// constraints are inlined in the order of the strategy's segments;
	// Unleash's order follows its database rows.
	InlinedConstraintOrder = Deliberate{"inlined-constraint-order", "without `Unleash-Client-Spec`, a strategy's segment constraints follow its own in the order of its segments (Unleash's order follows its database rows); SDKs AND them"}
	// CurrentTime: the frontend API honours a currentTime in the request,
	// as the Unleash context is documented to; Unleash's frontend API moves
	// it into properties and compares dates with its own clock.
	CurrentTime = Deliberate{"current-time", "the frontend API honours a `currentTime` in the request, as the Unleash context is documented to (\"defaults to the current time if not set\"); Unleash's moves it into `properties` and compares `DATE_*` constraints with its own clock"}
	// ParentOff: the frontend API evaluates a parent that is off in the
	// environment like any other flag; Unleash's leaves such a parent out
	// of what it evaluates, so a child that requires it to be off is off.
	ParentOff = Deliberate{"parent-off", "in the frontend API a dependency with `enabled: false` on a parent that is off in the environment is satisfied, as documented; Unleash's frontend API leaves flags that are off out of what it evaluates, so such a child is always off there"}
	// OuterSpaceIPs: the engine trims every entry of a remoteAddress
	// strategy's IPs list; the Node SDK splits on commas with the spaces
	// around them, so spaces before the first entry or after the last stay
	// and that entry never matches.
	OuterSpaceIPs = Deliberate{"outer-space-ips", "every entry of a `remoteAddress` strategy's `IPs` list is trimmed (as the Go SDK and Yggdrasil do); the Node SDK, and so Unleash's frontend API, keeps spaces before the first entry and after the last, which then never matches"}
	// StrategyVariantGroup: strategy variants of a strategy without a
	// groupId parameter hash under the flag name; the Node SDK hashes
	// under "undefined".
	StrategyVariantGroup = Deliberate{"strategy-variant-group", "the frontend API picks the variant of a strategy without a `groupId` parameter (any but `flexibleRollout`) by hashing under the flag's name, as Yggdrasil (Unleash Edge) does; the Node SDK, and so Unleash's frontend API, hashes under the text `undefined`, which puts the users of every such flag in the same buckets"}
	// AnonymousSession: the frontend API does not make up a sessionId.
	AnonymousSession = Deliberate{"anonymous-session", "the frontend API does not make up a random `sessionId` for a request without one (Unleash's does, per request), so the compared contexts always carry one"}
)

// DeliberateDifferences lists every deliberate difference.
var DeliberateDifferences = []Deliberate{NoVariantsKey, NoInlineFalse, ConstraintFlags, SingleDependencies,
	InlinedConstraintOrder, EnvironmentVariants, CurrentTime, ParentOff, OuterSpaceIPs, StrategyVariantGroup, AnonymousSession}

// singleValueOperators take "value", the others "values".
var singleValueOperators = []string{"NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE", "DATE_AFTER", "DATE_BEFORE",
	"SEMVER_EQ", "SEMVER_GT", "SEMVER_GTE", "SEMVER_LT", "SEMVER_LTE", "REGEX"}

// normalizeConstraints evens out ConstraintFlags in a constraint list.
func normalizeConstraints(constraints any) {
	list, _ := constraints.([]any)
	for _, c := range list {
		constraint, ok := c.(map[string]any)
		if !ok {
			continue
		}
		for _, key := range []string{"inverted", "caseInsensitive"} {
			if _, ok := constraint[key]; !ok {
				constraint[key] = false
			}
		}
	}
}

// ClientFeatures decodes a GET /api/client/features answer into a
// comparable form: meta left out, only the features keep accepts, sorted
// by name, segment ids replaced by the scenario's names for them (when ids
// is not nil; segments no kept feature uses are left out), and the
// deliberate differences no SDK notices evened out.
func ClientFeatures(data []byte, keep func(name string) bool, ids IDs) (map[string]any, error) {
	var payload map[string]any
	if err := json.Unmarshal(data, &payload); err != nil {
		return nil, fmt.Errorf("decode client features: %v", err)
	}
	delete(payload, "meta")
	features, _ := payload["features"].([]any)
	kept := []any{}
	used := map[string]bool{}
	for _, f := range features {
		feature, ok := f.(map[string]any)
		if !ok || !keep(fmt.Sprint(feature["name"])) {
			continue
		}
		if deps, ok := feature["dependencies"].([]any); ok {
			feature["dependencies"] = uniqueJSON(deps) // SingleDependencies
		}
		_, separate := payload["segments"]
		strategies, _ := feature["strategies"].([]any)
		for _, s := range strategies {
			strategy := s.(map[string]any)
			if _, ok := strategy["variants"]; !ok {
				strategy["variants"] = []any{} // NoVariantsKey
			}
			normalizeConstraints(strategy["constraints"])
			if cs, ok := strategy["constraints"].([]any); ok && !separate {
				slices.SortStableFunc(cs, func(a, b any) int { return cmp.Compare(mustJSON(a), mustJSON(b)) }) // InlinedConstraintOrder
			}
			segments, _ := strategy["segments"].([]any)
			for i, id := range segments {
				used[idString(id)] = true
				segments[i] = ids.segmentName(id)
			}
		}
		kept = append(kept, feature)
	}
	slices.SortFunc(kept, func(a, b any) int {
		return cmp.Compare(fmt.Sprint(a.(map[string]any)["name"]), fmt.Sprint(b.(map[string]any)["name"]))
	})
	payload["features"] = kept
	if segments, ok := payload["segments"].([]any); ok {
		var keptSegments []any
		for _, s := range segments {
			segment := s.(map[string]any)
			if !used[idString(segment["id"])] {
				continue
			}
			segment["id"] = ids.segmentName(segment["id"])
			normalizeConstraints(segment["constraints"])
			keptSegments = append(keptSegments, segment)
		}
		slices.SortFunc(keptSegments, func(a, b any) int {
			return cmp.Compare(fmt.Sprint(a.(map[string]any)["id"]), fmt.Sprint(b.(map[string]any)["id"]))
		})
		payload["segments"] = keptSegments
	}
	if query, ok := payload["query"].(map[string]any); ok {
		if _, ok := query["inlineSegmentConstraints"]; !ok {
			query["inlineSegmentConstraints"] = false // NoInlineFalse
		}
	}
	return payload, nil
}

// uniqueJSON keeps the first of equal elements.
func uniqueJSON(list []any) []any {
	seen := map[string]bool{}
	var out []any
	for _, e := range list {
		if key := mustJSON(e); !seen[key] {
			seen[key] = true
			out = append(out, e)
		}
	}
	return out
}

// RepeatedDependencies names the flags of a GET /api/client/features
// answer that list a dependency more than once (SingleDependencies).
func RepeatedDependencies(data []byte) (map[string]bool, error) {
	var payload struct {
		Features []struct {
			Name         string            `json:"name"`
			Dependencies []json.RawMessage `json:"dependencies"`
		} `json:"features"`
	}
	if err := json.Unmarshal(data, &payload); err != nil {
		return nil, fmt.Errorf("decode client features: %v", err)
	}
	repeated := map[string]bool{}
	for _, f := range payload.Features {
		seen := map[string]bool{}
		for _, d := range f.Dependencies {
			if seen[string(d)] {
				repeated[f.Name] = true
			}
			seen[string(d)] = true
		}
	}
	return repeated, nil
}

// idString is a JSON number id as text.
func idString(id any) string {
	if f, ok := id.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(id)
}

// segmentName is the scenario's name for a server's segment id ("segment
// 2"), or the id itself when ids is nil or does not know it.
func (ids IDs) segmentName(id any) any {
	if ids == nil {
		return id
	}
	if name := ids.Symbol(kindSegment, idString(id)); name != "" {
		return "segment " + name
	}
	return "unknown segment " + idString(id)
}

// StoredFlag projects GET /api/admin/projects/:p/features/:f onto what a
// flag's configuration is: metadata, dependencies and, in the scenario's
// environment, whether it is on and its strategies with their sortOrder.
// Server-made values (ids, dates, counts) are left out, and so are
// feature-environment variants (see EnvironmentVariants).
func StoredFlag(data []byte, ids IDs) (map[string]any, error) {
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("decode the flag: %v", err)
	}
	out := map[string]any{}
	for _, key := range []string{"name", "type", "description", "impressionData", "archived"} {
		out[key] = f[key]
	}
	deps, _ := f["dependencies"].([]any)
	slices.SortFunc(deps, func(a, b any) int {
		return cmp.Compare(fmt.Sprint(a.(map[string]any)["feature"]), fmt.Sprint(b.(map[string]any)["feature"]))
	})
	out["dependencies"] = deps
	envs, _ := f["environments"].([]any)
	for _, e := range envs {
		env := e.(map[string]any)
		if env["name"] != Environment {
			continue
		}
		out["enabled"] = env["enabled"]
		strategies, _ := env["strategies"].([]any)
		var kept []any
		for _, s := range strategies {
			strategy := s.(map[string]any)
			p := map[string]any{}
			for _, key := range []string{"name", "title", "disabled", "parameters", "constraints", "variants", "sortOrder"} {
				p[key] = strategy[key]
			}
			normalizeConstraints(p["constraints"])
			segments, _ := strategy["segments"].([]any)
			names := make([]string, len(segments))
			for i, id := range segments {
				names[i] = fmt.Sprint(ids.segmentName(id))
			}
			slices.Sort(names)
			p["segments"] = names
			kept = append(kept, p)
		}
		// By sortOrder; the admin API leaves the order of equal sortOrders
		// to the database (the client features, compared apart, break
		// those ties by creation).
		slices.SortFunc(kept, func(a, b any) int {
			return cmp.Or(cmp.Compare(number(a.(map[string]any)["sortOrder"]), number(b.(map[string]any)["sortOrder"])),
				cmp.Compare(mustJSON(a), mustJSON(b)))
		})
		out["strategies"] = kept
	}
	return out, nil
}

// StoredSegment projects GET /api/admin/segments/:id onto its name and
// constraints.
func StoredSegment(data []byte) (map[string]any, error) {
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("decode the segment: %v", err)
	}
	normalizeConstraints(s["constraints"])
	return map[string]any{"name": s["name"], "constraints": s["constraints"]}, nil
}

func number(v any) float64 {
	f, _ := v.(float64)
	return f
}
