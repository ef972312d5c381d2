package proxy

import (
	"fmt"
	"os"
	"sort"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/scripts"
)

// loadScripts checks that every configured script file is readable, loads
// them, and merges in the Go strategies and enrichers of the options.
func (p *Proxy) loadScripts(s settings) error {
	for _, f := range []struct {
		option, env string
		paths       []string
	}{
		{"customStrategies", "UPSTREAM_CUSTOM_STRATEGIES_FILE", p.cfg.CustomStrategies},
		{"expCustomEnrichers", "EXP_CUSTOM_ENRICHERS_FILE", p.cfg.ExpCustomEnrichers},
	} {
		for _, path := range f.paths {
			if _, err := os.ReadFile(path); err != nil {
				return fmt.Errorf("%s (%s): cannot read script file: %w", f.option, f.env, err)
			}
		}
	}
	strategies := map[string]engine.CustomStrategy{}
	opts := scripts.Options{Timeout: p.cfg.ScriptTimeout, Logger: s.logger}
	if len(p.cfg.CustomStrategies) > 0 {
		st, err := scripts.LoadStrategies(p.cfg.CustomStrategies, opts)
		if err != nil {
			return fmt.Errorf("customStrategies (UPSTREAM_CUSTOM_STRATEGIES_FILE): %w", err)
		}
		for k, v := range st {
			strategies[k] = v
		}
	}
	if len(p.cfg.ExpCustomEnrichers) > 0 {
		en, err := scripts.LoadEnrichers(p.cfg.ExpCustomEnrichers, opts)
		if err != nil {
			return fmt.Errorf("expCustomEnrichers (EXP_CUSTOM_ENRICHERS_FILE): %w", err)
		}
		for _, e := range en {
			p.enrichers = append(p.enrichers, e)
		}
	}
	for k, v := range s.strategies {
		strategies[k] = v
	}
	p.enrichers = append(p.enrichers, s.enrichers...)
	if len(strategies) > 0 {
		p.strategies = strategies
	}
	return nil
}

func (p *Proxy) strategyNames() []string {
	names := make([]string, 0, len(p.strategies))
	for k := range p.strategies {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
