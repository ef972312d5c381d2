package engine

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/twmb/murmur3"
)

// TestHashVectors pins murmur3 x86 32-bit over UTF-8 bytes to the reference
// vectors (go-deps.md Appendix A, utf8 column; evaluation.md §2).
func TestHashVectors(t *testing.T) {
	long := "long:" + strings.Repeat("a", 82)
	tests := []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", variantSeed, 4002661964},
		{"a", 0, 1009084850},
		{"a", variantSeed, 1778238603},
		{"ab", 0, 2613040991},
		{"ab", variantSeed, 1594296940},
		{"abc", 0, 3017643002},
		{"abc", variantSeed, 212112276},
		{"abcd", 0, 1139631978},
		{"abcd", variantSeed, 2679851658},
		{"default:123", 0, 309085281},
		{"default:123", variantSeed, 1623909396},
		{"Demo:user-1", 0, 2574844828},
		{"Demo:user-1", variantSeed, 2372190685},
		{"feature.toggle:7a1f5d2e-3b4c", 0, 1173135302},
		{"feature.toggle:7a1f5d2e-3b4c", variantSeed, 1639585931},
		{"groupA:åäö", 0, 1434271075},
		{"groupA:åäö", variantSeed, 2360406519},
		{"g:日本語ユーザー", 0, 3104923843},
		{"g:日本語ユーザー", variantSeed, 3869693088},
		{"g:emoji-😀", 0, 1361509717},
		{"g:emoji-😀", variantSeed, 3369340946},
		{"x:", 0, 2554223185},
		{"x:", variantSeed, 1570240028},
		{long, 0, 2950508199},
		{long, variantSeed, 1052537400},
		{"a:b", 0, 2722392131},
		{"a:b", variantSeed, 4151138582},
	}
	for _, tc := range tests {
		// Split at every position: the prefix/id split must not matter.
		for cut := 0; cut <= len(tc.in); cut++ {
			if got := hashKey(tc.seed, tc.in[:cut], tc.in[cut:]); got != tc.want {
				t.Fatalf("hash(%q|%q, %d) = %d, want %d", tc.in[:cut], tc.in[cut:], tc.seed, got, tc.want)
			}
		}
	}
}

// TestHashLongInput covers inputs of many blocks.
func TestHashLongInput(t *testing.T) {
	id := strings.Repeat("x", 771)
	a := hashKey(0, "g:", id)
	b := hashKey(0, "", "g:"+id)
	if a != b {
		t.Fatalf("long input: %d != %d", a, b)
	}
}

// TestNormalizedHash pins the normalisation examples of the reference.
func TestNormalizedHash(t *testing.T) {
	tests := []struct {
		group, id string
		seed      uint32
		modulo    uint32
		want      uint32
	}{
		{"default", "123", rolloutSeed, 100, 82},
		{"Feature.flexibleRollout.10", "174", rolloutSeed, 100, 10},
		{"Feature.flexibleRollout.10", "499", rolloutSeed, 100, 32},
		{"Feature.Variants.C", "232", variantSeed, 99, 18},
		{"Feature.Variants.C", "607", variantSeed, 99, 58},
		{"Feature.Variants.C", "656", variantSeed, 99, 94},
		// Non-ASCII: UTF-8 bytes (Node's murmurhash3js would give 67).
		{"groupA", "åäö", rolloutSeed, 100, 1434271075%100 + 1},
	}
	for _, tc := range tests {
		if got := normalizedHash(tc.seed, groupPrefix(tc.group), tc.id, tc.modulo); got != tc.want {
			t.Errorf("normalizedHash(%q, %q, %d, %d) = %d, want %d", tc.group, tc.id, tc.seed, tc.modulo, got, tc.want)
		}
	}
}

func TestHashDoesNotAllocate(t *testing.T) {
	p := newHashPrefix(variantSeed, "some.flag.name:")
	if n := testing.AllocsPerRun(100, func() { p.sum("user-123456") }); n != 0 {
		t.Fatalf("hashPrefix.sum allocates %v times", n)
	}
}

// FuzzHashPrefix checks the precompiled prefix against twmb/murmur3 over
// the whole input, for any split between prefix and id.
func FuzzHashPrefix(f *testing.F) {
	f.Add(uint32(0), "default:", "123")
	f.Add(uint32(variantSeed), "feature.toggle:", "7a1f5d2e-3b4c")
	f.Add(uint32(1), "abc", "")
	f.Add(uint32(2), "", "abcdefg")
	f.Add(uint32(3), "g:", strings.Repeat("x", 515))
	f.Fuzz(func(t *testing.T, seed uint32, prefix, id string) {
		p := newHashPrefix(seed, prefix)
		want := murmur3.SeedSum32(seed, []byte(prefix+id))
		if got := p.sum(id); got != want {
			t.Fatalf("hash of %q|%q seed %d = %d, murmur3 says %d", prefix, id, seed, got, want)
		}
	})
}

// TestSemverAppendixA is the semver table of go-deps.md Appendix A (node
// results of eq/lt/gt) under our rules. Our rules agree with node-semver
// except for a constraint value with a leading "v", which we reject
// (evaluation.md §12) where node-semver accepts it.
func TestSemverAppendixA(t *testing.T) {
	tests := []struct {
		ctx, value  string
		eq, lt, gt  bool
		differsNode bool
	}{
		{"1.2.3", "1.2.3", true, false, false, false},
		{"1.2.3", "1.2.4", false, true, false, false},
		{"1.2.3-alpha", "1.2.3", false, true, false, false},
		{"1.2.3-alpha", "1.2.3-beta", false, true, false, false},
		{"1.2.3-alpha.1", "1.2.3-alpha.beta", false, true, false, false},
		{"1.2.3-alpha.2", "1.2.3-alpha.10", false, true, false, false},
		{"1.2.3-alpha.beta", "1.2.3-beta", false, true, false, false},
		{"1.2.3-beta.2", "1.2.3-beta.11", false, true, false, false},
		{"1.2.3-rc.1", "1.2.3", false, true, false, false},
		{"1.0.0-alpha", "1.0.0-alpha.1", false, true, false, false},
		{"1.2.3+build.1", "1.2.3+build.2", true, false, false, false},
		{"1.2.3+build", "1.2.3", true, false, false, false},
		{"1.2.3-1", "1.2.3-a", false, true, false, false},
		{"1.2.3-01", "1.2.3-1", false, false, false, false},
		{"v1.2.3", "1.2.3", false, false, false, false},
		{"=1.2.3", "1.2.3", false, false, false, false},
		{" 1.2.3 ", "1.2.3", true, false, false, false},
		{"1.2", "1.2.0", false, false, false, false},
		{"1", "1.0.0", false, false, false, false},
		{"01.2.3", "1.2.3", false, false, false, false},
		// node: lt true; we reject the "v" on the constraint value.
		{"1.2.3", "v1.2.4", false, false, false, true},
		{"1.2.3", "1.2", false, false, false, false},
		{"1.2.3-", "1.2.3", false, false, false, false},
		{"1.2.3-alpha..1", "1.2.3", false, false, false, false},
		{"2.0.0-rc.1", "2.0.0-rc.1+meta", true, false, false, false},
		{"1.2.3-x.7.z.92", "1.2.3-x.7.z.93", false, true, false, false},
		{"1.2.3-alpha-1", "1.2.3-alpha-2", false, true, false, false},
		{"99999999999999999999.0.0", "1.0.0", false, false, false, false},
		{"1.2.3.4", "1.2.3", false, false, false, false},
		{"1.2.3-ALPHA", "1.2.3-alpha", false, true, false, false},
	}
	for _, tc := range tests {
		for _, op := range []struct {
			name string
			want bool
		}{{"SEMVER_EQ", tc.eq}, {"SEMVER_LT", tc.lt}, {"SEMVER_GT", tc.gt}} {
			var c constraint
			compileConstraint(&c, Constraint{ContextName: "version", Operator: op.name, Value: tc.value}, newFieldTable(), nil)
			st := newEvalState(&Context{Properties: map[string]string{"version": tc.ctx}}, nil)
			if got := c.holds(&st); got != op.want {
				t.Errorf("%q %s %q = %v, want %v (differs from node: %v)", tc.ctx, op.name, tc.value, got, op.want, tc.differsNode)
			}
		}
	}
}

// TestCompareSemverMatchesMasterminds checks the allocation-free
// precedence comparison against the library's own Compare.
func TestCompareSemverMatchesMasterminds(t *testing.T) {
	versions := []string{
		"0.0.0", "1.0.0", "1.0.1", "1.1.0", "2.0.0", "10.0.0", "1.0.0-0", "1.0.0-1", "1.0.0-2", "1.0.0-10",
		"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
		"1.0.0-rc.1", "1.0.0-rc.1+build", "1.0.0+build.7", "1.0.0-a-b", "1.0.0-A", "1.0.0-a.b.c.d",
		"1.0.0-1.a", "1.0.0-a.1", "1.0.0-999999999999999999999",
	}
	for _, a := range versions {
		va, pa := semver.MustParse(a), mustParseSemver(t, a)
		for _, b := range versions {
			vb, pb := semver.MustParse(b), mustParseSemver(t, b)
			if got, want := compareSemver(pa, pb), va.Compare(vb); got != want {
				t.Errorf("compareSemver(%s, %s) = %d, Masterminds says %d", a, b, got, want)
			}
		}
	}
}

func mustParseSemver(t *testing.T, s string) semverValue {
	t.Helper()
	v, ok := parseSemver(s)
	if !ok {
		t.Fatalf("parseSemver(%q) failed", s)
	}
	return v
}

// semverCorpus are strings that probe every rule of strict parsing.
var semverCorpus = []string{
	"1.2.3", "0.0.0", "1.2.3-alpha", "1.2.3-alpha.1", "1.2.3+build", "1.2.3-rc.1+build.5", "1.2.3+a+b",
	"1.2.3-", "1.2.3+", "1.2.3-a..b", "1.2.3+a..b", "1.2.3-01", "1.2.3-0", "1.2.3-0a", "1.2.3-00a", "1.2.3+01",
	"01.2.3", "1.02.3", "1.2.03", "1.2", "1", "1.2.3.4", "v1.2.3", "V1.2.3", "=1.2.3", " 1.2.3 ", "\t1.2.3\n",
	"1.2.3 ", "1 .2.3", "1.2.3-alpha beta", "1.2.3-al_pha", "1.2.3-ALPHA", "1.2.3-a-b-c", "1.2.3--", "1.2.3-+",
	"99999999999999999999.0.0", "18446744073709551615.0.0", "18446744073709551616.0.0", "1.18446744073709551615.1",
	"1.2.3-18446744073709551616", "", " ", ".", "..", "1..3", "1.2.", ".2.3", "1.2.-3", "1.2.3-é", "1.2.3+é",
	"1.2-x.3", "1-a.2.3", "1.2.3-a.1.b.2", "-1.2.3", "+1.2.3", "1.2.3-a+b-c.d",
}

// TestParseSemverMatchesMasterminds: the allocation-free parser accepts
// exactly what StrictNewVersion accepts (after our trimming and "v" rule),
// with the same numbers and pre-release.
func TestParseSemverMatchesMasterminds(t *testing.T) {
	for _, s := range semverCorpus {
		checkParseSemver(t, s)
	}
	long := "1.2.3-" + strings.Repeat("a", 300)
	checkParseSemver(t, long)
}

func checkParseSemver(t *testing.T, s string) {
	t.Helper()
	want, wantOK := parseSemverOperand(s)
	got, gotOK := parseSemver(s)
	if gotOK != wantOK || got != want {
		t.Errorf("parseSemver(%q) = %+v %v, Masterminds-based %+v %v", s, got, gotOK, want, wantOK)
	}
}

// FuzzParseSemver checks the parser against Masterminds on random input.
func FuzzParseSemver(f *testing.F) {
	for _, s := range semverCorpus {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkParseSemver(t, s) })
}

func TestParseSemverDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { parseSemver("2.0.0-beta.2+build.1") }); n != 0 {
		t.Fatalf("parseSemver allocates %v times", n)
	}
}
