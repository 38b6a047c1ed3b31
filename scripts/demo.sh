#!/usr/bin/env bash
# make demo: run one sandboxed command in a throwaway busybox bundle and show
# what the sandbox looks like from inside. Needs root (real namespaces and
# cgroups). Everything it creates is removed on exit.
set -euo pipefail
bin=$(readlink -f "${1:-bin/vetto-runtime}")
[ "$(id -u)" = 0 ] || { echo "make demo needs root: it runs a real container" >&2; exit 1; }
busybox=$(command -v busybox) || { echo "busybox not found: run 'make deps'" >&2; exit 1; }

work=$(mktemp -d /tmp/vetto-demo.XXXXXX)
root="$work/state"
id="demo-$$"
cleanup() { "$bin" --root "$root" delete --force "$id" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

# A bundle: busybox as the root filesystem, the runtime's default config.
mkdir -p "$work/bundle/rootfs/bin"
cp "$busybox" "$work/bundle/rootfs/bin/busybox"
for applet in $("$busybox" --list); do
	[ "$applet" = busybox ] || ln -s busybox "$work/bundle/rootfs/bin/$applet"
done
"$bin" spec --bundle "$work/bundle"
script='
echo "hostname:          $(hostname)"
echo "whoami:            uid $(id -u), pid $$ (pid 1 = this shell)"
echo "processes visible: $(ps -o pid= | wc -l)  ($(ps -o comm= | tr "\n" " "))"
echo "network devices:   $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " ")"
if touch /written 2>/dev/null; then echo "root filesystem:   WRITABLE"; else echo "root filesystem:   read-only (touch / failed)"; fi
if [ -e /dev/sda ] || [ -e /dev/vda ]; then echo "host disks:        VISIBLE"; else echo "host disks:        not visible"; fi
echo "capabilities:      CapEff $(grep CapEff /proc/self/status | cut -f2)"
echo "no_new_privs:      $(grep NoNewPrivs /proc/self/status | cut -f2)"
exit 3'
jq --arg s "$script" '.hostname="vetto-demo" | .process.terminal=false | .process.args=["sh","-c",$s]' \
	"$work/bundle/config.json" > "$work/config.json" 2>/dev/null \
	|| { echo "jq not found: run 'make deps'" >&2; exit 1; }
mv "$work/config.json" "$work/bundle/config.json"

echo "== vetto-runtime $("$bin" --version | head -1 | awk '{print $3}'): running a command in a fresh container"
echo "   bundle: $work/bundle   state: $root"
echo
set +e
"$bin" --root "$root" run --bundle "$work/bundle" "$id"
status=$?
set -e
echo
echo "== the container exited with status $status (it ran 'exit 3'); run passed it through"
left=$(ls "$root" 2>/dev/null | wc -l)
echo "== containers left after run: $left"
