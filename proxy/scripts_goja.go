package proxy

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/scripts"
)

// init plugs the embedded JavaScript engine (internal/scripts) into the
// proxy's loading of customStrategies and expCustomEnrichers.
func init() {
	scriptLoader = loadScriptFiles
}

// loadScriptFiles loads the strategy and enricher files; an error names the
// option and its environment variable.
func loadScriptFiles(strategyFiles, enricherFiles []string, timeout time.Duration, log *slog.Logger) (map[string]engine.CustomStrategy, []ContextEnricher, error) {
	opts := scripts.Options{Timeout: timeout, Logger: log}
	var strategies map[string]engine.CustomStrategy
	if len(strategyFiles) > 0 {
		loaded, err := scripts.LoadStrategies(strategyFiles, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("customStrategies (UPSTREAM_CUSTOM_STRATEGIES_FILE): %w", err)
		}
		strategies = loaded
	}
	var enrichers []ContextEnricher
	if len(enricherFiles) > 0 {
		loaded, err := scripts.LoadEnrichers(enricherFiles, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("expCustomEnrichers (EXP_CUSTOM_ENRICHERS_FILE): %w", err)
		}
		for _, e := range loaded {
			enrichers = append(enrichers, e)
		}
	}
	return strategies, enrichers, nil
}
