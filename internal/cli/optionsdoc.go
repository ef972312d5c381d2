package cli

import (
	"github.com/bunting-flags/bunting/internal/config"
	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/proxy"
)

//go:generate go run ./optionsdoc ../../docs/configuration.md

// OptionTables are the option tables of docs/configuration.md, by marker
// name, generated from the commands' option tables.
func OptionTables() map[string]string {
	var s server.Config
	var p proxy.Config
	var f flagsConfig
	return map[string]string{
		"server": config.Markdown(s.Options(), false),
		"proxy":  config.Markdown(p.Options(), true),
		"flags":  config.Markdown(f.Options(), true),
	}
}
