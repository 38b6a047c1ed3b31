#!/usr/bin/env bash
# The fine profile behind docs/performance.md's analysis: where the wall time
# of one `vetto-runtime run` of /bin/true goes, function by function. Entry
# uprobes on vetto's own and libcontainer's functions, plus the kernel's exec,
# exit and fsync tracepoints, recorded with perf; each segment between two
# consecutive markers is the median over RUNS runs, with the state root on a
# tmpfs (fsync free, so the rest shows) and on the disk (runs alternate), and
# the fsync calls made in it.
#
#   scripts/bench-timeline.sh [path/to/vetto-runtime] [RUNS]   (defaults: bin/vetto-runtime, 15)
#
# The probes are on a private copy of the binary, so nobody else's runs of
# it are touched; probes, mounts, containers and files are removed on exit.
# A function that no longer exists under its name is left out, with a note.
# Needs root, perf, jq, busybox-static and Go (for `go tool nm`).
set -euo pipefail
export LC_ALL=C
export PATH="$PATH:/usr/local/go/bin"
repo=$(cd "$(dirname "$0")/.." && pwd -P)
bin=$(readlink -f "${1:-$repo/bin/vetto-runtime}")
runs=${2:-15}
die() { echo "bench-timeline: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root: it runs real containers and sets uprobes"
for tool in perf jq busybox go readelf awk; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
[ -x "$bin" ] || die "$bin: not an executable (make build)"
tracefs=/sys/kernel/tracing
[ -w "$tracefs/uprobe_events" ] || tracefs=/sys/kernel/debug/tracing
mounted_tracefs=
if [ ! -w "$tracefs/uprobe_events" ]; then
	# A fresh host (no systemd to mount it) has tracefs unmounted: mount
	# it for this run, and unmount it on exit.
	tracefs=/sys/kernel/tracing
	mount -t tracefs nodev "$tracefs" 2>/dev/null && mounted_tracefs=1
fi
[ -w "$tracefs/uprobe_events" ] || die "no writable uprobe_events under /sys/kernel/tracing or /sys/kernel/debug/tracing (mount -t tracefs nodev /sys/kernel/tracing)"

work=$(mktemp -d "${TMPDIR:-/tmp}/vetto-timeline.XXXXXX")
group="vbtl$$"
probes=()
cleanup() {
	local rc=$? p d
	set +e
	trap - EXIT INT TERM
	for d in "$work"/root-*/*/; do
		[ -d "$d" ] && "$work/bin/vetto" --root "$(dirname "$d")" delete --force "$(basename "$d")" >/dev/null 2>&1
	done
	for p in "${probes[@]}"; do echo "-:$group/$p" >>"$tracefs/uprobe_events"; done
	mountpoint -q "$work/root-tmpfs" && umount "$work/root-tmpfs"
	rm -rf "$work"
	[ -n "$mounted_tracefs" ] && umount "$tracefs"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# In a directory of its own: libcontainer seals the binary for the init
# with an overlayfs whose lowerdir is the binary's directory, which fails
# ("overlapping lowerdir path") when the state root lies under it, and
# then copies all 20 MB into a memfd on every create instead.
mkdir "$work/bin"
cp "$bin" "$work/bin/vetto"
go tool nm "$work/bin/vetto" >"$work/nm.txt" 2>/dev/null || die "go tool nm $bin failed"
# File offset of a text address: the executable LOAD segment maps file
# offset o at address v.
read -r seg_off seg_vaddr < <(readelf -lW "$work/bin/vetto" | awk '$1 == "LOAD" && $0 ~ / R E / {print $2, $3; exit}')
[ -n "$seg_off" ] || die "no executable LOAD segment in $bin"

# The markers, in the order a run passes them: uprobe:<symbol> on the runtime
# process, or one of the kernel events.
V=github.com/vetto-dev/vetto-runtime
L=github.com/opencontainers/runc/libcontainer
markers=(
	"exec:the runtime starts"
	"uprobe:main.main"
	"uprobe:$V/runtime.(*Runtime).create"
	"uprobe:$V/runtime.(*Runtime).plan"
	"uprobe:$V/runtime.Store.createDirLocked"
	"uprobe:$V/linux.(*Backend).Create"
	"uprobe:$V/linux.caughtSignals"
	"uprobe:$L.(*Container).Start"
	"initexec:libcontainer execs its init"
	"uprobe:$V/runtime.(*Runtime).verifyPreLaunchLocked"
	"uprobe:$V/runtime.(*Runtime).startLocked"
	"uprobe:$L.(*Container).Exec"
	"userexec:/bin/true execs"
	"uprobe:$V/runtime.(*Runtime).verifyPostLaunchLocked"
	"uprobe:$V/runtime.(*Runtime).lazyMonitor"
	"uprobe:$V/runtime.(*Runtime).deleteLockedWith"
	"uprobe:$V/linux.(*container).Teardown"
	"uprobe:$L.(*Container).Destroy"
	"uprobe:$V/runtime.(*Runtime).recordReceiptLaterLocked"
	"uprobe:$V/runtime.Store.removeLocked"
	"uprobe:$V/linux.(*foreground).Close"
	"exit:the runtime exits"
)
# kinds[k] and names[k] of the markers kept; uprobe k is event m<k>.
kinds=() names=() skipped=()
for m in "${markers[@]}"; do
	kind=${m%%:*} what=${m#*:}
	if [ "$kind" = uprobe ]; then
		addr=$(awk -v s="$what" '$3 == s && ($2 == "T" || $2 == "t") {print $1; exit}' "$work/nm.txt")
		if [ -z "$addr" ]; then
			skipped+=("$what")
			continue
		fi
		ev=$(printf 'm%02d' "${#kinds[@]}")
		echo "p:$group/$ev $work/bin/vetto:$(printf '0x%x' $(( 0x$addr - seg_vaddr + seg_off )))" >>"$tracefs/uprobe_events" ||
			die "could not set a uprobe on $what"
		probes+=("$ev")
		what=${what#"$V"/}
		what=${what/#github.com\/opencontainers\/runc\/}
	fi
	kinds+=("$kind")
	names+=("$what")
done

# A busybox rootfs and runc's default spec running /bin/true, as bench.sh.
bundle=$work/bundle
mkdir -p "$bundle/rootfs"/{bin,proc,sys,dev,tmp,etc}
cp "$(command -v busybox)" "$bundle/rootfs/bin/busybox"
ln -s busybox "$bundle/rootfs/bin/true"
"$work/bin/vetto" spec --bundle "$bundle" >/dev/null
jq '.process.args = ["/bin/true"] | .process.terminal = false' "$bundle/config.json" >"$work/c.json"
mv "$work/c.json" "$bundle/config.json"
mkdir -p "$work/root-tmpfs" "$work/root-disk"
mount -t tmpfs -o size=32m,mode=0700 "$group" "$work/root-tmpfs"

# times FILE: one line per run with each marker's time (ms from the start)
# or "-", then the fsync calls between consecutive markers.
times() {
	perf script -i "$1" -F comm,pid,tid,time,event,trace 2>/dev/null | awk -v spec="${kinds[*]}" '
	BEGIN { n = split(spec, kind, " ") }
	{ split($2, id, "/"); pid = id[1]; t = $3; sub(/:$/, "", t); ev = $4; sub(/:$/, "", ev) }
	!t0 && ev ~ /sched_process_exec/ { t0 = t; main = pid; at[1] = t; next }
	ev ~ /sched_process_exec/ && /filename=\/proc\/self\/fd\// { for (i = 1; i <= n; i++) if (kind[i] == "initexec" && !(i in at)) at[i] = t; next }
	ev ~ /sched_process_exec/ && /filename=\/bin\/true / { for (i = 1; i <= n; i++) if (kind[i] == "userexec" && !(i in at)) at[i] = t; next }
	ev ~ /sched_process_exit/ && $1 == "true" { for (i = 1; i <= n; i++) if (kind[i] == "userexit" && !(i in at)) at[i] = t; next }
	ev ~ /sched_process_exit/ && pid == main { last = t; next }
	ev ~ /sys_enter_fsync/ { nf++; fs[nf] = t; next }
	ev ~ /:m[0-9][0-9]$/ && pid == main { i = substr(ev, length(ev) - 1) + 1; if (!(i in at)) at[i] = t }
	END {
		for (i = 1; i <= n; i++) if (kind[i] == "exit") at[i] = last
		for (i = 1; i <= n; i++) printf "%s ", (i in at) ? sprintf("%.3f", (at[i] - t0) * 1000) : "-"
		for (i = 1; i < n; i++) {
			c = 0
			if ((i in at) && ((i+1) in at)) for (k = 1; k <= nf; k++) if (fs[k] >= at[i] && fs[k] < at[i+1]) c++
			printf "%d ", c
		}
		printf "\n"
	}'
}
: >"$work/times-tmpfs.txt"
: >"$work/times-disk.txt"
for i in $(seq 1 "$runs"); do
	for where in tmpfs disk; do
		perf record -q -e "$group:*" -e sched:sched_process_exec -e sched:sched_process_exit -e syscalls:sys_enter_fsync \
			-o "$work/perf.data" -- "$work/bin/vetto" --root "$work/root-$where" run --bundle "$bundle" "tl-$i" \
			</dev/null >/dev/null 2>"$work/perf.log" || { cat "$work/perf.log" >&2; die "run $i ($where) failed"; }
		times "$work/perf.data" >>"$work/times-$where.txt"
	done
done

# The table: segment i runs from marker i to i+1; the median of its
# duration over the runs that saw both, and the median fsync calls in it.
n=${#kinds[@]}
median() { sort -n | awk '{v[NR] = $1} END {if (!NR) {print "–"; exit} m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; print m}'; }
seg() { # file i -> median ms of segment i
	awk -v i="$2" '$i != "-" && $(i+1) != "-" {print $(i+1) - $i}' "$1" | median | awk '{if ($1 == "–") print "–"; else printf "%.2f\n", $1}'
}
calls() { # file i -> median fsync calls in segment i
	awk -v i="$2" -v n="$n" '$i != "-" && $(i+1) != "-" {print $(n + i)}' "$1" | median
}
printf '| from → to | tmpfs root, ms | disk root, ms | fsync calls (disk) |\n|---|---:|---:|---:|\n'
for i in $(seq 1 $((n - 1))); do
	printf '| %s → %s | %s | %s | %s |\n' "${names[$((i-1))]}" "${names[$i]}" \
		"$(seg "$work/times-tmpfs.txt" "$i")" "$(seg "$work/times-disk.txt" "$i")" "$(calls "$work/times-disk.txt" "$i")"
done
tot() { awk -v n="$n" '$1 != "-" && $n != "-" {print $n - $1}' "$1" | sort -n | awk '{v[NR] = $1} END {printf "%.1f", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
printf '| **total** | **%s** | **%s** | |\n' "$(tot "$work/times-tmpfs.txt")" "$(tot "$work/times-disk.txt")"
printf '\n%s runs each; medians. %s\n' "$runs" "${skipped[*]:+Not found (renamed?), left out: ${skipped[*]}.}"
