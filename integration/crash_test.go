//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// A runtime killed with SIGKILL in the middle of create (here while a
// createRuntime hook runs) leaves a half-built container. delete must
// clean up everything, including cgroups, and never report a clean
// container it did not clean. The leak check after the test enforces it.
func TestCreateKilledMidway(t *testing.T) {
	for _, force := range []bool{false, true} {
		name := "delete"
		if force {
			name = "delete --force"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			// A duration no one else sleeps, so that only this hook is
			// killed below.
			hookSleep := fmt.Sprintf("30.%06d", rand.IntN(1000000))
			b := e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
				s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/sleep", Args: []string{"sleep", hookSleep}}}}
			})
			cmd, out := e.startCreate(b, id)
			// Wait until the container's cgroup exists: the init is there.
			deadline := time.Now().Add(10 * time.Second)
			for len(cgroupDirs(id)) == 0 {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("create never got to its hook; output %q", readAll(t, out))
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			// The hook (a child of the dead runtime) is not the container's.
			_ = exec.Command("pkill", "-f", "^sleep "+regexp.QuoteMeta(hookSleep)+"$").Run()

			if st := e.state(id); st["status"] == "running" {
				t.Fatalf("a half-created container claims to be running: %v", st)
			}
			args := []string{"delete", id}
			if force {
				args = []string{"delete", "--force", id}
			}
			if r := e.vetto(args...); r.code != 0 {
				t.Fatalf("%s: %s", strings.Join(args, " "), r)
			}
			if d := cgroupDirs(id); len(d) > 0 {
				t.Fatalf("cgroups left after delete: %v", d)
			}
			if r := e.vetto("state", id); !strings.Contains(r.stderr, "container does not exist") {
				t.Fatalf("state after delete: %s", r)
			}
		})
	}
}

// A create killed after the backend built its container and before it
// recorded the container Launchable — here during pre-launch
// verification — leaves the record at Compiled (Constructed is not
// written) with a live init waiting in its cgroups. delete --force must
// find that container through the backend and tear it down: no process,
// no cgroup, no state left.
func TestCreateKilledAfterBackendBuilt(t *testing.T) {
	fb := buildFaultBinary(t)
	e := newEnv(t)
	id := e.id()
	cmd := vettoCmdWith(e, fb, "create", "-b", e.bundle([]string{"sleep", "100"}, nil), id)
	cmd.Env = append(os.Environ(), "TESTONLY_VETTO_FAULT=slow-cgroup-facts:2s")
	out := e.tempFile()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	backendState := filepath.Join(e.root, id, "backend", "state.json")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(backendState); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("create never built its container; output %q", readAll(t, out))
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // into the first slowed cgroup read
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	if st := e.vettoState(id); st["state"] != "Compiled" {
		t.Fatalf("record after create was killed in pre-launch verification: %v; want Compiled", st)
	}
	if procs := processesInCgroup(id); len(procs) == 0 {
		t.Fatalf("no init left in the container's cgroups: the kill came outside the window under test (output %q)", readAll(t, out))
	}
	deleteForceLeavesNothing(t, e, id)
}

// A run does not write the Launchable record its create would: the start
// follows under the same lock and writes the state it ends in. A run
// killed after the user's process execed, before that write (here inside
// the post-exec checks, slowed), leaves a record that claims nothing —
// no Running, no VerifiedRuntime, no verification — and delete --force
// kills the running process and removes every cgroup and the state.
func TestRunKilledBeforeItsStartRecord(t *testing.T) {
	fb := buildFaultBinary(t)
	e := newEnv(t)
	id := e.id()
	cmd := vettoCmdWith(e, fb, "run", "-b", e.bundle([]string{"sleep", "100"}, nil), id)
	// A verification reads the init's membership once per hierarchy (ten
	// on a hybrid host, one on pure v2): each read slowed so that a round
	// takes 1.5 s, which leaves the post-exec round's 1.5 s to kill the
	// run in, even in a slow guest.
	hierarchies := 0
	if data, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		hierarchies = strings.Count(strings.TrimSpace(string(data)), "\n") + 1
	}
	perRead := 1500 * time.Millisecond / time.Duration(max(hierarchies, 1))
	cmd.Env = append(os.Environ(), "TESTONLY_VETTO_FAULT=slow-cgroup-facts:"+perRead.String())
	out := e.tempFile()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		e.vetto("delete", "--force", id)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for !slices.ContainsFunc(processesInCgroup(id), func(pid string) bool {
		comm, _ := os.ReadFile("/proc/" + pid + "/comm")
		return strings.TrimSpace(string(comm)) == "sleep"
	}) {
		if time.Now().After(deadline) {
			t.Fatalf("the run's process never execed; output %q", readAll(t, out))
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The post-exec checks began at the exec; their record comes after
	// all of the slowed reads.
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	killed = true

	st := e.vettoState(id)
	t.Logf("record after the kill: state %v", st["state"])
	if s := st["state"]; s != "Compiled" && s != "Launchable" || st["verification"] != nil {
		t.Fatalf("record after run was killed before its start's record: %v; want Compiled (or Launchable), no verification", st)
	}
	if procs := processesInCgroup(id); len(procs) == 0 {
		t.Fatalf("no process left in the container's cgroups: the kill came outside the window under test (output %q)", readAll(t, out))
	}
	deleteForceLeavesNothing(t, e, id)
}

// Between create and start no runtime process runs; what can crash there
// is the container's waiting init. A container is Launchable after create,
// never claims a runtime verification, and one whose init died cannot be
// started into a verified container; delete removes it.
func TestCrashBetweenCreateAndStart(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("create", "-b", e.bundle([]string{"sleep", "100"}, nil), id)
	if st := e.vettoState(id); st["state"] != "Launchable" || st["verification"] != nil {
		t.Fatalf("created container: %v", st)
	}
	// The init dies between create and start (the OOM killer, an admin):
	// start must not run anything nor claim a verified container, and a
	// plain delete must then find it stopped and remove it.
	pid := int(e.state(id)["pid"].(float64))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(id, "stopped")
	if r := e.vetto("start", id); r.code == 0 {
		t.Fatalf("start of a container whose init died: %s", r)
	}
	if st := e.vettoState(id); st["state"] == "Running" || st["state"] == "VerifiedRuntime" || st["verification"] == "PASS" {
		t.Fatalf("after a start of a dead init: %v", st)
	}
	e.mustVetto("delete", id)
}

// A runtime killed with SIGKILL during start — while a startContainer hook
// runs in the container, before the user process — leaves a container
// that does not claim VerifiedRuntime, and delete --force removes it and
// every process in it.
func TestCrashDuringStart(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	b := e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
		s.Hooks = &specs.Hooks{StartContainer: []specs.Hook{{Path: "/bin/sleep", Args: []string{"sleep", "30"}}}}
	})
	e.mustVetto("create", "-b", b, id)
	cmd := exec.Command(binary, "--root", e.root, "start", id)
	out := e.tempFile()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(cgroupPids(id)) < 2 {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the startContainer hook never ran; output %q", readAll(t, out))
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if st := e.vettoState(id); st["state"] == "VerifiedRuntime" || st["verification"] == "PASS" {
		t.Fatalf("a start killed before the process ran claims verification: %v", st)
	}
	// The container's monitor is create's, named in the record, and the
	// container is still there to watch; a killed start leaves no other
	// (one it began would be unnamed, and leave at its first look).
	named := e.record(id).Monitor
	if named == nil || !pidAlive(named.Pid) {
		t.Fatalf("the record's monitor %+v: want create's, alive", named)
	}
	deadline = time.Now().Add(5 * time.Second)
	for m := monitorsOf(id); len(m) != 1 || m[0] != named.Pid; m = monitorsOf(id) {
		if time.Now().After(deadline) {
			t.Fatalf("monitors %v of %s 5 s after its start was killed; want create's (%d) alone", m, id, named.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.mustVetto("delete", "--force", id)
	if pidAlive(named.Pid) {
		t.Fatalf("monitor %d alive after delete", named.Pid)
	}
}

// A runtime killed with SIGKILL at any point of a delete leaves nothing
// that a second delete --force cannot clean, and a state that survives
// never claims a clean receipt for a container that still has processes.
func TestCrashDuringDelete(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			e.mustVetto("run", "-d", "-b", e.bundle([]string{"sh", "-c", "setsid sh -c 'sleep 1000 &'; (sleep 1000 &); exec sleep 1000"}, nil), id)
			cmd := exec.Command(binary, "--root", e.root, "delete", "--force", id)
			out := e.tempFile()
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			r := e.vetto("state", id)
			if r.code == 0 {
				var st struct {
					Vetto struct {
						Receipt *receipt `json:"receipt"`
					} `json:"vetto"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
					t.Fatal(err)
				}
				if rc := st.Vetto.Receipt; rc != nil && len(rc.Remaining) == 0 && len(cgroupPids(id)) > 0 {
					t.Fatalf("receipt claims nothing remains while %v run", cgroupPids(id))
				}
			}
			e.mustVetto("delete", "--force", id)
		})
	}
}

// deleteForceLeavesNothing runs delete --force on a container a crash left
// half made, and requires no process, no cgroup and no state of it after.
func deleteForceLeavesNothing(t *testing.T, e *env, id string) {
	t.Helper()
	if r := e.vetto("delete", "--force", id); r.code != 0 {
		t.Fatalf("delete --force: %s", r)
	}
	if procs := processesInCgroup(id); len(procs) > 0 {
		t.Fatalf("processes left after delete: %v", procs)
	}
	if d := cgroupDirs(id); len(d) > 0 {
		t.Fatalf("cgroups left after delete: %v", d)
	}
	if r := e.vetto("state", id); !strings.Contains(r.stderr, "container does not exist") {
		t.Fatalf("state after delete: %s", r)
	}
}

// A create killed the moment its first cgroup directory appears — on
// cgroup v1 libcontainer makes cpuset's first, the devices one some
// milliseconds later, and its state file later still — leaves a record
// at Compiled and no backend state: delete --force sweeps the cgroups the
// frozen spec names. On 824f1a7 the sweep looked only at whether the
// devices cgroup existed, skipped the rest, and left the cpuset cgroup
// behind while its receipt said the cgroups were removed (4 of 60 runs
// killed at random points; here, most attempts).
func TestCreateKilledAtItsFirstCgroup(t *testing.T) {
	first := "/sys/fs/cgroup/cpuset/vetto-runtime/"
	if _, err := os.Stat("/sys/fs/cgroup/cpuset"); err != nil {
		first = "/sys/fs/cgroup/vetto-runtime/" // cgroup v2: the one directory
	}
	for attempt := range 5 {
		e := newEnv(t)
		id := e.id()
		b := e.bundle([]string{"sleep", "100"}, nil)
		cmd, out := e.startCreate(b, id)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := os.Stat(first + id); err == nil {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("attempt %d: no cgroup %s%s; output %q", attempt, first, id, readAll(t, out))
			}
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		r := e.vetto("delete", "--force", id)
		if r.code != 0 {
			t.Fatalf("attempt %d: delete --force: %s", attempt, r)
		}
		if d := cgroupDirs(id); len(d) > 0 {
			t.Fatalf("attempt %d: cgroups left after delete --force: %v (%s)", attempt, d, r)
		}
		if p := processesInCgroup(id); len(p) > 0 {
			t.Fatalf("attempt %d: processes left: %v", attempt, p)
		}
	}
}

// startCreate starts `create -b b id` in the background, its output to the
// file it returns.
func (e *env) startCreate(b, id string) (*exec.Cmd, *os.File) {
	e.t.Helper()
	cmd := exec.Command(binary, "--root", e.root, "create", "-b", b, id)
	out := e.tempFile()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd, out
}
