package differential

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/bunting-flags/bunting/compat/harness"
)

// compareClientFeatures waits until both client APIs serve the sentinel
// flag (and so every change before it), then compares both client
// features payloads, with and without Unleash-Client-Spec, flag by flag.
func compareClientFeatures(t *testing.T, s *Scenario, ref, sut *side, r *Report) {
	keep := func(name string) bool { return strings.HasPrefix(name, s.Prefix+"-") }
	for _, sd := range []*side{ref, sut} {
		waitSynced(t, s, sd, "the client API serves "+s.Sentinel, func() error {
			data, err := FetchClientFeatures(sd.up, "5.2.0")
			if err == nil && !bytes.Contains(data, []byte(`"`+s.Sentinel+`"`)) {
				err = fmt.Errorf("not yet")
			}
			return err
		})
	}
	for _, spec := range []string{"5.2.0", ""} {
		var views [2]map[string]any
		for i, sd := range []*side{ref, sut} {
			data, err := FetchClientFeatures(sd.up, spec)
			if err == nil && spec != "" {
				var repeated map[string]bool
				if repeated, err = RepeatedDependencies(data); sd == ref {
					r.refRepeated = repeated
				} else {
					// Bunting lists each dependency once; the comparison
					// below evens repeats out, so it is checked here.
					for _, name := range s.Flags {
						if repeated[name] {
							r.add(KindFeatures, "flag "+name, lastCallOn(s, name), nil, "  bunting lists a dependency more than once")
						}
					}
				}
			}
			if err == nil {
				views[i], err = ClientFeatures(data, keep, sd.ids)
			}
			if err != nil {
				t.Fatalf("seed %d: %s: %v", s.Seed, sd.name, err)
			}
		}
		r.FeaturePayloads++
		label := "with Unleash-Client-Spec " + spec
		if spec == "" {
			label = "without Unleash-Client-Spec (segments inlined)"
		}
		a, b := featuresByName(views[0]), featuresByName(views[1])
		r.refFeatures = a
		for _, name := range s.Flags {
			if diff := flatDiff(a[name], b[name]); diff != "" {
				r.add(KindFeatures, "flag "+name, lastCallOn(s, name), r.earlier([]string{KindFeatures, KindStored, KindStatus}, "flag "+name),
					"%s:\n%s", label, diff)
			}
		}
		// Which segments a payload lists depends on which strategies use
		// them (compared above, with the segments inlined without the
		// header); the segments both list must be the same.
		segments := func(view map[string]any) map[string]any {
			m := map[string]any{}
			list, _ := view["segments"].([]any)
			for _, sg := range list {
				m[fmt.Sprint(sg.(map[string]any)["id"])] = sg
			}
			delete(view, "segments")
			return m
		}
		sa, sb := segments(views[0]), segments(views[1])
		for id, sg := range sa {
			if other, ok := sb[id]; ok {
				if diff := flatDiff(sg, other); diff != "" {
					r.add(KindFeatures, id, nil, r.earlier([]string{KindStored, KindStatus}, id), "%s, %s:\n%s", label, id, diff)
				}
			}
		}
		if diff := flatDiff(views[0], views[1]); diff != "" {
			r.add(KindFeatures, "", nil, nil, "%s, outside the features:\n%s", label, diff)
		}
	}
}

// featuresByName takes the features out of a ClientFeatures view, by name.
func featuresByName(view map[string]any) map[string]any {
	m := map[string]any{}
	for _, f := range view["features"].([]any) {
		m[fmt.Sprint(f.(map[string]any)["name"])] = f
	}
	delete(view, "features")
	return m
}

// lastCallOn is the last call that changed flag, or nil.
func lastCallOn(s *Scenario, flag string) *Call {
	for i := len(s.Calls) - 1; i >= 0; i-- {
		if s.Calls[i].Flag == flag {
			return &s.Calls[i]
		}
	}
	return nil
}

// sdkBatch bounds the checks sent to a driver in one command.
const sdkBatch = 2000

// perFlag keeps the first evaluation difference of each flag and counts
// the contexts in which the flag differs.
type perFlag struct {
	first  map[string]*Difference
	counts map[string]int
}

func (p *perFlag) add(r *Report, kind string, s *Scenario, flag string, format string, args ...any) {
	if p.first == nil {
		p.first, p.counts = map[string]*Difference{}, map[string]int{}
	}
	if p.counts[flag]++; p.counts[flag] == 1 {
		// An evaluation differs because of the flag's or a parent's
		// client features (the same SDK reads both), or else because the
		// two servers evaluate alike configurations otherwise.
		subjects := []string{"flag " + flag}
		for _, parent := range s.Parents[flag] {
			subjects = append(subjects, "flag "+parent)
		}
		d := r.add(kind, "flag "+flag, lastCallOn(s, flag), r.earlier([]string{KindFeatures}, subjects...), format, args...)
		if d.Follows == nil {
			// Nothing else differs: show the configuration evaluated.
			data, _ := json.Marshal(r.refFeatures[flag])
			d.Detail += "\n  the flag as Unleash serves it: " + string(data)
		}
		p.first[flag] = d
	}
}

// finish appends the counts to the details.
func (p *perFlag) finish(contexts int) {
	for flag, d := range p.first {
		d.Detail += fmt.Sprintf("\n  (%d of %d contexts differ for this flag)", p.counts[flag], contexts)
	}
}

// compareSDKs evaluates every scenario flag in n random contexts with one
// Node SDK reading each server, and compares isEnabled and getVariant.
func compareSDKs(t *testing.T, s *Scenario, ref, sut *side, n int, r *Report) {
	var sdks [2]*harness.NodeDriver
	for i, sd := range []*side{ref, sut} {
		sdks[i] = harness.StartQuietNodeSDK(t, sd.up.ClientEndpoint(), "differential-sdk")
		waitSynced(t, s, sd, "the Node SDK sees "+s.Sentinel, func() error {
			got, err := sdks[i].Evaluate([]harness.Check{{Flag: s.Sentinel, Context: harness.Context{SessionID: "s"}}})
			if err == nil && (len(got) != 1 || !got[0].Enabled) {
				err = fmt.Errorf("answer %+v", got)
			}
			return err
		})
	}
	contexts := Contexts(s.Seed, n, false)
	var checks []harness.Check
	for _, c := range contexts {
		for _, flag := range s.Flags {
			checks = append(checks, harness.Check{Flag: flag, Context: c})
		}
	}
	r.SDKContexts = len(contexts)
	var diffs perFlag
	for start := 0; start < len(checks); start += sdkBatch {
		batch := checks[start:min(start+sdkBatch, len(checks))]
		type evaluated struct {
			answers []harness.Evaluation
			err     error
		}
		a, b := both(ref, sut, func(sd *side) evaluated {
			sdk := sdks[0]
			if sd == sut {
				sdk = sdks[1]
			}
			answers, err := sdk.EvaluateSeeded(batch)
			return evaluated{answers, err}
		})
		if err := cmp.Or(a.err, b.err); err != nil {
			t.Fatalf("seed %d: %v", s.Seed, err)
		}
		answers := [2][]harness.Evaluation{a.answers, b.answers}
		for j, check := range batch {
			r.SDKChecks++
			if answers[0][j].Enabled {
				r.SDKEnabled++
			}
			a, b := describeEvaluation(answers[0][j]), describeEvaluation(answers[1][j])
			if a != b && r.refRepeated[check.Flag] && answers[0][j].ParentDraws > 0 {
				// The parent's rollout or variant was left to chance, and
				// Unleash's repeated dependency made the SDK draw it
				// once per repeat: the answers differ by chance alone.
				r.Evened[SingleDependencies.Name]++
				continue
			}
			if a != b {
				diffs.add(r, KindSDK, s, check.Flag, "  context %s\n  unleash %s\n  bunting %s", describeContext(check.Context), a, b)
			}
		}
	}
	diffs.finish(len(contexts))
}

// frontendDeliberate says which deliberate difference, if any, may make
// the frontend APIs answer differently for flag in context c, judging by
// the flag and its parents as the reference serves them to SDKs (segments
// inlined), and whether it only concerns the variant: a dependency that
// requires a parent that is off to be off (ParentOff), a remoteAddress
// strategy whose IPs list starts or ends with a space (OuterSpaceIPs), a
// currentTime in the context with DATE_* constraints (CurrentTime), or
// strategy variants without a groupId parameter (StrategyVariantGroup:
// only the variant, unless a dependency asks for the parent's variant).
func frontendDeliberate(features map[string]any, flag string, c harness.Context) (d *Deliberate, variantOnly bool) {
	f, _ := features[flag].(map[string]any)
	deps, _ := f["dependencies"].([]any)
	type related struct {
		feature  map[string]any
		variants bool // whether its variant decides the flag's state
	}
	all := []related{{f, false}}
	for _, d := range deps {
		dep := d.(map[string]any)
		parent, _ := features[fmt.Sprint(dep["feature"])].(map[string]any)
		if dep["enabled"] == false && parent != nil && parent["enabled"] == false {
			return &ParentOff, false
		}
		wanted, _ := dep["variants"].([]any)
		all = append(all, related{parent, len(wanted) > 0})
	}
	for _, r := range all {
		strategies, _ := r.feature["strategies"].([]any)
		for _, st := range strategies {
			strategy := st.(map[string]any)
			params, _ := strategy["parameters"].(map[string]any)
			if ips, _ := params["IPs"].(string); strategy["name"] == "remoteAddress" && paddedEntryMatches(ips, c) {
				return &OuterSpaceIPs, false
			}
			constraints, _ := strategy["constraints"].([]any)
			for _, con := range constraints {
				if c.CurrentTime != "" && strings.HasPrefix(fmt.Sprint(con.(map[string]any)["operator"]), "DATE_") {
					return &CurrentTime, false
				}
			}
		}
	}
	for i, r := range all {
		strategies, _ := r.feature["strategies"].([]any)
		for _, st := range strategies {
			strategy := st.(map[string]any)
			params, _ := strategy["parameters"].(map[string]any)
			variants, _ := strategy["variants"].([]any)
			if _, ok := params["groupId"]; !ok && len(variants) > 0 && (i == 0 || r.variants) {
				return &StrategyVariantGroup, i == 0
			}
		}
	}
	return nil, false
}

// withoutVariant drops the variant from a frontend toggle's description.
func withoutVariant(toggle string) string {
	before, _, _ := strings.Cut(toggle, " variant=")
	return before
}

// paddedEntryMatches says whether the first or last entry of a
// remoteAddress strategy's IPs list has a space outside it (kept by the
// Node SDK) and would, trimmed, match the context's address (the caller's,
// 127.0.0.1, when the context has none).
func paddedEntryMatches(ips string, c harness.Context) bool {
	addr, err := netip.ParseAddr(cmp.Or(c.RemoteAddress, "127.0.0.1"))
	if err != nil {
		return false
	}
	entries := strings.Split(ips, ",")
	for i, e := range entries {
		outer := i == 0 && strings.TrimLeftFunc(e, unicode.IsSpace) != e ||
			i == len(entries)-1 && strings.TrimRightFunc(e, unicode.IsSpace) != e
		if !outer {
			continue
		}
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil && p.Contains(addr) {
			return true
		}
		if a, err := netip.ParseAddr(e); err == nil && a == addr {
			return true
		}
	}
	return false
}

func describeEvaluation(e harness.Evaluation) string {
	return fmt.Sprintf("enabled=%v variant=%s", e.Enabled, describeVariant(&e.Variant))
}

func describeVariant(v *harness.ProxyVariant) string {
	if v == nil {
		return "none"
	}
	s := fmt.Sprintf("%s/%v", v.Name, v.Enabled)
	if v.Payload != nil {
		s += fmt.Sprintf(" payload %s:%s", v.Payload.Type, v.Payload.Value)
	}
	return s
}

func describeContext(c harness.Context) string {
	data, _ := json.Marshal(c)
	return string(data)
}

// compareFrontends asks both frontend APIs for n random complete contexts
// (GET for half, POST for the other half) and compares the scenario's
// flags in the answers.
func compareFrontends(t *testing.T, s *Scenario, ref, sut *side, n int, r *Report) {
	var clients [2]*harness.ProxyClient
	for i, sd := range []*side{ref, sut} {
		clients[i] = harness.NewProxyClient(sd.up.BaseURL+"/api/frontend", sd.up.FrontendToken)
		client := clients[i]
		waitSynced(t, s, sd, "the frontend API lists "+s.Sentinel, func() error {
			toggles, err := client.Get(harness.Context{UserID: "u1", SessionID: "s1"})
			if err == nil && !slices.ContainsFunc(toggles, func(tg harness.ProxyToggle) bool { return tg.Name == s.Sentinel && tg.Enabled }) {
				err = fmt.Errorf("not listed yet")
			}
			return err
		})
	}
	flags := map[string]bool{}
	for _, f := range s.Flags {
		flags[f] = true
	}
	var diffs perFlag
	contexts := Contexts(s.Seed+1_000_003, n, true)
	for i, c := range contexts {
		method := http.MethodGet
		if i%2 == 1 {
			method = http.MethodPost
		}
		type view struct {
			toggles map[string]string
			err     error
		}
		a, b := both(ref, sut, func(sd *side) view {
			client := clients[0]
			if sd == sut {
				client = clients[1]
			}
			var toggles []harness.ProxyToggle
			var err error
			if method == http.MethodGet {
				toggles, err = client.Get(c)
			} else {
				toggles, err = client.Post(c, nil)
			}
			out := map[string]string{}
			for _, tg := range toggles {
				if flags[tg.Name] {
					impression := "absent"
					if tg.ImpressionData != nil {
						impression = fmt.Sprint(*tg.ImpressionData)
					}
					out[tg.Name] = fmt.Sprintf("enabled=%v impressionData=%s variant=%s", tg.Enabled, impression, describeVariant(tg.Variant))
				}
			}
			return view{out, err}
		})
		if err := cmp.Or(a.err, b.err); err != nil {
			t.Fatalf("seed %d: frontend API: %v", s.Seed, err)
		}
		r.FrontendContexts++
		for _, f := range s.Flags {
			x, y := cmp.Or(a.toggles[f], "not listed"), cmp.Or(b.toggles[f], "not listed")
			if d, variantOnly := frontendDeliberate(r.refFeatures, f, c); d != nil {
				r.Evened[d.Name]++
				if !variantOnly {
					continue
				}
				x, y = withoutVariant(x), withoutVariant(y)
			}
			r.FrontendChecks++
			if a.toggles[f] != "" {
				r.FrontendListed++
			}
			if x != y {
				diffs.add(r, KindFrontend, s, f, "  %s /api/frontend, context %s\n  unleash %s\n  bunting %s", method, describeContext(c), x, y)
			}
		}
	}
	diffs.finish(len(contexts))
}
