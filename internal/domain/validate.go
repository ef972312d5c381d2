package domain

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
)

// URLFriendly reports whether s is non-empty and made only of the
// characters encodeURIComponent leaves unchanged: ASCII letters, digits and
// - _ . ! ~ * ' ( ). (A loop rather than a regular expression compiled at
// start-up, which every command of the binary would pay for.)
func URLFriendly(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '_', c == '.', c == '!', c == '~', c == '*', c == '\'', c == '(', c == ')':
		default:
			return false
		}
	}
	return true
}

// ValidateName checks a URL-friendly name of 1–100 characters.
func ValidateName(property, name string) error {
	switch {
	case name == "":
		return apierr.Validation("The `%s` property is required. It was not present on the data you sent.", property)
	case len(name) > 100:
		return apierr.Validation("The `%s` property must be at most 100 characters long.", property)
	case name == "." || name == ".." || !URLFriendly(name):
		return apierr.Validation("The `%s` property must be URL friendly. You provided %q.", property, name)
	}
	return nil
}

// ConstraintOperators are the accepted constraint operators.
var ConstraintOperators = []string{"NOT_IN", "IN", "STR_ENDS_WITH", "STR_STARTS_WITH", "STR_CONTAINS",
	"NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE", "DATE_AFTER", "DATE_BEFORE",
	"SEMVER_EQ", "SEMVER_GT", "SEMVER_LT", "SEMVER_GTE", "SEMVER_LTE", "REGEX"}

// Limits from the reference (constraints per strategy, values per constraint).
const (
	maxConstraints      = 30
	maxConstraintValues = 250
	maxStrategies       = 30
	maxSegmentsPerStrat = 5
)

// ListOperators take a list of values; the others take one value.
var ListOperators = []string{"IN", "NOT_IN", "STR_ENDS_WITH", "STR_STARTS_WITH", "STR_CONTAINS"}

// ConstraintInput is a constraint as an admin call sends it. It remembers
// whether "value" was given as an empty string, which Unleash refuses for
// every operator (an absent value is fine where none is needed).
type ConstraintInput struct {
	engine.Constraint
	emptyValue bool
}

// UnmarshalJSON reads the constraint and notes an empty "value".
func (c *ConstraintInput) UnmarshalJSON(data []byte) error {
	var probe struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &c.Constraint); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	c.emptyValue = string(probe.Value) == `""`
	return nil
}

// ConstraintInputs wraps stored constraints to be checked or patched again.
func ConstraintInputs(cs []engine.Constraint) []ConstraintInput {
	out := make([]ConstraintInput, len(cs))
	for i, c := range cs {
		out[i] = ConstraintInput{Constraint: c}
	}
	return out
}

// EngineConstraints unwraps checked constraints.
func EngineConstraints(cs []ConstraintInput) []engine.Constraint {
	if cs == nil {
		return nil
	}
	out := make([]engine.Constraint, len(cs))
	for i, c := range cs {
		out[i] = c.Constraint
	}
	return out
}

// ValidateConstraints checks constraints as Unleash does before it stores
// them, so that none is stored that could never match.
func ValidateConstraints(property string, cs []ConstraintInput) error {
	if len(cs) > maxConstraints {
		return apierr.Validation("The `%s` property may hold at most %d constraints.", property, maxConstraints)
	}
	for i, c := range cs {
		if err := validateConstraint(fmt.Sprintf("%s[%d]", property, i), c); err != nil {
			return err
		}
	}
	return nil
}

// validateConstraint checks one constraint: its context name and operator,
// each value (1–100 characters), and the operand its operator needs: at
// least one value for the list operators; a number, a date or a semantic
// version for the single-value ones; a valid, non-inverted pattern for
// REGEX.
func validateConstraint(at string, c ConstraintInput) error {
	if c.ContextName == "" {
		return apierr.Validation("The `%s.contextName` property is required. It was not present on the data you sent.", at)
	}
	op := c.Operator
	if !slices.Contains(ConstraintOperators, op) {
		return apierr.Validation("The `%s.operator` property must be one of %s. You provided %q.", at, strings.Join(ConstraintOperators, ", "), op)
	}
	if len(c.Values) > maxConstraintValues {
		return apierr.Validation("The `%s.values` property may hold at most %d values.", at, maxConstraintValues)
	}
	for j, v := range c.Values {
		if v == "" || jsLength(v) > 100 {
			return apierr.Validation("The `%s.values[%d]` property must be 1 to 100 characters long. You provided %q.", at, j, v)
		}
	}
	if c.emptyValue {
		return apierr.Validation("The `%s.value` property must not be empty.", at)
	}
	switch {
	case slices.Contains(ListOperators, op):
		if len(c.Values) == 0 {
			return apierr.Validation("The `%s.values` property must hold at least one value for the %s operator.", at, op)
		}
	case c.Value == "":
		return apierr.Validation("The `%s.value` property is required for the %s operator. It was not present on the data you sent.", at, op)
	case op == "REGEX":
		if _, err := syntax.Parse(c.Value, syntax.Perl); err != nil {
			return apierr.Validation("The `%s.value` property must be a valid regular expression: %v.", at, err)
		}
		if c.Inverted {
			return apierr.Validation("The `%s.inverted` property cannot be true for the REGEX operator.", at)
		}
	case strings.HasPrefix(op, "NUM_") && !jsNumber(c.Value):
		return apierr.Validation("The `%s.value` property must be a number for the %s operator. You provided %q.", at, op, c.Value)
	case strings.HasPrefix(op, "DATE_") && !jsDate(c.Value):
		return apierr.Validation("The `%s.value` property must be a date for the %s operator. You provided %q.", at, op, c.Value)
	case strings.HasPrefix(op, "SEMVER_") && !unleashSemver(c.Value):
		return apierr.Validation("The `%s.value` property must be a semantic version (such as 1.2.3, without a leading v) for the %s operator. You provided %q.", at, op, c.Value)
	}
	return nil
}

// PayloadTypes are the types a variant's payload may have.
var PayloadTypes = []string{"json", "csv", "string", "number"}

// VariantInput is a variant as an admin call sends it. It remembers which
// of the properties that Unleash requires were given.
type VariantInput struct {
	engine.Variant
	weightGiven, stickinessGiven bool
}

// UnmarshalJSON reads the variant and notes a non-null weight and
// stickiness.
func (v *VariantInput) UnmarshalJSON(data []byte) error {
	var probe struct {
		Weight     json.RawMessage `json:"weight"`
		Stickiness json.RawMessage `json:"stickiness"`
	}
	if err := json.Unmarshal(data, &v.Variant); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	given := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
	v.weightGiven, v.stickinessGiven = given(probe.Weight), given(probe.Stickiness)
	return nil
}

// VariantInputs wraps stored variants to be checked again.
func VariantInputs(vs []engine.Variant) []VariantInput {
	out := make([]VariantInput, len(vs))
	for i, v := range vs {
		out[i] = VariantInput{Variant: v, weightGiven: true, stickinessGiven: true}
	}
	return out
}

// VariantRules says whether a list of variants must give each variant's
// weight type and stickiness (a strategy's variants, as on Unleash) or may
// leave them to default to variable and default (a flag environment's
// legacy variants, and variants read from a state import).
type VariantRules struct{ required bool }

var (
	StrategyVariants  = VariantRules{required: true}
	DefaultedVariants = VariantRules{}
)

// variantCollator orders variants by name as JavaScript's localeCompare
// does (Unleash stores and serves them in that order).
var variantCollator = sync.OnceValue(func() *collate.Collator { return collate.New(language.Und) })

// NormalizeVariants validates variants as Unleash does, spreads the weight
// left by the `fix` variants over the `variable` ones (the first of them,
// in the order given, get the remainder) so the total is 1000, and sorts
// them by name, which decides the bucket of each user.
func NormalizeVariants(property string, vs []VariantInput, rules VariantRules) ([]engine.Variant, error) {
	out := make([]engine.Variant, len(vs))
	seen := map[string]bool{}
	fixed, variable := 0, 0
	for i, in := range vs {
		v := in.Variant
		at := fmt.Sprintf("%s[%d]", property, i)
		if err := ValidateName(at+".name", v.Name); err != nil {
			return nil, err
		}
		if seen[v.Name] {
			return nil, apierr.Validation("The `%s.name` property must be unique; %q appears twice.", at, v.Name)
		}
		seen[v.Name] = true
		if !in.weightGiven {
			return nil, apierr.Validation("The `%s.weight` property is required. It was not present on the data you sent.", at)
		}
		if v.Weight < 0 || v.Weight > 1000 {
			return nil, apierr.Validation("The `%s.weight` property must be between 0 and 1000. You sent %d.", at, v.Weight)
		}
		if rules.required && v.WeightType == "" {
			return nil, apierr.Validation("The `%s.weightType` property is required. It was not present on the data you sent.", at)
		}
		v.WeightType = cmp.Or(v.WeightType, "variable")
		if v.WeightType != "variable" && v.WeightType != "fix" {
			return nil, apierr.Validation("The `%s.weightType` property must be one of variable, fix. You provided %q.", at, v.WeightType)
		}
		if rules.required && !in.stickinessGiven {
			return nil, apierr.Validation("The `%s.stickiness` property is required. It was not present on the data you sent.", at)
		}
		v.Stickiness = cmp.Or(v.Stickiness, "default")
		if err := validatePayload(at, v.Payload); err != nil {
			return nil, err
		}
		for j, o := range v.Overrides {
			if o.ContextName == "" {
				return nil, apierr.Validation("The `%s.overrides[%d].contextName` property is required.", at, j)
			}
		}
		if v.WeightType == "fix" {
			fixed += v.Weight
		} else {
			variable++
		}
		out[i] = v
	}
	if len(out) == 0 {
		return out, nil
	}
	if variable == 0 {
		return nil, apierr.Validation("The `%s` property must hold at least one variant with a variable weight.", property)
	}
	if fixed > 1000 {
		return nil, apierr.Validation("The fixed weights of `%s` add up to %d, more than 1000.", property, fixed)
	}
	spreadWeights(out)
	collator := variantCollator()
	slices.SortStableFunc(out, func(a, b engine.Variant) int { return collator.CompareString(a.Name, b.Name) })
	return out, nil
}

// spreadWeights gives the `variable` variants of a validated list the
// weight the `fix` ones leave, in equal shares; the first variable
// variants in the list's order get the remainder, one each.
func spreadWeights(vs []engine.Variant) {
	fixed, variable := 0, 0
	for _, v := range vs {
		if v.WeightType == "fix" {
			fixed += v.Weight
		} else {
			variable++
		}
	}
	if variable == 0 {
		return
	}
	share, rest := (1000-fixed)/variable, (1000-fixed)%variable
	for i := range vs {
		if vs[i].WeightType != "fix" {
			vs[i].Weight = share
			if rest > 0 {
				vs[i].Weight++
				rest--
			}
		}
	}
}

// validatePayload checks a variant's payload: a known type and a value,
// which for json must be a JSON object or array.
func validatePayload(at string, p *engine.VariantPayload) error {
	if p == nil {
		return nil
	}
	if !slices.Contains(PayloadTypes, p.Type) {
		return apierr.Validation("The `%s.payload.type` property must be one of json, csv, string, number. You provided %q.", at, p.Type)
	}
	if p.Value == "" {
		return apierr.Validation("The `%s.payload.value` property is required. It was not present on the data you sent.", at)
	}
	if p.Type == "json" {
		doc := strings.TrimLeft(p.Value, " \t\r\n")
		if !json.Valid([]byte(p.Value)) || (doc[0] != '{' && doc[0] != '[') {
			return apierr.Validation("The `%s.payload.value` property must be a JSON object or array when the type is json.", at)
		}
	}
	return nil
}

// CheckResourceName applies Unleash's rule for names used in paths:
// 1–100 characters that need no escaping in a URL, and not "." or "..".
func CheckResourceName(property, name string) error {
	if name == "" {
		return apierr.Validation("The `%s` property is required. It was not present on the data you sent.", property)
	}
	if len(name) > 100 {
		return apierr.Validation("The `%s` property must not be longer than 100 characters.", property)
	}
	if !URLFriendly(name) || name == "." || name == ".." {
		return apierr.Validation("The `%s` property must be URL friendly. You provided %q.", property, name)
	}
	return nil
}
