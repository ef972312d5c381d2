package scripts_test

import (
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/scripts"
)

func BenchmarkStrategyCall(b *testing.B) {
	strategies, err := scripts.LoadStrategies([]string{exampleFile(b, "custom-strategies.js")}, scripts.Options{})
	if err != nil {
		b.Fatal(err)
	}
	teams := strategies["allowedTeams"]
	params := map[string]string{"teams": "red,blue"}
	ctx := &engine.Context{UserID: "u1", Properties: map[string]string{"team": "blue"}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if ok, err := teams.IsEnabled(params, ctx); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}

func BenchmarkEnricherCall(b *testing.B) {
	enrichers, err := scripts.LoadEnrichers([]string{exampleFile(b, "enrichers.js")}, scripts.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := engine.Context{UserID: "u1", Properties: map[string]string{"email": "a@b.c"}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := enrichers[0].Enrich(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
