package wire

import (
	"testing"

	"github.com/bunting-flags/bunting/engine"
)

func TestParseQueryPropertiesWinOverTopLevelKeys(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"region=eu", "eu"},
		{"properties[region]=us", "us"},
		{"properties[region]=us&region=eu", "us"},
		{"region=eu&properties[region]=us", "us"},
		{"properties%5Bregion%5D=us&region=eu", "us"},
		{"region=eu&properties%5Bregion%5D=us", "us"},
		{"properties%5bregion%5d=us&region=eu", "us"},
		{"properties%5Bregion%5D=us&region=eu&region=asia", "us"},
		{"region=eu&region=asia", "eu"}, // the first top-level value
		{"properties[region]=&region=eu", "eu"},
	} {
		var ctx engine.Context
		if err := ParseQuery(tc.query, &ctx); err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if got := ctx.Properties["region"]; got != tc.want {
			t.Errorf("%s: region %q, want %q", tc.query, got, tc.want)
		}
	}
}
