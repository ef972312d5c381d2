package differential

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// maxDiffLines bounds the lines of one flatDiff.
const maxDiffLines = 12

// flatDiff is a minimal diff of two decoded JSON values: one line per leaf
// (a scalar, or an empty object or list) that differs, named by its path,
// e.g. `strategies[1].parameters.groupId: unleash (absent), bunting "f1"`.
// It returns "" when a and b are equal.
func flatDiff(a, b any) string {
	fa, fb := map[string]string{}, map[string]string{}
	flatten("", a, fa)
	flatten("", b, fb)
	var paths []string
	for p := range fa {
		paths = append(paths, p)
	}
	for p := range fb {
		if _, ok := fa[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var lines []string
	for _, p := range paths {
		va, oka := fa[p]
		vb, okb := fb[p]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "(absent)"
		}
		if !okb {
			vb = "(absent)"
		}
		lines = append(lines, fmt.Sprintf("  %s: unleash %s, bunting %s", cmpOrRoot(p), va, vb))
	}
	if len(lines) > maxDiffLines {
		lines = append(lines[:maxDiffLines], fmt.Sprintf("  … and %d more", len(lines)-maxDiffLines))
	}
	return strings.Join(lines, "\n")
}

func cmpOrRoot(path string) string {
	if path == "" {
		return "(the whole value)"
	}
	return path
}

// flatten records every leaf of v under its path.
func flatten(path string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			out[path] = "{}"
		}
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		if len(x) == 0 {
			out[path] = "[]"
		}
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	case []string:
		if len(x) == 0 {
			out[path] = "[]"
		}
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	default:
		data, _ := json.Marshal(x)
		out[path] = string(data)
	}
}
