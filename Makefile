# Binky's build. `make test` is the one command CI runs: the prerequisites,
# lint, every module's tests (fuzz seed corpora included) and the cross
# builds.

SHELL      := /bin/bash
GO         ?= go
BIN        ?= $(CURDIR)/bin
PREFIX     ?= $(HOME)/.local
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT     ?= $(shell git rev-parse HEAD 2>/dev/null)
# Every binary, adapters included, is built with -trimpath (no build
# directory in it: two builds of one commit are bit-identical) and these
# version ldflags (the adapters' through the sdk every adapter links).
LDFLAGS    := -X github.com/binkyhq/binky/cmd/internal/cli.version=$(VERSION) -X github.com/binkyhq/binky/cmd/internal/cli.commit=$(COMMIT) \
	-X github.com/binkyhq/binky/sdk.version=$(VERSION) -X github.com/binkyhq/binky/sdk.commit=$(COMMIT)
BUILDFLAGS := -trimpath -ldflags '$(LDFLAGS)'
# Every module of the workspace: the root, the sdk, each plugin, the examples.
MODULES    := . sdk $(patsubst %/go.mod,%,$(wildcard plugins/*/go.mod)) $(patsubst %/go.mod,%,$(wildcard examples/*/go.mod))
# Every adapter binary: plugins/<name>/cmd/binky-adapter-*.
ADAPTERS   := $(wildcard plugins/*/cmd/binky-adapter-*)
TESTFLAGS  ?= -count=1 -timeout 20m
# TESTSUMFLAGS=-v prints every test's output, as go test -v does (by
# default a passing test's output is left out, as go test leaves it out).
TESTSUMFLAGS ?=
TESTSUM    := $(BIN)/testsum
RESULTS    := $(BIN)/test-results
STATICCHECK ?= v0.8.2

.PHONY: all build install test prereq unit unit-pg18 lint cross test-windows fuzz reliability reliability-fuzz reliability-suite demo demo-down testenv clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build $(BUILDFLAGS) -o $(BIN)/binky ./cmd/binky
	$(GO) build $(BUILDFLAGS) -o $(BIN)/binkyd ./cmd/binkyd
	@for a in $(ADAPTERS); do \
		mod=$${a%%/cmd/*}; name=$$(basename $$a); \
		echo "$(GO) build $(BUILDFLAGS) -o $(BIN)/$$name ./$$a"; \
		(cd $$mod && $(GO) build $(BUILDFLAGS) -o $(BIN)/$$name ./cmd/$$name) || exit 1; \
	done
	$(GO) build $(BUILDFLAGS) -o $(BIN)/binky-adapter-filestore ./examples/adapters
	$(GO) build $(BUILDFLAGS) -o $(BIN)/binky-demo-app ./examples/demo/app

install: build
	@mkdir -p $(PREFIX)/bin
	install -m 0755 $(BIN)/binky $(BIN)/binkyd $(BIN)/binky-adapter-* $(PREFIX)/bin/
	@echo "installed into $(PREFIX)/bin (make sure it is on PATH)"

# test: what CI runs. The prerequisites, lint, then every module's tests,
# then the cross builds.
test: prereq lint unit unit-pg18 cross

# prereq: Go, git, the test servers and the commands tests run; one line
# for each thing missing (scripts/prereq). A missing server is an error
# under CI=true (its tests would fail), a warning otherwise (they skip).
prereq:
	@GO=$(GO) STATICCHECK=$(STATICCHECK) bash scripts/prereq

# unit: every module's tests through scripts/testsum (go test -json): a
# line per package, the output of what failed, a count per module, then
# the summary: each module's count and time, the total, each skipped test
# with its reason, the failures, the slowest packages and tests.
unit: build
	@$(GO) build -o $(TESTSUM) ./scripts/testsum
	@rm -rf $(RESULTS); mkdir -p $(RESULTS); failed=""; i=10; for m in $(MODULES); do \
		echo "== go test ($$m)"; i=$$((i+1)); \
		(cd $$m && PATH=$(BIN):$$PATH BINKY_TEST_BIN=$(BIN) $(TESTSUM) -module $$m -record $(RESULTS)/$$i.json $(TESTSUMFLAGS) \
			-- $(GO) test -json $(TESTFLAGS) ./...) || failed="$$failed $$m"; \
	done; \
	$(TESTSUM) -summary $(RESULTS)/*.json; \
	if [ -n "$$failed" ]; then echo "FAILED modules:$$failed"; exit 1; fi

# unit-pg18: the postgres adapter's tests again, against PostgreSQL 18 at
# BINKY_TEST_POSTGRES18_URL (scripts/testenv up pg18 starts one on the
# reflink mount): the same suite, plus the copy-on-write tests that skip
# on 15. Without the URL it skips, except under CI=true.
unit-pg18: build
	@if [ -z "$$BINKY_TEST_POSTGRES18_URL" ]; then \
		if [ "$$CI" = true ]; then echo "unit-pg18: BINKY_TEST_POSTGRES18_URL is not set (scripts/testenv up pg18 starts PostgreSQL 18)"; exit 1; fi; \
		echo "== unit-pg18 skipped: BINKY_TEST_POSTGRES18_URL is not set (scripts/testenv up pg18)"; exit 0; \
	fi; \
	echo "== go test (plugins/postgres against PostgreSQL 18)"; \
	cd plugins/postgres && PATH=$(BIN):$$PATH BINKY_TEST_BIN=$(BIN) BINKY_TEST_POSTGRES_URL=$$BINKY_TEST_POSTGRES18_URL $(GO) test $(TESTFLAGS) ./...

lint:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) vet ./...); done
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@sc=$$(command -v staticcheck || echo "$$($(GO) env GOPATH)/bin/staticcheck"); \
	if [ ! -x "$$sc" ]; then \
		echo "installing staticcheck $(STATICCHECK)"; \
		timeout 300 $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK) >/dev/null 2>&1 || true; \
	fi; \
	if [ -x "$$sc" ]; then \
		for m in $(MODULES); do (cd $$m && $$sc ./...) || exit 1; done; \
	else echo "staticcheck did not install: skipped"; fi

# test-windows: the Windows test tier (scripts/test-windows,
# docs/windows.md): every package's tests and the product cross-built for
# windows/amd64 and run under Wine (installed from Debian when missing),
# pass/fail/skip per package. CI runs it beside `make test` (.ci/run),
# then its end-to-end step, `scripts/test-windows ./e2e` (e2e's
# TestWindows* tests, with the tier's git.exe bridge).
test-windows:
	@GO=$(GO) BIN=$(BIN) bash scripts/test-windows

cross:
	@set -e; for os in linux windows; do for m in $(MODULES); do \
		echo "== GOOS=$$os go build ($$m)"; \
		(cd $$m && GOOS=$$os GOARCH=amd64 $(GO) build ./... && GOOS=$$os GOARCH=amd64 $(GO) vet ./... >/dev/null); \
	done; done

# fuzz: run each fuzz target for FUZZTIME (default 30s) beyond the corpus.
FUZZTIME ?= 30s
fuzz:
	@set -e; for m in $(MODULES); do (cd $$m; \
		for pkg in $$($(GO) list ./...); do \
			for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
				echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
			done; done); done

# reliability: the long tier of the reliability suite (e2e/reliability_test.go,
# docs/reliability.md). Every fuzz target for FUZZTIME (10m unless given on
# the command line), then TestReliability at full size: 200 daemon kills, a
# 50-up stampede, a BINKY_RELIABILITY_SOAK (30m) soak. Writes
# docs/reliability.md. The quick tier of the same test runs in `make test`.
# Shorter: make reliability FUZZTIME=30s BINKY_RELIABILITY_SOAK=5m
RELDIR ?= $(BIN)/reliability
RELIABILITY_FUZZTIME := $(if $(filter command line environment,$(origin FUZZTIME)),$(FUZZTIME),10m)
reliability: build
	-$(MAKE) --no-print-directory reliability-fuzz
	$(MAKE) --no-print-directory reliability-suite

# reliability-suite: TestReliability's long tier alone, reporting the fuzz
# results an earlier `make reliability-fuzz` left in $(RELDIR)/fuzz.tsv.
reliability-suite: build
	cd e2e && PATH=$(BIN):$$PATH BINKY_TEST_BIN=$(BIN) BINKY_RELIABILITY=long \
		BINKY_RELIABILITY_FUZZ=$(RELDIR)/fuzz.tsv BINKY_RELIABILITY_FUZZTIME=$(RELIABILITY_FUZZTIME) \
		BINKY_RELIABILITY_FUZZJOBS=$(FUZZJOBS) \
		BINKY_RELIABILITY_REPORT=$(CURDIR)/docs/reliability.md \
		$(GO) test -count=1 -timeout 6h -v -run '^TestReliability$$' .

# reliability-fuzz: every fuzz target for FUZZTIME, FUZZJOBS at a time (one
# fuzz worker each when more than one), one line per target in
# $(RELDIR)/fuzz.tsv (package, target, ok or FAIL, seconds, execs, workers).
FUZZJOBS ?= 1
reliability-fuzz:
	@GO=$(GO) nice -n 19 bash scripts/fuzz-all $(RELDIR)/fuzz.tsv $(RELIABILITY_FUZZTIME) $(FUZZJOBS) $(MODULES)

# demo: the main job on an embedded default — two worlds of examples/demo,
# SQLite slices, no server needed. demo-down removes them.
demo: build
	@bash scripts/demo.sh

demo-down:
	@bash scripts/demo.sh down

clean:
	rm -rf $(BIN) $(DIST)

.PHONY: man dist

# man: the manual pages, binky(1) from the kong model and binky.toml(5)
# from docs/config.md's key reference, into $(BIN)/man.
MANDIR ?= $(BIN)/man
man:
	$(GO) run -trimpath ./cmd/binky __man --out $(MANDIR) --config docs/config.md

# dist: what a release ships, into $(DIST): the source tarball, archives
# for DIST_PLATFORMS, Debian packages (binky, and one binky-adapter-<family>
# per adapter module, installing into /usr/lib/binky/adapters), the npm
# packages (installed from their tarballs until a release: README) and SHA256SUMS. Reproducible: file times are
# the commit's (SOURCE_DATE_EPOCH overrides), binaries -trimpath and static.
# tools/dist is its own module (nfpm stays out of the workspace's
# dependencies), built with GOWORK=off.
DIST           ?= $(CURDIR)/dist
DIST_PLATFORMS ?= linux/amd64,linux/arm64,windows/amd64
dist:
	cd tools/dist && GOWORK=off $(GO) vet . && GOWORK=off GO=$(GO) $(GO) run -trimpath . -root $(CURDIR) -out $(DIST) \
		-version '$(VERSION)' -commit '$(COMMIT)' -platforms '$(DIST_PLATFORMS)'
	@cat $(DIST)/SHA256SUMS
