package engine

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// ClientFeatures is the payload that SDKs and proxies receive from
// GET /api/client/features. Both the server (which produces it) and the
// proxy (which consumes it) use this type, so there is one wire model.
type ClientFeatures struct {
	// Version is the format version; the server sends 2.
	Version int `json:"version"`
	// Features are the flags, in the order the server sends them.
	Features []Feature `json:"features"`
	// Segments are sent to clients that announce specification 4.2.0 or
	// newer; older clients get segment constraints inlined into strategies.
	Segments []Segment `json:"segments,omitempty"`
	// Query echoes the filters the server applied.
	Query *Query `json:"query,omitempty"`
	// Meta carries the revision the payload was built from (Unleash 5+).
	Meta *Meta `json:"meta,omitempty"`
}

// Query echoes the filters of a client features request.
type Query struct {
	Project                  []string   `json:"project,omitempty"`
	NamePrefix               string     `json:"namePrefix,omitempty"`
	Environment              string     `json:"environment,omitempty"`
	InlineSegmentConstraints bool       `json:"inlineSegmentConstraints,omitempty"`
	Tag                      [][]string `json:"tag,omitempty"`
}

// Meta describes the revision a payload was built from.
type Meta struct {
	Revision  int64  `json:"revisionId,omitempty"`
	ETag      string `json:"etag,omitempty"`
	QueryHash string `json:"queryHash,omitempty"`
}

// Feature is one flag as SDKs receive it.
type Feature struct {
	Name           string       `json:"name"`
	Type           string       `json:"type,omitempty"`
	Description    *string      `json:"description"`
	Project        string       `json:"project,omitempty"`
	Enabled        bool         `json:"enabled"`
	Stale          bool         `json:"stale"`
	ImpressionData bool         `json:"impressionData"`
	Strategies     []Strategy   `json:"strategies"`
	Variants       []Variant    `json:"variants"`
	Dependencies   []Dependency `json:"dependencies,omitempty"`
}

// Strategy is one activation strategy of a flag in one environment.
type Strategy struct {
	ID          string       `json:"id,omitempty"`
	Name        string       `json:"name"`
	Title       *string      `json:"title,omitempty"`
	Disabled    bool         `json:"disabled,omitempty"`
	SortOrder   int          `json:"sortOrder,omitempty"`
	Parameters  Parameters   `json:"parameters"`
	Constraints []Constraint `json:"constraints"`
	Segments    []int        `json:"segments,omitempty"`
	Variants    []Variant    `json:"variants,omitempty"`
}

// Constraint restricts a strategy (or segment) to contexts whose field
// satisfies the operator.
//
// It always encodes "values" (an empty list rather than nothing), because
// SDKs such as the Node SDK fail on an IN or NOT_IN constraint without it,
// and the two booleans, as the Unleash server does.
type Constraint struct {
	ContextName     string   `json:"contextName"`
	Operator        string   `json:"operator"`
	Values          []string `json:"values"`
	Value           string   `json:"value,omitempty"`
	CaseInsensitive bool     `json:"caseInsensitive"`
	Inverted        bool     `json:"inverted"`
}

// MarshalJSON encodes a nil Values as an empty list.
func (c Constraint) MarshalJSON() ([]byte, error) {
	type plain Constraint
	if c.Values == nil {
		c.Values = []string{}
	}
	return json.Marshal(plain(c))
}

// Variant is a feature-environment variant or a strategy variant.
type Variant struct {
	Name       string          `json:"name"`
	Weight     int             `json:"weight"`
	WeightType string          `json:"weightType,omitempty"`
	Stickiness string          `json:"stickiness,omitempty"`
	Payload    *VariantPayload `json:"payload,omitempty"`
	Overrides  []Override      `json:"overrides,omitempty"`
}

// VariantPayload is the payload of a variant. Value is always a string; a
// JSON payload is a JSON document encoded as a string.
type VariantPayload struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Override pins a variant for contexts whose field has one of the values.
type Override struct {
	ContextName string   `json:"contextName"`
	Values      []string `json:"values"`
}

// Dependency makes a flag depend on a parent flag. An empty Variants list
// is sent as [] (Unleash sends one for every enabled dependency), a nil one
// is left out.
type Dependency struct {
	Feature  string   `json:"feature"`
	Enabled  *bool    `json:"enabled,omitempty"`
	Variants []string `json:"variants,omitzero"`
}

// Segment is a named, reusable list of constraints.
type Segment struct {
	ID          int          `json:"id"`
	Name        string       `json:"name,omitempty"`
	Constraints []Constraint `json:"constraints"`
}

// Parameters are a strategy's parameters. Unleash sends strings, but some
// servers and hand-written payloads send numbers or booleans; those are
// accepted and kept in their JSON text form.
type Parameters map[string]string

// UnmarshalJSON accepts string, number, boolean and null values.
func (p *Parameters) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*p = nil
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := make(Parameters, len(raw))
	for k, v := range raw {
		v = bytes.TrimSpace(v)
		switch {
		case len(v) == 0 || bytes.Equal(v, []byte("null")):
			continue
		case v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return err
			}
			out[k] = s
		case v[0] == '{' || v[0] == '[':
			out[k] = string(v)
		default:
			if f, err := strconv.ParseFloat(string(v), 64); err == nil {
				out[k] = strconv.FormatFloat(f, 'f', -1, 64)
			} else {
				out[k] = string(v)
			}
		}
	}
	*p = out
	return nil
}
