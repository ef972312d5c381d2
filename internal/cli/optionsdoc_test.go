package cli

import (
	"os"
	"testing"

	"github.com/bunting-flags/bunting/internal/config"
)

// configurationPage is the page that holds the generated option tables.
const configurationPage = "../../docs/configuration.md"

// TestOptionTablesInConfigurationPage fails when the option tables of
// docs/configuration.md are not the ones the commands' option tables
// generate.
func TestOptionTablesInConfigurationPage(t *testing.T) {
	b, err := os.ReadFile(configurationPage)
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.ReplaceTables(string(b), OptionTables())
	if err != nil {
		t.Fatal(err)
	}
	if want != string(b) {
		t.Fatal("the option tables of docs/configuration.md are stale: run `make options-doc`")
	}
}
