# zarrfs — build, test and CI entry points. `make test` is what CI runs.
GO       ?= go
BIN      := bin/zarrfs
PKGS     := ./...
JSDIR    := integration/js
DEBS     := fuse3 attr python3-zarr python3-numcodecs python3-numpy nodejs npm gcc
# fuzz-short: iterations per fuzz target (the same work on every machine);
# fuzz: time per target. FUZZMINTIME bounds the minimisation of each new
# input (go's default of 60s can stall a short run for a minute).
FUZZITERS   ?= 5000
FUZZTIME    ?= 1m
FUZZMINTIME ?= 5s
# deadcode's version (golang.org/x/tools), for make lint.
DEADCODE    := v0.52.0
# stress: how long the 32-reader stress test runs (10 s in make test) and
# how many operations the fsx check draws (100,000 in make test).
STRESS_DURATION ?= 60s
FSX_OPS         ?= 300000
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build deps lint test race-integration demo bench bench-layouts fuzz-short fuzz stress race clean

all: build

# The binary is static (CGO_ENABLED=0): zarrfs needs no C, and the
# standard library's net and os/user would otherwise link it to glibc.
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/zarrfs

# deps installs the peers and tools the tests use, only what is missing
# (node and npm count as present when the commands are, whoever packaged them).
deps:
	@missing=""; for p in $(DEBS); do \
		case $$p in nodejs) command -v node >/dev/null && continue;; npm) command -v npm >/dev/null && continue;; esac; \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi
	@if [ ! -d $(JSDIR)/node_modules ]; then cd $(JSDIR) && npm ci --no-audit --no-fund; fi
	@command -v versitygw >/dev/null || [ -x "$$($(GO) env GOPATH)/bin/versitygw" ] || $(GO) install github.com/versity/versitygw/cmd/versitygw@v1.8.0

# lint: go vet, gofmt, and no function that nothing (no command, no test)
# calls (golang.org/x/tools' deadcode, fetched through the module proxy).
lint:
	$(GO) vet $(PKGS)
	@out="$$(gofmt -l $$($(GO) list -f '{{.Dir}}' $(PKGS)))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@out="$$($(GO) run golang.org/x/tools/cmd/deadcode@$(DEADCODE) -test $(PKGS))"; \
	if [ -n "$$out" ]; then echo "dead code:"; echo "$$out"; exit 1; fi

# -count=1: the integration tests build and run the binary in subprocesses,
# which Go's test cache cannot see, so a cached pass could be stale.
# make test then runs, under the race detector:
#  - RACE_PKGS, the packages with concurrent code (the engine's cache and
#    read-ahead, the mount, the stores, the parallel Blosc decoder);
#  - RACE_TESTS of integration/, the concurrency tests of the daemon
#    (stress, fsx, faults, lifecycle), which then mount a -race build of
#    zarrfs and fail on any data race it reports: the stress test for
#    RACE_STRESS_DURATION, fsx for RACE_FSX_OPS operations;
# and last every fuzz target for FUZZITERS iterations (fuzz-short).
# race-integration takes about 2 minutes on 2 cores (1 min 41 s measured,
# 68 s of CPU: mostly the fixed durations of the tests); make race runs
# every test under the race detector (about 25 minutes).
RACE_PKGS  := ./zarr/ ./fs/ ./store/... ./codec/blosc/
RACE_TESTS := Stress|Fsx|Fault|Lifecycle
RACE_STRESS_DURATION ?= 10s
RACE_FSX_OPS         ?= 20000

test: deps lint
	ZARRFS_REQUIRE_PEERS=1 $(GO) test -count=1 -timeout 12m $(PKGS)
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 10m $(RACE_PKGS)
	@$(MAKE) --no-print-directory race-integration
	@$(MAKE) --no-print-directory fuzz-short

# race-integration is the race-detector run of the integration tests'
# concurrency tests that make test does (see above).
race-integration:
	ZARRFS_REQUIRE_PEERS=1 ZARRFS_STRESS_DURATION=$(RACE_STRESS_DURATION) ZARRFS_FSX_OPS=$(RACE_FSX_OPS) \
		CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 15m -run '$(RACE_TESTS)' ./integration/

demo: build
	$(BIN) demo

# bench is the end-to-end benchmark against zarr-python (see BENCH.md; it
# mounts, so it runs as root). BENCH_MIB, BENCH_ROUNDS, BENCH_SCALE_MIB,
# BENCH_TREE and BENCH_DIR make it smaller or place its data.
bench: build
	$(GO) build -o bin/benchdata ./bench/benchdata
	/usr/bin/python3 bench/bench.py

# bench-layouts: zarr-python's default chunks, small and large chunks, and
# unquantised data, against zarr-python (bench/layouts.py, BENCH.md).
bench-layouts: build
	/usr/bin/python3 bench/layouts.py

# fuzz-short runs every FuzzXxx target of every package for a fixed number
# of iterations, FUZZITERS (about 4 minutes on 2 cores); fuzz runs each for
# FUZZTIME. A failing input is written by go test to the package's
# testdata/fuzz/FuzzXxx/: fix the bug and commit the file, which plain
# `go test` then runs as a regression seed. The seed corpora are the
# hostile inputs under each package's testdata/.
fuzz-short:
	@$(call fuzz-all,$(FUZZITERS)x)

fuzz:
	@$(call fuzz-all,$(FUZZTIME))

# fuzz-all runs every fuzz target for -fuzztime=$(1), stopping at the first
# failure. With a duration, go1.26's fuzz coordinator can fail a target with
# a bare "context deadline exceeded" when the time runs out (golang/go#75804,
# fixed in go1.27): that, without a failing input written, is not counted.
define fuzz-all
	set -e; start=$$(date +%s); n=0; out=$$(mktemp); \
	for pkg in $$($(GO) list $(PKGS)); do \
		for f in $$($(GO) test -list 'Fuzz.*' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; n=$$((n+1)); rc=0; \
			$(GO) test -run=NONE -fuzz="^$$f\$$" -fuzztime=$(1) -fuzzminimizetime=$(FUZZMINTIME) $$pkg >$$out 2>&1 || rc=$$?; \
			grep -v '^fuzz: elapsed' $$out || true; \
			if [ $$rc -ne 0 ]; then \
				if grep -q 'context deadline exceeded' $$out && ! grep -q 'Failing input written' $$out; then \
					echo "fuzz: $$f: the coordinator's deadline race (golang/go#75804), no failing input: not a failure"; \
				else rm -f $$out; exit 1; fi; \
			fi; \
		done; \
	done; \
	rm -f $$out; echo "fuzz: $$n targets, -fuzztime=$(1) each, passed in $$(( $$(date +%s) - start )) s"
endef

# stress runs the long versions of the reliability tests (integration/):
# the stress test for STRESS_DURATION and fsx for FSX_OPS operations, then
# the fault and lifecycle tests. The figures in docs/TESTING.md come from here.
stress: deps
	ZARRFS_REQUIRE_PEERS=1 ZARRFS_STRESS_DURATION=$(STRESS_DURATION) ZARRFS_FSX_OPS=$(FSX_OPS) \
		$(GO) test -count=1 -timeout 60m -run 'Stress|Fsx|Fault|Lifecycle' -v ./integration/

# race runs every test under the race detector; the integration tests then
# mount a -race build of zarrfs. It takes several times as long as make test
# (about 25 minutes on 2 cores: 8 for the packages other than integration,
# 16.5 for integration), so it is a target of its own.
race: deps
	ZARRFS_REQUIRE_PEERS=1 $(GO) test -race -count=1 -timeout 90m $(PKGS)

clean:
	rm -rf bin
