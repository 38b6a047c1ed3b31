# vetto-runtime — `make help` lists the targets.

GO        ?= go
BIN       := bin/vetto-runtime
PREFIX    ?= /usr/local
VERSION   := $(shell cat VERSION 2>/dev/null || echo 0.1.0-dev)
COMMIT    := $(shell git rev-parse --short HEAD 2>/dev/null)
# Static, as runc ships: the binary re-execs itself inside containers (the
# Landlock shim, the verification probe), whose rootfs has no libseccomp.
# urfave_cli_no_docs leaves out the man-page generator (blackfriday), whose
# package init every start of the binary — runtime, init, shim, probe —
# would pay (0.5 ms each).
TAGS      := seccomp netgo osusergo urfave_cli_no_docs
LDFLAGS   := -X main.version=$(VERSION) -X main.gitCommit=$(COMMIT) -extldflags=-static
GOFILES   := $(shell git ls-files '*.go' 2>/dev/null || find . -name '*.go')
# Debian packages the build, tests and demo need.
DEB_PKGS  := gcc libc6-dev pkg-config libseccomp-dev busybox-static util-linux jq \
             containerd podman conmon runc crun hyperfine uidmap slirp4netns \
             iproute2 curl git nodejs python3-pip openjdk-17-jdk-headless
# npm is its own Debian package, or comes with nodejs from elsewhere:
# installed only when there is no npm command.
DEB_CMDS  := npm

SHELL     := /bin/bash
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin
export CGO_ENABLED := 1

.PHONY: help deps build test unit integration lint cross demo man install clean libcontainer-test

help: ## list the targets
	@grep -Eh '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

deps: ## install the Debian packages the build and tests need (as root)
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	for c in $(DEB_CMDS); do command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "missing packages:$$missing (run 'make deps' as root)"; exit 1; fi; \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# The helper executables: every container's init and exec'd process
# starts as cmd/vetto-runtime-init, not as the runtime's whole binary, and
# every egress relay runs cmd/vetto-runtime-relay, whose HTTP and TLS code
# the runtime's own binary then does not carry (docs/architecture.md,
# "The helper executables"). Built first, stripped (Go's tracebacks keep
# their line table), and embedded in the runtime with their sha256
# (embedinit tag, linux/helperexe_embed_linux.go).
INIT_EXE  := linux/initexe/vetto-runtime-init
RELAY_EXE := linux/relayexe/vetto-runtime-relay
INIT_TAGS := seccomp netgo osusergo

build: deps ## build bin/vetto-runtime (cgo, static, libseccomp), with the init and relay executables embedded
	$(GO) build -tags "$(INIT_TAGS)" -trimpath -ldflags "-s -w -extldflags=-static" -o $(INIT_EXE) ./cmd/vetto-runtime-init
	sha256sum $(INIT_EXE) | cut -d' ' -f1 >$(INIT_EXE).sha256
	$(GO) build -tags "$(INIT_TAGS)" -trimpath -ldflags "-s -w -extldflags=-static" -o $(RELAY_EXE) ./cmd/vetto-runtime-relay
	sha256sum $(RELAY_EXE) | cut -d' ' -f1 >$(RELAY_EXE).sha256
	$(GO) build -tags "$(TAGS) embedinit" -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) .

test: unit integration ## unit and integration tests (integration needs root)

unit: deps ## unit tests, with the race detector (everything but integration/)
	$(GO) test -tags "$(TAGS)" -race -count=1 $$($(GO) list ./... | grep -v /integration)
	$(GO) test -tags "$(filter-out urfave_cli_no_docs,$(TAGS))" -count=1 -run '^TestManPage$$' ./cli

# The package tests of the patched runc tree (third_party/README.md),
# upstream's own, built against the module graph vetto builds with (go.mod's
# replace). As root every one of them runs here; none needs systemd or pure
# cgroup v2 (those are in the cgroups module and libcontainer/integration,
# which third_party/runc does not carry), so nothing is skipped.
# LIBCONTAINER_SKIP is a -skip regex for a host that lacks what a test needs;
# say why beside it.
LIBCONTAINER_PKGS := github.com/opencontainers/runc/libcontainer/... github.com/opencontainers/runc/internal/...
LIBCONTAINER_SKIP :=

libcontainer-test: deps ## upstream runc's unit tests of third_party/runc (libcontainer + internal), against the patched tree (root)
	$(GO) test -tags "$(TAGS)" -count=1 -timeout 5m $(if $(LIBCONTAINER_SKIP),-skip '$(LIBCONTAINER_SKIP)') $(LIBCONTAINER_PKGS)

integration: build ## run real containers with the built binary (root)
	set -o pipefail; cd integration && TESTONLY_VETTO_BINARY=$(CURDIR)/$(BIN) \
		$(GO) test -tags "$(TAGS)" -count=1 -timeout 20m -v . 2>&1 | grep -Ev '^=== (RUN|PAUSE|CONT)'

.PHONY: conformance
conformance: build ## OCI runtime-tools validation suite (root); RUNTIME=path, or RUNTIMES="vetto=bin/vetto-runtime runc=/usr/sbin/runc crun=/usr/bin/crun" side by side
	RUNTIME="$(or $(RUNTIME),$(CURDIR)/$(BIN))" RUNTIMES="$(RUNTIMES)" GO="$(GO)" integration/conformance/run.sh


# golangci-lint, pinned: .golangci.yml is its v2 format. Installed with
# `go install` into $(GOBIN) (the module proxy is all it needs); an
# installed binary of another version is replaced.
GOLANGCI_LINT_VERSION := v2.15.0
GOBIN     ?= $(shell $(GO) env GOPATH)/bin
GOLANGCI  := $(GOBIN)/golangci-lint

.PHONY: lint-deps
lint-deps: ## install the pinned golangci-lint (GOLANGCI_LINT_VERSION) with go install
	@if ! $(GOLANGCI) version 2>/dev/null | grep -q "version $(patsubst v%,%,$(GOLANGCI_LINT_VERSION)) "; then \
		echo "installing golangci-lint $(GOLANGCI_LINT_VERSION)"; \
		GOBIN=$(GOBIN) CGO_ENABLED=0 $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) || \
		{ echo "lint: golangci-lint $(GOLANGCI_LINT_VERSION) could not be installed: NOT LINTED"; exit 1; }; \
	fi

lint: lint-deps ## gofmt, go vet, golangci-lint (.golangci.yml: errorlint, forbidigo, depguard layering, staticcheck, …) for linux, darwin and windows
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags "$(TAGS)" ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	$(GOLANGCI) run ./...
	GOOS=darwin CGO_ENABLED=0 $(GOLANGCI) run ./...
	GOOS=windows CGO_ENABLED=0 $(GOLANGCI) run ./...

CROSS     := darwin/arm64 darwin/amd64 windows/amd64 windows/arm64

cross: ## build, vet, and compile the backend's tests for darwin and windows (CGO_ENABLED=0; those tests run only on their own hosts)
	@set -e; for p in $(CROSS); do os=$${p%/*}; arch=$${p#*/}; echo "cross $$p"; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build ./...; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) vet ./...; \
		GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) test -c -o /dev/null ./$$os/; \
	done

demo: build ## build, then sandbox a command in this repository with the default policy (no image)
	@./scripts/demo.sh $(BIN)

.PHONY: bench
bench: build ## time run beside crun, runc and runc 1.5.3 (hyperfine), parallel runs, RSS, exec, Go benchmarks; writes docs/performance.md (root)
	./scripts/bench.sh $(BIN)

man: ## generate the man page into bin/man/vetto-runtime.8 (the generator is linked into a test, not the binary)
	CGO_ENABLED=1 $(GO) test -tags "$(filter-out urfave_cli_no_docs,$(TAGS))" -run '^TestManPage$$' -count=1 ./cli -args -man=$(CURDIR)/bin/man
	@echo "man: bin/man/vetto-runtime.8 (man -l bin/man/vetto-runtime.8)"

install: build ## install the binary to $(PREFIX)/bin
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/vetto-runtime

clean: ## remove build output
	rm -rf bin $(INIT_EXE) $(INIT_EXE).sha256 $(RELAY_EXE) $(RELAY_EXE).sha256

include vm/vm.mk
