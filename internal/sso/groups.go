package sso

import (
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// GroupSyncer receives, at every sign-in with group syncing on, the person
// and the group names their identity provider claims (read at
// groupJsonPath), and makes their group memberships match the groups whose
// SSO mappings name those claims: added and removed. internal/access
// provides it; without one, group syncing reads the claim and stops there.
// It runs in the sign-in's transaction and writes its own events.
type GroupSyncer interface {
	SyncGroups(tx *store.Tx, user store.User, claimed []string) error
}

// GroupPath is a parsed groupJsonPath: the keys and array indexes leading
// from the claims to the groups.
type GroupPath []pathStep

type pathStep struct {
	key   string
	index int // when key is ""
}

// ParseGroupPath parses groupJsonPath. It takes what people write for
// Unleash: a claim name (groups), dotted names into nested objects
// (realm_access.roles), array indexes (orgs[0].groups), a leading "$." and
// bracketed names for claim names with dots (['https://example.com/groups']).
func ParseGroupPath(path string) (GroupPath, error) {
	bad := func(why string) (GroupPath, error) {
		return nil, apierr.Validation("The `groupJsonPath` property %q is not a claim path (%s); write e.g. groups, realm_access.roles or ['https://example.com/groups'].", path, why)
	}
	p := strings.TrimSpace(path)
	p = strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
	if p == "" {
		return bad("it is empty")
	}
	var out GroupPath
	for p != "" {
		switch {
		case strings.HasPrefix(p, "['") || strings.HasPrefix(p, `["`):
			q := p[1]
			end := strings.IndexByte(p[2:], q)
			if end < 0 || !strings.HasPrefix(p[2+end+1:], "]") {
				return bad("an unclosed [' ']")
			}
			out = append(out, pathStep{key: p[2 : 2+end]})
			p = p[2+end+2:]
		case strings.HasPrefix(p, "["):
			end := strings.IndexByte(p, ']')
			if end < 0 {
				return bad("an unclosed [ ]")
			}
			n, err := strconv.Atoi(p[1:end])
			if err != nil || n < 0 {
				return bad("an index that is not a number")
			}
			out = append(out, pathStep{index: n})
			p = p[end+1:]
		default:
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			if end == 0 {
				return bad("an empty name")
			}
			out = append(out, pathStep{key: p[:end]})
			p = p[end:]
		}
		if strings.HasPrefix(p, ".") {
			p = p[1:]
			if p == "" {
				return bad("a trailing dot")
			}
		}
	}
	return out, nil
}

// Lookup follows the path through claims and returns what it reaches.
func (gp GroupPath) Lookup(claims map[string]any) (any, bool) {
	var cur any = claims
	for _, st := range gp {
		switch v := cur.(type) {
		case map[string]any:
			if st.key == "" {
				return nil, false
			}
			next, ok := v[st.key]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			if st.key != "" || st.index >= len(v) {
				return nil, false
			}
			cur = v[st.index]
		default:
			return nil, false
		}
	}
	return cur, true
}

// ClaimedGroups returns the group names at path in claims: a list of
// names, or one name, or a space- or comma-separated string of them;
// found is false when the claims hold nothing there.
func ClaimedGroups(claims map[string]any, path GroupPath) (groups []string, found bool) {
	v, ok := path.Lookup(claims)
	if !ok || v == nil {
		return nil, false
	}
	seen := map[string]bool{}
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" && !seen[s] {
			seen[s] = true
			groups = append(groups, s)
		}
	}
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			switch item := item.(type) {
			case string:
				add(item)
			case float64:
				add(strconv.FormatFloat(item, 'f', -1, 64))
			}
		}
	case string:
		for _, s := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			add(s)
		}
	default:
		return nil, false
	}
	return groups, true
}
