package engine

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// operator is a compiled constraint operator.
type operator uint8

const (
	opUnknown operator = iota
	opIn
	opNotIn
	opStrStartsWith
	opStrEndsWith
	opStrContains
	opNumEq
	opNumGt
	opNumGte
	opNumLt
	opNumLte
	opDateAfter
	opDateBefore
	opSemverEq
	opSemverGt
	opSemverGte
	opSemverLt
	opSemverLte
	opRegex
	opInCIDR
)

var operatorsByName = map[string]operator{
	"IN":              opIn,
	"NOT_IN":          opNotIn,
	"STR_STARTS_WITH": opStrStartsWith,
	"STR_ENDS_WITH":   opStrEndsWith,
	"STR_CONTAINS":    opStrContains,
	"NUM_EQ":          opNumEq,
	"NUM_GT":          opNumGt,
	"NUM_GTE":         opNumGte,
	"NUM_LT":          opNumLt,
	"NUM_LTE":         opNumLte,
	"DATE_AFTER":      opDateAfter,
	"DATE_BEFORE":     opDateBefore,
	"SEMVER_EQ":       opSemverEq,
	"SEMVER_GT":       opSemverGt,
	"SEMVER_GTE":      opSemverGte,
	"SEMVER_LT":       opSemverLt,
	"SEMVER_LTE":      opSemverLte,
	"REGEX":           opRegex,
	"IN_CIDR":         opInCIDR,
}

// setThreshold is the list length from which IN/NOT_IN use a map; shorter
// lists compare precomputed hashes (see valueHash) side by side and only
// compare the strings whose hash matches.
const setThreshold = 64

// constraint is one compiled constraint. The operand fields used depend on
// op; everything is parsed once here and only read while evaluating. It is
// kept small (the operands of the less common operators live in ext), and
// a snapshot's constraints are allocated side by side, because an
// evaluation of every flag walks through all of them.
type constraint struct {
	// id numbers the distinct constraints of a snapshot, for the
	// per-evaluation memo (see evalState.memo).
	id              int32
	op              operator
	inverted        bool
	caseInsensitive bool
	// broken marks an operand that did not parse: the test fails (and
	// inverted then makes the constraint hold).
	broken bool
	field  field

	values []string // IN, NOT_IN, STR_* (lowercased for caseInsensitive STR_*)
	// hashes are the valueHash of values, for IN and NOT_IN.
	hashes []uint64
	number float64 // NUM_*
	ext    *constraintOperands
}

// constraintOperands are the operands of a constraint that do not fit in
// constraint's common fields; nil when the operator has none of them.
type constraintOperands struct {
	valueSet map[string]struct{} // IN, NOT_IN with many values
	date     time.Time           // DATE_*
	version  semverValue         // SEMVER_*
	regex    *regexp.Regexp      // REGEX
	prefixes []netip.Prefix      // IN_CIDR
}

// compileConstraint compiles c into cc, taking hash arrays from arena
// (nil allocates them separately).
func compileConstraint(cc *constraint, c Constraint, fields *fieldTable, arena *hashArena) {
	*cc = constraint{
		field:           fields.field(c.ContextName),
		op:              operatorsByName[c.Operator],
		inverted:        c.Inverted,
		caseInsensitive: c.CaseInsensitive,
	}
	switch cc.op {
	case opIn, opNotIn:
		cc.values = cleanValues(c.Values)
		cc.hashes = arena.alloc(len(cc.values))
		for i, v := range cc.values {
			cc.hashes[i] = valueHash(v)
		}
		if len(cc.values) >= setThreshold {
			set := make(map[string]struct{}, len(cc.values))
			for _, v := range cc.values {
				set[v] = struct{}{}
			}
			cc.ext = &constraintOperands{valueSet: set}
		}
	case opStrStartsWith, opStrEndsWith, opStrContains:
		cc.values = cleanValues(c.Values)
		if c.CaseInsensitive {
			for i, v := range cc.values {
				cc.values[i] = strings.ToLower(v)
			}
		}
	case opNumEq, opNumGt, opNumGte, opNumLt, opNumLte:
		cc.number, cc.broken = parseNumberOperand(c.Value)
	case opDateAfter, opDateBefore:
		date, ok := parseDate(c.Value)
		cc.ext, cc.broken = &constraintOperands{date: date}, !ok
	case opSemverEq, opSemverGt, opSemverGte, opSemverLt, opSemverLte:
		version, ok := parseSemverOperand(c.Value)
		cc.ext, cc.broken = &constraintOperands{version: version}, !ok
	case opRegex:
		pattern := c.Value
		if c.CaseInsensitive {
			pattern = "(?i)" + pattern
		}
		re, err := regexp.Compile(pattern)
		cc.ext, cc.broken = &constraintOperands{regex: re}, err != nil
	case opInCIDR:
		cc.ext = &constraintOperands{prefixes: parsePrefixes(c.Values)}
	}
}

// cleanValues returns the values of an IN, NOT_IN or STR_* constraint as
// the reference Node SDK compares them: empty values dropped, then each
// value trimmed of the white space JavaScript's trim removes (so a value of
// spaces becomes "", which STR_* operators find in every string).
func cleanValues(values []string) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		if v != "" {
			out = append(out, strings.TrimFunc(v, isJSSpace))
		}
	}
	return out
}

// isJSSpace reports whether JavaScript's String.prototype.trim removes r:
// its WhiteSpace (tab, vertical tab, form feed, space, no-break space, the
// byte order mark and the Zs category) and LineTerminator characters.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\v', '\f', ' ', '\u00a0', '\ufeff', '\n', '\r', '\u2028', '\u2029':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

// holds evaluates the constraint, inversion included, at most once per
// evaluation when the evaluation has a memo.
func (c *constraint) holds(st *evalState) bool {
	if st.memo == nil {
		return c.evaluate(st)
	}
	switch st.memo[c.id] {
	case memoFalse:
		return false
	case memoTrue:
		return true
	}
	ok := c.evaluate(st)
	st.memo[c.id] = memoFalse
	if ok {
		st.memo[c.id] = memoTrue
	}
	return ok
}

// evaluate is holds without the memo. An unknown operator never holds,
// inverted or not.
func (c *constraint) evaluate(st *evalState) bool {
	if c.op == opUnknown {
		return false
	}
	return c.test(st) != c.inverted
}

// test evaluates the operator without inversion.
func (c *constraint) test(st *evalState) bool {
	if c.broken || c.op == opUnknown {
		return false
	}
	switch c.op {
	case opDateAfter, opDateBefore:
		return c.testDate(st)
	case opNumEq, opNumGt, opNumGte, opNumLt, opNumLte:
		return c.testNumber(st)
	case opSemverEq, opSemverGt, opSemverGte, opSemverLt, opSemverLte:
		return c.testSemver(st)
	case opInCIDR:
		return c.testCIDR(st)
	}
	v, ok := st.value(c.field)
	if !ok {
		return c.op == opNotIn
	}
	switch c.op {
	case opIn:
		return c.contains(v, st.hash(c.field, v))
	case opNotIn:
		return !c.contains(v, st.hash(c.field, v))
	case opStrStartsWith, opStrEndsWith, opStrContains:
		return c.testString(v)
	case opRegex:
		return c.ext.regex.MatchString(v)
	}
	return false
}

// contains reports whether v, whose valueHash is h, is one of c.values.
func (c *constraint) contains(v string, h uint64) bool {
	if c.ext != nil {
		_, ok := c.ext.valueSet[v]
		return ok
	}
	return hashedContains(c.values, c.hashes, v, h)
}

// hashedContains reports whether v, whose valueHash is h, is one of
// values, whose hashes are hashes.
func hashedContains(values []string, hashes []uint64, v string, h uint64) bool {
	for i, x := range hashes {
		if x == h && values[i] == v {
			return true
		}
	}
	return false
}

func (c *constraint) testString(v string) bool {
	if c.caseInsensitive {
		return c.testStringFold(v)
	}
	for _, x := range c.values {
		if stringOp(c.op, v, x) {
			return true
		}
	}
	return false
}

// testStringFold compares lowercased strings. ASCII context values are
// folded on the fly without allocating; others go through strings.ToLower.
func (c *constraint) testStringFold(v string) bool {
	if !isASCII(v) {
		lv := strings.ToLower(v)
		for _, x := range c.values {
			if stringOp(c.op, lv, x) {
				return true
			}
		}
		return false
	}
	for _, x := range c.values {
		if stringOpASCIIFold(c.op, v, x) {
			return true
		}
	}
	return false
}

func stringOp(op operator, v, x string) bool {
	switch op {
	case opStrStartsWith:
		return strings.HasPrefix(v, x)
	case opStrEndsWith:
		return strings.HasSuffix(v, x)
	}
	return strings.Contains(v, x)
}

// stringOpASCIIFold is stringOp(op, lower(v), x) for an ASCII v and an
// already lowercased x.
func stringOpASCIIFold(op operator, v, x string) bool {
	if len(x) > len(v) {
		return false
	}
	switch op {
	case opStrStartsWith:
		return equalLowerASCII(v[:len(x)], x)
	case opStrEndsWith:
		return equalLowerASCII(v[len(v)-len(x):], x)
	}
	for i := 0; i+len(x) <= len(v); i++ {
		if equalLowerASCII(v[i:i+len(x)], x) {
			return true
		}
	}
	return false
}

// equalLowerASCII reports whether lower(v) == x for ASCII v.
func equalLowerASCII(v, x string) bool {
	for i := 0; i < len(v); i++ {
		b := v[i]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != x[i] {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// testNumber compares the field, parsed once per evaluation; an absent or
// non-numeric field fails.
func (c *constraint) testNumber(st *evalState) bool {
	n, ok := st.number(c.field)
	return ok && compareNumber(c.op, n, c.number)
}

// compareNumber applies a NUM_* operator to a field's number n and the
// constraint's operand.
func compareNumber(op operator, n, operand float64) bool {
	switch op {
	case opNumEq:
		return n == operand
	case opNumGt:
		return n > operand
	case opNumGte:
		return n >= operand
	case opNumLt:
		return n < operand
	}
	return n <= operand
}

// testDate compares the instant the field gives (see dateOrNow); a field
// that gives none fails.
func (c *constraint) testDate(st *evalState) bool {
	t, ok := st.dateOrNow(c.field)
	if !ok {
		return false
	}
	if c.op == opDateAfter {
		return t.After(c.ext.date)
	}
	return t.Before(c.ext.date)
}

// testSemver compares the field, parsed once per evaluation; an absent or
// invalid version fails.
func (c *constraint) testSemver(st *evalState) bool {
	ver, ok := st.version(c.field)
	if !ok {
		return false
	}
	cmp := compareSemver(ver, c.ext.version)
	switch c.op {
	case opSemverEq:
		return cmp == 0
	case opSemverGt:
		return cmp > 0
	case opSemverGte:
		return cmp >= 0
	case opSemverLt:
		return cmp < 0
	}
	return cmp <= 0
}

// testCIDR looks the field, parsed once per evaluation, up in the ranges;
// an absent or invalid address fails.
func (c *constraint) testCIDR(st *evalState) bool {
	addr, ok := st.addr(c.field)
	if !ok {
		return false
	}
	return prefixesContain(c.ext.prefixes, addr)
}

func prefixesContain(prefixes []netip.Prefix, addr netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// parseAddr parses an IPv4 or IPv6 address; IPv4-mapped IPv6 addresses are
// unmapped so they match IPv4 ranges.
func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// parsePrefixes parses IPs and CIDRs; a single IP becomes a /32 or /128.
// Invalid entries are ignored.
func parsePrefixes(values []string) []netip.Prefix {
	var out []netip.Prefix
	for _, v := range values {
		v = strings.TrimSpace(v)
		if p, err := netip.ParsePrefix(v); err == nil {
			if p.Addr().Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		if a, ok := parseAddr(v); ok && a.Zone() == "" {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return out
}

// parseNumberOperand parses a constraint's numeric value; broken reports
// that it is not a number.
func parseNumberOperand(s string) (n float64, broken bool) {
	n, ok := parseNumber(s)
	return n, !ok
}

// parseNumber parses a decimal number, ignoring surrounding whitespace. The
// empty string, NaN, infinities and hexadecimal forms are not numbers. It
// screens the characters first so that bad input does not allocate an error.
func parseNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case '0' <= b && b <= '9', b == '.', b == '-', b == '+', b == 'e', b == 'E':
		default:
			return 0, false
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// dateLayouts are the accepted date forms: RFC 3339 with optional
// fractional seconds, then zone-less forms read as UTC.
var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02",
}

func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// Matcher is a compiled list of constraints (ANDed), usable outside flag
// evaluation, for example to filter signal payloads.
type Matcher struct {
	constraints []*constraint
	now         func() time.Time
}

// CompileConstraints compiles constraints once for repeated matching.
// Invalid values compile to constraints that do not hold (before
// inversion), exactly as inside flags.
func CompileConstraints(cs []Constraint, opts Options) *Matcher {
	m := &Matcher{now: opts.Now, constraints: make([]*constraint, len(cs))}
	fields := newFieldTable()
	compiled := make([]constraint, len(cs))
	for i, c := range cs {
		compileConstraint(&compiled[i], c, fields, nil)
		m.constraints[i] = &compiled[i]
	}
	return m
}

// Match reports whether every constraint holds for ctx. An empty list
// matches; a nil ctx is an empty context.
func (m *Matcher) Match(ctx *Context) bool {
	if ctx == nil {
		ctx = &Context{}
	}
	st := newEvalState(ctx, m.now)
	return allHold(m.constraints, &st)
}

func allHold(cs []*constraint, st *evalState) bool {
	for _, c := range cs {
		if !c.holds(st) {
			return false
		}
	}
	return true
}

// allHold reports whether the constraints referenced by refs (see
// constraintTable.compile) all hold. With a memo, each test runs at most
// once per evaluation, shared by a constraint and its inverted twin; the
// memo is read before the constraint itself is touched.
func (st *evalState) allHold(refs []int32) bool {
	memo := st.memo
	if memo == nil {
		for _, ref := range refs {
			if st.constraints[ref>>1].test(st) == (ref&1 == 1) {
				return false
			}
		}
		return true
	}
	for _, ref := range refs {
		id := ref >> 1
		outcome := memo[id]
		if outcome == memoUnknown {
			outcome = memoFalse
			if st.constraints[id].test(st) {
				outcome = memoTrue
			}
			memo[id] = outcome
		}
		// The constraint fails when the test's result (outcome-1) equals
		// its inversion bit.
		if outcome-1 == uint8(ref&1) {
			return false
		}
	}
	return true
}
