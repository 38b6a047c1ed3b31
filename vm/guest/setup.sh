#!/usr/bin/env bash
# vm/guest/setup.sh ROOT SUITE — mmdebstrap's customize hook: turns the
# fresh tree at ROOT into a bootable test guest. Part of the image's cache
# key, as are the files it installs (vm/guest/files/).
set -euo pipefail

root="${1:?usage: setup.sh ROOT SUITE}"
suite="${2:?usage: setup.sh ROOT SUITE}"
files="$(cd "$(dirname "$0")" && pwd)/files"
ch() { chroot "$root" "$@"; }

echo "vetto-$suite" >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tvetto-%s\n' "$suite" >"$root/etc/hosts"
# The root filesystem is the whole virtio disk (no partition table).
echo 'LABEL=vetto-root / ext4 rw,errors=remount-ro 0 1' >"$root/etc/fstab"

# No passwords: the guest has no network, and make vm-shell logs in as
# root on the serial console without one.
ch passwd -d root >/dev/null
install -D -m 0644 "$files/autologin.conf" "$root/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf"

# The normal user of the rootless runs, with subordinate ids for
# newuidmap/newgidmap (useradd fills them in when the files exist).
touch "$root/etc/subuid" "$root/etc/subgid"
ch useradd --create-home --uid 1000 --shell /bin/bash tester

# The test tier's boot hook: mounts the host's share and, when the kernel
# command line says vetto.vm=test, runs the runner found there.
install -D -m 0755 "$files/vetto-vm-boot" "$root/usr/local/sbin/vetto-vm-boot"
install -D -m 0644 "$files/vetto-vm.service" "$root/etc/systemd/system/vetto-vm.service"
ch systemctl enable vetto-vm.service >/dev/null 2>&1
# Nothing to wait for: no network in the guest.
ch systemctl mask systemd-networkd-wait-online.service >/dev/null 2>&1 || true
# The journal stays in memory: the runner copies it to the host.
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' >"$root/etc/systemd/journald.conf.d/vetto-vm.conf"
# 9p for the share, loaded before the hook mounts it.
printf '9p\n9pnet_virtio\n' >"$root/etc/modules-load.d/vetto-vm.conf"
# Keep the image small: no apt lists or caches.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
