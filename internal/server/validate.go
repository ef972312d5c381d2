package server

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
)

// urlFriendly reports whether s is non-empty and made only of the
// characters encodeURIComponent leaves unchanged: ASCII letters, digits and
// - _ . ! ~ * ' ( ). (A loop rather than a regular expression compiled at
// start-up, which every command of the binary would pay for.)
func urlFriendly(s string) bool {
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

// validateName checks a URL-friendly name of 1–100 characters.
func validateName(property, name string) error {
	switch {
	case name == "":
		return apierr.Validation("The `%s` property is required. It was not present on the data you sent.", property)
	case len(name) > 100:
		return apierr.Validation("The `%s` property must be at most 100 characters long.", property)
	case name == "." || name == ".." || !urlFriendly(name):
		return apierr.Validation("The `%s` property must be URL friendly. You provided %q.", property, name)
	}
	return nil
}

// constraintOperators are the accepted constraint operators.
var constraintOperators = []string{"NOT_IN", "IN", "STR_ENDS_WITH", "STR_STARTS_WITH", "STR_CONTAINS",
	"NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE", "DATE_AFTER", "DATE_BEFORE",
	"SEMVER_EQ", "SEMVER_GT", "SEMVER_LT", "SEMVER_GTE", "SEMVER_LTE", "REGEX"}

// Limits from the reference (constraints per strategy, values per constraint).
const (
	maxConstraints      = 30
	maxConstraintValues = 250
	maxStrategies       = 30
	maxSegmentsPerStrat = 5
)

// validateConstraints checks each constraint's context name and operator.
func validateConstraints(property string, cs []engine.Constraint) error {
	if len(cs) > maxConstraints {
		return apierr.Validation("The `%s` property may hold at most %d constraints.", property, maxConstraints)
	}
	for i, c := range cs {
		at := fmt.Sprintf("%s[%d]", property, i)
		if strings.TrimSpace(c.ContextName) == "" {
			return apierr.Validation("The `%s.contextName` property is required. It was not present on the data you sent.", at)
		}
		if !slices.Contains(constraintOperators, c.Operator) {
			return apierr.Validation("The `%s.operator` property must be one of %s. You provided %q.", at, strings.Join(constraintOperators, ", "), c.Operator)
		}
		if len(c.Values) > maxConstraintValues {
			return apierr.Validation("The `%s.values` property may hold at most %d values.", at, maxConstraintValues)
		}
	}
	return nil
}

var payloadTypes = []string{"json", "csv", "string", "number"}

// normalizeVariants validates variants and spreads the weight left by the
// `fix` variants over the `variable` ones so the total is 1000.
func normalizeVariants(property string, vs []engine.Variant, allowOverrides bool) ([]engine.Variant, error) {
	out := make([]engine.Variant, len(vs))
	copy(out, vs)
	seen := map[string]bool{}
	fixed, variable := 0, 0
	for i := range out {
		v := &out[i]
		at := fmt.Sprintf("%s[%d]", property, i)
		if v.Name == "" {
			return nil, apierr.Validation("The `%s.name` property is required. It was not present on the data you sent.", at)
		}
		if seen[v.Name] {
			return nil, apierr.Validation("The `%s.name` property must be unique; %q appears twice.", at, v.Name)
		}
		seen[v.Name] = true
		if v.WeightType == "" {
			v.WeightType = "variable"
		}
		if v.WeightType != "variable" && v.WeightType != "fix" {
			return nil, apierr.Validation("The `%s.weightType` property must be one of variable, fix. You provided %q.", at, v.WeightType)
		}
		if v.Weight < 0 || v.Weight > 1000 {
			return nil, apierr.Validation("The `%s.weight` property must be between 0 and 1000. You sent %d.", at, v.Weight)
		}
		if v.Stickiness == "" {
			v.Stickiness = "default"
		}
		if p := v.Payload; p != nil {
			if !slices.Contains(payloadTypes, p.Type) {
				return nil, apierr.Validation("The `%s.payload.type` property must be one of json, csv, string, number. You provided %q.", at, p.Type)
			}
			if p.Type == "json" && !json.Valid([]byte(p.Value)) {
				return nil, apierr.Validation("The `%s.payload.value` property must be a valid JSON string when the type is json.", at)
			}
		}
		if len(v.Overrides) > 0 && !allowOverrides {
			return nil, apierr.Validation("The `%s.overrides` property is not allowed here.", at)
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
	}
	if len(out) == 0 {
		return out, nil
	}
	if fixed > 1000 {
		return nil, apierr.Validation("The fixed weights of `%s` add up to %d, more than 1000.", property, fixed)
	}
	if variable == 0 {
		if fixed != 1000 {
			return nil, apierr.Validation("The weights of `%s` must add up to 1000 when no variant has a variable weight (they add up to %d).", property, fixed)
		}
		return out, nil
	}
	share, rest := (1000-fixed)/variable, (1000-fixed)%variable
	for i := range out {
		if out[i].WeightType == "variable" {
			out[i].Weight = share
			if rest > 0 {
				out[i].Weight++
				rest--
			}
		}
	}
	return out, nil
}
