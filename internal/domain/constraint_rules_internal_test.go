package domain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// TestConstraintRulesMatchUnleash runs Unleash 8.2.0's own constraint
// validation (its request schema, then the checks its server runs before
// storing a strategy or segment) under Node over fixed and seeded random
// constraints, and checks that validateConstraint accepts exactly the same
// ones. It also checks that variants are ordered as Unleash orders them.
func TestConstraintRulesMatchUnleash(t *testing.T) {
	t.Parallel()
	testutil.Node(t)
	modules := testutil.NodeModules(t, "unleash-server")
	cases := constraintCorpus()
	names := variantNameCorpus()
	input, err := json.Marshal(map[string]any{"constraints": cases, "names": names})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "node", "constraint_rules.mjs"), modules)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node constraint_rules.mjs: %v\n%s", err, stderr.Bytes())
	}
	var unleash struct {
		Constraints []string
		Sorted      []string
	}
	if err := json.Unmarshal(out, &unleash); err != nil || len(unleash.Constraints) != len(cases) {
		t.Fatalf("node output (%v): %.500s", err, out)
	}
	accepted := 0
	for i, c := range cases {
		raw, _ := json.Marshal(c)
		var in ConstraintInput
		if err := json.Unmarshal(raw, &in); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		ours := validateConstraint("c", in)
		if theirs := unleash.Constraints[i]; (ours == nil) != (theirs == "") {
			t.Errorf("%s: Bunting says %v, Unleash says %q", raw, ours, theirs)
		}
		if ours == nil {
			accepted++
		}
	}
	t.Logf("%d constraints, %d accepted by both", len(cases), accepted)

	collator := variantCollator()
	sorted := slices.Clone(names)
	slices.SortStableFunc(sorted, collator.CompareString)
	if !slices.Equal(sorted, unleash.Sorted) {
		t.Errorf("variant order differs:\nBunting %q\nUnleash %q", sorted, unleash.Sorted)
	}
}

// constraintCorpus is a fixed list of edge cases per operator family plus
// seeded random operands.
func constraintCorpus() []map[string]any {
	var out []map[string]any
	single := func(op, value string) {
		out = append(out, map[string]any{"contextName": "f", "operator": op, "value": value})
	}
	for _, v := range []string{"1", "-1", "+1", "1.5", " 12 ", "\u00a012", "\t7\n", "1e3", "1E-7", "1e400", "-1e400", "1e-400",
		"9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740991", "1e20", "1e15", "0x10", "Infinity",
		"NaN", "1_000", ".", "-.5", ".5", "5.", "+-1", "--1", "00012", "1.10", "1.000", "0.1000000000000000055511151231257827",
		"123456789012345678", "0.30000000000000004", "1.7976931348623157e308", "5e-324", "1e", "e1", "1 2", "12abc", "−1", "٣"} {
		single("NUM_EQ", v)
	}
	for _, v := range []string{"2024-01-01", "2024-01-01T10:00:00Z", "2024-01-01T10:00:00.123+02:00", "2024-01-01T10:00:00+0200",
		"2024-02-30", "2024-13-01", "2024-01-32", "2024-01-01T24:00", "2024-01-01T24:01", "2024-01-01T10:00:00.1234567",
		"+002024-01-01", "-000000-01-01", "-000001-01-01", "+275760-09-13T00:00:00Z", "+275760-09-13T00:00:00.001Z",
		"2024-01-01 10:00", "2024/01/01", "01/02/2024", "1/2", "Jan 5", "January 5, 2024 10:00 PM", "5 Jan 2024", "2024 Jan 5",
		"Tue Mar 05 2024 10:00:00 GMT+0100 (Central European Standard Time)", "Mon, 01 Jan 2024 00:00:00 GMT", "foo 2024",
		"foo2024", "2024 foo", "not-a-date", "yesterday", "now", "2024-01-01T", "2024-01-01T10", "10:00", "12:00 am", "13:00 pm",
		"2024-01-01 25:00", "2024-01-01 10:60", "2024-01-01 10:00:00.5", "2024-01-01 10:00 +5", "2024-01-01 10:00 UTC+0530",
		"2024-01-01 10:00 GMT-12345", "2024-01-01 10:00 EST", "EST 2024-01-01", "(comment) 2024-01-01", "2024-01-01 (x",
		"2024-01-01)", "1700000000000", "-1700000000000", "8640000000000000", "8640000000000001", "1.5", "+1", "Jan",
		"999999999", "Jan 1 999999", "Jan 1 1000001", "2024-01-01\u00002", "\u00a02024-01-01", "2024-01-01\u00a0", " ",
		"2024-01-01T10:00:00Zjunk", "2024-1-1", "24-01-01", "Jan 1 2000 10:00 GMT+300000:", "Jan 1 2000 10:00 GMT+3000000:",
		"2024-01-01 10:00:00:00", "2024.01.01", "1.2.2024", "10:00 2024-01-01", "Sat Jan 01 2000 00:00:00 GMT+0000 (UTC)"} {
		single("DATE_AFTER", v)
	}
	for _, v := range []string{"1.2.3", "v1.2.3", "V1.2.3", "=1.2.3", " 1.2.3", "1.2.3 ", "1.2", "1", "01.2.3", "1.02.3",
		"1.2.3-alpha", "1.2.3-alpha.1", "1.2.3-01", "1.2.3-0a", "1.2.3-", "1.2.3+build.5", "1.2.3+", "1.2.3-rc.1+b",
		"9007199254740991.0.0", "9007199254740992.0.0", "1.2.3-9007199254740993", "1.2.3-" + strings.Repeat("a", 250),
		"1.2.3-" + strings.Repeat("a", 251), "1.2.3.4", "a.b.c", "1.2.3-a..b", "1.2.3-a_b"} {
		single("SEMVER_EQ", v)
	}
	for _, v := range []string{"^a.*b$", "(a", "a)", "[a-", "a{1001}", "a{2,1}", "(?i)abc", "(?P<n>a)", "(?<n>a)", "(?=a)",
		"(?!a)", "a++", `\1`, `\C`, `\pN`, `\p{Greek}`, `\Qa.b\E`, `\z`, `\Z`, `[[:alpha:]]`, `\d+\s\w`, `a|b|`, "*", "a**",
		`\x{10FFFF}`, `\x{110000}`, "(?s).", "(?U)a+", "[^\\x00-\\x7F]", "é+"} {
		single("REGEX", v)
	}
	out = append(out,
		map[string]any{"contextName": "f", "operator": "REGEX", "value": "a", "inverted": true},
		map[string]any{"contextName": "f", "operator": "REGEX", "value": "a", "inverted": false},
		map[string]any{"contextName": "f", "operator": "REGEX"},
		map[string]any{"contextName": "f", "operator": "NUM_EQ"},
		map[string]any{"contextName": "f", "operator": "DATE_BEFORE", "value": ""},
		map[string]any{"contextName": "", "operator": "IN", "values": []string{"a"}},
		map[string]any{"contextName": " ", "operator": "IN", "values": []string{"a"}},
		map[string]any{"contextName": "f", "operator": "IN", "values": []string{"a"}, "value": ""},
		map[string]any{"contextName": "f", "operator": "IN", "values": []string{"a"}, "value": "b"},
		map[string]any{"contextName": "f", "operator": "NUM_GT", "value": "1", "values": []string{""}},
		map[string]any{"contextName": "f", "operator": "NUM_GT", "value": "1", "values": []string{"x"}},
	)
	for _, op := range ListOperators {
		out = append(out,
			map[string]any{"contextName": "f", "operator": op, "values": []string{"a"}},
			map[string]any{"contextName": "f", "operator": op, "values": []string{}},
			map[string]any{"contextName": "f", "operator": op},
			map[string]any{"contextName": "f", "operator": op, "value": "a"},
			map[string]any{"contextName": "f", "operator": op, "values": []string{"a", ""}},
			map[string]any{"contextName": "f", "operator": op, "values": []string{strings.Repeat("x", 100)}},
			map[string]any{"contextName": "f", "operator": op, "values": []string{strings.Repeat("x", 101)}},
			map[string]any{"contextName": "f", "operator": op, "values": []string{strings.Repeat("😀", 50)}},
			map[string]any{"contextName": "f", "operator": op, "values": []string{strings.Repeat("😀", 51)}},
		)
	}
	r := rand.New(rand.NewPCG(14, 2026))
	randomString := func(alphabet []string, maxParts int) string {
		var b strings.Builder
		for range 1 + r.IntN(maxParts) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	numberParts := strings.Split("0,1,5,9,00,12,.,.,e,E,+,-, ,7e2,1e21,9007199254740991", ",")
	dateParts := []string{"2024", "01", "1", "12", "31", "59", "24", "00", "999", "123456", "-", "-", ":", ":", ".", " ", " ",
		"T", "Z", "+", "/", ",", "(", ")", "Jan", "march", "pm", "AM", "GMT", "utc", "PST", "z", "t", "foo", "Mon"}
	semverParts := strings.Split("0,1,12,01,.,.,.,-,+,a,rc,v,x-1,9007199254740992", ",")
	for range 600 {
		single("NUM_LT", randomString(numberParts, 6))
		single("DATE_BEFORE", randomString(dateParts, 9))
		single("SEMVER_GT", randomString(semverParts, 9))
	}
	for i := range out {
		out[i]["contextName"] = fmt.Sprint(out[i]["contextName"])
	}
	return out
}

// variantNameCorpus is every URL-friendly character and seeded random
// names made of them.
func variantNameCorpus() []string {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'()"
	names := strings.Split(chars, "")
	r := rand.New(rand.NewPCG(8, 2))
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	for len(names) < 1500 {
		n := ""
		for range 1 + r.IntN(5) {
			n += string("aAbBzZ09-_.!~*'()"[r.IntN(17)])
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	return names
}
