# zarrfs — build, test and CI entry points. `make test` is what CI runs.
GO       ?= go
BIN      := bin/zarrfs
PKGS     := ./...
JSDIR    := integration/js
DEBS     := fuse3 attr python3-zarr python3-numcodecs python3-numpy nodejs npm
FUZZTIME ?= 10s
STRESS_DURATION ?= 5m
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build deps lint test demo bench fuzz-short stress clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/zarrfs

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

lint:
	$(GO) vet $(PKGS)
	@out="$$(gofmt -l $$($(GO) list -f '{{.Dir}}' $(PKGS)))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# -count=1: the integration tests build and run the binary in subprocesses,
# which Go's test cache cannot see, so a cached pass could be stale.
test: deps lint
	ZARRFS_REQUIRE_PEERS=1 $(GO) test -count=1 -timeout 12m $(PKGS)

demo: build
	$(BIN) demo

# bench is the end-to-end benchmark against zarr-python (see BENCH.md; it
# mounts, so it runs as root). BENCH_MIB, BENCH_ROUNDS, BENCH_SCALE_MIB,
# BENCH_TREE and BENCH_DIR make it smaller or place its data.
bench: build
	$(GO) build -o bin/benchdata ./bench/benchdata
	/usr/bin/python3 bench/bench.py

# fuzz-short runs every FuzzXxx target of every package for FUZZTIME
# (below a few seconds the fuzzer itself can fail with "context deadline
# exceeded": keep FUZZTIME at 5s or more).
fuzz-short:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
		for f in $$($(GO) test -list 'Fuzz.*' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run=NONE -fuzz="^$$f\$$" -fuzztime=$(FUZZTIME) $$pkg; \
		done; \
	done

stress:
	ZARRFS_STRESS_DURATION=$(STRESS_DURATION) $(GO) test -timeout 60m -run Stress -v $(PKGS)

clean:
	rm -rf bin
