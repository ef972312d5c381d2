package cli

import (
	"os"
	"testing"

	"github.com/bunting-flags/bunting/internal/config"
)

// TestREADMEOptionTables fails when the README's option tables are not
// the ones the option tables generate.
func TestREADMEOptionTables(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := config.ReplaceTables(string(b), OptionTables())
	if err != nil {
		t.Fatal(err)
	}
	if want != string(b) {
		t.Fatal("the README's option tables are stale: run `make options-doc`")
	}
}
