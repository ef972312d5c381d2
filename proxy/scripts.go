package proxy

import (
	"fmt"
	"log/slog"
	"os"
	"sort"
	"time"

	"github.com/bunting-flags/bunting/engine"
)

// scriptLoader loads script strategies and enrichers. It is set by
// scripts_goja.go once the embedded JavaScript engine is part of the
// build; without it, configuring script files is a startup error.
var scriptLoader func(strategies, enrichers []string, timeout time.Duration, log *slog.Logger) (map[string]engine.CustomStrategy, []ContextEnricher, error)

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
	if len(p.cfg.CustomStrategies)+len(p.cfg.ExpCustomEnrichers) > 0 {
		if scriptLoader == nil {
			return fmt.Errorf("customStrategies (UPSTREAM_CUSTOM_STRATEGIES_FILE) / expCustomEnrichers (EXP_CUSTOM_ENRICHERS_FILE): script support is not part of this build")
		}
		st, en, err := scriptLoader(p.cfg.CustomStrategies, p.cfg.ExpCustomEnrichers, p.cfg.ScriptTimeout, s.logger)
		if err != nil {
			return err
		}
		for k, v := range st {
			strategies[k] = v
		}
		p.enrichers = append(p.enrichers, en...)
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
