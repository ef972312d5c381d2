package compat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/compat/differential"
	"github.com/bunting-flags/bunting/compat/harness"
)

// TestDeliberateDifferencesInREADME: every deliberate difference the
// differential test allows is listed, with the same reason, in the README's
// compatibility section.
func TestDeliberateDifferencesInREADME(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range differential.DeliberateDifferences {
		if row := "| `" + d.Name + "` | " + d.Reason + " |"; !strings.Contains(string(data), row) {
			t.Errorf("the README does not list the deliberate difference %s as %q", d.Name, row)
		}
	}
}
