#!/usr/bin/env bash
# vm/image.sh SUITE — make sure a guest image of Debian SUITE is in the
# cache, and print its directory (vmlinuz, initrd.img, rootfs.img, facts).
#
# The image is cached by content: the key hashes the suite, the package list
# (vm/guest/packages), the guest setup (vm/guest/setup.sh and the files it
# installs) and this script. Another key is a miss and builds a new image;
# older images of the same suite are removed after it succeeds.
#
# Everything comes from the Debian mirror apt is already configured with
# (apt-get indextargets), or from VM_MIRROR if set. mmdebstrap builds the
# root filesystem (--variant=minbase, an explicit --include list) with the
# suite's own kernel in it; the kernel and initrd are read out of /boot
# and the tree becomes an ext4 image with mkfs.ext4 -d (no loop mount).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
suite="${1:?usage: vm/image.sh SUITE}"
cache="${VM_CACHE:?VM_CACHE is not set (vm/vm.mk sets it)}"
size="${VM_IMAGE_SIZE:-4G}"

log() { printf 'vm image %s: %s\n' "$suite" "$*" >&2; }
die() { log "$*"; exit 1; }

# The main archive apt uses for this host (not -security, not -updates, not
# a third-party repository): its URI serves every Debian suite.
mirror() {
	if [ -n "${VM_MIRROR:-}" ]; then
		echo "$VM_MIRROR"
		return
	fi
	apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(COMPONENT) $(ORIGIN) $(LABEL) $(TARGET_OF)' |
		awk '$2 !~ /-/ && $3 == "main" && $4 == "Debian" && $5 == "Debian" && $6 == "deb" { print $1; exit }'
}

key="$( {
	echo "suite=$suite size=$size"
	cat "$here/image.sh" "$here/guest/packages" "$here/guest/setup.sh" "$here"/guest/files/*
} | sha256sum | cut -c1-16)"
dir="$cache/$suite-$key"
if [ -s "$dir/rootfs.img" ] && [ -s "$dir/vmlinuz" ] && [ -s "$dir/initrd.img" ]; then
	log "cached ($dir)"
	echo "$dir"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "building an image needs root (mmdebstrap, chroot); run as root once to fill $cache"
uri="$(mirror)"
[ -n "$uri" ] || die "no Debian main archive in apt's sources; set VM_MIRROR"
mkdir -p "$cache"
work="$(mktemp -d "$cache/.build-$suite-XXXXXX")"
trap 'rm -rf "$work"' EXIT

include="$(grep -v '^\s*#' "$here/guest/packages" | xargs | tr ' ' ',')"
log "building from the configured mirror (cache miss: $key)"
start=$(date +%s)
# --skip=check/empty: the tree is a fresh directory of ours.
# The customize hook runs setup.sh against the tree; it chroots itself.
mmdebstrap --variant=minbase --include="$include" \
	--customize-hook="\"$here/guest/setup.sh\" \"\$1\" \"$suite\"" \
	--quiet "$suite" "$work/root" "deb $uri $suite main" >"$work/mmdebstrap.log" 2>&1 ||
	{ tail -n 30 "$work/mmdebstrap.log" >&2; die "mmdebstrap failed (log above)"; }

vmlinuz="$(ls "$work"/root/boot/vmlinuz-* 2>/dev/null | sort -V | tail -n 1)"
initrd="$(ls "$work"/root/boot/initrd.img-* 2>/dev/null | sort -V | tail -n 1)"
[ -n "$vmlinuz" ] && [ -n "$initrd" ] || die "no kernel or initrd in the root filesystem's /boot"
cp "$vmlinuz" "$work/vmlinuz"
cp "$initrd" "$work/initrd.img"
chroot "$work/root" dpkg-query -W -f '${Package} ${Version}\n' >"$work/packages.txt"
{
	echo "suite=$suite"
	echo "key=$key"
	echo "kernel=$(basename "$vmlinuz" | sed 's/^vmlinuz-//')"
	echo "systemd=$(awk '$1 == "systemd" { print $2 }' "$work/packages.txt")"
	echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$work/facts"
mkfs.ext4 -q -F -L vetto-root -d "$work/root" "$work/rootfs.img" "$size" >"$work/mkfs.log" 2>&1 ||
	{ cat "$work/mkfs.log" >&2; die "mkfs.ext4 -d failed"; }
rm -rf "$work/root"

for old in "$cache/$suite"-*; do
	[ "$old" = "$dir" ] || rm -rf "$old"
done
mv "$work" "$dir"
trap - EXIT
log "built in $(($(date +%s) - start)) s: $(sed -n 's/^kernel=//p' "$dir/facts"), systemd $(sed -n 's/^systemd=//p' "$dir/facts")"
echo "$dir"
