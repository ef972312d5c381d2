package scripts_test

import (
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/scripts"
	"github.com/stretchr/testify/require"
)

func loadEnrichers(t *testing.T, src string, opts scripts.Options) []scripts.Enricher {
	t.Helper()
	enrichers, err := scripts.LoadEnrichers([]string{writeScript(t, src)}, opts)
	require.NoError(t, err)
	return enrichers
}

// enrichAll runs the enrichers in order the way the proxy does: a failing
// one is skipped.
func enrichAll(enrichers []scripts.Enricher, ctx engine.Context) (engine.Context, []error) {
	var errs []error
	for _, e := range enrichers {
		next, err := e.Enrich(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ctx = next
	}
	return ctx, errs
}

func TestEnricherForms(t *testing.T) {
	tests := map[string]string{
		"array of arrows":  `module.exports = [ (c) => { c.userId = 'set'; return c } ]`,
		"single function":  `module.exports = function (context) { context.userId = 'set'; return context; }`,
		"async function":   `module.exports = [ async (c) => ({ ...c, userId: 'set' }) ]`,
		"awaiting values":  `module.exports = [ async (c) => { const id = await Promise.resolve('set'); return { ...c, userId: id } } ]`,
		"through exports":  `exports.ignored = 1; module.exports = [ c => Object.assign(c, { userId: 'set' }) ]`,
		"new object shape": `module.exports = [ c => ({ userId: 'set', properties: c.properties }) ]`,
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			enrichers := loadEnrichers(t, src, calm)
			require.Len(t, enrichers, 1)
			out, err := enrichers[0].Enrich(engine.Context{UserID: "before", Properties: map[string]string{"k": "v"}})
			require.NoError(t, err)
			require.Equal(t, "set", out.UserID)
			require.Equal(t, "v", out.Properties["k"])
		})
	}
}

func TestEnricherChainAndConversion(t *testing.T) {
	enrichers := loadEnrichers(t, `module.exports = [
  (c) => { c.properties.step = '1'; return c },
  (c) => { c.properties.step += '2'; c.properties.n = 42; c.properties.f = 1.5; c.properties.b = true;
           c.properties.gone = null; c.country = 'SE'; c.nested = { a: 1 }; return c },
  (c) => { c.currentTime = new Date(Date.UTC(2026, 0, 2, 3, 4, 5)); c.sessionId = 7; delete c.appName; return c },
]`, calm)
	require.Len(t, enrichers, 3)
	in := engine.Context{UserID: "u", AppName: "web", Environment: "prod", RemoteAddress: "10.0.0.1",
		Properties: map[string]string{"gone": "x", "country": "NO"}}
	out, errs := enrichAll(enrichers, in)
	require.Empty(t, errs)
	require.Equal(t, engine.Context{
		UserID: "u", SessionID: "7", RemoteAddress: "10.0.0.1", Environment: "prod",
		CurrentTime: "2026-01-02T03:04:05Z",
		Properties:  map[string]string{"step": "12", "n": "42", "f": "1.5", "b": "true", "country": "NO"},
	}, out, "properties win over top-level fields of the same name; objects and nulls are dropped")
	require.Equal(t, map[string]string{"gone": "x", "country": "NO"}, in.Properties, "the caller's context is not modified")

	out, _ = enrichAll(enrichers[:2], engine.Context{})
	require.Equal(t, "SE", out.Properties["country"], "a top-level custom field becomes a property")
}

func TestEnricherFailuresAreReportedAndSkipped(t *testing.T) {
	enrichers := loadEnrichers(t, `module.exports = [
  (c) => { switch (c.properties.mode) {
    case 'throw': throw new Error('enricher broke');
    case 'loop': for (;;) {}
    case 'number': return 5;
    case 'null': return null;
    case 'undefined': return;
    case 'array': return [c];
    case 'string': return 'ctx';
    case 'badField': return { ...c, userId: { id: 1 } };
    case 'badProps': return { ...c, properties: 'x' };
    case 'badProp': return { ...c, properties: { a: [1] } };
    case 'nan': return { ...c, userId: NaN };
    case 'reject': return Promise.reject(new Error('async broke'));
    case 'pending': return new Promise(() => {});
  } return c },
  (c) => { c.properties.after = 'yes'; return c },
]`, scripts.Options{Timeout: time.Second})
	for _, mode := range []string{"throw", "loop", "number", "null", "undefined", "array", "string", "badField", "badProps", "badProp", "nan", "reject", "pending"} {
		t.Run(mode, func(t *testing.T) {
			in := engine.Context{UserID: "u", Properties: map[string]string{"mode": mode}}
			got, err := enrichers[0].Enrich(in)
			require.Error(t, err)
			require.ErrorContains(t, err, "context enricher")
			require.Equal(t, in, got, "a failed enricher hands back its input")
			if mode == "loop" {
				require.ErrorIs(t, err, scripts.ErrTimeout)
			}
			out, errs := enrichAll(enrichers, in)
			require.Len(t, errs, 1)
			require.Equal(t, "yes", out.Properties["after"], "the next enricher still runs")
		})
	}
}

func TestLoadEnrichersErrors(t *testing.T) {
	tests := map[string]struct{ src, want string }{
		"nothing exported": {`let x`, "exports no enrichers"},
		"object exported":  {`module.exports = [{ enrich: (c) => c }]`, "must be a function"},
		"string exported":  {`module.exports = ['c => c']`, "must be a function"},
		"syntax error":     {`module.exports = [ c => { ]`, "Unexpected"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := writeScript(t, tc.src)
			_, err := scripts.LoadEnrichers([]string{path}, calm)
			require.ErrorContains(t, err, path)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestExampleEnrichersFile(t *testing.T) {
	enrichers, err := scripts.LoadEnrichers([]string{exampleFile(t, "enrichers.js")}, calm)
	require.NoError(t, err)
	require.Len(t, enrichers, 2)
	out, errs := enrichAll(enrichers, engine.Context{UserID: "7", Properties: map[string]string{"email": "Ann@Example.COM"}})
	require.Empty(t, errs)
	require.Equal(t, "example.com", out.Properties["emailDomain"])
	require.Equal(t, "member", out.Properties["tier"])
	out, errs = enrichAll(enrichers, engine.Context{})
	require.Empty(t, errs)
	require.Equal(t, map[string]string{"tier": "guest"}, out.Properties)
}

// TestConcurrentCalls shares strategies and enrichers between goroutines,
// with failing and timing-out calls mixed in; run it under -race.
func TestConcurrentCalls(t *testing.T) {
	strategies := loadStrategies(t, `let calls = 0;
module.exports = [{ name: 'mod', isEnabled(p, c) {
  calls++;
  if (c.properties.mode === 'throw') throw new Error('x');
  if (c.properties.mode === 'loop') for (;;) {}
  return Number(c.userId) % Number(p.m) === 0;
} }]`, scripts.Options{Timeout: 2 * time.Second}) // generous: the goroutines share two loaded cores
	enrichers := loadEnrichers(t, `module.exports = c => ({ ...c, properties: { ...c.properties, twice: String(Number(c.userId) * 2) } })`, calm)
	mod := strategies["mod"]
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 150 {
				id := g*1000 + i
				ctx := engine.Context{UserID: itoa(id), Properties: map[string]string{}}
				switch i % 50 {
				case 7:
					ctx.Properties["mode"] = "throw"
				case 13:
					if g == 0 && i == 13 { // one runaway call; it holds a core until its deadline
						ctx.Properties["mode"] = "loop"
					}
				}
				enabled, err := mod.IsEnabled(map[string]string{"m": "3"}, &ctx)
				if ctx.Properties["mode"] != "" {
					if err == nil || enabled {
						errs <- errorf("call %d: want a failure, got %v, %v", id, enabled, err)
					}
					continue
				}
				if err != nil || enabled != (id%3 == 0) {
					errs <- errorf("call %d: got %v, %v", id, enabled, err)
				}
				out, err := enrichers[0].Enrich(ctx)
				if err != nil || out.Properties["twice"] != itoa(2*id) {
					errs <- errorf("enrich %d: got %v, %v", id, out.Properties, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestClientChosenNamesRoundTrip passes property names a client controls
// (from properties[...] in the query) through an identity enricher and a
// strategy: special JavaScript names stay ordinary data.
func TestClientChosenNamesRoundTrip(t *testing.T) {
	props := map[string]string{"__proto__": "p", "constructor": "c", "toString": "s", "": "empty", "ünï": "ü", "a.b": "dot"}
	enrichers := loadEnrichers(t, `module.exports = c => c`, calm)
	out, err := enrichers[0].Enrich(engine.Context{UserID: "u", Properties: props})
	require.NoError(t, err)
	require.Equal(t, props, out.Properties)

	strategies := loadStrategies(t, `module.exports = { name: 'seen', isEnabled(p, c) {
  return p.__proto__ === 'x' && c.properties.__proto__ === 'p' && Object.keys(c.properties).length === 6;
} }`, calm)
	ok, err := strategies["seen"].IsEnabled(map[string]string{"__proto__": "x"}, &engine.Context{Properties: props})
	require.NoError(t, err)
	require.True(t, ok)
}
