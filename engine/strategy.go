package engine

import (
	"net/netip"
	"strings"
)

// algorithm is a compiled strategy kind.
type algorithm uint8

const (
	algoNever algorithm = iota // unknown strategy, or one that can never match
	algoAlways
	algoUserWithID
	algoUserRollout
	algoSessionRollout
	algoRandomRollout
	algoFlexibleRollout
	algoRemoteAddress
	algoCustom
)

// stickinessKind is how a rollout or variant picks its hash seed.
type stickinessKind uint8

const (
	stickDefault stickinessKind = iota // userId, then sessionId (then remoteAddress for variants), else random
	stickRandom
	stickField
)

// stickiness is a compiled stickiness setting.
type stickiness struct {
	kind  stickinessKind
	field field
}

func newStickiness(name string, fields *fieldTable) stickiness {
	switch name {
	case "", "default":
		return stickiness{kind: stickDefault}
	case "random":
		return stickiness{kind: stickRandom}
	}
	return stickiness{kind: stickField, field: fields.field(name)}
}

// strategy is one compiled activation strategy. Like constraints, it is
// kept small (what the less common algorithms need lives in ext) and
// allocated next to the other strategies of its snapshot.
type strategy struct {
	algo algorithm
	// refs are the strategy's constraint references (its own, then the
	// segments'), a range of compileConfig.constraintIDs set once that array is
	// final (compileConfig.refRanges holds the range until then).
	refs       []int32
	rollout    rollout      // rollouts
	stickiness stickiness   // flexibleRollout
	variants   *variantList // nil when the strategy has no variants
	ext        *strategyOperands
}

// strategyOperands are what userWithId, remoteAddress and custom
// strategies need; nil for the other algorithms.
type strategyOperands struct {
	userIDs    []string            // userWithId
	userHashes []uint64            // valueHash of userIDs
	userSet    map[string]struct{} // userIDs when there are many
	prefixes   []netip.Prefix      // remoteAddress
	custom     CustomStrategy
	parameters map[string]string // custom: a private copy
}

// compileStrategy compiles s of the flag named flagName and appends it to
// cfg.strategies. segments maps segment ids to their compiled constraint
// ids. It reports whether the engine knows the strategy's name (a built-in
// or one of Options.CustomStrategies).
func compileStrategy(flagName string, s Strategy, segments map[int][]int32, cfg *compileConfig) (known bool) {
	cfg.strategies = append(cfg.strategies, strategy{})
	cs := &cfg.strategies[len(cfg.strategies)-1]
	c0 := int32(len(cfg.constraintIDs))
	for _, c := range s.Constraints {
		cfg.constraintIDs = append(cfg.constraintIDs, cfg.constraints.compile(c))
	}
	missingSegment := false
	for _, id := range s.Segments {
		seg, ok := segments[id]
		if !ok {
			missingSegment = true
			break
		}
		cfg.constraintIDs = append(cfg.constraintIDs, seg...)
	}
	cfg.refRanges = append(cfg.refRanges, [2]int32{c0, int32(len(cfg.constraintIDs))})
	known = cs.compileAlgorithm(flagName, s, cfg)
	if missingSegment {
		cs.algo = algoNever
	}
	if len(s.Variants) > 0 {
		group := groupOrFlagName(s.Parameters, flagName)
		sticky := s.Variants[0].Stickiness
		if sticky == "" {
			sticky = s.Parameters["stickiness"]
		}
		cs.variants = compileVariants(s.Variants, group, sticky, cfg)
	}
	return known
}

// compileAlgorithm sets the strategy's algorithm and operands from s and
// reports whether the name is known (see compileStrategy).
func (cs *strategy) compileAlgorithm(flagName string, s Strategy, cfg *compileConfig) (known bool) {
	known = true
	p := s.Parameters
	var percentage float64 // rollouts
	switch s.Name {
	case "default":
		cs.algo = algoAlways
	case "userWithId":
		cs.algo = algoUserWithID
		ids := splitList(p["userIds"])
		ext := &strategyOperands{userIDs: make([]string, 0, len(ids)), userHashes: make([]uint64, 0, len(ids))}
		for id := range ids {
			ext.userIDs = append(ext.userIDs, id)
			ext.userHashes = append(ext.userHashes, valueHash(id))
		}
		if len(ids) >= setThreshold {
			ext.userSet = ids
		}
		cs.ext = ext
	case "gradualRolloutUserId", "gradualRolloutSessionId":
		cs.algo = algoUserRollout
		if s.Name == "gradualRolloutSessionId" {
			cs.algo = algoSessionRollout
		}
		percentage = parsePercentage(p, "percentage")
		cs.rollout = newRollout(percentage, p["groupId"])
	case "gradualRolloutRandom":
		cs.algo = algoRandomRollout
		percentage = parsePercentage(p, "percentage")
		cs.rollout = newRollout(percentage, "")
	case "flexibleRollout":
		cs.algo = algoFlexibleRollout
		percentage = parsePercentage(p, "rollout")
		cs.rollout = newRollout(percentage, groupOrFlagName(p, flagName))
		cs.stickiness = newStickiness(p["stickiness"], cfg.fields)
	case "remoteAddress":
		cs.algo = algoRemoteAddress
		cs.ext = &strategyOperands{prefixes: parsePrefixes(strings.Split(p["IPs"], ","))}
	case "applicationHostname":
		cs.algo = algoNever
		if _, ok := splitList(strings.ToLower(p["hostNames"]))[strings.ToLower(cfg.hostname)]; ok && cfg.hostname != "" {
			cs.algo = algoAlways
		}
	default:
		cs.algo = algoNever
		known = false
		if impl, ok := cfg.custom[s.Name]; ok && impl != nil {
			known = true
			cs.algo = algoCustom
			params := make(map[string]string, len(p))
			for k, v := range p {
				params[k] = v
			}
			cs.ext = &strategyOperands{custom: impl, parameters: params}
		}
	}
	switch cs.algo {
	case algoUserRollout, algoSessionRollout, algoRandomRollout, algoFlexibleRollout:
		switch {
		case percentage <= 0:
			cs.algo = algoNever
		case percentage >= 100 && (cs.algo == algoRandomRollout || cs.algo == algoFlexibleRollout && cs.stickiness.kind != stickField):
			// Every draw in [1, 100] is within; with default stickiness a
			// missing id falls back to a random draw, never to "off".
			cs.algo = algoAlways
		}
	}
	return known
}

// groupOrFlagName is the groupId parameter, or the flag name when it is
// missing or empty (what Yggdrasil does; Unleash servers always send it).
func groupOrFlagName(p Parameters, flagName string) string {
	if g := p["groupId"]; g != "" {
		return g
	}
	return flagName
}

// parsePercentage reads a percentage parameter; missing or unparsable
// values give 0, which makes the rollout never match.
func parsePercentage(p Parameters, name string) float64 {
	n, ok := parseNumber(p[name])
	if !ok {
		return 0
	}
	return n
}

// splitList splits a comma-separated list, trimming entries and dropping
// empty ones.
func splitList(s string) map[string]struct{} {
	out := make(map[string]struct{})
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out[part] = struct{}{}
		}
	}
	return out
}

// decide reports whether the strategy's algorithm says yes, its
// constraints having held (see Snapshot.isEnabled).
func (cs *strategy) decide(st *evalState) bool {
	ctx := st.ctx
	switch cs.algo {
	case algoAlways:
		return true
	case algoUserWithID:
		if ctx.UserID == "" {
			return false
		}
		if cs.ext.userSet != nil {
			_, ok := cs.ext.userSet[ctx.UserID]
			return ok
		}
		return hashedContains(cs.ext.userIDs, cs.ext.userHashes, ctx.UserID, st.userIDHash())
	case algoUserRollout:
		return ctx.UserID != "" && cs.rollout.hashIn(ctx.UserID)
	case algoSessionRollout:
		return ctx.SessionID != "" && cs.rollout.hashIn(ctx.SessionID)
	case algoRandomRollout:
		return cs.rollout.drawIn()
	case algoFlexibleRollout:
		return cs.flexibleIn(st)
	case algoRemoteAddress:
		addr, ok := st.remoteAddress()
		return ok && prefixesContain(cs.ext.prefixes, addr)
	case algoCustom:
		return callCustom(cs.ext.custom, cs.ext.parameters, ctx)
	}
	return false
}

// flexibleIn decides a flexibleRollout: by the bucket of its stickiness
// id (a field sticky to one that is missing or empty is off), or by a
// random draw.
func (cs *strategy) flexibleIn(st *evalState) bool {
	switch cs.stickiness.kind {
	case stickRandom:
		return cs.rollout.drawIn()
	case stickField:
		v, ok := st.stickyValue(cs.stickiness.field)
		return ok && cs.rollout.hashIn(v)
	}
	return cs.rollout.defaultIn(defaultStickyID(st.ctx))
}

// callCustom runs a custom strategy; an error or a panic is "not enabled".
func callCustom(impl CustomStrategy, params map[string]string, ctx *Context) (on bool) {
	defer func() {
		if recover() != nil {
			on = false
		}
	}()
	ok, err := impl.IsEnabled(params, ctx)
	return err == nil && ok
}
