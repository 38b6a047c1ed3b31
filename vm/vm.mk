# The VM tier (docs/testing.md): integration tests inside Debian guests with
# pure cgroup v2 and systemd, under qemu TCG. Included by the top-level
# Makefile; every path is relative to the repository root.

# Guests: Debian suites, each with its own kernel (vm/image.sh).
VM_GUESTS ?= bookworm trixie
# What runs as root in each guest: `go test -run VM_TESTS -skip VM_SKIP`
# over the integration tests. The default is all of them but what needs
# what the guests do not have (containerd, podman and runc for TestClient*
# and the verify-under-clients tests; gcc and a Go toolchain for
# TestPolicyToolchains; curl, npm, pip, node and java for
# TestRelayAllowTools) and the rootless ones, which run as the user
# below: about 10 minutes a guest under emulation (docs/testing.md). It
# covers lifecycle, teardown and escapers, levels, policy mode,
# verification, Landlock at the guest's ABI and --systemd-cgroup.
VM_TESTS ?= .
VM_SKIP  ?= ^(TestClient.*|TestVerifyUnderContainerd|TestVerifyHooksUnderRunc|TestPolicyToolchains|TestRelayAllowTools|TestRootless.*)$$
# What runs as the normal user under its systemd user manager; "0 tests"
# is reported as such, never as a pass.
VM_ROOTLESS_TESTS ?= ^TestRootless
# Per guest: vCPUs, memory, and the bound after which a guest that has not
# powered off is killed and reported failed (seconds).
VM_SMP     ?= 2
VM_MEM     ?= 2G
VM_TIMEOUT ?= 2100
# How qemu's TCG runs the vCPUs: single (all on one host thread) or multi
# (a thread each, about 20 % faster). multi let a 6.12 guest see kernel
# text half-patched by its other vCPU and panic, twice in a row in CI, so
# single is the default (docs/testing.md); multi is for quick local runs.
VM_TCG_THREAD ?= single
# Guest images, cached by content (suite + package list + setup); outside
# the source tree.
VM_CACHE   ?= $(if $(filter 0,$(shell id -u)),/var/cache/vetto-vm,$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/vetto-vm)
# Build output: what goes into the guests, and what comes back.
VM_IN      := $(CURDIR)/bin/vm/in
VM_OUT     ?= $(CURDIR)/bin/vm/results
# make vm-shell GUEST=…
GUEST      ?= bookworm
# Host packages the tier needs (qemu-img is in qemu-utils; mkfs.ext4 -d in
# e2fsprogs; the archive keyring verifies every suite's Release file).
VM_DEB_PKGS := qemu-system-x86 qemu-utils mmdebstrap e2fsprogs debian-archive-keyring

VM_ENV = VM_IN="$(VM_IN)" VM_OUT="$(VM_OUT)" VM_CACHE="$(VM_CACHE)" VM_SMP="$(VM_SMP)" \
	VM_MEM="$(VM_MEM)" VM_TIMEOUT="$(VM_TIMEOUT)" VM_TESTS='$(VM_TESTS)' VM_SKIP='$(VM_SKIP)' \
	VM_ROOTLESS_TESTS='$(VM_ROOTLESS_TESTS)' VM_TCG_THREAD='$(VM_TCG_THREAD)'

.PHONY: vm-deps vm-build vm-images vm-test vm-shell

vm-deps: ## install the Debian packages the VM tier needs (qemu, mmdebstrap; as root)
	@missing=""; for p in $(VM_DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then echo "missing packages:$$missing (run 'make vm-deps' as root)"; exit 1; fi; \
		echo "installing:$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The inputs of every guest: the runtime (the project's own build), the
# integration test binary, its testdata, and what the tests build with
# `go build` — the programs under testdata/ (buildSysprobe) and the
# runtime with extra tags (buildRuntime) — prebuilt here with the tests'
# own commands and served in the guest by vm/guest/go (the guests have no
# Go toolchain); all static.
VM_RUNTIME_VARIANTS := vetto_faultinject
vm-build: build
	rm -rf $(VM_IN) && mkdir -p $(VM_IN)/prebuilt
	cp $(BIN) $(VM_IN)/vetto-runtime
	cd integration && CGO_ENABLED=0 $(GO) test -c -tags "$(TAGS)" -o $(VM_IN)/integration.test .
	cp -r integration/testdata $(VM_IN)/testdata
	cd integration && for d in testdata/*/; do \
		[ -f $$d/main.go ] || continue; \
		CGO_ENABLED=0 $(GO) build -trimpath -o $(VM_IN)/prebuilt/$$(basename $$d) ./$$d || exit 1; \
	done
	# Each variant as buildRuntime builds it: its init and relay
	# executables with the same extra tag, embedded through -overlay.
	cd integration && for t in $(VM_RUNTIME_VARIANTS); do \
		init=$(VM_IN)/prebuilt/vetto-runtime-init+$$t; relay=$(VM_IN)/prebuilt/vetto-runtime-relay+$$t; \
		for h in init relay; do \
			out=$(VM_IN)/prebuilt/vetto-runtime-$$h+$$t; \
			$(GO) build -tags "$$(echo $(INIT_TAGS) | tr ' ' ,),$$t" -trimpath -ldflags "-s -w -extldflags=-static" \
				-o $$out ../cmd/vetto-runtime-$$h || exit 1; \
			sha256sum $$out | cut -d' ' -f1 >$$out.sha256; \
		done; \
		printf '{"Replace":{"%s":"%s","%s":"%s","%s":"%s","%s":"%s"}}' \
			"$(CURDIR)/$(INIT_EXE)" "$$init" "$(CURDIR)/$(INIT_EXE).sha256" "$$init.sha256" \
			"$(CURDIR)/$(RELAY_EXE)" "$$relay" "$(CURDIR)/$(RELAY_EXE).sha256" "$$relay.sha256" >$$init.overlay.json; \
		$(GO) build -overlay $$init.overlay.json -tags "$$(echo $(TAGS) | tr ' ' ,),embedinit,$$t" -trimpath -ldflags -extldflags=-static \
			-o $(VM_IN)/prebuilt/vetto-runtime+$$t .. || exit 1; \
		rm $$init.sha256 $$relay.sha256 $$init.overlay.json; \
	done
	cp vm/guest/go $(VM_IN)/go
	@for f in $(VM_IN)/vetto-runtime $(VM_IN)/integration.test $(VM_IN)/prebuilt/*; do \
		if readelf -l $$f | grep -q 'program interpreter'; then echo "vm-build: $$f is not static"; exit 1; fi; \
	done

vm-images: vm-deps ## build (or find in the cache) every guest image of VM_GUESTS
	@for g in $(VM_GUESTS); do VM_CACHE="$(VM_CACHE)" vm/image.sh $$g >/dev/null || exit 1; done

vm-test: vm-deps vm-build ## integration tests in Debian 12 and 13 guests (qemu TCG; VM_TESTS/VM_SKIP=regex, VM_GUESTS="bookworm trixie"; root)
	@mkdir -p $(VM_OUT)
	@$(VM_ENV) vm/test.sh $(VM_GUESTS)

vm-shell: vm-deps vm-build ## boot GUEST=bookworm|trixie with its serial console here (no tests run; inputs in /mnt/vetto/in)
	@mkdir -p $(VM_OUT)
	@$(VM_ENV) vm/run.sh --shell $(GUEST)
