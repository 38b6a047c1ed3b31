#!/bin/bash
# vm/guest/run.sh — the runner inside a guest. The host copies it to the
# share as in/guest-run.sh; vetto-vm-boot starts it at boot when the kernel
# command line has vetto.vm=test. It is not part of the image, so changing
# it does not rebuild one.
#
# Reads in/config (VM_TESTS, VM_SKIP, VM_ROOTLESS_TESTS, TEST_TIMEOUT), copies the
# binaries to the guest's own disk, writes the guest's facts, runs the
# tests as root and then the rootless ones as the normal user "tester"
# under its systemd user manager, and writes everything to out/ on the
# host: facts, doctor.{txt,json}, root.{log,rc}, rootless.{log,rc},
# journal.txt, and last "done". Then powers off. A step that fails is
# written down and the run goes on to the journal and the poweroff: the
# host judges from what is in out/.
set -euo pipefail

share=/mnt/vetto
in=$share/in
out=$share/out
opt=/opt/vetto
user=tester

exec >>"$out/runner.log" 2>&1
say() { echo "vetto-vm: $*" | tee /dev/console; }
fact() { echo "$1=$2" >>"$out/facts"; }

finish() {
	rc=$?
	say "runner done (exit $rc); collecting the journal"
	journalctl -b --no-pager -o short-monotonic >"$out/journal.txt" 2>&1 || true
	echo "$rc" >"$out/done"
	sync
	systemctl poweroff --no-block || poweroff -f
}
trap finish EXIT

# shellcheck source=/dev/null
. "$in/config"
say "runner started on $(uname -r)"
date +%s.%N >"$out/started"
# Boot finished (or degraded): logind and everything else are up.
state="$(timeout 120 systemctl is-system-running --wait || true)"
fact system_state "$state"
if [ "$state" != running ]; then
	systemctl --failed --no-pager >>"$out/runner.log" 2>&1 || true
fi
systemd-analyze time >"$out/boot-time.txt" 2>&1 || true

# The guest's own disk, not 9p: the runtime bind-mounts and re-execs
# itself, and the tests make their rootfs under /tmp.
rm -rf "$opt"
mkdir -p "$opt/bin" "$opt/integration"
cp "$in/vetto-runtime" "$opt/bin/"
cp "$in/integration.test" "$opt/integration/"
cp -r "$in/testdata" "$opt/integration/"
mkdir -p "$opt/prebuilt" && cp "$in"/prebuilt/* "$opt/prebuilt/"
install -m 0755 "$in/go" /usr/local/bin/go
chmod -R a+rX "$opt"
vetto=$opt/bin/vetto-runtime

# Facts of the guest, as the runtime sees them and as the system says.
fact kernel "$(uname -r)"
fact systemd "$(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')"
fact cgroup_fs "$(stat -fc %T /sys/fs/cgroup)"
fact cgroup_controllers "$(tr ' ' ',' </sys/fs/cgroup/cgroup.controllers 2>/dev/null)"
fact os "$(. /etc/os-release && echo "$PRETTY_NAME")"
"$vetto" doctor >"$out/doctor.txt" 2>&1 || true
"$vetto" doctor --format json >"$out/doctor.json" 2>/dev/null || true
probe() { jq -r --arg n "$1" '.probes[] | select(.name == $n) | "\(.status) \(.detail // "")"' "$out/doctor.json" 2>/dev/null || true; }
fact landlock "$(probe landlock)"
fact landlock_abi "$(probe landlock | sed -n 's/.*ABI \([0-9]*\).*/\1/p')"
fact doctor_cgroup_mode "$(probe cgroup-mode)"
fact doctor_cgroup_kill "$(probe cgroup.kill)"

# Pin the scheduler's CFS-bandwidth static key on for the whole run: a
# cgroup with a CPU quota and no process. Without it the first cpu.max a
# test sets flips the key, the kernel patches its scheduler text with int3
# breakpoints (text_poke_bp) while the other vCPU runs it, and under TCG
# that race panics the guest (seen twice on Debian 13's 6.12, in
# dequeue_entity and set_next_task_fair, both behind cfs_bandwidth_used()).
# Pinned, the key never changes again during the tests.
pin=/sys/fs/cgroup/vetto-vm-cfs-bandwidth-pin
if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu >/sys/fs/cgroup/cgroup.subtree_control || true
	mkdir -p "$pin" && echo "100000 100000" >"$pin/cpu.max" || true
fi
fact cfs_bandwidth_pin "$(cat "$pin/cpu.max" 2>/dev/null || echo none)"

cd "$opt/integration"
testenv=(CI=true TESTONLY_VETTO_BINARY="$vetto")

# How many tests each regex selects: a run that stops early (a crash, the
# timeout) shows as tests that never reported.
# (-test.list ignores -test.skip: the skipped ones are taken out here.)
names() { env "${testenv[@]}" ./integration.test -test.list "$1" 2>/dev/null | grep '^Test' || true; }
list() { names "$1" | grep -c . || true; }
root_names="$(names "$VM_TESTS")"
if [ -n "$VM_SKIP" ]; then
	fact root_excluded "$(echo "$root_names" | grep -E "$VM_SKIP" | xargs)"
	root_names="$(echo "$root_names" | grep -vE "$VM_SKIP" || true)"
fi
fact root_selected "$(echo "$root_names" | grep -c . || true)"

say "root: running tests matching $VM_TESTS, skipping $VM_SKIP"
t0=$(date +%s)
set +e
env "${testenv[@]}" ./integration.test -test.v -test.count=1 -test.timeout "$TEST_TIMEOUT" \
	-test.run "$VM_TESTS" -test.skip "$VM_SKIP" >"$out/root.log" 2>&1
echo $? >"$out/root.rc"
set -e
fact root_tests_s $(($(date +%s) - t0))
say "root: exit $(cat "$out/root.rc")"

# The normal user with a systemd user manager: lingering starts
# user@1000.service, which systemd delegates the user's cgroup subtree to
# (Delegate=yes is the default for user@.service).
uid="$(id -u "$user")"
loginctl enable-linger "$user"
for _ in $(seq 120); do
	systemctl is-active --quiet "user@$uid.service" && break
	sleep 0.5
done
fact user_manager "$(systemctl is-active "user@$uid.service" || true)"
ucg=/sys/fs/cgroup/user.slice/user-$uid.slice/user@$uid.service
fact user_controllers "$(tr ' ' ',' <"$ucg/cgroup.controllers" 2>/dev/null)"
delegated=yes
for c in memory pids; do
	grep -qw "$c" "$ucg/cgroup.controllers" 2>/dev/null || delegated=no
done
fact user_delegated_memory_pids "$delegated"

n="$(list "$VM_ROOTLESS_TESTS")"
fact rootless_selected "$n"
if [ "$n" = 0 ]; then
	say "rootless: 0 tests match $VM_ROOTLESS_TESTS"
	echo none >"$out/rootless.rc"
else
	say "rootless: running $n tests matching $VM_ROOTLESS_TESTS as $user"
	# A transient unit of the user's own manager, with its cgroup
	# delegated, as a rootless caller under systemd has it.
	t0=$(date +%s)
	set +e
	runuser -u "$user" -- env XDG_RUNTIME_DIR="/run/user/$uid" \
		systemd-run --user --wait --pipe --collect --quiet -p Delegate=yes \
		--working-directory="$opt/integration" -E CI=true -E TESTONLY_VETTO_BINARY="$vetto" \
		./integration.test -test.v -test.count=1 -test.timeout "${ROOTLESS_TEST_TIMEOUT:-$TEST_TIMEOUT}" \
		-test.run "$VM_ROOTLESS_TESTS" >"$out/rootless.log" 2>&1 </dev/null
	echo $? >"$out/rootless.rc"
	set -e
	fact rootless_tests_s $(($(date +%s) - t0))
	say "rootless: exit $(cat "$out/rootless.rc")"
fi
