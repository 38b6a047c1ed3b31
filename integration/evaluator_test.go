//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The launch evaluator's holes (the launch-evaluator issue, 13.1–13.10),
// each as the attack or the refused bundle.

// 13.1: a bundle that leaves out process.capabilities gets none — not the
// runtime's full set, which libcontainer leaves an init it is given no
// capabilities for — and the floor's forbid.capabilities cannot be
// skipped that way.
func TestUnsetCapabilitiesAreNone(t *testing.T) {
	e := newEnv(t)
	floor := filepath.Join(e.tmp, "runtime.toml")
	if err := os.WriteFile(floor, []byte("[forbid]\ncapabilities = [\"CAP_SYS_ADMIN\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noCaps := func(s *specs.Spec) { s.Process.Capabilities = nil }
	r := e.vetto("--config", floor, "run", "-b", e.bundle([]string{"grep", "-E", "^Cap(Eff|Prm|Bnd):", "/proc/self/status"}, noCaps), e.id())
	if r.code != 0 {
		t.Fatalf("run without process.capabilities: %s", r)
	}
	for _, set := range []string{"CapEff", "CapPrm", "CapBnd"} {
		if !strings.Contains(r.stdout, set+":\t0000000000000000") {
			t.Errorf("the process has %q; want %s empty", r.stdout, set)
		}
	}
	if !strings.Contains(r.stderr, "capabilities.unset") {
		t.Errorf("the launch line does not note the unset capabilities: %q", r.stderr)
	}
}

// 13.3: --no-verify is a degradation like any other.
func TestNoVerifyIsADegradation(t *testing.T) {
	e := newEnv(t)
	b := e.bundle([]string{"true"}, nil)
	id := e.id()
	if r := e.vetto("run", "--no-verify", "-b", b, id); r.code != 125 || !strings.Contains(r.stderr, "--allow-degraded=verify") {
		t.Fatalf("run --no-verify at standard: %s; want 125 asking for --allow-degraded=verify", r)
	}
	e.assertNothingLeft(id)
	if r := e.vetto("run", "--no-verify", "--allow-degraded", "verify", "-b", b, e.id()); r.code != 0 || !strings.Contains(r.stderr, "degraded: verify: post-launch verification skipped (--no-verify)") {
		t.Fatalf("accepted --no-verify: %s", r)
	}
	floor := filepath.Join(e.tmp, "runtime.toml")
	if err := os.WriteFile(floor, []byte("min_level = \"standard\"\n[forbid]\nno_verify = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id = e.id()
	if r := e.vetto("--config", floor, "run", "--no-verify", "--allow-degraded", "verify", "-b", b, id); r.code != 126 || !strings.Contains(r.stderr, "[floor.forbid.no-verify]") {
		t.Fatalf("--no-verify under a floor that forbids it: %s; want 126", r)
	}
	e.assertNothingLeft(id)
}

// 13.4: update cannot remove the limits the level required; verify keeps
// judging them.
func TestUpdateCannotRemoveLimits(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer() // strict: memory and pids limits
	r := e.vetto("update", "--memory", "-1", "--pids-limit", "-1", id)
	if r.code != 125 || !strings.Contains(r.stderr, "[update.removes-limit]") {
		t.Fatalf("update removing a strict container's limits: %s; want 125", r)
	}
	if v := e.verifyJSON(id); v.Verification != "PASS" || !v.has("P7/limits/memory") || !v.has("P7/limits/pids") {
		t.Fatalf("verify after the refused update: %+v; want PASS with both P7 checks", v)
	}
	// Raising a limit is the operator's call, audited, and P7 reads it
	// back.
	e.mustVetto("update", "--pids-limit", "128", id)
	if v := e.verifyJSON(id); v.Verification != "PASS" || !strings.Contains(v.found("P7/limits/pids"), "128") {
		t.Fatalf("verify after raising pids to 128: %+v", v)
	}

	// At standard, a removal needs --allow-degraded=limits, and then P7
	// says the limit is gone instead of dropping the check.
	std := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, strictSpec), std)
	if r := e.vetto("update", "--memory", "-1", std); r.code != 125 {
		t.Fatalf("update --memory -1 at standard: %s; want 125", r)
	}
	e.mustVetto("update", "--memory", "-1", "--allow-degraded", "limits", std)
	v := e.verifyJSON(std)
	if v.Verification == "PASS" || v.verdict("P7/limits/memory") != "UNAVAILABLE" {
		t.Fatalf("verify after an accepted removal: %+v; want P7/limits/memory UNAVAILABLE, never a clean PASS", v)
	}
	if d := e.state(std)["vetto"].(map[string]any)["degraded"]; !strings.Contains(toJSON(d), "removes the container's memory limit") {
		t.Errorf("state does not record the accepted removal: %v", d)
	}
}

// A limit written as a number no machine reaches is no limit: the kernel
// stores a memory limit of 2^63-1 as its own "unlimited", and pids.max's
// largest value is more tasks than the kernel can have. 60620e7 took
// both as raises of a strict container's limits — the removal that -1 is
// refused as — and verify then passed them; a strict bundle that set them
// at create ran with posture isolated. Both are judged as removals now.
func TestLimitsNoMachineReachesAreRemovals(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer() // strict: memory and pids limits
	for _, args := range [][]string{{"--memory", "9223372036854775807"}, {"--memory", "4096P"}, {"--pids-limit", "4194304"}} {
		r := e.vetto(append(append([]string{"update"}, args...), id)...)
		if r.code != 125 || !strings.Contains(r.stderr, "[update.removes-limit]") {
			t.Errorf("update %s of a strict container: %s; want 125 naming [update.removes-limit]", strings.Join(args, " "), r)
		}
	}
	if v := e.verifyJSON(id); v.Verification != "PASS" || strings.Contains(v.found("P7/limits/memory"), "922337") || strings.Contains(v.found("P7/limits/pids"), "4194304") {
		t.Errorf("verify after the refused updates: %+v; want the limits the container launched with", v)
	}
	e.mustVetto("delete", "-f", id)
	undone := e.id()
	r := e.vetto("run", "--security-level", "strict", "-b", e.bundle([]string{"true"}, edits(strictSpec, func(s *specs.Spec) {
		huge, many := int64(9223372036854775807), int64(4194304)
		s.Linux.Resources.Memory = &specs.LinuxMemory{Limit: &huge}
		s.Linux.Resources.Pids = &specs.LinuxPids{Limit: &many}
	})), undone)
	if r.code != 125 || !strings.Contains(r.stderr, "[strict.limits.memory]") || !strings.Contains(r.stderr, "[strict.limits.pids]") {
		t.Errorf("strict run with limits no machine reaches: %s; want 125 naming strict.limits.memory and strict.limits.pids", r)
	}
	e.assertNothingLeft(undone)
}

// 13.4 on cgroup v2: `update --resources` with a "unified" map writes
// memory.max and pids.max after the typed fields, so {"memory.max":"max"}
// removed a strict container's memory limit while the evaluator, which
// read only memory.limit, let the update through (the monitor then found
// the limit gone and killed the container). A create whose unified map
// undoes its typed limits is strict's missing limit too. The VM tier's
// guests run this; a host with v1 controllers refuses unified altogether.
func TestUpdateUnifiedLimits(t *testing.T) {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
		t.Skip("not a pure cgroup v2 host: libcontainer refuses linux.resources.unified with v1 controllers; the VM tier runs this test")
	}
	e := newEnv(t)
	id := e.runningContainer() // strict: memory 256 MiB, pids 64
	cg := filepath.Join("/sys/fs/cgroup/vetto-runtime", id)
	resources := func(json string) string {
		p := filepath.Join(e.tmp, "resources-"+strconv.Itoa(len(json))+".json")
		if err := os.WriteFile(p, []byte(json), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	live := func(file string) string {
		data, err := os.ReadFile(filepath.Join(cg, file))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(data))
	}
	for _, tc := range []struct{ name, json string }{
		{"memory.max max", `{"unified":{"memory.max":"max"}}`},
		{"pids.max max", `{"unified":{"pids.max":"max"}}`},
		{"typed raise undone by unified", `{"memory":{"limit":536870912},"unified":{"memory.max":"max"}}`},
	} {
		r := e.vetto("update", "--resources", resources(tc.json), id)
		if r.code != 125 || !strings.Contains(r.stderr, "[update.removes-limit]") {
			t.Errorf("update %s of a strict container: %s; want 125 naming update.removes-limit", tc.name, r)
		}
	}
	if got := live("memory.max"); got != strconv.Itoa(256<<20) {
		t.Errorf("memory.max is %s after the refused updates, want %d", got, 256<<20)
	}
	if got := live("pids.max"); got != "64" {
		t.Errorf("pids.max is %s after the refused updates, want 64", got)
	}
	// A unified value is a limit like the typed one: P7 reads it back.
	e.mustVetto("update", "--resources", resources(`{"unified":{"pids.max":"128"}}`), id)
	if v := e.verifyJSON(id); v.Verification != "PASS" || !strings.Contains(v.found("P7/limits/pids"), "128") {
		t.Errorf("verify after unified pids.max 128: %+v; want PASS reading 128", v)
	}
	if r := e.vetto("update", "--resources", resources(`{"unified":{"pids.max":"lots"}}`), id); r.code != 1 || !strings.Contains(r.stderr, "pids.max") || !strings.Contains(r.stderr, "lots") {
		t.Errorf("update with pids.max lots: %s; want exit 1 naming the value", r)
	}
	if got := live("pids.max"); got != "128" {
		t.Errorf("pids.max is %s after the bad update, want 128", got)
	}

	e.mustVetto("delete", "--force", id)

	// At create: typed limits undone by unified are no limits to strict.
	undone := e.id()
	b := e.bundle([]string{"sleep", "1000"}, edits(strictSpec, func(s *specs.Spec) {
		s.Linux.Resources.Unified = map[string]string{"memory.max": "max"}
	}))
	if r := e.vetto("run", "-d", "--security-level", "strict", "-b", b, undone); r.code != 125 || !strings.Contains(r.stderr, "[strict.limits.memory]") {
		t.Errorf("strict create with unified memory.max max: %s; want 125 naming strict.limits.memory", r)
	}
	e.assertNothingLeft(undone)
}

// linux.resources.unified writes any file of the container's cgroup
// directory, so a bundle's {"cgroup.procs": "<pid>"} moved a process of
// the host into the container's cgroup at create: under the container's
// limits, and killed with it at teardown. The same through update. The
// victim here is a sleep of the test's own; it must stay where it was,
// alive. cgroup v2 only (the VM tier).
func TestUnifiedCannotMoveHostProcesses(t *testing.T) {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
		t.Skip("not a pure cgroup v2 host: libcontainer refuses linux.resources.unified with v1 controllers; the VM tier runs this test")
	}
	e := newEnv(t)
	victim := exec.Command("sleep", "300")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
	pid := strconv.Itoa(victim.Process.Pid)
	where := func() string {
		data, err := os.ReadFile("/proc/" + pid + "/cgroup")
		if err != nil {
			t.Fatalf("the host's sleep %s: %v", pid, err)
		}
		return strings.TrimSpace(string(data))
	}
	before := where()
	// untouched: the host's sleep is where it was, and alive.
	untouched := func(after string) {
		t.Helper()
		if got := where(); got != before {
			t.Errorf("the host's sleep moved from %s to %s %s", before, got, after)
		}
		if !runningPid(victim.Process.Pid) {
			t.Fatalf("the host's sleep was killed %s", after)
		}
	}

	id := e.id()
	b := e.bundle([]string{"sleep", "1000"}, func(s *specs.Spec) {
		if s.Linux.Resources == nil {
			s.Linux.Resources = &specs.LinuxResources{}
		}
		s.Linux.Resources.Unified = map[string]string{"cgroup.procs": pid}
	})
	r := e.vetto("run", "-d", "-b", b, id)
	if r.code != 1 || !strings.Contains(r.stderr, "[resources.unified.interface]") {
		t.Errorf("run of a bundle whose unified map writes cgroup.procs: %s; want exit 1 naming resources.unified.interface", r)
	}
	e.vetto("delete", "--force", id)
	untouched("after the refused run")
	e.assertNothingLeft(id)

	// Through update of a running container.
	id = e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
	res := filepath.Join(e.tmp, "procs.json")
	if err := os.WriteFile(res, []byte(`{"unified":{"cgroup.procs":"`+pid+`"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e.vetto("update", "--resources", res, id); r.code != 1 || !strings.Contains(r.stderr, "[resources.unified.interface]") {
		t.Errorf("update writing cgroup.procs: %s; want exit 1 naming resources.unified.interface", r)
	}
	e.mustVetto("delete", "--force", id)
	untouched("after the refused update and the container's teardown")
}

// runningPid: pid exists and is not a zombie (a killed child of the test
// stays one until it is waited for).
func runningPid(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(data), ") ")
	return ok && !strings.HasPrefix(rest, "Z")
}

// 13.5: exec never gets more than the container's own process.
func TestExecNoMoreThanTheContainer(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "--security-level", "strict", "-b", e.bundle([]string{"sleep", "1000"}, edits(strictSpec, func(s *specs.Spec) {
		s.Process.User = specs.User{UID: 1000, GID: 1000}
		s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: []string{"CAP_KILL", "CAP_CHOWN"}}
		s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024}}
	})), id)
	proc := filepath.Join(e.tmp, "process.json")
	if err := os.WriteFile(proc, []byte(`{"args":["true"],"cwd":"/","user":{"uid":1000,"gid":1000},"noNewPrivileges":true,"rlimits":[{"type":"RLIMIT_NOFILE","hard":1048576,"soft":1048576}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		rule string
	}{
		{"--user 0", []string{"exec", "--user", "0", id, "true"}, "[exec.user]"},
		{"--cap of a bounding-only capability", []string{"exec", "--cap", "CAP_KILL", id, "true"}, "[exec.capabilities]"},
		{"--process with a higher rlimit", []string{"exec", "--process", proc, id}, "[exec.rlimits]"},
		{"--cwd into /proc", []string{"exec", "--cwd", "/proc/self/fd/3", id, "true"}, "[exec.cwd]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if r := e.vetto(tt.args...); r.code != 1 || !strings.Contains(r.stderr, tt.rule) {
				t.Fatalf("%s; want exit 1 naming %s", r, tt.rule)
			}
		})
	}
	if r := e.vetto("exec", id, "sh", "-c", "id -u; grep CapEff /proc/self/status"); r.code != 0 || !strings.HasPrefix(r.stdout, "1000\n") || !strings.Contains(r.stdout, "0000000000000000") {
		t.Fatalf("exec as the container's user: %s", r)
	}
}

// 13.7: at strict, a process that exits before post-launch verification
// is recorded as such (its canaries were judged before it could exec), its
// status passes through, and once it has exited state says so — never
// still VerifiedRuntime.
func TestStrictExitedBeforeVerification(t *testing.T) {
	e := newEnv(t)
	r := e.vetto("run", "--security-level", "strict", "-b", e.bundle([]string{"sh", "-c", "exit 3"}, strictSpec), e.id())
	if r.code != 3 {
		t.Fatalf("strict run of exit 3: %s; want 3", r)
	}
	id := e.id()
	e.mustVetto("run", "-d", "--security-level", "strict", "-b", e.bundle([]string{"true"}, strictSpec), id)
	e.waitStatus(id, "stopped")
	v := e.state(id)["vetto"].(map[string]any)
	if v["state"] != "Exited" {
		t.Fatalf("state of a strict container whose process exited: %v; want Exited", v)
	}
	// EXITED when the post-exec checks found it gone; PASS when they read
	// it before it went (a slow host): both are true.
	if v["verification"] != "EXITED" && v["verification"] != "PASS" {
		t.Fatalf("verification %v, want EXITED or PASS", v["verification"])
	}
}

// An init that dies while it is set up (here, a seccomp filter that
// refuses every call, as runc's "container process is already dead") is
// said as such: one line, exit 125, nothing left — not a page of FAILs of
// every check pre-launch verification could no longer make.
func TestInitDiedDuringSetupIsSaid(t *testing.T) {
	e := newEnv(t)
	b := e.bundle([]string{"true"}, func(s *specs.Spec) {
		s.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActErrno}
	})
	r := e.vetto("run", "-b", b, e.id())
	if r.code != 125 || !strings.Contains(r.stderr, "exited while it was being set up") || strings.Contains(r.stderr, "FAIL") {
		t.Fatalf("run with a seccomp filter that refuses everything: %s; want 125 saying the init exited while it was set up", r)
	}
	if r := e.mustVetto("list", "-q"); r.stdout != "" {
		t.Errorf("left: %q", r.stdout)
	}
}

// 13.8: a backend failure during create is the sandbox not established
// (125, TestBadSystemdCgroup has one: --systemd-cgroup without systemd),
// not a usage error; the user's own missing command stays 1, as with runc.
func TestMissingCommandIsNotASandboxFailure(t *testing.T) {
	e := newEnv(t)
	for _, cmd := range []string{"/nonexistent", "nonexistent-cmd"} {
		if r := e.vetto("run", "-b", e.bundle([]string{cmd}, nil), e.id()); r.code != 1 {
			t.Fatalf("run of a missing command %s: %s; want 1", cmd, r)
		}
	}
}

// 13.9: a cgroupsPath that names a populated host cgroup is refused, and
// the host process in it survives (delete -f used to cgroup.kill it).
func TestCgroupInUseRefused(t *testing.T) {
	e := newEnv(t)
	dir := "/sys/fs/cgroup/unified/vetto-test-host-" + strconv.Itoa(os.Getpid())
	if _, err := os.Stat("/sys/fs/cgroup/unified"); err != nil {
		dir = "/sys/fs/cgroup/vetto-test-host-" + strconv.Itoa(os.Getpid())
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := exec.Command("sleep", "300")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = victim.Process.Kill()
		_ = victim.Wait()
		_ = os.Remove(dir)
	})
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(victim.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	id := e.id()
	b := e.bundle([]string{"true"}, func(s *specs.Spec) { s.Linux.CgroupsPath = "/" + filepath.Base(dir) })
	r := e.vetto("run", "-b", b, id)
	if r.code != 125 || !strings.Contains(r.stderr, "[cgroup.in-use]") {
		t.Fatalf("run into a populated host cgroup: %s; want 125 naming cgroup.in-use", r)
	}
	_ = e.vetto("delete", "--force", id)
	time.Sleep(50 * time.Millisecond)
	// A killed process leaves its cgroup as it exits.
	if data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs")); !strings.Contains(string(data), strconv.Itoa(victim.Process.Pid)) {
		t.Fatalf("the host process in the cgroup was killed or moved: cgroup.procs %q", data)
	}
}

// 13.10: bundles written by runc spec 1.1.x (ambient capabilities without
// inheritable ones, which the kernel cannot raise) run as with runc: less
// privilege than asked is a note, and the exit status passes through.
func TestRuncSpecBundleRuns(t *testing.T) {
	runc, err := exec.LookPath("runc")
	if err != nil {
		t.Fatal("runc not found (make deps installs Debian's)")
	}
	e := newEnv(t)
	dir := t.TempDir()
	if out, err := exec.Command(runc, "spec", "--bundle", dir).CombinedOutput(); err != nil {
		t.Fatalf("runc spec: %v: %s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if c := s.Process.Capabilities; c == nil || len(c.Ambient) == 0 || len(c.Inheritable) != 0 {
		t.Logf("this runc spec does not list ambient without inheritable: %+v", c)
	}
	s.Root.Path = rootfs
	s.Process.Terminal = false
	s.Process.Args = []string{"sh", "-c", "exit 9"}
	writeSpec(t, dir, &s)
	r := e.vetto("run", "-b", dir, e.id())
	if r.code != 9 {
		t.Fatalf("run of runc spec's bundle: %s; want its exit status 9", r)
	}
	if !strings.Contains(r.stderr, "less privilege than asked") {
		t.Errorf("the launch line does not note the shortfall: %q", r.stderr)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
