#!/usr/bin/env bash
# Runs the OCI runtime-tools v0.9.0 validation suite (58 programs, pinned by
# go.mod/go.sum beside this file) against one or more runtimes and prints one
# row per program with one column per runtime. docs/conformance.md explains
# the classes and every program vetto-runtime does not pass.
#
#   run.sh                                  bin/vetto-runtime (or $RUNTIME)
#   RUNTIME=/usr/sbin/runc run.sh
#   RUNTIMES="vetto=bin/vetto-runtime runc=/usr/sbin/runc crun=/usr/bin/crun" run.sh
#
# Environment:
#   RUNTIME                one runtime binary (ignored when RUNTIMES is set)
#   RUNTIMES               "name=path …", side by side; the first is the one
#                          under test
#   CONFORMANCE_PROGRAMS   only these programs (space separated)
#   CONFORMANCE_TIMEOUT    seconds per program (default 60)
#   CONFORMANCE_CACHE      build cache (default ~/.cache/vetto-runtime/conformance)
#   CONFORMANCE_OUT        where each program's TAP, stderr and runtime calls
#                          are kept (default $CONFORMANCE_CACHE/results)
#
# Each program runs from a fresh directory holding runtimetest and the suite's
# rootfs-amd64.tar.gz, with its own TMPDIR and a runtime --root that only this
# run uses (wrap.sh). After every program, and on any exit, everything the
# suite created is removed: its containers (delete --force), their processes
# and cgroups, mounts left under the run directory, and the directory itself.
#
# Exit status: 0 when the first runtime is clean on every program listed in
# must-pass.txt and on every program another runtime of this run is clean on;
# 1 when it is not; 2 on a usage or setup error, or when something the suite
# created could not be removed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
GO=${GO:-go}
timeout_s=${CONFORMANCE_TIMEOUT:-60}
cache=${CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vetto-runtime/conformance}
out=${CONFORMANCE_OUT:-$cache/results}
tools=github.com/opencontainers/runtime-tools

die() {
	echo "conformance: $*" >&2
	exit 2
}
log() { echo "conformance: $*" >&2; }

# ---------------------------------------------------------------- arguments

names=() paths=() versions=()
if [[ -n ${RUNTIMES:-} ]]; then
	read -ra specs <<<"$RUNTIMES"
	for spec in "${specs[@]}"; do
		[[ $spec =~ ^[A-Za-z0-9._-]+=. ]] || die "RUNTIMES entry \"$spec\" is not name=path"
		names+=("${spec%%=*}")
		paths+=("${spec#*=}")
	done
else
	rt=${RUNTIME:-$repo/bin/vetto-runtime}
	names+=("$(basename "$rt")")
	paths+=("$rt")
fi
for i in "${!paths[@]}"; do
	p=${paths[i]}
	if [[ $p != */* ]]; then
		p=$(command -v "$p" || true)
	fi
	[[ -n $p && -x $p && -f $p ]] || die "runtime ${names[i]}: ${paths[i]} is not an executable file"
	paths[i]=$(readlink -f "$p")
done
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "CONFORMANCE_TIMEOUT must be a number of seconds"
[[ $(id -u) == 0 ]] || die "the validation suite creates real containers: run as root"
for tool in "$GO" jq unshare timeout flock tar; do
	command -v "$tool" >/dev/null || die "$tool is not installed (make deps)"
done

mkdir -p "$cache"
exec 9>"$cache/lock"
flock -n 9 || die "another conformance run holds $cache/lock"

# ------------------------------------------------------------------- build

# The suite is built once per go.mod/go.sum/Go version into $cache/suite-KEY:
# bin/<program> for each validation program, runtimetest (static: it runs
# inside the container) and the module's rootfs tarball.
key=$({ cat "$here/go.mod" "$here/go.sum"; "$GO" env GOVERSION; echo build-1; } | sha256sum | cut -c1-16)
suite=$cache/suite-$key
if [[ ! -f $suite/ok ]]; then
	log "building runtime-tools validation suite into $suite"
	tmp=$(mktemp -d "$cache/build.XXXXXX")
	(
		cd "$here"
		export CGO_ENABLED=0 GOFLAGS=-mod=readonly
		"$GO" build -trimpath -o "$tmp/bin/" "$tools/validation/..."
		"$GO" build -trimpath -o "$tmp/runtimetest" "$tools/cmd/runtimetest"
		cp "$("$GO" list -m -f '{{.Dir}}' "$tools")/rootfs-amd64.tar.gz" "$tmp/"
		"$GO" list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' "$tools/validation/..." |
			sed 's|.*/||' | sort >"$tmp/programs"
	) || {
		rm -rf "$tmp"
		die "building the suite failed"
	}
	chmod 0644 "$tmp/rootfs-amd64.tar.gz"
	touch "$tmp/ok"
	rm -rf "$suite"
	mv -T "$tmp" "$suite"
	for old in "$cache"/suite-*; do
		[[ $old == "$suite" ]] || rm -rf "$old"
	done
fi
mapfile -t all_programs <"$suite/programs"
if ((${#all_programs[@]} != 58)); then
	log "warning: runtime-tools v0.9.0 has 58 validation programs, this build has ${#all_programs[@]}"
fi
if [[ -n ${CONFORMANCE_PROGRAMS:-} ]]; then
	read -ra programs <<<"$CONFORMANCE_PROGRAMS"
	for p in "${programs[@]}"; do
		[[ -x $suite/bin/$p ]] || die "no validation program \"$p\""
	done
else
	programs=("${all_programs[@]}")
fi

# ------------------------------------------------------------------ cleanup

run=$(mktemp -d /tmp/vetto-conformance.XXXXXX)
# Bundles live under $run; a container with its own user namespace must be
# able to reach them.
chmod 0755 "$run"
# Each runtime runs from a copy taken now, so a rebuild during the run (make
# build elsewhere) cannot mix two binaries in one column.
for i in "${!paths[@]}"; do
	mkdir -p "$run/bin/$i"
	cp "${paths[i]}" "$run/bin/$i/"
	versions[i]=$("${paths[i]}" --version 2>/dev/null | head -n 2 | tr '\n' ' ' || true)
	paths[i]=$run/bin/$i/$(basename "${paths[i]}")
done
leaked=0
declare -A host_devs
for p in /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty; do
	host_devs[$p]=$(stat -c '%a %u:%g' "$p")
done

# cgroup_mounts prints "mountpoint<TAB>this process's path in it" for every
# cgroup v1 and v2 hierarchy mounted here.
cgroup_mounts() {
	local mnt fstype opts ctrls path
	while read -r mnt fstype opts; do
		if [[ $fstype == cgroup2 ]]; then
			path=$(sed -n 's/^0:://p' /proc/self/cgroup)
		else
			path=""
			while IFS=: read -r _ ctrls p; do
				[[ -n $ctrls ]] || continue
				local c all=1
				IFS=, read -ra cs <<<"$ctrls"
				for c in "${cs[@]}"; do
					[[ ,$opts, == *,$c,* ]] || all=0
				done
				if ((all)); then
					path=$p
					break
				fi
			done </proc/self/cgroup
		fi
		printf '%s\t%s\n' "$mnt" "$path"
	done < <(awk '{ for (i = 7; $i != "-"; i++); if ($(i+1) == "cgroup" || $(i+1) == "cgroup2") print $5, $(i+1), $(i+3) }' /proc/self/mountinfo)
}

# kill_cgroup_tree kills every process in the cgroup directory $1 and below
# (thawing it first: a frozen process cannot die), then removes the
# directories. It fails when the directory is still there.
kill_cgroup_tree() {
	local dir=$1 d pid tries any
	if [[ ! -d $dir ]]; then
		return 0
	fi
	while read -r d; do
		if [[ -w $d/freezer.state ]]; then
			echo THAWED >"$d/freezer.state" 2>/dev/null || true
		fi
		if [[ -w $d/cgroup.freeze ]]; then
			echo 0 >"$d/cgroup.freeze" 2>/dev/null || true
		fi
	done < <(find "$dir" -type d)
	for ((tries = 0; tries < 50; tries++)); do
		any=0
		while read -r pid; do
			any=1
			kill -KILL "$pid" 2>/dev/null || true
		done < <(find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null)
		if ((!any)); then
			break
		fi
		sleep 0.1
	done
	find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
	[[ ! -d $dir ]]
}

# cleanup_program removes what one program left: $1 is its directory, $2 a
# file for notes on what the runtime or the suite left behind and the runner
# removed; a line starting with LEAK is something it could not remove.
cleanup_program() {
	local dir=$1 notes=$2 id p mnt base rel
	local -a ids=() cgpaths=() owned=() parents=() mounts=() expr=()
	if [[ ! -d $dir ]]; then
		return 0
	fi

	# 1. Containers: every id the suite used and whatever is in the state root.
	if [[ -f $dir/ledger ]]; then
		mapfile -t ids < <(sed -n 's/^id //p' "$dir/ledger")
		mapfile -t cgpaths < <(sed -n 's/^cgroup //p' "$dir/ledger" | sort -u)
	fi
	for p in "$dir"/state/*/; do
		if [[ -d $p ]]; then
			ids+=("$(basename "$p")")
		fi
	done
	if ((${#ids[@]})); then
		mapfile -t ids < <(printf '%s\n' "${ids[@]}" | sort -u)
	fi
	for id in "${ids[@]}"; do
		if [[ -e $dir/state/$id ]]; then
			echo "container $id was not deleted; removed with delete --force" >>"$notes"
			CONFORMANCE_RUNTIME_BIN=$(<"$dir/runtime") CONFORMANCE_STATE_ROOT=$dir/state \
				CONFORMANCE_LEDGER=$dir/cleanup.ledger CONFORMANCE_HIDE_UNIFIED=$(<"$dir/hide_unified") \
				timeout -k 5 20 "$here/wrap.sh" delete --force "$id" >/dev/null 2>&1 || true
		fi
	done

	# 2. Processes and cgroups. Ours are the cgroups named by a container id
	# anywhere in a hierarchy (each runtime has its own default parent) and
	# each cgroupsPath the suite set, absolute or relative to this process's
	# cgroup. The parents of a cgroupsPath (testdir/cgrouptest) go only once
	# empty.
	for id in "${ids[@]}"; do
		expr+=(-o -name "$id")
	done
	while IFS=$'\t' read -r mnt base; do
		base=${base#/}
		if ((${#expr[@]})); then
			mapfile -t -O "${#owned[@]}" owned < <(find "$mnt" -mindepth 1 -maxdepth 6 -type d \( "${expr[@]:1}" \) -prune -print 2>/dev/null)
		fi
		# A relative path is relative to the runtime's own cgroup; crun puts
		# it under the hierarchy's root in some v1 hierarchies, so both.
		for p in "${cgpaths[@]}"; do
			for rel in "${p#/}" ${base:+"$base/$p"}; do
				if [[ $p == /* && $rel != "${p#/}" ]]; then
					continue
				fi
				owned+=("$mnt/$rel")
				while [[ $rel == */* ]]; do
					rel=${rel%/*}
					if [[ $rel == "$base" ]]; then
						break
					fi
					parents+=("$mnt/$rel")
				done
			done
		done
	done < <(cgroup_mounts)
	for p in "${owned[@]}"; do
		if [[ ! -d $p ]]; then
			continue
		fi
		if [[ -n $(find "$p" -name cgroup.procs -exec cat {} + 2>/dev/null) ]]; then
			echo "processes were left in cgroup $p; killed" >>"$notes"
		fi
		if ! kill_cgroup_tree "$p"; then
			echo "LEAK cgroup $p could not be removed" >>"$notes"
		fi
	done
	local removed=0
	for p in "${parents[@]}"; do
		if [[ -d $p ]] && rmdir "$p" 2>/dev/null; then
			removed=$((removed + 1))
		fi
	done
	if ((removed)); then
		echo "$removed empty parent cgroups of cgroupsPath ${cgpaths[*]} were left; removed" >>"$notes"
	fi

	# 3. Processes whose root or working directory is under the program's
	# directory (a container that shares the host's mount namespace is only
	# chrooted there).
	while read -r p; do
		p=${p#/proc/}
		p=${p%%/*}
		echo "process $p ($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80)) was left running; killed" >>"$notes"
		kill -KILL "$p" 2>/dev/null || true
	done < <(find /proc -mindepth 2 -maxdepth 2 \( -name root -o -name cwd \) -lname "$dir/*" 2>/dev/null | sort -u -t/ -k3,3)

	# 4. Mounts under the directory, deepest first (a container without its
	# own mount namespace mounts proc, sys and dev in the host's).
	mapfile -t mounts < <(awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	if ((${#mounts[@]})); then
		echo "${#mounts[@]} mounts were left in the host's mount namespace; unmounted" >>"$notes"
		for mnt in "${mounts[@]}"; do
			umount -l "$mnt" 2>/dev/null || true
		done
		if awk -v d="$dir/" 'index($5, d) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
			echo "LEAK mounts under $dir could not be unmounted" >>"$notes"
		fi
	fi

	# 5. Host device nodes: a container that shares the host's /dev may
	# chown or chmod them (a process whose stdio is /dev/null, say).
	local now
	for p in "${!host_devs[@]}"; do
		now=$(stat -c '%a %u:%g' "$p" 2>/dev/null || true)
		if [[ $now != "${host_devs[$p]}" ]]; then
			echo "the host's $p changed from ${host_devs[$p]} to $now; restored" >>"$notes"
			chown "${host_devs[$p]#* }" "$p" 2>/dev/null || true
			chmod "${host_devs[$p]%% *}" "$p" 2>/dev/null || true
		fi
	done

	# 6. The directory, never across a file system boundary: a mount that
	# survived cannot take anything else with it.
	rm -rf --one-file-system "$dir" 2>/dev/null || true
	if [[ -e $dir ]]; then
		echo "LEAK $dir could not be removed" >>"$notes"
	fi
	if [[ -f $notes ]] && grep -q '^LEAK' "$notes"; then
		leaked=1
	fi
	return 0
}

current="" current_pid="" current_notes=/dev/null
# shellcheck disable=SC2317 # called by the EXIT trap
finish() {
	local rc=$?
	if [[ -n $current_pid ]]; then
		kill -KILL -- "-$current_pid" 2>/dev/null || true
		wait "$current_pid" 2>/dev/null || true
	fi
	if [[ -n $current ]]; then
		cleanup_program "$current" "$current_notes"
	fi
	rm -rf --one-file-system "$run" 2>/dev/null || true
	exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ------------------------------------------------------------------- run

# classify prints ok, not ok, skip or crashed for a TAP file and an exit
# status. ok: at least one passing test point, no "not ok", no error block,
# exit 0. An error block is a YAML diagnostic with an "error" key that does
# not follow a test point (how the hook programs report a failure); skip: no
# failure, but no test point that is not a SKIP either (several programs
# pass in their own terms by printing only "1..0", or nothing at all).
classify() {
	local tap=$1 rc=$2
	if ((rc != 0)); then
		echo crashed
		return
	fi
	awk '
		/^  ---$/ { inblock = 1; attached = pending; pending = 0; next }
		/^  \.\.\.$/ { inblock = 0; next }
		inblock { if ($0 ~ /^    "error":/ && !attached) err = 1; next }
		/^(not )?ok / { pending = 1 }
		/^ok / { if ($0 ~ /# [Ss][Kk][Ii][Pp]/) skip++; else ok++ }
		/^not ok / { notok++ }
		END {
			if (notok || err) print "not ok"
			else if (ok) print "ok"
			else print "skip"
		}' "$tap"
}

# The results of the previous run in $out go: the runtimes it lists, its
# tables. Nothing else there is touched.
mkdir -p "$out"
if [[ -f $out/runtimes ]]; then
	while read -r old; do
		if [[ $old =~ ^[A-Za-z0-9._-]+$ ]]; then
			rm -rf "${out:?}/$old"
		fi
	done <"$out/runtimes"
fi
rm -f "$out/table.md" "$out/table.txt" "$out/versions.txt"
printf '%s\n' "${names[@]}" >"$out/runtimes"
declare -A result
started=$SECONDS
for i in "${!names[@]}"; do
	name=${names[i]} bin=${paths[i]}
	hide=0
	# crun 1.8 refuses this host's hybrid layout while cgroup2 holds a
	# controller (hugetlb); it runs with the cgroup2 mount hidden.
	if [[ $(basename "$bin") == crun && -n $(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null) ]]; then
		hide=1
	fi
	mkdir -p "$out/$name"
	log "$name: ${versions[i]:-$bin} (${#programs[@]} programs, ${timeout_s}s each)"
	for prog in "${programs[@]}"; do
		dir=$run/$name/$prog
		mkdir -p "$dir/cwd" "$dir/tmp" "$dir/state"
		chmod 0755 "$run/$name" "$dir" "$dir/cwd" "$dir/tmp"
		echo "$bin" >"$dir/runtime"
		echo "$hide" >"$dir/hide_unified"
		ln "$suite/runtimetest" "$dir/cwd/runtimetest" 2>/dev/null || cp "$suite/runtimetest" "$dir/cwd/"
		ln "$suite/rootfs-amd64.tar.gz" "$dir/cwd/" 2>/dev/null || cp "$suite/rootfs-amd64.tar.gz" "$dir/cwd/"
		current=$dir current_notes=$out/$name/$prog.cleanup
		t0=$SECONDS
		# timeout makes its own process group; whatever the program started
		# and left in it is killed by that group's id afterwards. stdin is
		# /dev/null, whoever runs this.
		(
			cd "$dir/cwd"
			exec env RUNTIME="$here/wrap.sh" TMPDIR="$dir/tmp" \
				CONFORMANCE_RUNTIME_BIN="$bin" CONFORMANCE_STATE_ROOT="$dir/state" \
				CONFORMANCE_LEDGER="$dir/ledger" CONFORMANCE_HIDE_UNIFIED="$hide" \
				timeout -k 5 "$timeout_s" "$suite/bin/$prog"
		) >"$out/$name/$prog.tap" 2>"$out/$name/$prog.stderr" </dev/null &
		current_pid=$!
		rc=0
		wait "$current_pid" || rc=$?
		kill -KILL -- "-$current_pid" 2>/dev/null || true
		current_pid=""
		cp "$dir/ledger" "$out/$name/$prog.calls" 2>/dev/null || : >"$out/$name/$prog.calls"
		cleanup_program "$dir" "$current_notes"
		current=""
		[[ -s $current_notes ]] || rm -f "$current_notes"
		class=$(classify "$out/$name/$prog.tap" "$rc")
		if ((rc == 124 || rc == 137)); then
			echo "timed out after ${timeout_s}s" >>"$out/$name/$prog.stderr"
		fi
		result[$name/$prog]=$class
		printf '  %-32s %-8s %3ss%s\n' "$prog" "$class" "$((SECONDS - t0))" "$( ((rc == 124 || rc == 137)) && echo ' (timeout)')" >&2
	done
done

# ------------------------------------------------------------------ report

first=${names[0]}
mapfile -t must < <(grep -v '^#' "$here/must-pass.txt" | grep -v '^$')
# row prints one table row: format (md or txt), then the cells.
row() {
	local fmt=$1
	shift
	if [[ $fmt == md ]]; then
		printf '| %s |' "$1"
		shift
		printf ' %s |' "$@"
	else
		printf '%-32s' "$1"
		shift
		printf ' %-9s' "$@"
	fi
	printf '\n'
}

# table prints the results as Markdown (md) or in columns (txt).
table() {
	local fmt=$1 prog name class n
	if [[ $fmt == md ]]; then
		printf '| program |'
		printf ' %s |' "${names[@]}"
		printf '\n|---|'
		printf -- '---|%.0s' "${names[@]}"
		printf '\n'
	else
		printf '%-32s' program
		printf ' %-9s' "${names[@]}"
		printf '\n'
	fi
	local -a cells
	for prog in "${programs[@]}"; do
		cells=()
		for name in "${names[@]}"; do
			cells+=("${result[$name/$prog]}")
		done
		row "$fmt" "$prog" "${cells[@]}"
	done
	for class in ok "not ok" skip crashed; do
		cells=()
		for name in "${names[@]}"; do
			n=0
			for prog in "${programs[@]}"; do
				if [[ ${result[$name/$prog]} == "$class" ]]; then
					n=$((n + 1))
				fi
			done
			cells+=("$n")
		done
		if [[ $fmt == md ]]; then
			row "$fmt" "**total $class**" "${cells[@]}"
		else
			row "$fmt" "total $class" "${cells[@]}"
		fi
	done
}
table md >"$out/table.md"
table txt | tee "$out/table.txt"

status=0
missing=()
for prog in "${programs[@]}"; do
	if [[ ${result[$first/$prog]} == ok ]]; then
		continue
	fi
	why=""
	if printf '%s\n' "${must[@]}" | grep -qxF "$prog"; then
		why="must-pass.txt"
	fi
	for name in "${names[@]:1}"; do
		if [[ ${result[$name/$prog]} == ok ]]; then
			why="${why:+$why, }clean with $name"
		fi
	done
	if [[ -n $why ]]; then
		missing+=("$prog ($why)")
	fi
done
echo
for i in "${!names[@]}"; do
	echo "${names[i]}: ${versions[i]:-unknown version}"
done | tee "$out/versions.txt"
echo "$((SECONDS - started))s; TAP, stderr, runtime calls and cleanup notes per program: $out"
notes=()
for name in "${names[@]}"; do
	for prog in "${programs[@]}"; do
		if [[ -f $out/$name/$prog.cleanup ]]; then
			notes+=("$name/$prog")
		fi
	done
done
if ((${#notes[@]})); then
	echo "left behind by the runtime or suite and removed by the runner:"
	for n in "${notes[@]}"; do
		sed "s|^|  $n: |" "$out/$n.cleanup"
	done
fi
if ((${#missing[@]})); then
	echo "not clean with $first:"
	printf '  %s\n' "${missing[@]}"
	status=1
fi
if ((leaked)); then
	echo "some of what the suite created could not be removed (LEAK lines above)"
	status=2
fi
exit "$status"
