package scripts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// binder turns the values the files exported, in one runtime, into what
// calls need (for example strategy functions by name). It validates the
// exports and fails with the path named.
type binder[T any] func(vm *goja.Runtime, exports []fileExports) (T, error)

// fileExports is what one file assigned to module.exports.
type fileExports struct {
	path  string
	value goja.Value
}

// instance is one runtime with every file run and its exports bound.
type instance[T any] struct {
	vm    *goja.Runtime
	bound T
}

// pool hands out runtimes, one caller at a time each, and replaces any that
// was interrupted or panicked.
type pool[T any] struct {
	files []scriptFile
	bind  binder[T]
	opts  Options
	log   *slog.Logger
	idle  chan *instance[T]
}

// newPool compiles nothing (files are compiled) but creates one runtime
// right away, so load errors surface at startup, and keeps it idle.
func newPool[T any](files []scriptFile, bind binder[T], opts Options) (*pool[T], T, error) {
	p := &pool[T]{files: files, bind: bind, opts: opts, log: opts.logger(), idle: make(chan *instance[T], poolSize())}
	first, err := p.newInstance()
	if err != nil {
		var zero T
		return nil, zero, err
	}
	p.idle <- first
	return p, first.bound, nil
}

// newInstance creates a runtime, installs the shim and console, runs every
// file under the load deadline and binds the exports.
func (p *pool[T]) newInstance() (inst *instance[T], err error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStackSize)
	timer := time.AfterFunc(p.opts.loadTimeout(), func() { vm.Interrupt(ErrTimeout) })
	defer func() {
		// A runtime whose deadline fired may carry a pending interrupt.
		if !timer.Stop() && err == nil {
			inst, err = nil, fmt.Errorf("loading scripts: %w after %v", ErrTimeout, p.opts.loadTimeout())
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			inst, err = nil, fmt.Errorf("loading scripts panicked: %v", r)
		}
	}()
	require, err := vm.RunProgram(shimProgram())
	if err != nil {
		return nil, fmt.Errorf("script shim: %w", err)
	}
	if err := vm.Set("console", newConsole(vm, p.log)); err != nil {
		return nil, fmt.Errorf("script console: %w", err)
	}
	exports := make([]fileExports, 0, len(p.files))
	for _, f := range p.files {
		value, err := runFile(vm, f, require)
		if err != nil {
			return nil, fmt.Errorf("script %s: %w", f.path, describe(err, p.opts.loadTimeout()))
		}
		exports = append(exports, fileExports{path: f.path, value: value})
	}
	bound, err := p.bind(vm, exports)
	if err != nil {
		return nil, err
	}
	return &instance[T]{vm: vm, bound: bound}, nil
}

// runFile runs one file's wrapper with a fresh module object and returns
// module.exports.
func runFile(vm *goja.Runtime, f scriptFile, require goja.Value) (goja.Value, error) {
	wrapper, err := vm.RunProgram(f.program)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(wrapper)
	if !ok {
		return nil, errors.New("file did not compile to a module")
	}
	module := vm.NewObject()
	exports := vm.NewObject()
	if err := module.Set("exports", exports); err != nil {
		return nil, err
	}
	if _, err := fn(goja.Undefined(), module, exports, require); err != nil {
		return nil, err
	}
	return module.Get("exports"), nil
}

// get returns an idle runtime or creates one.
func (p *pool[T]) get() (*instance[T], error) {
	select {
	case inst := <-p.idle:
		return inst, nil
	default:
		return p.newInstance()
	}
}

// put returns a healthy runtime to the idle list, or drops it when full.
func (p *pool[T]) put(inst *instance[T]) {
	select {
	case p.idle <- inst:
	default:
	}
}

// with runs call on a runtime of its own under the call deadline. A runtime
// that was interrupted or panicked is discarded, never reused.
func (p *pool[T]) with(call func(inst *instance[T]) error) (err error) {
	inst, err := p.get()
	if err != nil {
		return err
	}
	timeout := p.opts.timeout()
	timer := time.AfterFunc(timeout, func() { inst.vm.Interrupt(ErrTimeout) })
	healthy := false
	defer func() {
		if r := recover(); r != nil {
			err, healthy = fmt.Errorf("script panicked: %v", r), false
		}
		// Stop fails when the deadline fired, even if the call finished
		// first: the runtime may carry a pending interrupt, so drop it.
		if timer.Stop() && healthy {
			p.put(inst)
		}
	}()
	err = call(inst)
	healthy = true
	return describe(err, timeout)
}

// describe turns goja's interrupt error into one that wraps ErrTimeout.
func describe(err error, timeout time.Duration) error {
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		return fmt.Errorf("%w after %v", ErrTimeout, timeout)
	}
	return err
}

// settle unwraps a promise that has already settled (an async function
// that awaited nothing pending); a pending one is an error, since scripts
// have no event loop to finish it.
func settle(v goja.Value) (goja.Value, error) {
	if v == nil {
		return goja.Undefined(), nil
	}
	promise, ok := v.Export().(*goja.Promise)
	if !ok {
		return v, nil
	}
	switch promise.State() {
	case goja.PromiseStateFulfilled:
		return promise.Result(), nil
	case goja.PromiseStateRejected:
		return nil, fmt.Errorf("promise rejected: %s", promise.Result())
	default:
		return nil, errors.New("returned a promise that never settled (scripts have no timers or I/O)")
	}
}

// newConsole gives scripts console.log and friends, written to the logger.
func newConsole(vm *goja.Runtime, log *slog.Logger) *goja.Object {
	console := vm.NewObject()
	levels := map[string]slog.Level{
		"log": slog.LevelInfo, "info": slog.LevelInfo, "debug": slog.LevelDebug,
		"warn": slog.LevelWarn, "error": slog.LevelError,
	}
	for name, level := range levels {
		_ = console.Set(name, func(call goja.FunctionCall) goja.Value {
			parts := make([]string, 0, len(call.Arguments))
			for _, a := range call.Arguments {
				parts = append(parts, a.String())
			}
			log.Log(context.Background(), level, "script console", "output", strings.Join(parts, " "))
			return goja.Undefined()
		})
	}
	return console
}
