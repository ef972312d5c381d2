// Package scripts runs the proxy's custom activation strategies and context
// enrichers written in JavaScript, in the form the Node Unleash proxy loads
// them (CommonJS files assigning module.exports).
//
// Each file is compiled once. A goja Runtime is not goroutine-safe, so the
// package keeps a pool of runtimes, each with every file already run. A call
// that throws, runs past its deadline or returns something unusable fails
// only that call; an interrupted or panicked runtime is thrown away instead
// of going back to the pool.
package scripts

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// DefaultTimeout bounds one script call when Options.Timeout is zero.
const DefaultTimeout = 100 * time.Millisecond

// minLoadTimeout bounds running a file's top level when a runtime is
// created; loading may do more work than one call, so it gets more time.
const minLoadTimeout = time.Second

// maxCallStackSize stops runaway recursion with a RangeError long before it
// could exhaust memory.
const maxCallStackSize = 1024

// Options tune how scripts run. The zero value is ready to use.
type Options struct {
	// Timeout bounds one strategy or enricher call; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// Logger receives the scripts' console output and load warnings; nil
	// discards them.
	Logger *slog.Logger
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o Options) loadTimeout() time.Duration {
	return max(minLoadTimeout, 20*o.timeout())
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// ErrTimeout is wrapped by the error of a call stopped at its deadline.
var ErrTimeout = errors.New("script timed out")

// scriptFile is one compiled file. Its program evaluates to a function of
// (module, exports, require) holding the file's source as its body, the way
// Node wraps CommonJS modules.
type scriptFile struct {
	path    string
	program *goja.Program
}

// The wrapper keeps the file's first line on line 1, so stack traces point
// at the right lines.
const (
	wrapperHead = "(function (module, exports, require) {"
	wrapperTail = "\n})"
)

// compileFiles reads and compiles every path, failing with the path named.
func compileFiles(paths []string) ([]scriptFile, error) {
	if len(paths) == 0 {
		return nil, errors.New("no script files given")
	}
	files := make([]scriptFile, 0, len(paths))
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("script %s: %w", path, err)
		}
		program, err := goja.Compile(path, wrapperHead+stripShebang(string(src))+wrapperTail, false)
		if err != nil {
			return nil, fmt.Errorf("script %s: %w", path, err)
		}
		files = append(files, scriptFile{path: path, program: program})
	}
	return files, nil
}

// stripShebang blanks a leading "#!" line (Node accepts one) while keeping
// line numbers.
func stripShebang(src string) string {
	if len(src) < 2 || src[0] != '#' || src[1] != '!' {
		return src
	}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			return src[i:]
		}
	}
	return ""
}

// shimSource provides the parts of the Node SDK that scripts written for the
// Node proxy use: the Strategy base class, and require() for the two
// packages that export it. It evaluates to the require function.
const shimSource = `(function () {
  'use strict';
  class Strategy {
    constructor(name, returnValue) {
      this.name = name;
      this.returnValue = returnValue === undefined ? false : returnValue;
    }
    isEnabled(parameters, context) {
      return this.returnValue;
    }
  }
  const sdk = Object.freeze({ Strategy: Strategy, default: Strategy });
  return function require(id) {
    if (id === 'unleash-client' || id === '@unleash/proxy') {
      return sdk;
    }
    throw new Error("Cannot find module '" + id + "': scripts can only require 'unleash-client' and '@unleash/proxy'");
  };
})()`

// shimProgram compiles the shim on first use, not at package
// initialisation: the binary links this package for the proxy's script
// options, and compiling JavaScript at start-up would make every command,
// with or without scripts, run (and keep resident) the parser and compiler.
var shimProgram = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("bunting-shim.js", shimSource, false)
})

// poolSize is how many idle runtimes a pool keeps. Calls preempted while
// holding a runtime make more than GOMAXPROCS of them busy at once, so the
// pool keeps a few more, to avoid re-running the files after each burst.
func poolSize() int { return max(8, 4*runtime.GOMAXPROCS(0)) }
