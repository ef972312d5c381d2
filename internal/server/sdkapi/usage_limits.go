package sdkapi

import (
	"sync/atomic"

	"github.com/bunting-flags/bunting/internal/clientconfig"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/usage"
)

// knownFlags is what a report may count (usage.Flags): the flags of the
// configuration that the token sees in its environment, with their
// variants. So what one report stores is bounded by the configuration,
// whatever names a client makes up.
type knownFlags struct {
	idx *flagIndex
	p   *domain.Principal
}

// flagIndex finds a configuration's flags by environment and name, as
// metrics reports look them up (a map index with the report's bytes, so a
// lookup allocates nothing).
type flagIndex struct {
	cfg   *clientconfig.Config
	byEnv map[string]map[string]*indexedFlag
}

// indexedFlag is a flag of one environment with its project.
type indexedFlag struct {
	usage.KnownFlag
	project string
}

// flagIndexCache holds the index of the latest configuration.
type flagIndexCache = atomic.Pointer[flagIndex]

// flagIndexOf returns the index of cfg, building it once per
// configuration.
func (s *API) flagIndexOf(cfg *clientconfig.Config) *flagIndex {
	if idx := s.flagIndex.Load(); idx != nil && idx.cfg == cfg {
		return idx
	}
	envs := cfg.Environments()
	idx := &flagIndex{cfg: cfg, byEnv: make(map[string]map[string]*indexedFlag, len(envs))}
	for _, env := range envs {
		flags := cfg.Flags(env)
		m := make(map[string]*indexedFlag, len(flags))
		for _, f := range flags {
			m[f.Name] = &indexedFlag{KnownFlag: usage.KnownFlag{Name: f.Name, Variants: f.Variants()}, project: f.Project}
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
