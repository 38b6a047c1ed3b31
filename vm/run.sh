#!/usr/bin/env bash
# vm/run.sh [--shell] GUEST — boot one guest under qemu (TCG: no KVM here)
# with the inputs in $VM_IN, run the tests, judge what came back.
#
#   GUEST   bookworm | trixie (a Debian suite; vm/image.sh builds its image)
#   --shell boot the same guest with the serial console on this terminal and
#           no test run: root logs in without a password, the inputs are at
#           /mnt/vetto/in (run /mnt/vetto/in/guest-run.sh by hand, or the
#           binaries). Leave with `poweroff` (or Ctrl-a x).
#
# The share between host and guest is a 9p directory (virtio): the guest
# writes its results straight to the host as it goes, so a guest that hangs
# or panics still leaves what it had written, and nothing has to be read
# back out of a disk image afterwards. The image itself is never written:
# the guest boots from a qcow2 overlay in the run's temporary directory.
#
# Results go to $VM_OUT/GUEST/ (console.log, facts, root.log, …); the last
# line on stdout is "GUEST: N passed, N failed, N skipped". Exit 0 only if
# the guest booted, every selected root test ran and none failed, and the
# rootless run (if any test matched) passed.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
shell=no
if [ "${1:-}" = --shell ]; then
	shell=yes
	shift
fi
guest="${1:?usage: vm/run.sh [--shell] GUEST}"
: "${VM_IN:?VM_IN is not set (vm/vm.mk sets it)}" "${VM_OUT:?}" "${VM_CACHE:?}"
smp="${VM_SMP:-2}"
mem="${VM_MEM:-2G}"
timeout="${VM_TIMEOUT:-2100}"
tests="${VM_TESTS:-.}"
skip="${VM_SKIP:-}"
rootless="${VM_ROOTLESS_TESTS:-^TestRootless}"
# single: every vCPU on one host thread; multi: a host thread each (about
# 20 % faster). Kernel text that one vCPU patches (static keys: jump
# labels, static calls) while another runs it can be seen half-written
# under multi, and a 6.12 guest then dies on a stray int3; under single
# only one vCPU runs at a time, so it cannot.
tcg="${VM_TCG_THREAD:-single}"
case "$tcg" in
multi | single) ;;
*)
	echo "vm/run.sh: VM_TCG_THREAD=$tcg: want multi or single" >&2
	exit 2
	;;
esac

say() { printf 'vm %s: %s\n' "$guest" "$*"; }
die() {
	say "FAIL: $*"
	exit 1
}

image="$("$here/image.sh" "$guest")" || die "no image (vm/image.sh $guest failed)"
results="$VM_OUT/$guest"
rm -rf "$results"
mkdir -p "$results"
run="$(mktemp -d "${TMPDIR:-/tmp}/vetto-vm-$guest-XXXXXX")"
qemu_pid=""
cleanup() {
	if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
		kill -KILL "$qemu_pid" 2>/dev/null || true
		wait "$qemu_pid" 2>/dev/null || true
	fi
	# Keep what the guest wrote, then drop the overlay and the copies.
	if [ -d "$run/share/out" ]; then
		cp -a "$run/share/out/." "$results/" 2>/dev/null || true
	fi
	if [ -f "$run/console.log" ]; then
		cp "$run/console.log" "$results/console.log"
	fi
	rm -rf "$run"
}
trap cleanup EXIT
trap 'say "FAIL: line $LINENO: $BASH_COMMAND exited $?"' ERR
trap 'exit 130' INT TERM

mkdir -p "$run/share/out"
cp -a "$VM_IN" "$run/share/in"
cp "$here/guest/run.sh" "$run/share/in/guest-run.sh"
{
	printf 'VM_TESTS=%q\n' "$tests"
	printf 'VM_SKIP=%q\n' "$skip"
	printf 'VM_ROOTLESS_TESTS=%q\n' "$rootless"
	# The tests' own timeout ends before the host kills the guest, so a
	# hang comes back with go test's goroutine dump instead of nothing.
	# The rootless suite is short (about 70 s under TCG) and gets a fixed
	# 300 s; the root suite gets the rest less 2 minutes for boot and
	# shutdown. Halving the bound between the two starved the root run.
	rtt=300
	tt=$((timeout - 120 - rtt))
	[ "$tt" -ge 60 ] || tt=60
	printf 'TEST_TIMEOUT=%s\n' "${VM_TEST_TIMEOUT:-${tt}s}"
	printf 'ROOTLESS_TEST_TIMEOUT=%s\n' "${VM_TEST_TIMEOUT:-${rtt}s}"
} >"$run/share/in/config"
qemu-img create -q -f qcow2 -F raw -b "$image/rootfs.img" "$run/overlay.qcow2"

append="root=/dev/vda rw console=ttyS0,115200 panic=-1 systemd.unified_cgroup_hierarchy=1"
qemu=(qemu-system-x86_64 -accel "tcg,thread=$tcg" -cpu max -smp "$smp" -m "$mem"
	-nodefaults -no-reboot -display none
	-kernel "$image/vmlinuz" -initrd "$image/initrd.img"
	-drive "file=$run/overlay.qcow2,if=virtio,format=qcow2,cache=unsafe,discard=unmap"
	-virtfs "local,path=$run/share,mount_tag=vetto,security_model=none,id=vetto"
	-device virtio-rng-pci -nic none)

if [ "$shell" = yes ]; then
	say "serial console; log in as root (no password); Ctrl-a x quits qemu"
	"${qemu[@]}" -serial mon:stdio -append "$append"
	exit 0
fi

say "booting $(sed -n 's/^kernel=//p' "$image/facts") (image $(basename "$image"), tcg $tcg, -smp $smp -m $mem, bound ${timeout}s)"
start=$(date +%s.%N)
"${qemu[@]}" -serial "file:$run/console.log" -monitor none -append "$append vetto.vm=test" &
qemu_pid=$!
hung=no
deadline=$(($(date +%s) + timeout))
while kill -0 "$qemu_pid" 2>/dev/null; do
	if [ "$(date +%s)" -ge "$deadline" ]; then
		hung=yes
		kill -KILL "$qemu_pid" 2>/dev/null || true
		break
	fi
	sleep 1
done
wait "$qemu_pid" 2>/dev/null && qemu_rc=0 || qemu_rc=$?
qemu_pid=""
end=$(date +%s.%N)
out="$run/share/out"

# --- judge what came back -------------------------------------------------
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", b - a }'; }
fact() { sed -n "s/^$1=//p" "$out/facts" 2>/dev/null | tail -n 1 || true; }
last_console() {
	echo "--- last console lines ($guest) ---"
	tail -n "${1:-25}" "$run/console.log" 2>/dev/null | tr -d '\r' || true
	echo "---"
}
wall=$(secs "$start" "$end")
boot="?"
[ -s "$out/started" ] && boot=$(secs "$start" "$(cat "$out/started")")

problems=()
if [ "$hung" = yes ]; then
	problems+=("guest did not power off within ${timeout}s (killed)")
elif [ ! -s "$out/done" ]; then
	problems+=("guest stopped (qemu exit $qemu_rc) before the runner finished")
fi
if [ ! -s "$out/started" ]; then
	problems+=("the runner never started: the guest did not boot to it")
fi

# Counts of top-level tests from go test -v; subtests are named on failure.
count() { grep -cE "^--- $1: " "$2" 2>/dev/null || true; }
passed=0 failed=0 skipped=0
if [ -f "$out/root.log" ]; then
	passed=$(count PASS "$out/root.log")
	failed=$(count FAIL "$out/root.log")
	skipped=$(count SKIP "$out/root.log")
fi
selected="$(fact root_selected)"
if [ -s "$out/root.rc" ]; then
	rc=$(cat "$out/root.rc")
	if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
		problems+=("the root test binary exited $rc with no failed test (crash or timeout): $(grep -m1 -E '^(panic|fatal error):' "$out/root.log" || tail -n 1 "$out/root.log")")
	fi
	if [ -n "$selected" ] && [ $((passed + failed + skipped)) -lt "$selected" ]; then
		problems+=("only $((passed + failed + skipped)) of $selected selected root tests reported a result")
	fi
	if [ "$selected" = 0 ]; then
		problems+=("VM_TESTS=$tests VM_SKIP=$skip select 0 tests")
	fi
elif [ -s "$out/started" ]; then
	problems+=("the root tests did not finish (no root.rc)")
fi
[ "$failed" = 0 ] || problems+=("$failed root test(s) failed")

rootless_line="not run"
if [ -s "$out/rootless.rc" ]; then
	rrc=$(cat "$out/rootless.rc")
	if [ "$rrc" = none ]; then
		rootless_line="0 tests (none match $rootless)"
	else
		rp=$(count PASS "$out/rootless.log") rf=$(count FAIL "$out/rootless.log") rs=$(count SKIP "$out/rootless.log")
		rootless_line="$rp passed, $rf failed, $rs skipped (of $(fact rootless_selected))"
		[ "$rrc" = 0 ] || problems+=("the rootless tests exited $rrc ($rf failed)")
		passed=$((passed + rp)) failed=$((failed + rf)) skipped=$((skipped + rs))
	fi
fi

{
	echo "guest=$guest"
	echo "tcg_thread=$tcg"
	echo "wall_s=$wall"
	echo "boot_s=$boot"
	echo "root_tests_s=$(fact root_tests_s)"
	echo "passed=$passed failed=$failed skipped=$skipped"
} >"$results/summary"

if [ -s "$out/facts" ]; then
	say "$(fact os): kernel $(fact kernel), systemd $(fact systemd), $(fact cgroup_fs) [$(fact cgroup_controllers)], landlock $(fact landlock)"
	say "doctor: cgroup-mode $(fact doctor_cgroup_mode); cgroup.kill $(fact doctor_cgroup_kill)"
	say "user@1000: $(fact user_manager), controllers [$(fact user_controllers)], memory+pids delegated: $(fact user_delegated_memory_pids)"
	say "boot ${boot}s, root tests $(fact root_tests_s)s, wall ${wall}s; root: $selected selected, not run (VM_SKIP): $(fact root_excluded)"
	say "rootless (as tester): $rootless_line"
fi
for f in root.log rootless.log; do
	[ -f "$out/$f" ] || continue
	grep -E '^\s*--- (FAIL|SKIP): ' "$out/$f" | sed "s/^/vm $guest: $f: /" || true
done
if [ ${#problems[@]} -gt 0 ]; then
	for p in "${problems[@]}"; do say "FAIL: $p"; done
	last_console 25
	# Again after the console, so the tail of a long log still says why.
	for p in "${problems[@]}"; do say "FAIL: $p"; done
	echo "$guest: $passed passed, $failed failed, $skipped skipped"
	exit 1
fi
echo "$guest: $passed passed, $failed failed, $skipped skipped"
