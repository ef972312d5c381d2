package differential

import (
	"fmt"
	"math/rand/v2"

	"github.com/bunting-flags/bunting/compat/harness"
)

// Contexts returns n random evaluation contexts of seed, drawn from the
// values the scenario's constraints test.
//
// With complete set, every context has a userId, a sessionId and a
// clientId (the only custom stickiness field), so that no evaluation is
// left to chance: the frontend APIs, unlike the SDK driver, cannot seed
// their random choices. Otherwise any field may be missing.
func Contexts(seed int64, n int, complete bool) []harness.Context {
	g := &generator{rng: rand.New(rand.NewPCG(uint64(seed), 0xc0c0))}
	out := make([]harness.Context, n)
	present := func(percent int) bool { return complete || g.chance(percent) }
	for i := range out {
		c := harness.Context{Properties: map[string]string{}}
		if present(80) {
			c.UserID = pick(g, userIDs(40))
		}
		if present(70) {
			c.SessionID = fmt.Sprintf("s%d", g.rng.IntN(60))
		}
		if present(60) {
			c.Properties["clientId"] = pick(g, vocabulary("clientId"))
		}
		if g.chance(30) {
			c.RemoteAddress = pick(g, addresses)
		}
		if g.chance(20) {
			c.AppName = pick(g, appNames)
		}
		if g.chance(20) {
			c.Environment = pick(g, envNames)
		}
		if g.chance(25) {
			c.CurrentTime = pick(g, times)
		}
		for _, p := range []struct {
			name   string
			values []string
		}{{"region", regions}, {"plan", plans}, {"version", versions}, {"age", ages}, {"email", emails}} {
			if g.chance(60) {
				c.Properties[p.name] = pick(g, p.values)
			}
		}
		out[i] = c
	}
	return out
}
