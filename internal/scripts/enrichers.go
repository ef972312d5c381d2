package scripts

import (
	"fmt"

	"github.com/bunting-flags/bunting/engine"
	"github.com/dop251/goja"
)

// Enricher changes a context; a failing enricher is skipped and logged by
// the caller.
type Enricher interface {
	Enrich(ctx engine.Context) (engine.Context, error)
}

// enricherList holds every exported enricher function of one runtime, in
// load order, with a label ("path#index") for each.
type enricherList struct {
	fns    []goja.Callable
	labels []string
}

// scriptEnricher is one exported function; all enrichers loaded together
// share one pool of runtimes.
type scriptEnricher struct {
	index int
	label string
	pool  *pool[enricherList]
}

// LoadEnrichers loads JS files exporting context enrichers, in the Node
// proxy's form: module.exports = [ context => context, … ] or a single
// function. Functions may be async when they await nothing pending. The
// enrichers are returned in file order, then export order.
func LoadEnrichers(paths []string, opts Options) ([]Enricher, error) {
	files, err := compileFiles(paths)
	if err != nil {
		return nil, err
	}
	bind := func(_ *goja.Runtime, exports []fileExports) (enricherList, error) {
		return bindEnrichers(exports)
	}
	p, list, err := newPool(files, bind, opts)
	if err != nil {
		return nil, err
	}
	out := make([]Enricher, len(list.fns))
	for i, label := range list.labels {
		out[i] = &scriptEnricher{index: i, label: label, pool: p}
	}
	return out, nil
}

// bindEnrichers validates the exports and flattens them into one list,
// with a label per function for error messages.
func bindEnrichers(exports []fileExports) (enricherList, error) {
	var list enricherList
	for _, file := range exports {
		elements := exportElements(file.value)
		if len(elements) == 0 {
			return list, fmt.Errorf("script %s: exports no enrichers (assign module.exports = [ context => context ])", file.path)
		}
		for i, el := range elements {
			fn, ok := goja.AssertFunction(el)
			if !ok {
				return list, fmt.Errorf("script %s: export %d: an enricher must be a function (context => context), got %s", file.path, i, describeValue(el))
			}
			list.fns = append(list.fns, fn)
			list.labels = append(list.labels, fmt.Sprintf("%s#%d", file.path, i))
		}
	}
	return list, nil
}

// describeValue names a value for error messages.
func describeValue(v goja.Value) string {
	if _, err := plainObject(v); err != nil {
		return err.Error()
	}
	return "an object"
}

// Enrich passes a copy of ctx, as a Node style context object, to the
// function and reads back what it returns (or the value its promise
// settled with). The input context is never modified.
func (e *scriptEnricher) Enrich(ctx engine.Context) (engine.Context, error) {
	var out engine.Context
	err := e.pool.with(func(inst *instance[enricherList]) error {
		result, err := inst.bound.fns[e.index](goja.Undefined(), contextToJS(inst.vm, &ctx))
		if err != nil {
			return err
		}
		result, err = settle(result)
		if err != nil {
			return err
		}
		out, err = contextFromJS(result)
		return err
	})
	if err != nil {
		return ctx, fmt.Errorf("context enricher %s: %w", e.label, err)
	}
	return out, nil
}
