package sdkapi

import (
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/domain"
)

// knownFlags is what a report may count (usage.Flags): the flags of the
// snapshot that the token sees in its environment, and their variants. So
// what one report stores is bounded by the configuration, whatever names
// a client makes up.
type knownFlags struct {
	cs *clientSnapshot
	p  *domain.Principal
}

// Flag returns the flag's configured name when the token sees it.
func (k knownFlags) Flag(name string) (string, bool) {
	f := k.cs.flag(k.p.Environment, name)
	if f == nil || !k.p.CanSeeProject(f.withSegments.Project) {
		return "", false
	}
	return f.withSegments.Name, true
}

// Variant returns the variant's configured name: one of the flag's
// variants (of the environment or of a strategy) or the "disabled"
// fallback.
func (k knownFlags) Variant(flag, v string) (string, bool) {
	if v == "disabled" {
		return "disabled", true
	}
	f := k.cs.flag(k.p.Environment, flag)
	if f == nil {
		return "", false
	}
	for _, fv := range f.withSegments.Variants {
		if fv.Name == v {
			return fv.Name, true
		}
	}
	for _, st := range f.withSegments.Strategies {
		for _, sv := range st.Variants {
			if sv.Name == v {
				return sv.Name, true
			}
		}
	}
	return "", false
}

// noFlags is what a report without counts may count: nothing.
type noFlags struct{}

func (noFlags) Flag(string) (string, bool)            { return "", false }
func (noFlags) Variant(string, string) (string, bool) { return "", false }

// flag finds a flag of the snapshot in env; a token for every environment
// ("*") sees a flag of any environment.
func (cs *clientSnapshot) flag(env, name string) *clientFlag {
	find := func(flags []clientFlag) *clientFlag {
		i, ok := slices.BinarySearchFunc(flags, name, func(f clientFlag, n string) int { return strings.Compare(f.withSegments.Name, n) })
		if !ok {
			return nil
		}
		return &flags[i]
	}
	if env != "*" && env != "" {
		return find(cs.byEnv[env])
	}
	for _, flags := range cs.byEnv {
		if f := find(flags); f != nil {
			return f
		}
	}
	return nil
}
