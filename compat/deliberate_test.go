package compat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/compat/differential"
	"github.com/bunting-flags/bunting/compat/harness"
)

// compatibilityPage is the page that lists every deliberate difference
// from Unleash.
const compatibilityPage = "docs/compatibility.md"

// TestDeliberateDifferencesDocumented: every deliberate difference the
// differential test allows is listed, with the same reason, in the
// deliberate differences table of docs/compatibility.md.
func TestDeliberateDifferencesDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(harness.RepoRoot(), compatibilityPage))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range differential.DeliberateDifferences {
		if row := "| `" + d.Name + "` | " + d.Reason + " |"; !strings.Contains(string(data), row) {
			t.Errorf("%s does not list the deliberate difference %s as %q", compatibilityPage, d.Name, row)
		}
	}
}
