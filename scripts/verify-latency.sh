#!/bin/bash
# What post-launch verification adds to a launch: the same bundle run with
# verification on and with --no-verify, interleaved round by round (so a
# load that drifts on a shared host hits both alike), N rounds; prints the
# median wall time of each and the difference. Root; the bundle must be
# runnable by BINARY.
#
#   scripts/verify-latency.sh BINARY BUNDLE [N=30] [--detach]
#
# Foreground (default): `run` to completion, as scripts/bench.sh times it.
# --detach: `run -d`, timed until it returns (create, start, verification);
# the delete after it is not timed. Use a bundle whose process outlives the
# verification (sleep) to time a full verification, probe included.
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,13p "$0"; exit 2; }
bin=$1 bundle=$2 n=${3:-30} mode=${4:-}
root=$(mktemp -d /tmp/verify-latency.XXXXXX)
trap 'rm -rf "$root"' EXIT
times=$(mktemp)
for i in $(seq 1 "$n"); do
	for v in on off; do
		extra=()
		[ "$v" = off ] && extra=(--no-verify --allow-degraded verify)
		id="vl-$$-$v-$i"
		start=$(date +%s%N)
		if [ "$mode" = --detach ]; then
			"$bin" --root "$root" run -d "${extra[@]}" -b "$bundle" "$id" </dev/null >/dev/null 2>&1
			end=$(date +%s%N)
			"$bin" --root "$root" delete --force "$id" >/dev/null 2>&1
		else
			"$bin" --root "$root" run "${extra[@]}" -b "$bundle" "$id" </dev/null >/dev/null 2>&1
			end=$(date +%s%N)
		fi
		echo "$v $(( (end - start) / 1000 ))" >>"$times"
	done
done
awk '
	{ t[$1, ++k[$1]] = $2 / 1000 }
	function median(v,   n, i, j, a, x) {
		n = k[v]; for (i = 1; i <= n; i++) a[i] = t[v, i]
		for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		on = median("on"); off = median("off")
		printf "runs %d each; median verification on %.1f ms, --no-verify %.1f ms, added %.1f ms\n", k["on"], on, off, on - off
	}' "$times"
rm -f "$times"
