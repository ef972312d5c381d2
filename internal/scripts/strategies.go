package scripts

import (
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/dop251/goja"
)

// jsStrategy is one exported strategy inside one runtime.
type jsStrategy struct {
	this      goja.Value
	isEnabled goja.Callable
}

// strategyTable maps strategy names to their functions in one runtime.
type strategyTable map[string]jsStrategy

// scriptStrategy is the engine.CustomStrategy for one exported name. All
// strategies loaded together share one pool of runtimes.
type scriptStrategy struct {
	name string
	pool *pool[strategyTable]
	// The engine turns a failure into false silently, so failures are
	// logged here, at most once per failureLogInterval per strategy.
	log        *slog.Logger
	lastLogged atomic.Int64 // unix nanoseconds
	suppressed atomic.Int64
}

// failureLogInterval spaces out the log lines of a strategy that keeps
// failing, so a broken script cannot flood the log.
const failureLogInterval = 10 * time.Second

// LoadStrategies loads JS files in the Node proxy's form and returns the
// strategies they export by name. A file exports one strategy object or an
// array of them; each needs a string name and an isEnabled(parameters,
// context) method, as plain objects or as instances of the Strategy class
// from require('unleash-client'). A name exported twice keeps the last one.
func LoadStrategies(paths []string, opts Options) (map[string]engine.CustomStrategy, error) {
	files, err := compileFiles(paths)
	if err != nil {
		return nil, err
	}
	var loaded atomic.Bool // warn about duplicates once, not for every runtime
	bind := func(_ *goja.Runtime, exports []fileExports) (strategyTable, error) {
		return bindStrategies(exports, opts, !loaded.Load())
	}
	p, table, err := newPool(files, bind, opts)
	loaded.Store(true)
	if err != nil {
		return nil, err
	}
	out := make(map[string]engine.CustomStrategy, len(table))
	for name := range table {
		out[name] = &scriptStrategy{name: name, pool: p, log: opts.logger()}
	}
	return out, nil
}

// bindStrategies validates every export and indexes the strategies by name.
func bindStrategies(exports []fileExports, opts Options, warn bool) (strategyTable, error) {
	table := make(strategyTable)
	for _, file := range exports {
		elements := exportElements(file.value)
		if len(elements) == 0 {
			return nil, fmt.Errorf("script %s: exports no strategies (assign module.exports = [ { name, isEnabled(parameters, context) } ])", file.path)
		}
		for i, el := range elements {
			name, st, err := asStrategy(el)
			if err != nil {
				return nil, fmt.Errorf("script %s: export %d: %w", file.path, i, err)
			}
			if _, dup := table[name]; dup && warn {
				opts.logger().Warn("custom strategy defined twice; the later one wins", "strategy", name, "path", file.path)
			}
			table[name] = st
		}
	}
	return table, nil
}

// exportElements lists the elements of an exported array, or the single
// exported value.
func exportElements(v goja.Value) []goja.Value {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return []goja.Value{v}
	}
	if obj.ClassName() != "Array" {
		if _, isFn := goja.AssertFunction(v); !isFn && len(obj.Keys()) == 0 && obj.Get("isEnabled") == nil {
			return nil // the untouched module.exports = {}
		}
		return []goja.Value{v}
	}
	n := int(obj.Get("length").ToInteger())
	out := make([]goja.Value, 0, n)
	for i := range n {
		out = append(out, obj.Get(fmt.Sprint(i)))
	}
	return out
}

// asStrategy checks the Node SDK's strategy interface: a non-empty name
// string and an isEnabled function.
func asStrategy(v goja.Value) (string, jsStrategy, error) {
	obj, err := plainObject(v)
	if err != nil {
		return "", jsStrategy{}, fmt.Errorf("not a strategy object: %s", err)
	}
	var name string
	if nameVal := obj.Get("name"); nameVal != nil {
		name, _ = nameVal.Export().(string)
	}
	if name == "" {
		return "", jsStrategy{}, fmt.Errorf("strategy has no name (a non-empty string is required)")
	}
	fn, ok := goja.AssertFunction(obj.Get("isEnabled"))
	if !ok {
		return "", jsStrategy{}, fmt.Errorf("strategy %q has no isEnabled(parameters, context) method", name)
	}
	return name, jsStrategy{this: obj, isEnabled: fn}, nil
}

// IsEnabled calls the script's isEnabled with the parameters and a Node
// style context. The result is coerced as JavaScript does (truthy means
// enabled); a settled promise is unwrapped. Any failure means false with an
// error naming the strategy.
func (s *scriptStrategy) IsEnabled(parameters map[string]string, ctx *engine.Context) (bool, error) {
	var enabled bool
	err := s.pool.with(func(inst *instance[strategyTable]) error {
		st, ok := inst.bound[s.name]
		if !ok {
			return fmt.Errorf("strategy disappeared from its script")
		}
		result, err := st.isEnabled(st.this, parametersToJS(inst.vm, parameters), contextToJS(inst.vm, ctx))
		if err != nil {
			return err
		}
		result, err = settle(result)
		if err != nil {
			return err
		}
		enabled = result.ToBoolean()
		return nil
	})
	if err != nil {
		err = fmt.Errorf("custom strategy %q: %w", s.name, err)
		s.logFailure(err)
		return false, err
	}
	return enabled, nil
}

// logFailure logs err unless this strategy logged one in the last
// failureLogInterval; the next line says how many were left out.
func (s *scriptStrategy) logFailure(err error) {
	now := time.Now().UnixNano()
	last := s.lastLogged.Load()
	if now-last < int64(failureLogInterval) || !s.lastLogged.CompareAndSwap(last, now) {
		s.suppressed.Add(1)
		return
	}
	s.log.Warn("custom strategy failed; it evaluates to false", "strategy", s.name, "err", err,
		"similar_failures_not_logged", s.suppressed.Swap(0))
}
