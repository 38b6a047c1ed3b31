#!/usr/bin/env bash
# make bench (issue 8): what a container lifecycle costs with vetto-runtime,
# side by side with the kernel floor, crun, Debian's runc and runc 1.5.3 (the
# libcontainer vetto builds on), all on one bundle; then 32 parallel
# lifecycles per runtime with failures and leaks, peak RSS, the cost of
# exec, Go's benchmarks of the hot pure parts, a profile of where
# vetto's time goes, the egress relay (scripts/bench-relay.sh) and rootless
# next to rootful (scripts/bench-rootless.sh). Writes
# docs/performance.md (the "Analysis" section between its markers is kept
# from the previous file: it is written by hand).
#
#   scripts/bench.sh [path/to/vetto-runtime]   (default: make build, bin/vetto-runtime)
#
# Knobs: BENCH_RUNS (40, split over BENCH_PASSES (4)) BENCH_WARMUP (3, per
# pass) BENCH_PARALLEL (32) BENCH_ROUNDS (3) BENCH_PROFILE_RUNS (15)
# BENCH_PAIRS (100, per paired comparison)
# BENCH_MONITOR_SECONDS (60) BENCH_OUT (docs/performance.md).
#
# Needs root: it runs real containers. Every container, cgroup, mount and
# temporary file it makes is removed on exit, pass or fail. A runtime that
# is missing fails the run; only runc 1.5.3 may be "not built", when `go
# install` fails, and the table then says why.
# shellcheck disable=SC2016 # single-quoted ` and $ are Markdown or sh -c text
set -euo pipefail
export LC_ALL=C
export PATH="$PATH:/usr/local/go/bin"
repo=$(cd "$(dirname "$0")/.." && pwd -P)
runs=${BENCH_RUNS:-40}
warmup=${BENCH_WARMUP:-3}
passes=${BENCH_PASSES:-4}
parallel=${BENCH_PARALLEL:-32}
rounds=${BENCH_ROUNDS:-5}
profile_runs=${BENCH_PROFILE_RUNS:-15}
pairs=${BENCH_PAIRS:-100}
out=${BENCH_OUT:-$repo/docs/performance.md}
runc15_version=v1.5.3

die() { echo "bench: $*" >&2; exit 1; }
say() { echo "== $*" >&2; }

[ "$(id -u)" = 0 ] || die "needs root: it runs real containers"

# --- tools ------------------------------------------------------------------

# GNU time reports the peak RSS; perf gives the profile. They are installed
# here if missing (not in the Makefile's DEB_PKGS yet).
missing=()
[ -x /usr/bin/time ] || missing+=(time)
command -v perf >/dev/null || missing+=(linux-perf)
if [ ${#missing[@]} -gt 0 ]; then
	say "installing: ${missing[*]}"
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
		die "could not install: ${missing[*]}"
	fi
fi
for tool in hyperfine runc crun unshare busybox jq go awk perf file mountpoint findmnt; do
	command -v "$tool" >/dev/null || die "$tool not found: run 'make deps' (and see the list above)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time not found: apt-get install time"
if [[ $(file -L "$(command -v busybox)") == *"dynamically linked"* ]]; then
	die "busybox is dynamically linked: install busybox-static"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/vetto-bench.XXXXXX")
tag="vbench$$"        # every container id this run makes is "$tag-…"
bg_pids=()            # background processes to reap on exit
declare -A root_of    # runtime -> its --root

cleanup() {
	local rc=$? rt id pid d
	set +e
	trap - EXIT INT TERM
	for pid in "${bg_pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	for rt in "${!root_of[@]}"; do
		[ -d "${root_of[$rt]}" ] || continue
		for d in "${root_of[$rt]}"/*/; do
			[ -d "$d" ] || continue
			id=$(basename "$d")
			rt_run "$rt" delete --force "$id" >/dev/null 2>&1
		done
	done
	# Cgroups a runtime failed to remove, deepest first (empty ones only),
	# and those of a hooks benchmark killed before its cleanup ran
	# (vetto-bench-<pid of a test binary that is gone>).
	find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -type d -name "$tag-*" 2>/dev/null |
		sort -r | while read -r d; do rmdir "$d" 2>/dev/null || echo "bench: could not remove cgroup $d" >&2; done
	find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -type d -name 'vetto-bench-[0-9]*' 2>/dev/null |
		while read -r d; do [ -d "/proc/${d##*-}" ] || rmdir "$d" 2>/dev/null; done
	grep -F " $work" /proc/self/mountinfo | awk '{print $5}' | sort -r |
		while read -r d; do umount -l "$d" 2>/dev/null; done
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- what runs ---------------------------------------------------------------

# On a hybrid cgroup host (v1 controllers plus a v2 hierarchy at
# /sys/fs/cgroup/unified) crun 1.8.1 refuses to run while a controller
# (hugetlb here) sits in the v2 hierarchy. It runs in a private mount
# namespace without that mount; the wrapper's own cost is measured too.
hybrid=0
if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then hybrid=1; fi
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cgroup_mode="v2 (unified)"
elif [ "$hybrid" = 1 ]; then
	cgroup_mode="hybrid (v1 controllers, v2 at /sys/fs/cgroup/unified with: $(tr '\n' ' ' </sys/fs/cgroup/unified/cgroup.controllers | sed 's/ *$//'))"
else
	cgroup_mode="v1"
fi
crun_wrap_script='umount /sys/fs/cgroup/unified && exec "$0" "$@"'

if [ $# -ge 1 ]; then
	vetto=$(readlink -f "$1")
else
	say "make build"
	make -s -C "$repo" build >&2
	vetto=$repo/bin/vetto-runtime
fi
[ -x "$vetto" ] || die "$vetto: not an executable (make build)"

say "go install -tags seccomp github.com/opencontainers/runc@$runc15_version"
runc15_dir=$repo/bin/bench     # build output, like bin/vetto-runtime (make clean)
runc15=$runc15_dir/runc-$runc15_version
runc15_note=""
if [ ! -x "$runc15" ] || [[ $("$runc15" --version 2>/dev/null) != "runc version ${runc15_version#v}"$'\n'* ]]; then
	mkdir -p "$runc15_dir" "$work/gobin"
	if (cd "$work" && CGO_ENABLED=1 GOBIN="$work/gobin" go install -tags seccomp \
		"github.com/opencontainers/runc@$runc15_version") >"$work/runc15-build.log" 2>&1; then
		mv "$work/gobin/runc" "$runc15"
	else
		runc15_note="not built: go install failed: $(tail -n 3 "$work/runc15-build.log" | tr '\n' ' ')"
		echo "bench: runc $runc15_version $runc15_note" >&2
		runc15=""
	fi
fi

runtimes=(crun runc)
[ -n "$runc15" ] && runtimes+=(runc15)
runtimes+=(vetto)
for rt in "${runtimes[@]}"; do
	root_of[$rt]=$work/root-$rt
	mkdir -p "${root_of[$rt]}"
done
# One more vetto row with its state root on tmpfs, where fsync is free (as
# /run is on most hosts; not on this one's, see the machine table).
tmpfs_dir=$work/tmpfs
mkdir -p "$tmpfs_dir"
mount -t tmpfs -o size=64m,mode=0700 "vetto-bench-$tag" "$tmpfs_dir"
root_of[vettotmpfs]=$tmpfs_dir/root-vetto
# And one with post-launch verification off (--no-verify): the same binary,
# its own root on the disk. Verification on minus this row is what
# verification costs a `run`.
root_of[vettonv]=$work/root-vetto-noverify
mkdir -p "${root_of[vettonv]}"

# prefix RT sets argv_prefix to the command line that runs runtime RT with
# its own --root; rt_run RT ARGS… runs it.
prefix() {
	case $1 in
	crun)
		argv_prefix=()
		[ "$hybrid" = 1 ] && argv_prefix=(unshare -m sh -c "$crun_wrap_script")
		argv_prefix+=("$(command -v crun)" --root "${root_of[crun]}") ;;
	runc) argv_prefix=("$(command -v runc)" --root "${root_of[runc]}") ;;
	runc15) argv_prefix=("$runc15" --root "${root_of[runc15]}") ;;
	vetto) argv_prefix=("$vetto" --root "${root_of[vetto]}") ;;
	vettotmpfs) argv_prefix=("$vetto" --root "${root_of[vettotmpfs]}") ;;
	vettonv) argv_prefix=("$vetto" --root "${root_of[vettonv]}") ;;
	*) die "unknown runtime $1" ;;
	esac
}
rt_run() {
	local rt=$1
	shift
	prefix "$rt"
	"${argv_prefix[@]}" "$@"
}
# quoted ARGS…: one shell-quoted command line, for hyperfine; cmdline RT
# ARGS… is rt_run's as one.
quoted() {
	local line
	line=$(printf '%q ' "$@")
	printf '%s' "${line% }"
}
cmdline() {
	local rt=$1
	shift
	prefix "$rt"
	quoted "${argv_prefix[@]}" "$@"
}

floor_argv=(unshare --fork --pid --mount --net --uts --ipc /bin/true)

declare -A label
label[floor]="kernel floor: unshare --fork --pid --mount --net --uts --ipc /bin/true"
label[crunwrap]="crun's wrapper alone: unshare -m sh -c 'umount …' /bin/true"
label[crun]="crun $(crun --version | awk '/^crun version/{print $3}')"
label[runc]="runc $(runc --version | awk '/^runc version/{print $3}') (Debian)"
[ -n "$runc15" ] && label[runc15]="runc $("$runc15" --version | awk '/^runc version/{print $3}') (go install)"
vetto_version=$("$vetto" --version | sed -n 1p)
label[vetto]="vetto-runtime ${vetto_version##* }"
label[vettotmpfs]="vetto-runtime ${vetto_version##* }, --root on tmpfs"
label[vettonv]="vetto-runtime ${vetto_version##* }, run --no-verify"

# --- the bundle --------------------------------------------------------------

say "bundle: busybox-static rootfs, runc's default spec, /bin/true"
bundle=$work/bundle
rootfs=$bundle/rootfs
mkdir -p "$rootfs"/{bin,proc,sys,dev,tmp,etc,mnt}
cp "$(command -v busybox)" "$rootfs/bin/busybox"
for applet in $("$rootfs/bin/busybox" --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
done
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$rootfs/etc/passwd"
"$vetto" spec --bundle "$bundle" >/dev/null
# runc's default spec, as `spec` writes it, except: /bin/true, no terminal,
# and ociVersion 1.0.2-dev, because crun 1.8.1 refuses 1.3.0 ("unknown
# version specified"); runc and vetto accept either.
jq '.ociVersion = "1.0.2-dev" | .process.args = ["/bin/true"] | .process.terminal = false' \
	"$bundle/config.json" >"$work/config.json"
mv "$work/config.json" "$bundle/config.json"
jq -e '[.linux.namespaces[].type] | index("network") != null' "$bundle/config.json" >/dev/null ||
	die "the default spec has no network namespace"
# A second bundle on the same rootfs whose process stays up: exec and RSS.
sleeper=$work/bundle-sleep
mkdir -p "$sleeper"
jq --arg root "$rootfs" '.root.path = $root | .process.args = ["/bin/sleep", "3600"]' \
	"$bundle/config.json" >"$sleeper/config.json"

# Every runtime must run the bundle once, visibly, before anything is timed.
for rt in "${runtimes[@]}"; do
	if ! rt_run "$rt" run --bundle "$bundle" "$tag-check-$rt" >"$work/check.out" 2>&1 </dev/null; then
		cat "$work/check.out" >&2
		die "${label[$rt]}: run failed on the bench bundle"
	fi
done
"${floor_argv[@]}" || die "the kernel floor command failed"

# --- leaks -------------------------------------------------------------------

# procs_of PATTERN [EXCEPT_PID]: processes, other than this script and its
# children, whose command line contains PATTERN or whose root directory is
# the bench rootfs, as "pid:command line:VmRSS". Reads /proc without forking,
# so the scan does not find itself.
procs_of() {
	local p=$1 except=${2:-} d pid st f args cmd rss line
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		case $pid in "$$" | "$BASHPID" | "$except") continue ;; esac
		read -r st 2>/dev/null <"$d/stat" || continue
		read -ra f <<<"${st##*) }"
		case ${f[1]} in "$$" | "$BASHPID") continue ;; esac
		mapfile -d '' -t args 2>/dev/null <"$d/cmdline" || continue
		cmd="${args[*]}"
		if [[ $cmd == *"$p"* ]] || [ "$d/root" -ef "$rootfs" ]; then
			rss='?'
			while read -r line; do
				[[ $line == VmRSS:* ]] && { read -ra f <<<"$line"; rss="${f[1]} KiB"; }
			done 2>/dev/null <"$d/status"
			echo "$pid:${cmd:0:60}:$rss"
		fi
	done
}

# leaks RT PREFIX: what is left of RT's containers whose id starts with
# PREFIX: state directories under RT's root, cgroups, processes, mounts.
leaks() {
	local rt=$1 p=$2 d
	for d in "${root_of[$rt]}"/"$p"*; do
		[ -e "$d" ] && echo "state:${d#"$work"/}"
	done
	find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -type d -name "$p*" -printf 'cgroup:%p\n' 2>/dev/null || true
	procs_of "$p" | sed 's/^/process:/'
	awk -v w="$work" -v t="$tmpfs_dir" 'index($5, w) == 1 && $5 != t {print "mount:" $5}' /proc/self/mountinfo
}

# --- Go benchmarks -----------------------------------------------------------

say "go test -run XXX -bench . -benchmem ./runtime ./hooks ./spec"
gobench_cmd="go test -run XXX -bench . -benchmem ./runtime ./hooks ./spec"
(cd "$repo" && TMPDIR=$work go test -run XXX -bench . -benchmem ./runtime ./hooks ./spec) >"$work/gobench.txt" 2>&1 ||
	{ cat "$work/gobench.txt" >&2; die "go benchmarks failed"; }
# The per-launch verification cost, from five samples of each half.
(cd "$repo" && TMPDIR=$work go test -run XXX -bench '^(BenchmarkPreLaunch|BenchmarkVerifyPreLaunchBookkeeping)$' \
	-count 5 ./runtime ./hooks) >"$work/verify.txt" 2>&1 ||
	{ cat "$work/verify.txt" >&2; die "verification benchmarks failed"; }
median() { # numbers on stdin, sorted -> their median
	awk '{v[NR] = $1} END {if (NR == 0) exit 1; print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}
median_ns() { # benchmark name -> median ns/op over its samples, in ms
	awk -v n="$1" '$1 ~ "^"n"-[0-9]+$" {print $3}' "$work/verify.txt" | sort -n | median |
		awk '{printf "%.3f", $1/1e6}'
}
verify_facts_ms=$(median_ns BenchmarkPreLaunch) || die "no BenchmarkPreLaunch result"
verify_books_ms=$(median_ns BenchmarkVerifyPreLaunchBookkeeping) || die "no BenchmarkVerifyPreLaunchBookkeeping result"
verify_ms=$(awk -v a="$verify_facts_ms" -v b="$verify_books_ms" 'BEGIN {printf "%.2f", a+b}')

# paired NAME LABEL_A CMD_A LABEL_B CMD_B times the two commands in pairs,
# $pairs of them after 5 untimed, in the order A B, B A, A B, … (so a
# drift within a pair falls on each side alike), and writes one line per
# pair to $work/paired-NAME.txt: wall ms of A, of B, CPU ms of A, of B
# (user + system of the reaped children: the runtime and all it waited
# for). hyperfine's passes run each command's runs back to back, and on a
# shared host whose speed drifts by more than the difference being
# measured (σ 6-9 ms for a 30-45 ms run here) the medians of two blocks
# can disagree with the pairs by several ms; a ratio taken pair by pair
# cannot be moved by a drift slower than one pair. The clock is bash's
# own ($EPOCHREALTIME, no fork), the CPU the shell's `times`.
paired() {
	local name=$1 la=$2 a=$3 lb=$4 b=$5 i side cmd t0 t1 c0 c1 first second
	local -A wall cpu
	printf '%s\t%s\n' "$la" "$lb" >"$work/paired-$name.label"
	: >"$work/paired-$name.txt"
	for i in $(seq -4 "$pairs"); do
		first=a second=b
		[ $((i % 2)) = 0 ] && first=b second=a
		for side in $first $second; do
			[ "$side" = a ] && cmd=$a || cmd=$b
			times >"$work/times"
			c0=$(child_cpu_ms "$work/times")
			t0=$EPOCHREALTIME
			eval "$cmd" || die "paired $name: failed: $cmd"
			t1=$EPOCHREALTIME
			times >"$work/times"
			c1=$(child_cpu_ms "$work/times")
			wall[$side]=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) * 1000}')
			cpu[$side]=$(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.3f", b - a}')
		done
		[ "$i" -ge 1 ] || continue
		printf '%s %s %s %s\n' "${wall[a]}" "${wall[b]}" "${cpu[a]}" "${cpu[b]}" >>"$work/paired-$name.txt"
	done
}
# child_cpu_ms FILE: the children's user + system ms from `times` output
# (its second line, "0m1.234s 0m0.567s").
child_cpu_ms() {
	awk 'NR == 2 {
		n = 0
		for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); n += p[1] * 60000 + p[2] * 1000 }
		printf "%.3f", n
	}' "$1"
}
# paired_stat NAME FIELD: over the pairs of NAME, the median of FIELD:
# a, b (wall ms), ratio (A/B wall), diff (A − B wall ms), cpuratio (A/B
# CPU, pairs where B's CPU read 0 skipped), cpudiff (A − B CPU ms).
paired_stat() {
	awk -v f="$2" '
		{ if (f == "a") v = $1; else if (f == "b") v = $2; else if (f == "ratio") v = $1 / $2
		  else if (f == "diff") v = $1 - $2; else if (f == "cpudiff") v = $3 - $4
		  else if (f == "cpuratio") { if ($4 <= 0) next; v = $3 / $4 }
		  x[n++] = v }
		END {
			if (n == 0) { print "nan"; exit }
			for (i = 1; i < n; i++) { v = x[i]; for (j = i - 1; j >= 0 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v }
			m = (n % 2) ? x[(n - 1) / 2] : (x[n / 2 - 1] + x[n / 2]) / 2
			printf "%.3f", m
		}' "$work/paired-$1.txt"
}

# --- the side-by-side lifecycle -----------------------------------------------

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
# The commands: name → prepare, command line.
declare -A hf_prep hf_cmd
names=(floor)
hf_prep[floor]=true
hf_cmd[floor]=$(quoted "${floor_argv[@]}")
if [ "$hybrid" = 1 ]; then
	names+=(crunwrap)
	hf_prep[crunwrap]=true
	hf_cmd[crunwrap]=$(quoted unshare -m sh -c "$crun_wrap_script" /bin/true)
fi
for rt in "${runtimes[@]}" vettotmpfs vettonv; do
	id="$tag-h-$rt"
	names+=("$rt")
	# run = create + start + wait + delete for every runtime. The same id
	# each time: run deletes it; prepare removes a leftover, should one be.
	noverify=()
	[ "$rt" = vettonv ] && noverify=(--no-verify --allow-degraded verify)
	hf_prep[$rt]="$(cmdline "$rt" delete --force "$id") >/dev/null 2>&1 || true"
	hf_cmd[$rt]="$(cmdline "$rt" run "${noverify[@]}" --bundle "$bundle" "$id") </dev/null >/dev/null 2>&1"
done
# hyperfine runs each command's runs back to back. This host is shared, and
# a load that drifts would favour whichever command ran in a quiet spell:
# so the runs are split into $passes passes, each with the commands in a
# rotated order, and the medians are over all passes' runs together.
per_pass=$(( (runs + passes - 1) / passes ))
for pass in $(seq 1 "$passes"); do
	hf=(hyperfine --style basic --time-unit millisecond --warmup "$warmup" --runs "$per_pass"
		--export-json "$work/lifecycle-$pass.json" --export-markdown "$work/lifecycle-$pass.md")
	r=$(( (pass - 1) % ${#names[@]} ))
	order=("${names[@]:r}" "${names[@]:0:r}")
	for n in "${order[@]}"; do
		hf+=(-n "${label[$n]}" --prepare "${hf_prep[$n]}" "${hf_cmd[$n]}")
	done
	say "hyperfine pass $pass/$passes: ${order[*]}"
	"${hf[@]}" >&2
	[ "$pass" = 1 ] && hf_first=("${hf[@]}")
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
# The same runs in pairs: vetto against runc 1.5.3, and against itself
# with --no-verify (what verification costs a run).
say "paired runs ($pairs pairs each): vetto and runc 1.5.3, verification on and off"
if [ -n "$runc15" ]; then
	paired run-runc15 "${label[vetto]}" "${hf_cmd[vetto]}" "${label[runc15]}" "${hf_cmd[runc15]}"
fi
paired run-noverify "${label[vetto]}" "${hf_cmd[vetto]}" "${label[vettonv]}" "${hf_cmd[vettonv]}"

# rotated NAME LABEL PREPARE COMMAND [LABEL PREPARE COMMAND …] runs the
# commands as the lifecycle run does: $passes passes of hyperfine, each
# with the commands in a rotated order, into $work/NAME-<pass>.json;
# median_of NAME LABEL is one command's median (ms) over all passes.
rotated() {
	local name=$1 pass r i n
	shift
	local -a items=("$@") hf
	n=$(( ${#items[@]} / 3 ))
	for pass in $(seq 1 "$passes"); do
		hf=(hyperfine --style basic --time-unit millisecond --warmup "$warmup" --runs "$per_pass"
			--export-json "$work/$name-$pass.json")
		r=$(( (pass - 1) % n ))
		for i in $(seq 0 $(( n - 1 ))); do
			local k=$(( (i + r) % n * 3 ))
			hf+=(-n "${items[k]}" --prepare "${items[k + 1]}" "${items[k + 2]}")
		done
		"${hf[@]}" >&2
	done
}
median_of() {
	jq -rs --arg c "$2" '
		[.[].results[] | select(.command == $c) | .times[]] | map(. * 1000) | sort as $t
		| ($t | length) as $k
		| if $k % 2 == 1 then $t[($k - 1) / 2] else ($t[$k / 2 - 1] + $t[$k / 2]) / 2 end' "$work/$1"-*.json
}

# Post-launch verification where its canary probe runs: `start` of a
# container whose process stays up (in a `run` of /bin/true the process is
# gone before a probe could join it), with verification on and off.
say "start of a long-running container, verification on and off"
items=()
for v in on off; do
	flag=()
	[ "$v" = off ] && flag=(--no-verify --allow-degraded verify)
	sid="$tag-sv-$v"
	items+=("start, verification $v"
		"$(cmdline vetto delete --force "$sid") >/dev/null 2>&1; $(cmdline vetto create "${flag[@]}" --bundle "$sleeper" "$sid") </dev/null >/dev/null 2>&1"
		"$(cmdline vetto start "$sid")")
done
rotated start-verify "${items[@]}"
for v in on off; do rt_run vetto delete --force "$tag-sv-$v" >/dev/null 2>&1 || true; done
start_on=$(median_of start-verify "start, verification on")
start_off=$(median_of start-verify "start, verification off")

# `create` of a policy bundle: the built-in default profile compiled for
# an empty project (`spec --profile default`), its process /bin/true. runc
# creates the same bundle (it ignores vetto's annotations: no Landlock, no
# verification), so the difference is what vetto adds to a create.
say "create of a policy bundle: vetto and runc"
project=$work/project
policy_bundle=$work/bundle-policy
mkdir -p "$project" "$policy_bundle"
# The sandbox runs as an unprivileged host uid, which must pass through
# the work directory (mktemp's 0700) to reach its project.
chmod 0711 "$work"
"$vetto" spec --profile default --project "$project" --bundle "$policy_bundle" -- /bin/true >/dev/null
create_rts=(runc)
[ -n "$runc15" ] && create_rts+=(runc15)
create_rts+=(vetto)
items=()
for rt in "${create_rts[@]}"; do
	cid="$tag-pc-$rt"
	items+=("create, ${label[$rt]}" "$(cmdline "$rt" delete --force "$cid") >/dev/null 2>&1 || true"
		"$(cmdline "$rt" create --bundle "$policy_bundle" "$cid") </dev/null >/dev/null 2>&1")
done
rotated policy-create "${items[@]}"
declare -A create_med
for rt in "${create_rts[@]}"; do
	rt_run "$rt" delete --force "$tag-pc-$rt" >/dev/null 2>&1 || true
	create_med[$rt]=$(median_of policy-create "create, ${label[$rt]}")
done

# Median, mean ± σ (sample), min and max of every command over all passes.
declare -A med mean sd lo hi nruns
for n in "${names[@]}"; do
	read -r med["$n"] mean["$n"] sd["$n"] lo["$n"] hi["$n"] nruns["$n"] < <(
		jq -rs --arg c "${label[$n]}" '
			[.[].results[] | select(.command == $c) | .times[]] | map(. * 1000) | sort as $t
			| ($t | length) as $k | ($t | add / $k) as $m
			| [ (if $k % 2 == 1 then $t[($k - 1) / 2] else ($t[$k / 2 - 1] + $t[$k / 2]) / 2 end),
			    $m, (if $k > 1 then (($t | map((. - $m) * (. - $m)) | add) / ($k - 1) | sqrt) else 0 end),
			    $t[0], $t[-1], $k ] | @tsv' "$work"/lifecycle-*.json)
	[ "${nruns[$n]:-0}" -ge "$runs" ] || die "hyperfine reported ${nruns[$n]:-no} runs of ${label[$n]}, want $runs"
done
ms() { awk -v v="$1" 'BEGIN {printf "%.1f", v}'; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k/1024}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f×", a/b; else printf "–"}'; }
crun_net=${med[crun]}
[ "$hybrid" = 1 ] && crun_net=$(awk -v a="${med[crun]}" -v b="${med[crunwrap]}" 'BEGIN {print a-b}')

# --- parallel lifecycles -------------------------------------------------------

# par RT ROUND: $parallel runs of RT at once; writes "wall_ms failures
# leaks" to $work/par.result (not printed: it must run in this shell, which
# reaps its background runs on exit).
par() {
	local rt=$1 round=$2 p="$tag-p$2-$1-" i pids=() t0 t1 fails=0 rc
	t0=$(date +%s%N)
	for i in $(seq 1 "$parallel"); do
		if [ "$rt" = floor ]; then
			"${floor_argv[@]}" >/dev/null 2>&1 </dev/null &
		else
			rt_run "$rt" run --bundle "$bundle" "$p$i" >"$work/par-$rt-$round-$i.log" 2>&1 </dev/null &
		fi
		pids+=($!)
		bg_pids+=($!)
	done
	for i in "${pids[@]}"; do
		rc=0
		wait "$i" || rc=$?
		[ "$rc" = 0 ] || fails=$((fails + 1))
	done
	t1=$(date +%s%N)
	local left=""
	[ "$rt" = floor ] || left=$(leaks "$rt" "$p")
	[ -z "$left" ] || printf '%s\n' "$left" >>"$work/leaks-$rt.txt"
	echo "$(( (t1 - t0) / 1000000 )) $fails $(printf '%s' "$left" | grep -c . || true)" >"$work/par.result"
}
say "$parallel parallel lifecycles, $rounds rounds each, the runtimes in turn"
declare -A par_wall par_all par_fail par_leak par_walls
par_rts=(floor "${runtimes[@]}" vettotmpfs)
# Round by round, every runtime in turn (not one runtime's rounds, then
# the next's): this host's load drifts over a minute, and a drift must
# fall on every runtime alike, not on whichever ran while it lasted.
for round in $(seq 1 "$rounds"); do
	for rt in "${par_rts[@]}"; do
		par "$rt" "$round"
		read -r w fr lr <"$work/par.result"
		par_walls[$rt]+="$w "
		par_fail[$rt]=$((${par_fail[$rt]:-0} + fr))
		par_leak[$rt]=$((${par_leak[$rt]:-0} + lr))
	done
	bg_pids=()
done
for rt in "${par_rts[@]}"; do
	par_all[$rt]=$(printf '%s\n' ${par_walls[$rt]} | sort -n | tr '\n' ' ' | sed 's/ $//')
	par_wall[$rt]=$(printf '%s\n' ${par_walls[$rt]} | sort -n | median)
	if [ "${par_leak[$rt]}" != 0 ]; then
		echo "bench: ${label[$rt]} left behind:" >&2
		cat "$work/leaks-$rt.txt" >&2
	fi
done
label_or_floor() { if [ "$1" = floor ]; then echo "kernel floor (unshare)"; else echo "${label[$1]}"; fi; }

# --- memory ------------------------------------------------------------------

say "peak RSS (/usr/bin/time -v), and what stays alive per container"
declare -A rss_peak rss_fg rss_fg_anon alive_detached
for rt in floor "${runtimes[@]}"; do
	peak=0
	for i in 1 2 3 4 5; do
		if [ "$rt" = floor ]; then
			/usr/bin/time -v -o "$work/time.txt" "${floor_argv[@]}" >/dev/null 2>&1
		else
			prefix "$rt"
			/usr/bin/time -v -o "$work/time.txt" "${argv_prefix[@]}" run --bundle "$bundle" "$tag-m-$rt" \
				</dev/null >/dev/null 2>&1 || die "${label[$rt]}: run under /usr/bin/time failed"
		fi
		kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
		[ "$kb" -gt "$peak" ] && peak=$kb
	done
	rss_peak[$rt]=$peak
done

# wait_running RT ID: until RT's state says running (10 s at most).
wait_running() {
	local i
	for i in $(seq 1 200); do
		if rt_run "$1" state "$2" 2>/dev/null | jq -e '.status == "running"' >/dev/null 2>&1; then return 0; fi
		sleep 0.05
	done
	return 1
}
for rt in "${runtimes[@]}"; do
	# Foreground run: the runtime process waits for the container; its
	# resident size while the container runs is what it costs per container.
	id="$tag-fg-$rt"
	prefix "$rt"
	"${argv_prefix[@]}" run --bundle "$sleeper" "$id" </dev/null >/dev/null 2>&1 &
	fg=$!
	bg_pids+=("$fg")
	wait_running "$rt" "$id" || die "${label[$rt]}: foreground container never ran"
	sleep 0.2
	# VmRSS counts the binary's pages, which every copy of the runtime
	# shares through the page cache; RssAnon is what this one adds.
	rss_fg[$rt]=$(awk '/^VmRSS/ {print $2}' "/proc/$fg/status")
	rss_fg_anon[$rt]=$(awk '/^RssAnon/ {print $2}' "/proc/$fg/status")
	rt_run "$rt" kill "$id" KILL >/dev/null 2>&1 || true
	wait "$fg" 2>/dev/null || true
	rt_run "$rt" delete --force "$id" >/dev/null 2>&1 || true
	# Detached (how containerd drives a runtime): create + start, then
	# look for anything of the runtime's besides the container's process.
	id="$tag-d-$rt"
	rt_run "$rt" create --bundle "$sleeper" "$id" </dev/null >/dev/null 2>&1 || die "${label[$rt]}: create failed"
	rt_run "$rt" start "$id" </dev/null >/dev/null 2>&1 || die "${label[$rt]}: start failed"
	init=$(rt_run "$rt" state "$id" | jq -r .pid)
	others=$(procs_of "$id" "$init" | tr '\n' ' ' | sed 's/ $//')
	alive_detached[$rt]=${others:-none}
	if [ "$rt" = vetto ]; then
		# vetto's one process per detached container is its monitor
		# (docs/verification.md): what it holds, and what it costs over
		# BENCH_MONITOR_SECONDS at the default interval.
		mon=$(jq -r '.monitor.pid // empty' "${root_of[vetto]}/$id/vetto.json")
		if [ -n "$mon" ]; then
			monitor_anon=$(awk '/^RssAnon/ {print $2}' "/proc/$mon/status")
			monitor_rss=$(awk '/^VmRSS/ {print $2}' "/proc/$mon/status")
			read -ra f <<<"$(sed 's/.*) //' "/proc/$mon/stat")"
			t0=$(( f[11] + f[12] ))
			sleep "${BENCH_MONITOR_SECONDS:-60}"
			read -ra f <<<"$(sed 's/.*) //' "/proc/$mon/stat")"
			monitor_cpu_ms=$(( (f[11] + f[12] - t0) * 1000 / $(getconf CLK_TCK) * 60 / ${BENCH_MONITOR_SECONDS:-60} ))
			monitor_rounds=$(jq -r '.monitor.rounds' "${root_of[vetto]}/$id/vetto.json")
		fi
	fi
	rt_run "$rt" delete --force "$id" >/dev/null 2>&1 || die "${label[$rt]}: delete --force failed"
done
bg_pids=()

# --- exec --------------------------------------------------------------------

exec_runtimes=(crun runc)
[ -n "$runc15" ] && exec_runtimes+=(runc15)
vetto_exec=no
if [[ $'\n'$("$vetto" --help) =~ $'\n'[[:space:]]+exec[[:space:]] ]]; then
	vetto_exec=yes
	exec_runtimes+=(vetto)
fi
say "exec into a running container: ${exec_runtimes[*]}"
items=()
for rt in "${exec_runtimes[@]}"; do
	id="$tag-x-$rt"
	rt_run "$rt" create --bundle "$sleeper" "$id" </dev/null >/dev/null 2>&1 || die "${label[$rt]}: create failed"
	rt_run "$rt" start "$id" </dev/null >/dev/null 2>&1 || die "${label[$rt]}: start failed"
	rt_run "$rt" exec "$id" /bin/true </dev/null >"$work/exec.out" 2>&1 ||
		{ cat "$work/exec.out" >&2; die "${label[$rt]}: exec failed"; }
	items+=("${label[$rt]} exec" true "$(cmdline "$rt" exec "$id" /bin/true) </dev/null >/dev/null 2>&1")
done
rotated exec "${items[@]}"
declare -A exec_med
for rt in "${exec_runtimes[@]}"; do
	exec_med[$rt]=$(median_of exec "${label[$rt]} exec")
done
if [ -n "$runc15" ] && [ "$vetto_exec" = yes ]; then
	say "paired exec ($pairs pairs): vetto and runc 1.5.3"
	paired exec-runc15 "${label[vetto]} exec" "$(cmdline vetto exec "$tag-x-vetto" /bin/true) </dev/null >/dev/null 2>&1" \
		"${label[runc15]} exec" "$(cmdline runc15 exec "$tag-x-runc15" /bin/true) </dev/null >/dev/null 2>&1"
fi
for rt in "${exec_runtimes[@]}"; do
	rt_run "$rt" delete --force "$tag-x-$rt" >/dev/null 2>&1 || die "${label[$rt]}: delete --force failed"
done

# --- profile -----------------------------------------------------------------

# Phases of one `run`, from kernel tracepoints recorded by perf (no ptrace,
# so the run goes at nearly full speed): start → libcontainer execs its init
# (/proc/self/fd/N) → the runtime's first rename after that, libcontainer
# saving state.json (container built, init waiting on the exec fifo) →
# /bin/true exec'd → the runtime's last thread exits. runc 1.5.3 and vetto
# share libcontainer, so the differences are vetto's own work. fsync calls
# and the time spent in them are counted on the way.
tracepoints=sched:sched_process_exec,sched:sched_process_exit,syscalls:sys_enter_fsync,syscalls:sys_exit_fsync,syscalls:sys_enter_renameat
phases() { # perf.data -> "start→init init→built built→exec exec→exit total fsyncs fsync_ms fsyncs-by-phase×4"
	perf script -i "$1" -F comm,pid,tid,time,event,trace 2>/dev/null | awk '
	{ split($2, id, "/"); pid = id[1]; tid = id[2]; t = $3; sub(/:$/, "", t); ev = $4 }
	!t0 && ev ~ /sched_process_exec/ { t0 = t; main = pid }
	ev ~ /sched_process_exec/ && /filename=\/proc\/self\/fd\// && !ti { ti = t }
	ev ~ /sys_enter_renameat/ && ti && !tb && $1 !~ /^runc:\[/ { tb = t }
	ev ~ /sched_process_exec/ && /filename=\/bin\/true / && !tu { tu = t }
	ev ~ /sys_enter_fsync/ { nf++; ft[nf] = t; fs[tid] = t }
	ev ~ /sys_exit_fsync/ && (tid in fs) { fsum += t - fs[tid]; delete fs[tid] }
	ev ~ /sched_process_exit/ && pid == main { te = t }
	END {
		if (!ti || !tb || !tu || !te) exit 1
		for (i = 1; i <= nf; i++) {
			if (ft[i] < ti) n1++; else if (ft[i] < tb) n2++; else if (ft[i] < tu) n3++; else n4++
		}
		printf "%.1f %.1f %.1f %.1f %.1f %d %.1f %d %d %d %d\n", (ti-t0)*1e3, (tb-ti)*1e3, (tu-tb)*1e3, (te-tu)*1e3, (te-t0)*1e3, nf, fsum*1e3, n1, n2, n3, n4
	}'
}
profile_rts=(vetto vettotmpfs)
[ -n "$runc15" ] && profile_rts=(runc15 vetto vettotmpfs)
declare -A phase_med
phases_ok=yes
say "profile: $profile_runs runs each under perf (tracepoints), then cpu-clock samples"
for rt in "${profile_rts[@]}"; do
	: >"$work/phases-$rt.txt"
	for i in $(seq 1 "$profile_runs"); do
		prefix "$rt"
		if ! perf record -q -e "$tracepoints" -o "$work/trace.data" -- \
			"${argv_prefix[@]}" run --bundle "$bundle" "$tag-t-$rt-$i" </dev/null >/dev/null 2>"$work/trace.log"; then
			phases_ok="no: $(tail -n 2 "$work/trace.log" | tr '\n' ' ')"
			break 2
		fi
		phases "$work/trace.data" >>"$work/phases-$rt.txt" ||
			die "${label[$rt]}: no exec of the init, state.json or /bin/true in the trace"
	done
	phase_med[$rt]=$(for c in 1 2 3 4 5 6 7 8 9 10 11; do
		cut -d' ' -f"$c" "$work/phases-$rt.txt" | sort -n | median
	done | tr '\n' ' ' | sed 's/ $//')
done
perf_ok=yes
prefix vetto
perf_loop=$(printf '%q ' "${argv_prefix[@]}")
if ! perf record -q -e cpu-clock -F 4999 -g -o "$work/perf.data" -- \
	sh -c "for i in \$(seq 1 $profile_runs); do $perf_loop run --bundle $(printf '%q' "$bundle") $tag-perf-\$i </dev/null >/dev/null 2>&1 || exit 1; done" \
	>"$work/perf-record.log" 2>&1; then
	perf_ok="no: $(tail -n 2 "$work/perf-record.log" | tr '\n' ' ')"
fi
if [ "$perf_ok" = yes ]; then
	perf report -i "$work/perf.data" --stdio --no-children -g none --sort comm,dso --percent-limit 1.5 2>/dev/null |
		grep -vE '^(#|$)' | sed -n '1,12p' >"$work/perf-comm.txt"
	# Inclusive ("children") share of the vetto-runtime process's samples:
	# everything above 3 %, then vetto's own functions.
	perf report -i "$work/perf.data" --stdio --children -g none --comm vetto-runtime --sort sym --percent-limit 3 2>/dev/null |
		grep -vE '^(#|$)' | sed -n '1,45p' >"$work/perf-sym.txt"
	perf report -i "$work/perf.data" --stdio --children -g none --comm vetto-runtime --sort sym --percent-limit 0.3 2>/dev/null |
		awk '/vetto-dev\/vetto-runtime/ && ++n <= 25' >"$work/perf-vetto.txt" || true
fi

# The leak check once more over everything this run made.
final_leaks=""
for rt in "${runtimes[@]}" vettotmpfs; do
	final_leaks+=$(leaks "$rt" "$tag-")
done

# --- where a run's wall time goes ---------------------------------------------

say "segments of a run, from the kernel's events (scripts/bench-segments.sh)"
segment_bins=("$vetto")
[ -n "$runc15" ] && segment_bins+=("$runc15")
segment_bins+=("$(command -v runc)")
"$repo/scripts/bench-segments.sh" "$runs" "${segment_bins[@]}" >"$work/segments.md" || die "scripts/bench-segments.sh failed"

# --- the egress relay ----------------------------------------------------------

say "egress relay (scripts/bench-relay.sh)"
"$repo/scripts/bench-relay.sh" "$vetto" >"$work/relay.md" || die "scripts/bench-relay.sh failed"

# --- rootless ------------------------------------------------------------------

say "rootless next to rootful (scripts/bench-rootless.sh)"
"$repo/scripts/bench-rootless.sh" "$vetto" >"$work/rootless.md" || die "scripts/bench-rootless.sh failed"

# --- docs/performance.md ------------------------------------------------------

say "writing ${out#"$repo"/}"
analysis="_Not written yet: what the profile says, and what to change._"
if [ -f "$out" ] && grep -q '<!-- analysis:begin -->' "$out"; then
	analysis=$(awk '/<!-- analysis:end -->/ {p = 0} p {print} /<!-- analysis:begin -->/ {p = 1}' "$out")
fi
# show_argv ARGS…: one shell command line, single-quoted where needed, a
# line per option of hyperfine's.
show_argv() {
	local a out="" q
	for a in "$@"; do
		q=$a
		if [[ $a =~ [^A-Za-z0-9_./=:@%+-] ]]; then q="'${a//\'/\'\\\'\'}'"; fi
		if [[ $a == -* ]]; then out+=$' \\\n  '; else out+=" "; fi
		out+=$q
	done
	printf '%s\n' "${out# }"
}
met() { awk -v a="$1" -v b="$2" 'BEGIN {if (a <= b) print "**met**"; else print "**not met**"}'; }
by() { awk -v a="$1" -v b="$2" 'BEGIN {d = a - b; if (d <= 0) printf "%.1f ms under", -d; else printf "%.1f ms over (%.0f%%)", d, 100*d/b}'; }
# paired_cells NAME: the measured cell of a paired comparison: the median
# of the per-pair wall ratios and differences, and of the CPU ones.
paired_cells() {
	printf '%s× wall (%s ms), %s× CPU (%s ms); %s pairs' \
		"$(awk -v v="$(paired_stat "$1" ratio)" 'BEGIN {printf "%.2f", v}')" \
		"$(awk -v v="$(paired_stat "$1" diff)" 'BEGIN {printf "%+.1f", v}')" \
		"$(awk -v v="$(paired_stat "$1" cpuratio)" 'BEGIN {printf "%.2f", v}')" \
		"$(awk -v v="$(paired_stat "$1" cpudiff)" 'BEGIN {printf "%+.1f", v}')" \
		"$(wc -l <"$work/paired-$1.txt")"
}

verify_run_ms=$(awk -v a="${med[vetto]}" -v b="${med[vettonv]}" 'BEGIN {printf "%.1f", a-b}')
verify_start_ms=$(awk -v a="$start_on" -v b="$start_off" 'BEGIN {printf "%.1f", a-b}')
{
	cat <<EOF
# Performance

Generated by \`make bench\` (\`scripts/bench.sh\`) on $(date -u '+%Y-%m-%d %H:%M UTC'); one run,
every number below from it. Only the *Analysis* section is written by hand
(the script keeps it); rerun \`make bench\` to refresh the rest.

## Machine

| | |
|---|---|
| CPUs | $(nproc) × $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo) |
| kernel | $(uname -r) |
| cgroups | $cgroup_mode |
| state roots | \`${TMPDIR:-/tmp}\` on $(findmnt -n -o FSTYPE -T "$work") ($(findmnt -n -o SOURCE -T "$work")): every fsync reaches the disk; \`/run\` (vetto's default root) is on $(findmnt -n -o FSTYPE -T /run) here |
| load average | $load_before before the lifecycle run, $load_after after (other work shares this host) |
| Go | $(go version | awk '{print $3}') |
| vetto-runtime | $vetto_version, commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet HEAD 2>/dev/null || echo " (tree has uncommitted changes)") |
| runc 1.5.3 | ${runc15:+built with \`go install -tags seccomp github.com/opencontainers/runc@$runc15_version\`}${runc15_note} |

## The bundle

A busybox-static root file system (\`/bin/busybox\` and its applets), runc's
default spec as \`vetto-runtime spec\` writes it (new pid, network, ipc, uts
and mount namespaces; no seccomp profile, so vetto's launch line says
\`tier=partial\`), running \`/bin/true\` without a terminal. \`ociVersion\` is
set to \`1.0.2-dev\` because crun 1.8.1 refuses \`1.3.0\` ("unknown version
specified"). Each runtime has its own \`--root\` in a temporary directory. \`run\`
is create + start + wait + delete in the foreground for every runtime; vetto
runs at its default level, \`standard\`.
EOF
	if [ "$hybrid" = 1 ]; then
		cat <<EOF

crun 1.8.1 refuses this host's hybrid cgroup layout while a controller sits
in the v2 hierarchy at \`/sys/fs/cgroup/unified\`, so every crun command runs
as \`unshare -m sh -c 'umount /sys/fs/cgroup/unified && exec "\$0" "\$@"' crun …\`:
a private mount namespace without that mount. That wrapper costs
$(ms "${med[crunwrap]}") ms on its own (measured alongside), which crun's row
includes; the comparisons below use crun *net of the wrapper*,
$(ms "$crun_net") ms, which is the harder target.
EOF
	fi
	cat <<EOF

## Lifecycle: \`run\` of /bin/true

hyperfine, $((per_pass * passes)) timed runs per command in $passes passes of $per_pass
($warmup warm-up runs each); each pass runs the commands in a rotated order,
so a drifting load on this shared host does not favour one runtime. The
statistics are over all passes' runs. The last row is the same vetto binary
with its \`--root\` on a tmpfs instead of the disk: the same work less the
cost of its fsyncs.

| command | median | mean ± σ | min … max | vs crun (net) | vs runc (Debian) | vs runc 1.5.3 |
|---|---:|---:|---:|---:|---:|---:|
EOF
	for n in "${names[@]}"; do
		r15="–"
		[ -n "$runc15" ] && r15=$(ratio "${med[$n]}" "${med[runc15]}")
		printf '| %s | **%s ms** | %s ± %s | %s … %s | %s | %s | %s |\n' "${label[$n]}" "$(ms "${med[$n]}")" \
			"$(ms "${mean[$n]}")" "$(ms "${sd[$n]}")" "$(ms "${lo[$n]}")" "$(ms "${hi[$n]}")" \
			"$(ratio "${med[$n]}" "$crun_net")" "$(ratio "${med[$n]}" "${med[runc]}")" "$r15"
	done
	[ -n "$runc15" ] || printf '| runc 1.5.3 | %s | | | | | |\n' "$runc15_note"
	cat <<EOF

**Verification on and off.** The \`run --no-verify\` row is the same binary
with post-launch verification off (pre-launch verification always runs:
nothing execs before it passes). Verification on costs a \`run\` of
/bin/true **$verify_run_ms ms** (median against median). It is the canaries, made
by the container's init before it execs the program (the host judges
them while the init waits), the post-exec checks, and, for a job still
running after 100 ms, the monitor. For a container whose process stays up — \`start\` of one,
measured separately ($runs runs each) —
the canaries and the post-exec checks:

| \`start\` of a container running \`sleep\` | median |
|---|---:|
| verification on (the P3 canaries in the init, P1, P2, P4; the monitor begun by create waits) | $(ms "$start_on") ms |
| \`--no-verify\` | $(ms "$start_off") ms |
| **added by post-launch verification** | **$verify_start_ms ms** |

\`create\` of a policy bundle (\`spec --profile default --project DIR --
/bin/true\`: the host's root read-only, the project mounted, Landlock
and the default deny list in annotations): each runtime creates the same
compiled bundle, and \`delete --force\` runs before each create, untimed;
$runs runs each in $passes rotated passes. runc ignores vetto's
annotations: vetto's row includes its pre-launch verification, the
frozen spec and its records.

| \`create\` of the policy bundle | median | vs runc (Debian) | vs runc 1.5.3 |
|---|---:|---:|---:|
$(for rt in "${create_rts[@]}"; do printf '| %s | %s ms | %s | %s |\n' "${label[$rt]}" "$(ms "${create_med[$rt]}")" "$(ratio "${create_med[$rt]}" "${create_med[runc]}")" "$( [ -n "$runc15" ] && ratio "${create_med[$rt]}" "${create_med[runc15]}" || echo –)"; done)

The parts of pre-launch verification, from Go's benchmarks (five samples
each, medians):

| per launch | median |
|---|---:|
| reading and judging the host facts of a live init (\`hooks.PreLaunch\` with \`ProcFacts\`: 5 namespaces, every cgroup, status, capabilities) | $verify_facts_ms ms |
| writing them down (\`verifyPreLaunchLocked\`: verdicts to the audit log, the Verified and Launchable records) | $verify_books_ms ms |
| **pre-launch verification in all** | **$verify_ms ms** |

hyperfine's own tables, one per pass (means; the drift between passes is
the host's noise):

$(for pass in $(seq 1 "$passes"); do cat "$work/lifecycle-$pass.md"; echo; done)

**Where the wall time of a \`run\` goes** (\`scripts/bench-segments.sh\`: the
same bundle, the runtimes in turn run by run, each segment between two of
the kernel's own events — the runtime's exec, its init's exec, /bin/true's
exec and exit, the runtime's exit — so no runtime is slowed by being
watched; vetto's init is its own small executable, runc's a re-exec of
runc):

$(cat "$work/segments.md")

## Targets (issues 8 and 18)

| target | measured | |
|---|---|---|
EOF
	if [ -n "$runc15" ]; then
		printf '| vetto `run` median ≤ runc 1.5.3'"'"'s | %s ms vs %s ms | %s, %s |\n' "$(ms "${med[vetto]}")" "$(ms "${med[runc15]}")" \
			"$(met "${med[vetto]}" "${med[runc15]}")" "$(by "${med[vetto]}" "${med[runc15]}")"
	else
		printf '| vetto `run` median ≤ runc 1.5.3'"'"'s | runc 1.5.3 %s | **not measured** |\n' "$runc15_note"
	fi
	if [ -n "$runc15" ]; then
		r=$(paired_stat run-runc15 ratio)
		printf '| the same, paired (A B, B A, …: the median of the pairs'"'"' ratios) | %s | %s |\n' "$(paired_cells run-runc15)" "$(met "$r" 1)"
	fi
	printf '| verification adds ≤ 3 ms (`run` of /bin/true, on vs `--no-verify`) | %s ms | %s, %s |\n' "$verify_run_ms" "$(met "$verify_run_ms" 3)" "$(by "$verify_run_ms" 3)"
	d=$(paired_stat run-noverify diff)
	printf '| the same, paired (the median of the pairs'"'"' differences) | %s | %s, %s |\n' "$(paired_cells run-noverify)" "$(met "$d" 3)" "$(by "$d" 3)"
	printf '| post-launch verification adds ≤ 3 ms to `start` of a running container (the canaries, the post-exec checks; the monitor is begun by create) | %s ms | %s, %s |\n' "$verify_start_ms" "$(met "$verify_start_ms" 3)" "$(by "$verify_start_ms" 3)"
	if [ -n "$runc15" ]; then
		printf '| `exec <id> /bin/true` ≤ runc 1.5.3'"'"'s | %s ms vs %s ms | %s, %s |\n' "$(ms "${exec_med[vetto]}")" "$(ms "${exec_med[runc15]}")" \
			"$(met "${exec_med[vetto]}" "${exec_med[runc15]}")" "$(by "${exec_med[vetto]}" "${exec_med[runc15]}")"
		if [ -s "$work/paired-exec-runc15.txt" ]; then
			r=$(paired_stat exec-runc15 ratio)
			printf '| the same, paired | %s | %s |\n' "$(paired_cells exec-runc15)" "$(met "$r" 1)"
		fi
		printf '| `create` of a policy bundle ≤ runc 1.5.3'"'"'s `create` of it | %s ms vs %s ms | %s, %s |\n' "$(ms "${create_med[vetto]}")" "$(ms "${create_med[runc15]}")" \
			"$(met "${create_med[vetto]}" "${create_med[runc15]}")" "$(by "${create_med[vetto]}" "${create_med[runc15]}")"
	fi
	printf '| stretch: ≤ crun'"'"'s median (net of the wrapper) | %s ms vs %s ms | %s, %s |\n' "$(ms "${med[vetto]}")" "$(ms "$crun_net")" \
		"$(met "${med[vetto]}" "$crun_net")" "$(by "${med[vetto]}" "$crun_net")"
	pf=$(( par_fail[vetto] + par_leak[vetto] ))
	printf '| %s parallel lifecycles: zero failures, zero leaks | %s failures, %s leaks in %s rounds | %s |\n' "$parallel" \
		"${par_fail[vetto]}" "${par_leak[vetto]}" "$rounds" "$([ "$pf" = 0 ] && echo '**met**' || echo '**not met**')"
	printf '| %s parallel lifecycles: total time ≤ runc'"'"'s | %s ms vs %s ms (Debian)%s | %s vs Debian runc%s |\n' "$parallel" \
		"${par_wall[vetto]}" "${par_wall[runc]}" "${runc15:+, ${par_wall[runc15]} ms (1.5.3)}" \
		"$(met "${par_wall[vetto]}" "${par_wall[runc]}")" "${runc15:+, $(met "${par_wall[vetto]}" "${par_wall[runc15]}") vs runc 1.5.3}"
	printf '| nothing vetto leaves alive per container > 5 MiB RSS | detached: the monitor, %s MiB RSS of which %s MiB private, %s ms CPU per minute (%s rounds); foreground `run`: the vetto process itself, %s MiB RSS of which %s MiB private | detached %s on private memory, %s on RSS; in the foreground %s on private memory, %s on RSS |\n' \
		"$(mib "${monitor_rss:-0}")" "$(mib "${monitor_anon:-0}")" "${monitor_cpu_ms:-?}" "${monitor_rounds:-?}" \
		"$(mib "${rss_fg[vetto]}")" "$(mib "${rss_fg_anon[vetto]}")" \
		"$(met "${monitor_anon:-99999}" 5120)" "$(met "${monitor_rss:-99999}" 5120)" \
		"$(met "${rss_fg_anon[vetto]}" 5120)" "$(met "${rss_fg[vetto]}" 5120)"
	cat <<EOF

The rows "the same, paired" time the two commands in $pairs pairs
(after 5 untimed), alternating which goes first, and take the median of
the per-pair ratios (or differences): a drift of the host slower than
one pair moves both sides of it alike. hyperfine's medians come from
blocks of back-to-back runs, four passes in rotated orders, and on this
shared host two such medians can be several ms apart for the same
binary. CPU is user + system of everything the command waited for
(bash's \`times\`), which is what ${parallel} parallel runs compete for.

## $parallel parallel lifecycles

$parallel \`run\`s started at once, waited for together; $rounds rounds, each
runtime in turn within a round, so that the host's drift falls on all of
them alike (ids unique per round). Wall time is the median round (all rounds in
brackets). A leak is anything left once all have returned: a state
directory under the runtime's root, a cgroup with the id in its name, a
process whose root is the bench rootfs or whose command line names the id,
or a mount under the bench directory.

| | wall time (median) | rounds | failures | leaks | vs runc (Debian) |
|---|---:|---|---:|---:|---:|
EOF
	for rt in floor "${runtimes[@]}" vettotmpfs; do
		printf '| %s | %s ms | %s | %s | %s | %s |\n' "$(label_or_floor "$rt")" "${par_wall[$rt]}" "${par_all[$rt]}" \
			"${par_fail[$rt]}" "$([ "$rt" = floor ] && echo – || echo "${par_leak[$rt]}")" "$(ratio "${par_wall[$rt]}" "${par_wall[runc]}")"
	done
	cat <<EOF

## Memory

*Peak RSS*: \`/usr/bin/time -v\`'s maximum resident set size over five \`run\`s
of /bin/true — the largest of the runtime process and every child it waited
for (its \`init\`). *While the container runs*: VmRSS of the foreground
\`run\` process, which stays alive as the container's parent (as runc's does),
sampled with the container running \`sleep\`, and in brackets its RssAnon:
most of VmRSS is the binary's own pages, shared through the page cache by
every copy of the runtime, so RssAnon is what one more container costs. *Detached*: after \`create\` +
\`start\` (how containerd's shim drives a runtime), any process of the
runtime's other than the container's own.

| | peak RSS | foreground \`run\` while the container runs (private) | left alive per detached container |
|---|---:|---:|---|
EOF
	printf '| kernel floor (unshare) | %s MiB | – | – |\n' "$(mib "${rss_peak[floor]}")"
	for rt in "${runtimes[@]}"; do
		printf '| %s | %s MiB | %s MiB (%s MiB) | %s |\n' "${label[$rt]}" "$(mib "${rss_peak[$rt]}")" \
			"$(mib "${rss_fg[$rt]}")" "$(mib "${rss_fg_anon[$rt]}")" "${alive_detached[$rt]}"
	done
	cat <<EOF

## exec into a running container

\`exec <id> /bin/true\` into a container running \`sleep\`: hyperfine, $warmup warm-up and $runs timed runs each, in $passes rotated passes.
EOF
	[ "$vetto_exec" = yes ] || printf '\nvetto-runtime has no `exec` command in this build; runc and crun only.\n'
	printf '\n| | median | vs runc (Debian) |\n|---|---:|---:|\n'
	for rt in "${exec_runtimes[@]}"; do
		printf '| %s | %s ms | %s |\n' "${label[$rt]}" "$(ms "${exec_med[$rt]}")" "$(ratio "${exec_med[$rt]}" "${exec_med[runc]}")"
	done
	cat <<EOF

## Go benchmarks

\`$gobench_cmd\` (state roots in \`$(findmnt -n -o FSTYPE -T "$work")\` temp dirs, as above; run as root,
so \`BenchmarkPreLaunch\` reads a stand-in init in fresh cgroups):

\`\`\`
$(grep -E '^(Benchmark|ok|FAIL|pkg:|cpu:)' "$work/gobench.txt")
\`\`\`

## Profile

Where one \`run\` spends its time, by phase: median of $profile_runs runs each,
recorded with \`perf record -e $tracepoints\` (kernel
tracepoints, no ptrace). *start → init exec*: the runtime's own setup
(bundle, spec, state, cgroups) until libcontainer execs its init; *init →
built*: the init builds the container (namespaces, mounts, pivot_root, …)
until libcontainer saves state.json; *built → /bin/true*: everything until
the user process execs (for vetto: records, pre-launch verification, audit,
launch line, then start); */bin/true → exit*: wait and delete. Both run the
same libcontainer, so a difference is the runtime's own work.
EOF
	if [ "$phases_ok" = yes ]; then
		printf '\n| ms | start → init exec | init → built | built → /bin/true | /bin/true → exit | total | fsync calls (by phase) | in fsync |\n'
		printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
		for rt in "${profile_rts[@]}"; do
			# shellcheck disable=SC2086 # eleven numbers, split on purpose
			set -- ${phase_med[$rt]}
			printf '| %s | %s | %s | %s | %s | %s | %s (%s · %s · %s · %s) | %s ms |\n' "${label[$rt]}" \
				"$1" "$2" "$3" "$4" "$5" "$6" "$8" "$9" "${10}" "${11}" "$7"
		done
	else
		printf '\nperf could not record tracepoints here (%s).\n' "$phases_ok"
	fi
	if [ "$perf_ok" = yes ]; then
		cat <<EOF

On-CPU samples of $profile_runs vetto \`run\`s (\`perf record -e cpu-clock -F 4999 -g\`;
this VM has no hardware counters), by process and object (\`runc:[2:INIT]\`
is vetto's own binary running libcontainer's init):

\`\`\`
$(cat "$work/perf-comm.txt")
\`\`\`

Top entries of the \`vetto-runtime\` process, inclusive of callees
(\`perf report --children --comm vetto-runtime --sort sym\`, above 3 %):

\`\`\`
$(cat "$work/perf-sym.txt")
\`\`\`

vetto's own functions among them (inclusive):

\`\`\`
$(cat "$work/perf-vetto.txt")
\`\`\`
EOF
	else
		printf '\nperf could not sample here (%s).\n' "$perf_ok"
	fi
	printf '\n'
	cat "$work/relay.md"
	echo
	cat "$work/rootless.md"
	cat <<EOF

## Analysis

<!-- analysis:begin -->
$analysis
<!-- analysis:end -->

## How to rerun

\`make bench\` (root; installs what it needs, builds runc 1.5.3 into
\`bin/bench/\` once). The lifecycle run's first pass, exactly (\`$(basename "$work")\` was
this run's temporary directory; the other passes rotate the commands):

\`\`\`
$(show_argv "${hf_first[@]}" | sed "s|$work|\$BENCH|g")
\`\`\`

The segments of a \`run\` alone: \`scripts/bench-segments.sh [RUNS] RUNTIME…\`
(root). Function by function inside vetto (uprobes, which slow what they
watch): \`scripts/bench-timeline.sh [BINARY] [RUNS]\`.
EOF
} >"$work/performance.md"

if [ -n "$final_leaks" ]; then
	printf '%s\n' "$final_leaks" >&2
	die "containers of this run left things behind (listed above); docs not written"
fi
mv "$work/performance.md" "$out"
say "done: ${out#"$repo"/}"
