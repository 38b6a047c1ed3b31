#!/usr/bin/env bash
# The egress relay's numbers (issue 15), as a Markdown section on stdout;
# make bench (scripts/bench.sh) puts it into docs/performance.md. Each
# measurement runs through the relay, from inside a network-allowlist
# policy container, and directly from the host to the same upstream, in
# the same run: the ratios are what the relay costs.
#
#   scripts/bench-relay.sh path/to/vetto-runtime
#
# Knobs: RELAY_CFB_N (2000 connections) RELAY_TPUT_MIB (2048 per stream)
# RELAY_TPUT_RUNS (3) RELAY_IDLE_N (500 tunnels) RELAY_LIFECYCLE_RUNS (40).
#
# Needs root. The upstream lives in a network namespace of its own (ip
# netns, a veth pair), reached only because this script's runtime.toml
# says so; everything it makes is removed on exit, pass or fail.
set -euo pipefail
export LC_ALL=C
export PATH="$PATH:/usr/local/go/bin"
repo=$(cd "$(dirname "$0")/.." && pwd -P)
cfb_n=${RELAY_CFB_N:-2000}
tput_mib=${RELAY_TPUT_MIB:-2048}
tput_runs=${RELAY_TPUT_RUNS:-3}
idle_n=${RELAY_IDLE_N:-500}
lifecycle_runs=${RELAY_LIFECYCLE_RUNS:-40}

die() { echo "bench-relay: $*" >&2; exit 1; }
say() { echo "== relay: $*" >&2; }

[ "$(id -u)" = 0 ] || die "needs root: it runs real containers"
[ $# = 1 ] || die "usage: $0 path/to/vetto-runtime"
vetto=$(readlink -f "$1")
[ -x "$vetto" ] || die "$vetto: not an executable (make build)"
for tool in ip go jq awk; do
	command -v "$tool" >/dev/null || die "$tool not found (make deps)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/vetto-bench-relay.XXXXXX")
chmod 0711 "$work"
root=$work/root
ns=vrb$$
hostif=vrbh$$
bg_pids=()
cleanup() {
	local rc=$? d pid
	set +e
	trap - EXIT INT TERM
	for d in "$root"/*/; do
		[ -d "$d" ] && "$vetto" --root "$root" delete --force "$(basename "$d")" >/dev/null 2>&1
	done
	for pid in "${bg_pids[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	ip link del "$hostif" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the upstream ---------------------------------------------------------------

# A random free /24: connections of an earlier run in TIME_WAIT (the host
# side closes first) keep their ports for a minute, and a fresh address
# pair has all of them.
net=""
for _ in $(seq 50); do
	k=$((10 + RANDOM % 240))
	if ! ip -4 addr show | grep -q "10\.214\.$k\."; then net=10.214.$k; break; fi
done
[ -n "$net" ] || die "no free 10.214.K.0/24"
up=$net.2
ip netns add "$ns"
ip link add "$hostif" type veth peer name "vrbn$$"
ip link set "vrbn$$" netns "$ns"
ip addr add "$net.1/24" dev "$hostif"
ip link set "$hostif" up
ip -n "$ns" addr add "$up/24" dev "vrbn$$"
ip -n "$ns" link set "vrbn$$" up
ip -n "$ns" link set lo up

project=$work/project
mkdir -p "$project"
say "go build integration/testdata/relaybench"
(cd "$repo/integration" && CGO_ENABLED=0 go build -trimpath -o "$project/relaybench" ./testdata/relaybench)
bench=$project/relaybench
ip netns exec "$ns" "$bench" serve "$up:7" "$up:9" >"$work/serve.log" 2>&1 &
bg_pids+=($!)
for _ in $(seq 100); do grep -q serving "$work/serve.log" && break; sleep 0.05; done
grep -q serving "$work/serve.log" || die "the upstream did not start: $(cat "$work/serve.log")"

cat >"$work/runtime.toml" <<EOF
[relay]
resolvers = ["$up:53"]
exempt = ["$up/32"]
[relay.test_hosts]
"bench.vetto.test" = ["$up"]
EOF
cfg=$work/runtime.toml
v() { "$vetto" --root "$root" --config "$cfg" "$@"; }

# bundle NAME MODE CMD…: a policy bundle for the project.
bundle() {
	local name=$1 mode=$2
	shift 2
	local b=$work/bundle-$name
	mkdir -p "$b"
	if [ "$mode" = off ]; then
		printf '[network]\nmode = "off"\n' >"$work/$name.toml"
	else
		printf '[network]\nmode = "allowlist"\nallow = ["bench.vetto.test:7", "bench.vetto.test:9"]\n' >"$work/$name.toml"
	fi
	v spec --policy "$work/$name.toml" --project "$project" --bundle "$b" -- "$@" >/dev/null 2>"$work/spec-$name.log" ||
		die "spec $name: $(cat "$work/spec-$name.log")"
	echo "$b"
}

# inside NAME CMD…: run CMD in an allowlist container, print its stdout.
inside() {
	local name=$1
	shift
	local b
	b=$(bundle "$name" allowlist "$@")
	v run -b "$b" "rb-$name-$$" 2>"$work/run-$name.log" || die "run $name: $(cat "$work/run-$name.log")"
}

median() { sort -n | awk '{a[NR] = $1} END {if (NR == 0) exit 1; m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; print (m == int(m)) ? m : sprintf("%.2f", m)}'; }

# --- connect to first byte --------------------------------------------------------

say "connect to first byte: $cfb_n connections, through the relay and directly"
read -r cfb_relay_p50 cfb_relay_p90 cfb_relay_p99 < <(inside cfb "$bench" cfb proxy bench.vetto.test:7 "$cfb_n")
read -r cfb_direct_p50 cfb_direct_p90 cfb_direct_p99 < <("$bench" cfb direct "$up:7" "$cfb_n")

# --- throughput ---------------------------------------------------------------------

say "one stream, $tput_mib MiB, $tput_runs runs each"
tput_relay=() tput_direct=()
for i in $(seq "$tput_runs"); do
	tput_relay+=("$(inside "tput$i" "$bench" tput proxy bench.vetto.test:9 "$tput_mib")")
	tput_direct+=("$("$bench" tput direct "$up:9" "$tput_mib")")
done
tput_relay_med=$(printf '%s\n' "${tput_relay[@]}" | median)
tput_direct_med=$(printf '%s\n' "${tput_direct[@]}" | median)

# --- memory ---------------------------------------------------------------------------

say "relay RSS: idle, then with $idle_n idle tunnels"
rm -f "$project/ready"
b=$(bundle idle allowlist sh -c "sleep 1.5; exec $bench idle bench.vetto.test:7 $idle_n $project/ready")
v run -d -b "$b" "rb-idle-$$" >/dev/null 2>"$work/run-idle.log" || die "run idle: $(cat "$work/run-idle.log")"
relay_pid=$(jq -r .pid "$root/rb-idle-$$/relay.json")
sleep 1
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
rss_idle=$(rss_kib "$relay_pid")
for _ in $(seq 600); do [ -s "$project/ready" ] && break; sleep 0.05; done
[ -s "$project/ready" ] || die "the idle tunnels were not opened"
sleep 0.5
rss_tunnels=$(rss_kib "$relay_pid")
per_tunnel=$(awk -v a="$rss_tunnels" -v b="$rss_idle" -v n="$idle_n" 'BEGIN {printf "%.1f", (a - b) / n}')
threads=$(awk '/^Threads:/ {print $2}' "/proc/$relay_pid/status")
v delete --force "rb-idle-$$" >/dev/null

# --- what the relay adds to create+start ------------------------------------------------

say "create and start of /bin/true, network off and allowlist interleaved, $lifecycle_runs runs each"
boff=$(bundle life-off off true)
ballow=$(bundle life-allow allowlist true)
now_us() { echo "${EPOCHREALTIME/./}"; }
: >"$work/life-off"
: >"$work/life-allowlist"
# Interleaved, so that whatever else the host does weighs on both alike;
# the first three rounds warm up.
for i in $(seq $((lifecycle_runs + 3))); do
	for mode in off allowlist; do
		b=$boff
		[ "$mode" = allowlist ] && b=$ballow
		t0=$(now_us)
		"$vetto" --root "$root" --config "$cfg" create -b "$b" "rb-cs-$$" >/dev/null 2>"$work/cs.log" || die "create ($mode): $(cat "$work/cs.log")"
		t1=$(now_us)
		"$vetto" --root "$root" start "rb-cs-$$" >/dev/null 2>"$work/cs.log" || die "start ($mode): $(cat "$work/cs.log")"
		t2=$(now_us)
		"$vetto" --root "$root" delete --force "rb-cs-$$" >/dev/null 2>&1
		[ "$i" -gt 3 ] && echo "$((t1 - t0)) $((t2 - t0))" >>"$work/life-$mode"
	done
done
ms() { awk -v us="$1" 'BEGIN {printf "%.1f", us / 1000}'; }
create_off=$(awk '{print $1}' "$work/life-off" | median)
create_allow=$(awk '{print $1}' "$work/life-allowlist" | median)
cs_off=$(awk '{print $2}' "$work/life-off" | median)
cs_allow=$(awk '{print $2}' "$work/life-allowlist" | median)
create_added=$(awk -v a="$create_allow" -v b="$create_off" 'BEGIN {printf "%.1f", (a - b) / 1000}')
cs_added=$(awk -v a="$cs_allow" -v b="$cs_off" 'BEGIN {printf "%.1f", (a - b) / 1000}')

# --- the section ------------------------------------------------------------------------

# met A OP B: "**met**" when A OP B holds (OP is <= or >=).
met() { awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN {ok = (op == "<=") ? (a + 0 <= b + 0) : (a + 0 >= b + 0); print ok ? "**met**" : "**not met**"}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
cat <<EOF
## Egress relay (issue 15)

\`scripts/bench-relay.sh\`: an upstream (echo and discard servers) in a
network namespace of its own behind a veth pair; through the relay is
from inside a network-allowlist policy container, with CONNECT on its
proxy port; directly is from the host to the same upstream. One run.

| measure | through the relay | directly | ratio | target |
|---|---|---|---|---|
| connect to first byte, p50 ($cfb_n connections: connect, CONNECT and its 200, one byte there and back) | $cfb_relay_p50 µs | $cfb_direct_p50 µs | $(ratio "$cfb_relay_p50" "$cfb_direct_p50")× | ≤ 300 µs: $(met "$cfb_relay_p50" "<=" 300) |
| connect to first byte, p90 / p99 | $cfb_relay_p90 / $cfb_relay_p99 µs | $cfb_direct_p90 / $cfb_direct_p99 µs | | |
| one stream, $tput_mib MiB, median of $tput_runs ($(printf '%s ' "${tput_relay[@]}")/ $(printf '%s ' "${tput_direct[@]}")) | $tput_relay_med Gbit/s | $tput_direct_med Gbit/s | $(ratio "$tput_relay_med" "$tput_direct_med") | ≥ 10 Gbit/s: $(met "$tput_relay_med" ">=" 10) |

| measure | value | target |
|---|---|---|
| relay RSS, idle (serving, no connection) | $((rss_idle / 1024)) MiB ($rss_idle KiB) | ≤ 20 MiB: $(met "$rss_idle" "<=" 20480) |
| relay RSS per idle tunnel ($idle_n tunnels: $rss_tunnels KiB, $threads threads) | $per_tunnel KiB | ≤ 64 KiB: $(met "$per_tunnel" "<=" 64) |
| what allowlist adds to create (medians of $lifecycle_runs, interleaved: $(ms "$create_allow") vs $(ms "$create_off") ms) | $create_added ms | |
| what allowlist adds to create+start (medians of $lifecycle_runs: $(ms "$cs_allow") vs $(ms "$cs_off") ms) | $cs_added ms | ≤ 5 ms: $(met "$cs_added" "<=" 5) |

Per-tunnel RSS is the relay process's resident set with the tunnels open
minus before, divided by their number: Go stacks and buffers, not the
kernel's socket and pipe memory. create+start includes post-launch
verification in both rows; what allowlist adds is the relay's sockets, their
checks, the relay process's start and hardening, and its check.
EOF
