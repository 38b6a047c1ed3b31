#!/usr/bin/env bash
# vm/test.sh GUEST… — run vm/run.sh for each guest, one after the other (the
# host has 2 cores and TCG wants both for one guest), and print the totals:
# one line per guest with its counts and wall time, then the sum. Exit 0 only
# if every guest did.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
[ $# -gt 0 ] || { echo "usage: vm/test.sh GUEST…" >&2; exit 2; }

declare -A line status
start=$(date +%s)
for g in "$@"; do
	t0=$(date +%s)
	# A guest kernel that panics under emulation is not a test result:
	# the guest is run once more, and the panic stays on record in
	# $g.panic.out and $g.panic.console.log. A second panic fails.
	# (Debian 13's 6.12 panicked on a stray int3 under multi-threaded
	# TCG, twice in a row in CI; vm/run.sh now defaults to single.)
	for attempt in 1 2; do
		set +e
		"$here/run.sh" "$g" 2>&1 | tee "$VM_OUT/$g.out"
		rc=${PIPESTATUS[0]}
		set -e
		if [ "$rc" != 0 ] && [ "$attempt" = 1 ] && grep -q "Kernel panic - not syncing" "$VM_OUT/$g/console.log" 2>/dev/null; then
			cp "$VM_OUT/$g.out" "$VM_OUT/$g.panic.out"
			cp "$VM_OUT/$g/console.log" "$VM_OUT/$g.panic.console.log"
			echo "vm $g: the guest kernel panicked (console in $VM_OUT/$g.panic.console.log); running the guest once more"
			continue
		fi
		break
	done
	t1=$(date +%s)
	last="$(grep -E "^$g: [0-9]+ passed, " "$VM_OUT/$g.out" | tail -n 1 || true)"
	[ -n "$last" ] || last="$g: did not report ($(tail -n 1 "$VM_OUT/$g.out"))"
	line[$g]="$last in $((t1 - t0)) s"
	status[$g]=$rc
done

echo
echo "== vm-test: $(($(date +%s) - start)) s for $# guest(s) =="
tp=0 tf=0 ts=0 bad=0
for g in "$@"; do
	if [ "${status[$g]}" = 0 ]; then
		echo "  ok    ${line[$g]}"
	else
		echo "  FAIL  ${line[$g]}"
		grep -E "^vm $g: FAIL: " "$VM_OUT/$g.out" | sort -u | sed 's/^/        /' || true
		bad=$((bad + 1))
	fi
	if [ -f "$VM_OUT/$g/summary" ]; then
		eval "$(sed -n 's/^passed=\([0-9]*\) failed=\([0-9]*\) skipped=\([0-9]*\)$/p=\1 f=\2 s=\3/p' "$VM_OUT/$g/summary")"
		tp=$((tp + ${p:-0})) tf=$((tf + ${f:-0})) ts=$((ts + ${s:-0}))
	fi
done
echo "vm-test: $tp passed, $tf failed, $ts skipped"
if [ "$bad" -gt 0 ]; then
	echo "vm-test: $bad of $# guest(s) failed (results in $VM_OUT)"
	exit 1
fi
