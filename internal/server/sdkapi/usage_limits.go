package sdkapi

import (
	"sync/atomic"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/usage"
)

// knownFlags is what a report may count (usage.Flags): the flags of the
// snapshot that the token sees in its environment, with their variants.
// So what one report stores is bounded by the configuration, whatever
// names a client makes up.
type knownFlags struct {
	idx *flagIndex
	p   *domain.Principal
}

// flagIndex finds a snapshot's flags by environment and name, as metrics
// reports look them up: every flag a report counts, once.
type flagIndex struct {
	cs    *clientSnapshot
	byEnv map[string]map[string]*indexedFlag
}

// indexedFlag is a flag of one environment with its project.
type indexedFlag struct {
	usage.KnownFlag
	project string
}

// flagIndexCache holds the index of the latest snapshot.
type flagIndexCache = atomic.Pointer[flagIndex]

// flagIndexOf returns the index of cs, building it once per snapshot.
func (s *API) flagIndexOf(cs *clientSnapshot) *flagIndex {
	if idx := s.flagIndex.Load(); idx != nil && idx.cs == cs {
		return idx
	}
	idx := &flagIndex{cs: cs, byEnv: make(map[string]map[string]*indexedFlag, len(cs.byEnv))}
	for env, flags := range cs.byEnv {
		m := make(map[string]*indexedFlag, len(flags))
		for i := range flags {
			f := &flags[i].withSegments
			e := &indexedFlag{KnownFlag: usage.KnownFlag{Name: f.Name}, project: f.Project}
			for _, v := range f.Variants {
				e.Variants = append(e.Variants, v.Name)
			}
			for _, st := range f.Strategies {
				for _, v := range st.Variants {
					e.Variants = append(e.Variants, v.Name)
				}
			}
			m[f.Name] = e
		}
		idx.byEnv[env] = m
	}
	s.flagIndex.Store(idx)
	return idx
}

// Flag returns the flag when the token sees it in its environment; a
// token for every environment ("*") sees a flag of any environment.
func (k knownFlags) Flag(name []byte) (*usage.KnownFlag, bool) {
	var f *indexedFlag
	if env := k.p.Environment; env != "*" && env != "" {
		f = k.idx.byEnv[env][string(name)] // a map index: no copy of name
	} else {
		for _, flags := range k.idx.byEnv {
			if f = flags[string(name)]; f != nil {
				break
			}
		}
	}
	if f == nil || !k.p.CanSeeProject(f.project) {
		return nil, false
	}
	return &f.KnownFlag, true
}
