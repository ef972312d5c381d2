package webui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/domain"
)

// The strategy and constraint editors' template helpers. Strategies,
// constraints and segments arrive as the admin API's JSON (maps); these
// read them for pre-filled forms, where nil (a new item) gives defaults.

// operators are the constraint operators the editor offers: every one the
// admin API accepts (domain.ConstraintOperators), IN first as the usual
// choice.
var operators = append([]string{"IN"}, slices.DeleteFunc(slices.Clone(domain.ConstraintOperators), func(o string) bool { return o == "IN" })...)

// editorFuncs are the template functions of the editors.
var editorFuncs = map[string]any{
	// dict builds a template argument from name/value pairs.
	"dict": func(kv ...any) map[string]any {
		m := make(map[string]any, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			m[fmt.Sprint(kv[i])] = kv[i+1]
		}
		return m
	},
	// field is obj[name] of a JSON object, or nil.
	"field": func(obj any, name string) any {
		if m, ok := obj.(map[string]any); ok {
			return m[name]
		}
		return nil
	},
	// param is a strategy's parameter as text, or def when it has none.
	"param": func(strategy any, name, def string) string {
		if m, ok := strategy.(map[string]any); ok {
			if ps, ok := m["parameters"].(map[string]any); ok {
				if v, ok := ps[name]; ok && v != nil {
					return fmt.Sprint(v)
				}
			}
		}
		return def
	},
	// valuesText is a constraint's values as the editor's comma list.
	"valuesText": func(constraint any) string {
		m, _ := constraint.(map[string]any)
		vs, _ := m["values"].([]any)
		out := make([]string, 0, len(vs))
		for _, v := range vs {
			out = append(out, fmt.Sprint(v))
		}
		return strings.Join(out, ", ")
	},
	// usesSegment reports whether a strategy lists the segment id.
	"usesSegment": func(strategy, id any) bool {
		m, _ := strategy.(map[string]any)
		ids, _ := m["segments"].([]any)
		return slices.ContainsFunc(ids, func(v any) bool { return fmt.Sprint(v) == fmt.Sprint(id) })
	},
	"listOperators": func() string { return strings.Join(domain.ListOperators, " ") },
	"payloadTypes":  func() []string { return domain.PayloadTypes },
	"singleOperators": func() string {
		return strings.Join(slices.DeleteFunc(slices.Clone(operators), func(o string) bool { return slices.Contains(domain.ListOperators, o) }), " ")
	},
}
