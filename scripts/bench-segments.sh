#!/usr/bin/env bash
# Where the wall time of one `run` of /bin/true goes, runtime by runtime,
# from the kernel's own events only: the runtime's exec, the exec of its
# container init, the exec of /bin/true, its exit, and the runtime's last
# thread's exit (perf, sched tracepoints; no probe in any binary, so no
# runtime pays for being watched). The runtimes take turns run by run, so
# a drift of this host's load falls on all of them alike; each segment is
# the median over RUNS runs. Compare segments, not totals across days.
#
#   scripts/bench-segments.sh [RUNS] RUNTIME...   (RUNS defaults to 30)
#
# Each RUNTIME is a path to a runc-compatible binary (vetto-runtime, runc,
# crun). A runtime that execs no init of its own (crun) has no "init"
# column. Each gets its own --root on the disk, under a temporary
# directory removed on exit with every container, as bench.sh does.
# Needs root, perf and busybox-static.
set -euo pipefail
export LC_ALL=C
die() { echo "bench-segments: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root: it runs real containers"
runs=30
if [[ ${1:-} =~ ^[0-9]+$ ]]; then runs=$1; shift; fi
[ $# -ge 1 ] || die "usage: $0 [RUNS] RUNTIME..."
for tool in perf busybox jq; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
bins=()
for b in "$@"; do
	p=$(command -v "$b" 2>/dev/null || true)
	[ -n "$p" ] && [ -x "$p" ] || die "$b: not an executable"
	bins+=("$(readlink -f "$p")")
done

work=$(mktemp -d "${TMPDIR:-/tmp}/vetto-segments.XXXXXX")
cleanup() {
	local rc=$? k d
	set +e
	trap - EXIT INT TERM
	for k in "${!bins[@]}"; do
		for d in "$work/root-$k"/*/; do
			[ -d "$d" ] && "${bins[$k]}" --root "$work/root-$k" delete --force "$(basename "$d")" >/dev/null 2>&1
		done
	done
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A busybox rootfs and a runc-style default spec running /bin/true, as
# bench.sh and bench-timeline.sh make it.
bundle=$work/bundle
mkdir -p "$bundle/rootfs"/{bin,proc,sys,dev,tmp,etc}
cp "$(command -v busybox)" "$bundle/rootfs/bin/busybox"
ln -s busybox "$bundle/rootfs/bin/true"
(cd "$bundle" && "${bins[0]}" spec >/dev/null) || die "${bins[0]} spec failed"
jq '.process.args = ["/bin/true"] | .process.terminal = false' "$bundle/config.json" >"$work/c.json"
mv "$work/c.json" "$bundle/config.json"

# One line per run: ms from the runtime's exec to the init's exec, from
# there (or from the runtime's exec, with no init) to /bin/true's exec,
# to its exit, to the runtime's last exit; "-" where an event is missing.
segments() {
	perf script -i "$1" -F comm,pid,tid,time,event,trace 2>/dev/null | awk '
	{ split($2, id, "/"); pid = id[1]; t = $3; sub(/:$/, "", t); ev = $4 }
	!t0 && ev ~ /sched_process_exec/ { t0 = t; main = pid; next }
	ev ~ /sched_process_exec/ && /filename=\/proc\/self\/(fd\/[0-9]+|exe) / && !ti { ti = t; next }
	ev ~ /sched_process_exec/ && /filename=\/bin\/true / { te = t; next }
	ev ~ /sched_process_exit/ && $1 == "true" && !tx { tx = t; next }
	ev ~ /sched_process_exit/ && pid == main { last = t }
	END {
		if (!te || !tx || !last) { print "- - - - -"; exit }
		from = ti ? ti : t0
		printf "%s %.3f %.3f %.3f %.3f\n", ti ? sprintf("%.3f", (ti - t0) * 1000) : "-",
			(te - from) * 1000, (tx - te) * 1000, (last - tx) * 1000, (last - t0) * 1000
	}'
}
for k in "${!bins[@]}"; do
	mkdir -p "$work/root-$k"
	: >"$work/seg-$k.txt"
done
for i in $(seq 1 "$runs"); do
	for k in "${!bins[@]}"; do
		perf record -q -e sched:sched_process_exec -e sched:sched_process_exit -o "$work/perf.data" -- \
			"${bins[$k]}" --root "$work/root-$k" run --bundle "$bundle" "seg-$i" </dev/null >/dev/null 2>"$work/err" ||
			{ cat "$work/err" >&2; die "${bins[$k]} run $i failed"; }
		segments "$work/perf.data" >>"$work/seg-$k.txt"
	done
done

median() { awk -v c="$1" '$c != "-" {print $c}' "$2" | sort -n | awk '{v[NR] = $1} END {if (!NR) {print "–"; exit} printf "%.2f\n", (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
printf '| runtime | start → init exec | init exec → /bin/true exec | /bin/true runs | its exit → runtime exits | total |\n'
printf '|---|---:|---:|---:|---:|---:|\n'
for k in "${!bins[@]}"; do
	# head exits after one line, and a runtime still writing its next gets
	# SIGPIPE: under pipefail that would end the script with no message.
	name=$("${bins[$k]}" --version 2>/dev/null | head -1 || true)
	printf '| %s |' "${name:-${bins[$k]}}"
	for c in 1 2 3 4 5; do printf ' %s |' "$(median "$c" "$work/seg-$k.txt")"; done
	printf '\n'
done
printf '\n%d runs of each, in turn; medians in ms. No init exec: the second column is from the runtime'"'"'s start.\n' "$runs"
