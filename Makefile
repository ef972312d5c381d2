# Bunting — run `make help` for the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

NODE_DIR      := test/node
NODE_STAMP    := $(NODE_DIR)/node_modules/.bunting-lock-sha256
GO            ?= go
FUZZTIME      ?= 10s
FUZZ_HTTP_N   ?= 60000

# Tests that need fixtures or PostgreSQL fail instead of skipping when this is set.
export BUNTING_REQUIRE_FIXTURES := 1
export BUNTING_NODE_MODULES := $(abspath $(NODE_DIR)/node_modules)

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## Run the server (SQLite under ./data) and the proxy in one process
	$(GO) run ./cmd/bunting

.PHONY: build
build: ## Build the bunting binary into ./bin
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/bunting ./cmd/bunting

# node_modules is reinstalled when the lock file's content changes (a hash
# stamp, not mtimes: checkouts and worktrees touch files freely).
.PHONY: node-deps
node-deps: ## Install the pinned npm fixtures and real clients used by the tests
	@want=$$(sha256sum $(NODE_DIR)/package-lock.json | cut -d' ' -f1); \
	  if [ "$$(cat $(NODE_STAMP) 2>/dev/null)" != "$$want" ]; then \
	    (cd $(NODE_DIR) && npm ci --no-audit --no-fund --loglevel=error) && echo "$$want" > $(NODE_STAMP); \
	  fi

# Headless Chromium for the e2e tests: Debian's package, installed when it
# is missing and apt-get can run (as root or with password-less sudo);
# BUNTING_CHROMIUM points at another browser instead.
.PHONY: browser-deps
browser-deps: ## Install Debian's chromium for the e2e tests when it is missing
	@if [ -z "$$BUNTING_CHROMIUM" ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
	  echo "installing Debian's chromium for the e2e tests…"; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || \
	  { echo "could not install chromium: install it (apt-get install chromium) or set BUNTING_CHROMIUM"; exit 1; }; \
	fi

.PHONY: test
test: node-deps browser-deps lint ## Run everything CI runs (needs TEST_POSTGRES_URL for the PostgreSQL half)
	$(GO) test -count=1 -timeout 20m ./...
	$(GO) test -count=1 -v -run='^TestClientSpecification$$' ./engine
	$(GO) test -count=1 -race -timeout 20m ./engine/...
	$(GO) test -count=1 -race -timeout 5m ./internal/scripts/...
	$(GO) test -count=1 -race -timeout 5m ./proxy/... ./internal/upstream/...
	$(GO) test -run='^$$' -fuzz='^FuzzEvaluate$$' -fuzztime=$(FUZZTIME) ./engine
	cd bench && $(GO) test -count=1 -run . ./...
	cd loadtest && $(GO) test -count=1 -timeout 5m ./...
	cd e2e && $(GO) test -count=1 -timeout 5m ./...
	cd compat && BUNTING_COMPAT=1 $(GO) test -count=1 -timeout 15m ./...

.PHONY: compat
compat: node-deps ## Run only the compatibility tests with the real Unleash server, SDKs and Node proxy
	cd compat && BUNTING_COMPAT=1 $(GO) test -count=1 -timeout 15m -v ./...

.PHONY: fuzz
fuzz: ## Fuzz the engine for longer (FUZZTIME=10m make fuzz)
	$(GO) test -run='^$$' -fuzz='^FuzzEvaluate$$' -fuzztime=$(FUZZTIME) ./engine

.PHONY: fuzz-http
fuzz-http: ## Fuzz the server over HTTP for longer, on SQLite and PostgreSQL (FUZZ_HTTP_N=60000 requests per database)
	BUNTING_FUZZ_HTTP_N=$(FUZZ_HTTP_N) $(GO) test -count=1 -v -timeout 60m -run='^TestHTTPFuzz$$' ./internal/server/

.PHONY: bench
bench: ## Benchmark the engine against the official Go SDK, side by side
	cd bench && $(GO) test -run='^$$' -bench=. -benchmem -count=1 ./...
	$(GO) test -run='^$$' -bench=. -benchtime=2s -count=1 ./internal/signals
	$(GO) test -run='^$$' -bench=. -benchtime=2s ./internal/server/

.PHONY: bench-server
bench-server: ## Benchmark the flag server: toggles with their events, events search over 1M events (SQLite, PostgreSQL)
	cd bench/server && $(GO) test -run='^$$' -bench='^BenchmarkToggle$$' -benchtime=2000x -count=1 -timeout 30m ./...
	cd bench/server && $(GO) test -run='^$$' -bench='^BenchmarkEventSearch$$' -benchtime=200x -count=1 -timeout 40m ./...

.PHONY: bench-load
bench-load: ## Load-benchmark the proxy and the server client API next to replay baselines on loopback (LOADFLAGS="-duration 4s")
	cd loadtest && $(GO) run . $(LOADFLAGS)

.PHONY: bench-large
bench-large: ## Benchmark the server with 20,000 flags: start-up to /ready, RSS after the first reads, one-flag change → served (LARGEFLAGS="-flags 20000")
	cd loadtest && $(GO) run ./largeconfig $(LARGEFLAGS)

.PHONY: options-doc
options-doc: ## Regenerate the README's option tables from the commands' option tables
	$(GO) generate ./internal/cli
.PHONY: bench-stream
bench-stream: node-deps ## Benchmark streaming: change → visible at the Node SDK and a default proxy (SQLite, PostgreSQL across instances), fan-out to 10,000 streams
	cd loadtest && $(GO) run ./streambench $(STREAMFLAGS)

.PHONY: lint
lint: ## gofmt and go vet, over every module
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './test/node/*')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	cd loadtest && $(GO) vet ./...
	cd bench/server && $(GO) vet ./...
	cd e2e && $(GO) vet ./...
	cd compat && $(GO) vet ./...
