# Bunting — run `make help` for the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

NODE_DIR      := test/node
NODE_STAMP    := $(NODE_DIR)/node_modules/.bunting-lock-sha256
GO            ?= go
FUZZTIME      ?= 10s
FUZZ_HTTP_N   ?= 60000

# What `bunting version` and /api/admin/ui-config report, stamped by the
# linker (internal/buildinfo).
VERSION    ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null || echo dev)
COMMIT     ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
BUILDINFO  := github.com/bunting-flags/bunting/internal/buildinfo
LDFLAGS    := -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT) -X $(BUILDINFO).date=$(BUILD_DATE)

# The container image (docs/deployment.md#container-image): built with
# docker when a Docker daemon answers, else podman, else buildah.
IMAGE         ?= bunting:$(subst +,-,$(VERSION))
IMAGE_ARCHIVE ?= build/bunting-image.tar
IMAGE_STAGE   ?= build/image
IMAGE_ENGINE  ?= $(shell if docker info >/dev/null 2>&1; then echo docker; \
                   elif command -v podman >/dev/null 2>&1; then echo podman; \
                   elif command -v buildah >/dev/null 2>&1; then echo buildah; fi)

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
build: ## Build the bunting binary into ./bin, stamped with its version, commit and date
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/bunting ./cmd/bunting

# podman from Debian when nothing can build images (as root or with
# password-less sudo), as browser-deps does for chromium.
.PHONY: image-deps
image-deps: ## Install podman when there is neither a Docker daemon nor podman or buildah
	@if [ -z "$(IMAGE_ENGINE)" ]; then \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
	  echo "installing Debian's podman to build the container image…"; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman >/dev/null || \
	  { echo "could not install podman: install docker or podman (apt-get install podman) to build the image"; exit 1; }; \
	fi

# The image's files, staged for the Dockerfile: the static binary, the
# host's CA bundle, the account files and the empty data directory.
.PHONY: image-rootfs
image-rootfs:
	@test -s /etc/ssl/certs/ca-certificates.crt || { echo "no /etc/ssl/certs/ca-certificates.crt: apt-get install ca-certificates"; exit 1; }
	rm -rf $(IMAGE_STAGE)/rootfs $(IMAGE_STAGE)/data
	mkdir -p $(IMAGE_STAGE)/rootfs/usr/local/bin $(IMAGE_STAGE)/rootfs/etc/ssl/certs $(IMAGE_STAGE)/rootfs/tmp $(IMAGE_STAGE)/data
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(IMAGE_STAGE)/rootfs/usr/local/bin/bunting ./cmd/bunting
	install -m 0644 /etc/ssl/certs/ca-certificates.crt $(IMAGE_STAGE)/rootfs/etc/ssl/certs/ca-certificates.crt
	printf 'root:x:0:0:root:/root:/sbin/nologin\nbunting:x:65532:65532:Bunting:/data:/sbin/nologin\n' > $(IMAGE_STAGE)/rootfs/etc/passwd
	printf 'root:x:0:\nbunting:x:65532:\n' > $(IMAGE_STAGE)/rootfs/etc/group
	chmod 0644 $(IMAGE_STAGE)/rootfs/etc/passwd $(IMAGE_STAGE)/rootfs/etc/group
	chmod 0755 $(IMAGE_STAGE)/rootfs/usr/local/bin/bunting
	chmod 1777 $(IMAGE_STAGE)/rootfs/tmp
	chmod 0755 $(IMAGE_STAGE)/data

.PHONY: image
image: image-deps image-rootfs ## Build the container image $(IMAGE) (docker, else podman or buildah)
	$(eval ENGINE := $(or $(IMAGE_ENGINE),$(shell command -v podman >/dev/null 2>&1 && echo podman)))
	@test -n "$(ENGINE)" || { echo "neither docker, podman nor buildah can build the image"; exit 1; }
	$(ENGINE) $(if $(filter buildah,$(ENGINE)),bud,build) $(if $(filter podman,$(ENGINE)),--layers=false) -f Dockerfile -t $(IMAGE) \
	  --build-arg VERSION=$(VERSION) --build-arg REVISION=$(COMMIT) --build-arg CREATED=$(BUILD_DATE) $(IMAGE_STAGE)
	@echo "built $(IMAGE) with $(ENGINE)"

.PHONY: image-save
image-save: image ## Save the image as an archive ($(IMAGE_ARCHIVE)): OCI layout from podman and buildah, docker's from docker
	$(eval ENGINE := $(or $(IMAGE_ENGINE),podman))
	@mkdir -p $(dir $(IMAGE_ARCHIVE)); rm -f $(IMAGE_ARCHIVE)
	$(if $(filter docker,$(ENGINE)),docker save -o $(IMAGE_ARCHIVE) $(IMAGE), \
	  $(if $(filter buildah,$(ENGINE)),buildah push $(IMAGE) oci-archive:$(IMAGE_ARCHIVE), \
	    podman save --format oci-archive -o $(IMAGE_ARCHIVE) $(IMAGE)))

.PHONY: image-engine
image-engine:
	@echo $(IMAGE_ENGINE)

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

# make test runs the PostgreSQL half of every storage test, as CI does: it
# uses TEST_POSTGRES_URL, else the local server below, and stops at once,
# saying how to set it, when that does not answer (postgres-check).
TEST_POSTGRES_LOCAL := postgres://postgres@127.0.0.1:5432/test?sslmode=disable
test: export TEST_POSTGRES_URL ?= $(TEST_POSTGRES_LOCAL)
test: export BUNTING_REQUIRE_POSTGRES := 1

# The race detector also runs on the most concurrent packages, whose tests
# race writers, claimers and subscribers on purpose: all of internal/stream
# and internal/store but its large search table (507 s of the package's
# 591 s under -race, and not concurrent), and the concurrent tests of
# internal/signals and internal/server. Measured on the shared 2-core
# machine at load average 20-35: the store part 70-91 s; signals and server
# together 276 s (all of signals alone takes 220-240 s under -race, and
# server's TestStreamingClientThatNeverReads alone 143 s, so they are left
# out). Trim RACE_SERVER first if make test grows too long.
RACE_STORE_SKIP := ^TestEventSearchMatchesExactly$$
RACE_SIGNALS    := TestEndpointLimitUnderConcurrency|TestRateLimitUnderBurst|TestClaimIsExclusive|TestRateLimitAcrossInstances|TestTwoInstancesProcessEachSignalOnce|TestLeaseTakeover|TestAbandonedClaimIsProcessed
RACE_SERVER     := TestStreamingSendsEveryChangeAndResumes|TestStreamingResumesWithoutLossUnderConcurrentWrites|TestStreamingAcrossInstances|TestStreamingScopeByTagAndPrefix|TestStreamingRefusals|TestStreamingRevokedTokenEndsStream|TestStreamingDeletedEnvironmentEndsStream|TestDeltaPolling|TestRevisionFromAnotherInstance|TestTwoEditorsOfAFlag|TestTwoEditorsOfASegment|TestParallelWritesWithOneVersion|TestSignInLimitHoldsForConcurrentGuesses|TestOFREP|TestClientFeatures

.PHONY: postgres-check
postgres-check:
	@url="$${TEST_POSTGRES_URL-$(TEST_POSTGRES_LOCAL)}"; \
	  if [ -z "$$url" ]; then echo "TEST_POSTGRES_URL is empty: unset it to use $(TEST_POSTGRES_LOCAL), or set it to your PostgreSQL's URL"; exit 1; fi; \
	  hostport=$$(printf '%s' "$$url" | sed -E 's|^[a-zA-Z]+://([^@/]*@)?(\[[^]]*\]\|[^:/?]*)(:([0-9]+))?.*$$|\2 \4|'); \
	  host=$${hostport% *}; port=$${hostport#* }; host=$${host:-127.0.0.1}; port=$${port:-5432}; \
	  if ! (exec 3<>"/dev/tcp/$${host//[\[\]]/}/$$port") 2>/dev/null; then \
	    echo "make test runs the PostgreSQL tests as CI does, but PostgreSQL at $$host:$$port does not answer."; \
	    echo "Start PostgreSQL there (user postgres, database test, trust auth on loopback), or point the tests"; \
	    echo "at another one: TEST_POSTGRES_URL='postgres://USER@HOST:PORT/DATABASE?sslmode=disable' make test"; \
	    echo "(TEST_POSTGRES_URL now: $$url)"; \
	    exit 1; \
	  fi

.PHONY: test
test: postgres-check node-deps browser-deps lint ## Run everything CI runs, PostgreSQL included (TEST_POSTGRES_URL, default the local server)
	@$(MAKE) -s image-deps || echo "the image test will skip: nothing here can build container images"
	$(GO) test -count=1 -timeout 20m ./...
	$(GO) test -count=1 -v -run='^TestClientSpecification$$' ./engine
	$(GO) test -count=1 -race -timeout 20m ./engine/...
	$(GO) test -count=1 -race -timeout 5m ./internal/scripts/...
	$(GO) test -count=1 -race -timeout 5m ./proxy/... ./internal/upstream/... ./internal/wire/... ./internal/frontend/... ./internal/clientconfig/...
	$(GO) test -count=1 -race -timeout 10m -skip '$(RACE_STORE_SKIP)' ./internal/stream/... ./internal/store/...
	$(GO) test -count=1 -race -timeout 10m -run '^($(RACE_SIGNALS)|$(RACE_SERVER))$$' ./internal/signals/ ./internal/server/
	$(GO) test -run='^$$' -fuzz='^FuzzEvaluate$$' -fuzztime=$(FUZZTIME) ./engine
	cd bench && $(GO) test -count=1 -run . ./...
	cd loadtest && $(GO) test -count=1 -timeout 10m ./...
	cd e2e && $(GO) test -count=1 -timeout 15m ./...
	cd compat && BUNTING_COMPAT=1 $(GO) test -count=1 -timeout 15m ./...
	cd deploy && $(GO) test -count=1 -timeout 10m ./...

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
bench-server: ## Benchmark the flag server: toggles with their events, events search over 1M events, integrations' deliveries and toggles with integrations, change requests applied and scheduled (SQLite, PostgreSQL)
	cd bench/server && $(GO) test -run='^$$' -bench='^BenchmarkToggle$$' -benchtime=2000x -count=1 -timeout 30m ./...
	cd bench/server && $(GO) test -run='^$$' -bench='^BenchmarkEventSearch$$' -benchtime=200x -count=1 -timeout 40m ./...
	cd bench/server && $(GO) test -run='^$$' -bench='^BenchmarkToggleIntegrations$$' -benchtime=2000x -count=1 -timeout 30m ./...
	cd bench/server && $(GO) test -run='^$$' -bench='^BenchmarkIntegrationDelivery$$' -benchtime=1x -count=1 -timeout 40m ./...
	cd bench/server && $(GO) test -run='^$$' -bench='^BenchmarkApplyChangeRequest$$' -benchtime=100x -count=1 -timeout 30m ./...
	cd bench/server && $(GO) test -run='^$$' -bench='^BenchmarkScheduledApplication$$' -benchtime=1x -count=1 -timeout 30m ./...

.PHONY: bench-load
bench-load: ## Load-benchmark the proxy, the server client API and SDK usage reports next to replay baselines on loopback (LOADFLAGS="-duration 4s"; TEST_POSTGRES_URL adds PostgreSQL)
	cd loadtest && $(GO) run . $(LOADFLAGS)

.PHONY: bench-large
bench-large: ## Benchmark the server with 20,000 flags: start-up to /ready, RSS after the first reads, one-flag change → served (LARGEFLAGS="-flags 20000")
	cd loadtest && $(GO) run ./largeconfig $(LARGEFLAGS)

.PHONY: options-doc
options-doc: ## Regenerate the option tables of docs/configuration.md from the commands' option tables
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
	cd deploy && $(GO) vet ./...
