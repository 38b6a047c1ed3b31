#!/usr/bin/env bash
# The RUNTIME that run.sh hands to every validation program. It runs the real
# runtime with a private --root, so the suite's containers never mix with
# anyone else's and run.sh can find every one of them afterwards, and it writes
# a ledger of what the suite asked for (every command line, every container id,
# every cgroupsPath) that run.sh cleans up after each program.
#
# Set by run.sh, removed from the environment before the runtime runs:
#   CONFORMANCE_RUNTIME_BIN    the runtime binary
#   CONFORMANCE_STATE_ROOT     its --root
#   CONFORMANCE_LEDGER         file the calls are appended to
#   CONFORMANCE_HIDE_UNIFIED   1: run the runtime in a private mount namespace
#                              without /sys/fs/cgroup/unified (crun 1.8 refuses
#                              a hybrid layout whose cgroup2 mount holds a
#                              controller such as hugetlb)
set -u

bin=${CONFORMANCE_RUNTIME_BIN:?set by run.sh}
root=${CONFORMANCE_STATE_ROOT:?set by run.sh}
ledger=${CONFORMANCE_LEDGER:?set by run.sh}
hide_unified=${CONFORMANCE_HIDE_UNIFIED:-0}
unset CONFORMANCE_RUNTIME_BIN CONFORMANCE_STATE_ROOT CONFORMANCE_LEDGER CONFORMANCE_HIDE_UNIFIED

# The suite calls `create [--pid-file F] [--bundle B] [ID]`, `start|state|
# delete ID` and `kill ID SIG`: the command is the first word, the id the
# first one after it.
cmd="" id="" bundle="."
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
	a=${args[i]}
	case $a in
	--bundle | -b) bundle=${args[i + 1]:-.} && i=$((i + 1)) ;;
	--bundle=*) bundle=${a#--bundle=} ;;
	--pid-file | --console-socket) i=$((i + 1)) ;;
	-*) ;;
	*)
		if [[ -z $cmd ]]; then
			cmd=$a
		elif [[ -z $id ]]; then
			id=$a
		fi
		;;
	esac
done
{
	printf 'call'
	printf ' %q' "$@"
	printf '\n'
	if [[ -n $id ]]; then
		printf 'id %s\n' "$id"
	fi
	if [[ $cmd == create || $cmd == run ]] && [[ -f $bundle/config.json ]]; then
		cg=$(jq -r '.linux.cgroupsPath // empty' "$bundle/config.json" 2>/dev/null || true)
		if [[ -n $cg ]]; then
			printf 'cgroup %s\n' "$cg"
		fi
	fi
} >>"$ledger"

if [[ $hide_unified == 1 ]]; then
	# shellcheck disable=SC2016 # $@ is expanded by the inner shell
	exec unshare --mount --propagation private -- /bin/sh -c \
		'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh "$bin" --root "$root" "$@"
fi
exec "$bin" --root "$root" "$@"
