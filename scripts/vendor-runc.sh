#!/usr/bin/env bash
# Re-creates third_party/runc: the packages of runc's module that
# vetto-runtime imports, copied from the module cache at the version go.mod
# names, with third_party/runc-vetto.patch applied on top. go.mod replaces
# github.com/opencontainers/runc with that directory.
#
# Run it after changing the runc version (edit RUNC_VERSION below, then
# refresh the patch if it no longer applies). See third_party/runc/VETTO.md.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNC_VERSION=v1.5.3
TAGS="seccomp netgo osusergo urfave_cli_no_docs"
dest=third_party/runc
patch=third_party/runc-vetto.patch

# Fetch the pristine module (the replace directive hides it from go list).
src=$(GOFLAGS=-mod=mod go mod download -json "github.com/opencontainers/runc@$RUNC_VERSION" | jq -r .Dir)
[[ -d $src ]] || { echo "vendor-runc: module source not found" >&2; exit 1; }

# --diff: write the patch from the files as they are in $dest against the
# pristine module, after changing them by hand.
if [[ ${1:-} == --diff ]]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$dest" && find . -type f -name '*.go' | sed 's|^\./||') | while read -r f; do
		cmp -s "$src/$f" "$dest/$f" && continue
		mkdir -p "$tmp/a/$(dirname "$f")" "$tmp/b/$(dirname "$f")"
		cp "$src/$f" "$tmp/a/$f"
		cp "$dest/$f" "$tmp/b/$f"
	done
	(cd "$tmp" && git diff --no-index --no-prefix a b >patch || true)
	cp "$tmp/patch" "$patch"
	echo "vendor-runc: wrote $patch ($(grep -c '^diff --git' "$patch") files)"
	exit 0
fi

# The packages to copy: every runc package the build imports, on Linux,
# with their tests.
pkgs=$(go list -tags "$TAGS" -deps . ./... | grep '^github.com/opencontainers/runc/' | sort -u)

rm -rf "$dest"
mkdir -p "$dest"
for p in $pkgs; do
	rel=${p#github.com/opencontainers/runc/}
	mkdir -p "$dest/$rel"
	for f in "$src/$rel"/*; do
		# Upstream's tests come too: make libcontainer-test runs them
		# against the patched tree.
		[[ -f $f ]] || continue
		cp "$f" "$dest/$rel/"
	done
done
cp "$src/go.mod" "$src/LICENSE" "$src/NOTICE" "$src/VERSION" "$dest/"
chmod -R u+w "$dest"
git apply --directory="$dest" "$patch"
echo "vendor-runc: $dest = runc $RUNC_VERSION ($(wc -w <<<"$pkgs") packages) + $(basename "$patch")"
