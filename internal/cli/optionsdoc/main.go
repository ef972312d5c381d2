// Command optionsdoc rewrites the option tables of a Markdown page (its one
// argument, docs/configuration.md) from the commands' option tables:
// `make options-doc`.
package main

import (
	"fmt"
	"os"

	"github.com/bunting-flags/bunting/internal/cli"
	"github.com/bunting-flags/bunting/internal/config"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: optionsdoc docs/configuration.md")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[1])
	if err == nil {
		var out string
		if out, err = config.ReplaceTables(string(b), cli.OptionTables()); err == nil {
			err = os.WriteFile(os.Args[1], []byte(out), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "optionsdoc:", err)
		os.Exit(1)
	}
}
