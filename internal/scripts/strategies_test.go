package scripts_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/scripts"
	"github.com/stretchr/testify/require"
)

// writeScript stores src in a fresh file and returns its path.
func writeScript(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.js")
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	return path
}

func loadStrategies(t *testing.T, src string, opts scripts.Options) map[string]engine.CustomStrategy {
	t.Helper()
	strategies, err := scripts.LoadStrategies([]string{writeScript(t, src)}, opts)
	require.NoError(t, err)
	return strategies
}

func TestStrategyForms(t *testing.T) {
	tests := map[string]struct {
		src   string
		names []string
	}{
		"array of plain objects": {
			src:   `module.exports = [ { name: 'a', isEnabled() { return true } }, { name: 'b', isEnabled: function () { return true } } ]`,
			names: []string{"a", "b"},
		},
		"single object": {
			src:   `module.exports = { name: 'solo', isEnabled: () => true }`,
			names: []string{"solo"},
		},
		"class from unleash-client": {
			src: `const { Strategy } = require('unleash-client');
class X extends Strategy { constructor() { super('fromClass') } isEnabled(p, c) { return true } }
module.exports = [new X()];`,
			names: []string{"fromClass"},
		},
		"class from @unleash/proxy via exports": {
			src: `const Strategy = require('@unleash/proxy').Strategy;
class Y extends Strategy { constructor() { super('viaProxy') } isEnabled() { return true } }
exports.name = 'ignored'; module.exports = new Y();`,
			names: []string{"viaProxy"},
		},
		"shebang and strict mode": {
			src:   "#!/usr/bin/env node\n'use strict';\nmodule.exports = [{ name: 'strict', isEnabled: () => true }]",
			names: []string{"strict"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			strategies := loadStrategies(t, tc.src, calm)
			require.Len(t, strategies, len(tc.names))
			for _, n := range tc.names {
				require.Contains(t, strategies, n)
				enabled, err := strategies[n].IsEnabled(nil, &engine.Context{})
				require.NoError(t, err)
				require.True(t, enabled, n)
			}
		})
	}
}

func TestStrategyBaseClassDefaultsToDisabled(t *testing.T) {
	strategies := loadStrategies(t, `const { Strategy } = require('unleash-client');
module.exports = [new Strategy('plain'), new Strategy('on', true)];`, calm)
	off, err := strategies["plain"].IsEnabled(nil, nil)
	require.NoError(t, err)
	require.False(t, off)
	on, err := strategies["on"].IsEnabled(nil, nil)
	require.NoError(t, err)
	require.True(t, on)
}

func TestStrategySeesParametersAndNodeStyleContext(t *testing.T) {
	strategies := loadStrategies(t, `module.exports = [{
  name: 'inspect',
  isEnabled(parameters, context) {
    const seen = [parameters.teams, context.userId, context.sessionId, context.remoteAddress,
      context.environment, context.appName, context.currentTime, context.properties.team,
      typeof context.properties, 'sessionId' in context];
    return JSON.stringify(seen) === parameters.expect;
  }
}]`, calm)
	ctx := &engine.Context{
		UserID: "u1", RemoteAddress: "127.0.0.1", Environment: "production", AppName: "web",
		CurrentTime: "2026-11-22T10:00:00Z", Properties: map[string]string{"team": "blue"},
	}
	expect := `["a,b","u1",null,"127.0.0.1","production","web","2026-11-22T10:00:00Z","blue","object",false]`
	enabled, err := strategies["inspect"].IsEnabled(map[string]string{"teams": "a,b", "expect": expect}, ctx)
	require.NoError(t, err)
	require.True(t, enabled, "the script saw a different context than %s", expect)

	enabled, err = strategies["inspect"].IsEnabled(map[string]string{"expect": "no"}, nil)
	require.NoError(t, err, "a nil context is an empty one")
	require.False(t, enabled)
}

func TestStrategyResultIsCoercedLikeJavaScript(t *testing.T) {
	strategies := loadStrategies(t, `module.exports = [{ name: 'ret', isEnabled: (p) => eval(p.value) }]`, calm)
	tests := map[string]bool{
		"true": true, "1": true, "'yes'": true, "({})": true, "[]": true,
		"false": false, "0": false, "''": false, "null": false, "undefined": false, "NaN": false,
		"Promise.resolve(true)": true, "(async () => false)()": false,
	}
	for expr, want := range tests {
		got, err := strategies["ret"].IsEnabled(map[string]string{"value": expr}, nil)
		require.NoError(t, err, expr)
		require.Equal(t, want, got, expr)
	}
}

func TestStrategyFailuresAffectOnlyThatCall(t *testing.T) {
	strategies := loadStrategies(t, `module.exports = [{
  name: 'flaky',
  isEnabled(p) {
    switch (p.mode) {
      case 'throw': throw new Error('boom');
      case 'loop': while (true) {}
      case 'recurse': { const f = (n) => f(n + 1) + 1; return f(0); }
      case 'reject': return Promise.reject(new Error('nope'));
      case 'pending': return new Promise(() => {});
      case 'type': return null.field;
    }
    return true;
  }
}]`, scripts.Options{Timeout: time.Second})
	flaky := strategies["flaky"]
	for _, mode := range []string{"throw", "loop", "recurse", "reject", "pending", "type"} {
		t.Run(mode, func(t *testing.T) {
			start := time.Now()
			enabled, err := flaky.IsEnabled(map[string]string{"mode": mode}, nil)
			require.Error(t, err)
			require.False(t, enabled)
			require.Contains(t, err.Error(), `custom strategy "flaky"`)
			require.Less(t, time.Since(start), 5*time.Second)
			if mode == "loop" {
				require.ErrorIs(t, err, scripts.ErrTimeout)
			}
			// The next call works: an interrupted runtime is not reused.
			for range 5 {
				enabled, err = flaky.IsEnabled(map[string]string{"mode": "ok"}, nil)
				require.NoError(t, err)
				require.True(t, enabled)
			}
		})
	}
}

func TestStrategyErrorMessagesPointAtTheScript(t *testing.T) {
	path := writeScript(t, "module.exports = [{ name: 'x',\n  isEnabled() { throw new Error('kaput') } }]")
	strategies, err := scripts.LoadStrategies([]string{path}, calm)
	require.NoError(t, err)
	_, err = strategies["x"].IsEnabled(nil, nil)
	require.ErrorContains(t, err, "kaput")
	require.ErrorContains(t, err, path+":2:")
}

func TestLoadStrategiesErrors(t *testing.T) {
	tests := map[string]struct {
		src  string
		want string
	}{
		"syntax error":           {`module.exports = [ { name: 'x', isEnabled() { return true } ]`, "Unexpected"},
		"nothing exported":       {`const x = 1;`, "exports no strategies"},
		"empty array":            {`module.exports = []`, "exports no strategies"},
		"number exported":        {`module.exports = 42`, "not a strategy object: number 42"},
		"function exported":      {`module.exports = [() => true]`, "not a strategy object: a function"},
		"missing name":           {`module.exports = [{ isEnabled: () => true }]`, "strategy has no name"},
		"name not a string":      {`module.exports = [{ name: 7, isEnabled: () => true }]`, "strategy has no name"},
		"missing isEnabled":      {`module.exports = [{ name: 'x' }]`, `strategy "x" has no isEnabled`},
		"isEnabled not function": {`module.exports = [{ name: 'x', isEnabled: true }]`, `strategy "x" has no isEnabled`},
		"unknown module":         {`require('fs'); module.exports = []`, "Cannot find module 'fs'"},
		"top level throws":       {`throw new Error('at load')`, "at load"},
		"top level loops":        {`for (;;) {}`, "script timed out"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := writeScript(t, tc.src)
			strategies, err := scripts.LoadStrategies([]string{path}, scripts.Options{Timeout: time.Millisecond})
			require.Error(t, err)
			require.Nil(t, strategies)
			require.ErrorContains(t, err, path)
			require.ErrorContains(t, err, tc.want)
		})
	}
	t.Run("missing file", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "nope.js")
		_, err := scripts.LoadStrategies([]string{missing}, calm)
		require.ErrorContains(t, err, missing)
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("no paths", func(t *testing.T) {
		_, err := scripts.LoadStrategies(nil, calm)
		require.Error(t, err)
	})
}

func TestLoadStrategiesFromSeveralFiles(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	first := writeScript(t, `module.exports = [{ name: 'one', isEnabled: () => true }, { name: 'shared', isEnabled: () => false }]`)
	second := writeScript(t, `console.log('loading', 2); module.exports = { name: 'shared', isEnabled: () => true }`)
	strategies, err := scripts.LoadStrategies([]string{first, second}, scripts.Options{Timeout: calm.Timeout, Logger: logger})
	require.NoError(t, err)
	require.Len(t, strategies, 2)
	shared, err := strategies["shared"].IsEnabled(nil, nil)
	require.NoError(t, err)
	require.True(t, shared, "the later definition wins")
	require.Contains(t, logs.String(), "defined twice")
	require.Contains(t, logs.String(), "loading 2")
}

func TestExampleStrategiesFile(t *testing.T) {
	strategies, err := scripts.LoadStrategies([]string{exampleFile(t, "custom-strategies.js")}, calm)
	require.NoError(t, err)
	require.Len(t, strategies, 2)

	teams := strategies["allowedTeams"]
	on, err := teams.IsEnabled(map[string]string{"teams": "red, blue"}, &engine.Context{Properties: map[string]string{"team": "blue"}})
	require.NoError(t, err)
	require.True(t, on)
	off, err := teams.IsEnabled(map[string]string{"teams": "red"}, &engine.Context{Properties: map[string]string{"team": "blue"}})
	require.NoError(t, err)
	require.False(t, off)

	weekdays := strategies["weekdaysOnly"]
	monday, err := weekdays.IsEnabled(nil, &engine.Context{CurrentTime: "2026-11-23T12:00:00Z"})
	require.NoError(t, err)
	require.True(t, monday)
	sunday, err := weekdays.IsEnabled(nil, &engine.Context{CurrentTime: "2026-11-22T12:00:00Z"})
	require.NoError(t, err)
	require.False(t, sunday)
}

// exampleFile finds a file of the repository's examples directory.
func exampleFile(t testing.TB, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	require.NoError(t, err)
	_, err = os.Stat(path)
	require.NoError(t, err)
	return path
}

func TestTimeoutErrorIsTyped(t *testing.T) {
	strategies := loadStrategies(t, `module.exports = { name: 'spin', isEnabled() { for (;;) {} } }`, scripts.Options{Timeout: 10 * time.Millisecond})
	_, err := strategies["spin"].IsEnabled(nil, nil)
	require.True(t, errors.Is(err, scripts.ErrTimeout))
	require.True(t, strings.Contains(err.Error(), "10ms"), err.Error())
}
