//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// monitorInterval is the period the monitor tests configure.
const monitorInterval = 500 * time.Millisecond

// monitored runs args detached under a runtime.toml whose [monitor]
// interval is monitorInterval, and returns its id, the init's pid and the
// --config flag for later commands.
func (e *env) monitored(args []string, edit func(*specs.Spec)) (id string, pid int, config []string) {
	e.t.Helper()
	conf := filepath.Join(e.tmp, "monitor.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("[monitor]\ninterval = %q\n", monitorInterval)), 0o644); err != nil {
		e.t.Fatal(err)
	}
	config = []string{"--config", conf}
	id = e.id()
	e.mustVetto(append(config, "run", "-d", "-b", e.bundle(args, edit), id)...)
	st := e.vettoState(id)
	if st["state"] != "VerifiedRuntime" {
		e.t.Fatalf("state %v, want VerifiedRuntime", st)
	}
	return id, int(e.state(id)["pid"].(float64)), config
}

// killedByMonitor waits up to one monitor period (and the time a round
// takes) for the container to be killed, and checks the record says why.
func (e *env) killedByMonitor(id, check string, since time.Time) {
	e.t.Helper()
	// One period, and the time a round takes on a slow (emulated) host.
	deadline := since.Add(monitorInterval + 5*time.Second)
	for time.Now().Before(deadline) {
		if st, _ := e.state(id)["status"].(string); st == "stopped" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st, _ := e.state(id)["status"].(string); st != "stopped" {
		e.t.Fatalf("the monitor did not kill %s within %s of the change (status %s)", id, time.Since(since).Round(time.Millisecond), st)
	}
	rec := e.record(id)
	if rec.State != "DriftDetected" || !strings.Contains(rec.Reason, check) {
		e.t.Fatalf("killed container: state %s, reason %q; want DriftDetected naming %s", rec.State, rec.Reason, check)
	}
	if rec.Monitor == nil || rec.Monitor.Kills != 1 {
		e.t.Fatalf("record's monitor %+v: want 1 kill", rec.Monitor)
	}
	e.t.Logf("killed %s after the change", time.Since(since).Round(time.Millisecond))
}

type recordView struct {
	State   string `json:"state"`
	Reason  string `json:"reason"`
	Monitor *struct {
		Pid    int `json:"pid"`
		Rounds int `json:"rounds"`
		Kills  int `json:"kills"`
	} `json:"monitor"`
}

func (e *env) record(id string) recordView {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, id, "vetto.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	var r recordView
	if err := json.Unmarshal(data, &r); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// The monitor (14.3), at standard, kills within one period a container
// whose boundary the host changed behind vetto's back after launch:
// a process moved out of its cgroup, a mask unmounted, a limit raised.
// Each was left running on ac83dfa, which had no monitor.
func TestMonitorKillsOnDrift(t *testing.T) {
	pidsLimit := int64(64)
	limited := func(s *specs.Spec) {
		s.Linux.Resources = &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &pidsLimit}}
	}
	t.Run("process moved out of the cgroup", func(t *testing.T) {
		e := newEnv(t)
		id, pid, _ := e.monitored([]string{"sh", "-c", "sleep 1000 & exec sleep 1001"}, nil)
		defer e.vetto("delete", "--force", id)
		child := childOf(t, pid)
		unified := unifiedRoot()
		since := time.Now()
		if err := os.WriteFile(filepath.Join(unified, "cgroup.procs"), []byte(strconv.Itoa(child)), 0o644); err != nil {
			t.Fatal(err)
		}
		e.killedByMonitor(id, "P4/contained", since)
		waitFor(t, func() bool { return !pidAlive(child) })
	})
	t.Run("mask unmounted", func(t *testing.T) {
		e := newEnv(t)
		id, pid, _ := e.monitored([]string{"sleep", "1000"}, nil)
		defer e.vetto("delete", "--force", id)
		since := time.Now()
		if err := unmountIn(pid, "/proc/keys"); err != nil {
			t.Fatalf("umount the mask: %v", err)
		}
		e.killedByMonitor(id, "P6/masked/proc/keys", since)
	})
	t.Run("limit raised", func(t *testing.T) {
		e := newEnv(t)
		id, _, _ := e.monitored([]string{"sleep", "1000"}, limited)
		defer e.vetto("delete", "--force", id)
		var pidsMax string
		for _, dir := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
			if p := filepath.Join(dir, "vetto-runtime", id, "pids.max"); fileExists(p) {
				pidsMax = p
				break
			}
		}
		if pidsMax == "" {
			t.Fatal("no pids.max for the container")
		}
		since := time.Now()
		if err := os.WriteFile(pidsMax, []byte("max"), 0o644); err != nil {
			t.Fatal(err)
		}
		e.killedByMonitor(id, "P7/limits/pids", since)
	})
}

// The monitor lives exactly as long as the container and is counted in
// its receipt: delete stops it, and says how many rounds it ran.
func TestMonitorLifetime(t *testing.T) {
	e := newEnv(t)
	id, _, _ := e.monitored([]string{"sleep", "1000"}, nil)
	rec := e.record(id)
	if rec.Monitor == nil || rec.Monitor.Pid == 0 {
		t.Fatalf("record's monitor %+v: want its pid", rec.Monitor)
	}
	mon := rec.Monitor.Pid
	if !pidAlive(mon) {
		t.Fatalf("the monitor (pid %d) is not running", mon)
	}
	// At least two rounds recorded (a slow guest's rounds take longer than
	// the interval: wait for them rather than for a time). delete does
	// not wait for a round under way: that one is not counted.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := e.record(id).Monitor; m != nil && m.Rounds >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the monitor recorded %+v rounds in 30 s, want 2", e.record(id).Monitor)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.mustVetto("delete", "--force", id)
	// delete returns once the monitor is on its way out (PF_EXITING);
	// its exit completes a moment later.
	deadline = time.Now().Add(2 * time.Second)
	for pidAlive(mon) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pidAlive(mon) {
		t.Errorf("the monitor (pid %d) outlived its container", mon)
	}
	receipt := lastReceipt(t, hostAuditLog, id)
	if receipt == nil {
		t.Fatalf("no receipt of %s in %s", id, hostAuditLog)
	}
	if receipt.Monitor == nil || !receipt.Monitor.Stopped || receipt.Monitor.Rounds < 2 || receipt.Monitor.Pid != mon {
		t.Fatalf("receipt's monitor %+v: want pid %d, stopped, at least 2 rounds", receipt.Monitor, mon)
	}

	// A container whose process exits on its own: the monitor leaves.
	id2, _, _ := e.monitored([]string{"sleep", "0.5"}, nil)
	mon2 := e.record(id2).Monitor.Pid
	waitFor(t, func() bool { return !pidAlive(mon2) })
	e.mustVetto("delete", id2)
}

// monitorsOf lists the monitor processes of container id: start spawns
// them as `vetto-runtime … monitor --spawned <id>`.
func monitorsOf(id string) []int {
	var out []int
	for _, pid := range clientProcsWith("monitor\x00--spawned\x00" + id + "\x00") {
		if pidAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// A create begins the container's monitor, before it knows whether the
// launch will hold. A start that then fails must not leave that monitor
// behind: not for the container's life, not for the one look it would
// take to find the start failed (a poststart hook that fails, after
// verification passed). Nor must a create that fails after it began one:
// a P3 canary FAIL, judged at create before the program could run.
func TestFailedStartLeavesNoMonitor(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*specs.Spec)
		// atCreate: the create itself fails (the canaries are judged there).
		atCreate bool
	}{
		{"poststart hook fails", func(s *specs.Spec) {
			hookSet(s, "poststart", hookShell("exit 1"))
		}, false},
		{"canary FAIL", func(s *specs.Spec) {
			// The host's network, annotated as none: the loopback
			// canary reaches the host, P3/loopback-connect FAILs.
			withoutNamespace(specs.NetworkNamespace)(s)
			s.Annotations = map[string]string{"dev.vetto.net": "none"}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			defer e.vetto("delete", "--force", id)
			b := e.bundle([]string{"sleep", "1000"}, tc.edit)
			if tc.atCreate {
				if r := e.vetto("create", "-b", b, id); r.code != 125 || !strings.Contains(r.stderr, "P3/loopback-connect: FAIL") {
					t.Fatalf("create: %s; want 125 naming P3/loopback-connect: FAIL", r)
				}
			} else {
				e.mustVetto("create", "-b", b, id)
				if r := e.vetto("start", id); r.code == 0 {
					t.Fatalf("start: %s; want it to fail", r)
				}
			}
			if m := monitorsOf(id); len(m) > 0 {
				t.Fatalf("monitor %v of %s alive after its launch failed", m, id)
			}
			if !tc.atCreate {
				e.mustVetto("delete", "--force", id)
			}
			e.assertNothingLeft(id)
		})
	}
}

// A monitor start spawned watches only while the container's record
// names it: one whose start died before writing its pid, or started by
// mistake with --spawned beside the real one, leaves at its first look
// instead of judging (and killing) a container that is not its to watch.
// By hand, without --spawned, a monitor still runs beside the real one.
func TestSpawnedMonitorNeedsTheRecord(t *testing.T) {
	e := newEnv(t)
	id, _, config := e.monitored([]string{"sleep", "1000"}, nil)
	named := e.record(id).Monitor.Pid
	stray := exec.Command(binary, append(append([]string{"--root", e.root}, config...), "monitor", "--spawned", id)...)
	if err := stray.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- stray.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the stray monitor: %v; want a quiet exit", err)
		}
	case <-time.After(5 * time.Second):
		_ = stray.Process.Kill()
		<-exited
		t.Fatalf("a --spawned monitor the record does not name (it names %d) still ran after 5 s", named)
	}
	if !pidAlive(named) || e.record(id).Monitor.Pid != named {
		t.Fatalf("the named monitor %d: alive %v, record %+v", named, pidAlive(named), e.record(id).Monitor)
	}
	byHand := exec.Command(binary, append(append([]string{"--root", e.root}, config...), "monitor", id)...)
	if err := byHand.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = byHand.Process.Kill(); _ = byHand.Wait() }()
	time.Sleep(2 * monitorInterval)
	if !pidAlive(byHand.Process.Pid) {
		t.Fatalf("a monitor run by hand left while its container runs")
	}
	e.mustVetto("delete", "--force", id)
}

// unmountIn unmounts path in pid's mount namespace, as a host admin would,
// from a thread of this process that joins it (and never runs anything
// else: it is locked and left to die with the goroutine).
func unmountIn(pid int, path string) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is discarded
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			errc <- err
			return
		}
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNS); err != nil {
			errc <- err
			return
		}
		errc <- unix.Unmount(path, unix.MNT_DETACH)
	}()
	return <-errc
}

// pidAlive: pid is a live process (not gone, not a zombie waiting for a
// parent that has not reaped it yet).
func pidAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// childOf is the one child of pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	var child int
	waitFor(t, func() bool {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		f := strings.Fields(string(data))
		if len(f) == 1 {
			child, _ = strconv.Atoi(f[0])
		}
		return child != 0
	})
	return child
}

// unifiedRoot is the root of the cgroup v2 hierarchy (pure v2 or the
// hybrid host's unified mount).
func unifiedRoot() string {
	if fileExists("/sys/fs/cgroup/unified/cgroup.procs") {
		return "/sys/fs/cgroup/unified"
	}
	return "/sys/fs/cgroup"
}

// hostAuditLog is the host-wide audit log a root runtime keeps by default.
const hostAuditLog = "/var/lib/vetto-runtime/audit.jsonl"

// create begins the container's monitor (start then spends nothing on
// it): the record names it from Launchable on; until the start it waits
// and judges nothing (a created init is not the program it will verify);
// the start keeps it rather than begin another, and its rounds begin
// soon after; delete stops it. A create that fails leaves none.
func TestCreateBeginsTheMonitor(t *testing.T) {
	e := newEnv(t)
	conf := filepath.Join(e.tmp, "monitor.toml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("[monitor]\ninterval = %q\n", monitorInterval)), 0o644); err != nil {
		t.Fatal(err)
	}
	id := e.id()
	e.mustVetto("--config", conf, "create", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
	rec := e.record(id)
	if rec.Monitor == nil || !pidAlive(rec.Monitor.Pid) {
		t.Fatalf("after create: record's monitor %+v, want a live one", rec.Monitor)
	}
	mon := rec.Monitor.Pid
	if m := monitorsOf(id); len(m) != 1 || m[0] != mon {
		t.Fatalf("after create: monitors %v, want [%d]", m, mon)
	}
	time.Sleep(3 * monitorInterval)
	if rec := e.record(id); rec.State != "Launchable" || rec.Monitor == nil || rec.Monitor.Rounds != 0 {
		t.Fatalf("created, not started: state %s, monitor %+v; want Launchable and no round", rec.State, rec.Monitor)
	}
	e.mustVetto("--config", conf, "start", id)
	if m := monitorsOf(id); len(m) != 1 || m[0] != mon {
		t.Fatalf("after start: monitors %v, want create's [%d] alone", m, mon)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec := e.record(id)
		if rec.Monitor != nil && rec.Monitor.Pid == mon && rec.Monitor.Rounds >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after start: monitor %+v, want create's (%d) with a round", rec.Monitor, mon)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.mustVetto("delete", "--force", id)
	if pidAlive(mon) {
		t.Fatalf("monitor %d alive after delete", mon)
	}

	failed := e.id() + "-failed"
	if r := e.vetto("create", "-b", e.bundle([]string{"/no/such/program"}, nil), failed); r.code == 0 {
		t.Fatalf("create of a missing program: %s; want a failure", r)
	}
	if m := monitorsOf(failed); len(m) > 0 {
		t.Fatalf("monitor %v of %s alive after its create failed", m, failed)
	}
}

// The monitor create begins lives as long as the container: it must hold
// nothing its caller handed create. conmon passes its sync pipes, a shell
// or CI runner a pipe it reads to the end; a monitor that kept the write
// end would leave that reader waiting for the container's life.
func TestCreateMonitorHoldsNothingOfItsCaller(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(binary, "--root", e.root, "create", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
	cmd.ExtraFiles = []*os.File{w} // fd 3 of create, not --preserve-fds
	res := e.runCmd(cmd)
	w.Close()
	defer e.vetto("delete", "--force", id)
	if res.code != 0 {
		t.Fatalf("create: %s", res)
	}
	if m := monitorsOf(id); len(m) != 1 {
		t.Fatalf("monitors of %s: %v, want one", id, m)
	}
	_ = r.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	if _, err := r.Read(b[:]); err == nil || os.IsTimeout(err) {
		t.Fatalf("the pipe create's caller passed it is still open 5 s after create returned (read: %v): monitor %v holds it", err, monitorsOf(id))
	}
}

// A container that joins another's pid namespace — podman or docker --pid
// container:, a Kubernetes pod that shares its process namespace, the
// ephemeral container of kubectl debug --target — puts its processes in
// that namespace but in its own cgroup. That is no escape: the monitor and
// verify of the target must not kill it for them (fb9919b did, within one
// period: P4/contained). A process that entered the namespace from
// anywhere else is still an intruder.
func TestJoinedPidNamespaceIsNotDrift(t *testing.T) {
	e := newEnv(t)
	target, pid, config := e.monitored([]string{"sleep", "1000"}, nil)
	defer e.vetto("delete", "--force", target)
	joiner := e.id()
	e.mustVetto(append(config, "run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, func(s *specs.Spec) {
		for i, ns := range s.Linux.Namespaces {
			if ns.Type == specs.PIDNamespace {
				s.Linux.Namespaces[i].Path = fmt.Sprintf("/proc/%d/ns/pid", pid)
			}
		}
	}), joiner)...)
	defer e.vetto("delete", "--force", joiner)

	// Three periods of the target's monitor with the joiner beside it.
	time.Sleep(3 * monitorInterval)
	for _, id := range []string{target, joiner} {
		if st, _ := e.state(id)["status"].(string); st != "running" {
			t.Fatalf("%s is %s with the joiner in the target's pid namespace (record %+v)", id, st, e.record(id))
		}
	}
	if rec := e.record(target); rec.State != "VerifiedRuntime" {
		t.Fatalf("target's record: state %s, reason %q; want VerifiedRuntime", rec.State, rec.Reason)
	}
	v, r := e.verify(target)
	if r.code != 0 || v.verdict("P4/contained") != "PASS" || !strings.Contains(v.found("P4/contained"), joiner) {
		t.Fatalf("verify of the target: %s; P4/contained %s %q, want PASS naming the joiner's cgroup", r, v.verdict("P4/contained"), v.found("P4/contained"))
	}

	// A process of the host's, nsenter'd into the namespace, is in no
	// container's cgroup: the target is killed for it.
	since := time.Now()
	intruder := exec.Command("nsenter", "--target", strconv.Itoa(pid), "--pid", "--", "sleep", "1000")
	if err := intruder.Start(); err != nil {
		t.Fatalf("nsenter: %v", err)
	}
	defer func() { _ = intruder.Process.Kill(); _, _ = intruder.Process.Wait() }()
	e.killedByMonitor(target, "P4/contained", since)
}
