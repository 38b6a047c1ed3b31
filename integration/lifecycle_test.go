//go:build linux

package integration

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The whole detached lifecycle, as containerd drives it.
func TestLifecycle(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	b := e.bundle([]string{"sleep", "1000"}, nil)
	pidFile := filepath.Join(e.tmp, "pid")

	e.mustVetto("create", "--bundle", b, "--pid-file", pidFile, id)
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	if strings.HasSuffix(string(raw), "\n") {
		t.Errorf("pid file %q has a trailing newline", raw)
	}
	pid, err := strconv.Atoi(string(raw))
	if err != nil {
		t.Fatalf("pid file %q: %v", raw, err)
	}
	st := e.state(id)
	if st["status"] != "created" || int(st["pid"].(float64)) != pid {
		t.Fatalf("after create: status %v pid %v, want created %d", st["status"], st["pid"], pid)
	}
	for _, k := range []string{"ociVersion", "id", "bundle", "rootfs", "created", "owner"} {
		if _, ok := st[k]; !ok {
			t.Errorf("state lacks %q: %v", k, st)
		}
	}
	if st["bundle"] != b {
		t.Errorf("state bundle %v, want %s", st["bundle"], b)
	}
	// The init waits for start: it must not have exec'd sleep yet.
	if comm, _ := os.ReadFile("/proc/" + string(raw) + "/comm"); strings.TrimSpace(string(comm)) == "sleep" {
		t.Fatalf("user process ran before start")
	}

	e.mustVetto("start", id)
	e.waitStatus(id, "running")
	if comm, _ := os.ReadFile("/proc/" + string(raw) + "/comm"); strings.TrimSpace(string(comm)) != "sleep" {
		t.Errorf("after start pid %d runs %q, want sleep", pid, comm)
	}
	if r := e.vetto("delete", id); r.code == 0 || !strings.Contains(r.stderr, "not stopped") {
		t.Errorf("delete of a running container: %s; want refusal", r)
	}
	e.mustVetto("kill", id, "KILL")
	e.waitStatus(id, "stopped")
	if st := e.state(id); st["pid"].(float64) != 0 {
		t.Errorf("stopped container reports pid %v, want 0", st["pid"])
	}
	e.mustVetto("delete", id)
	if r := e.vetto("state", id); r.code != 1 || !strings.Contains(r.stderr, "container does not exist") {
		t.Errorf("state after delete: %s; want exit 1 and 'container does not exist'", r)
	}
}

// runtime.md: deleting a container that is not stopped "MUST have no
// effect on the container and MUST generate an error" — a created one
// too (runc deletes it). --force deletes it.
func TestDeleteCreated(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("create", "-b", e.bundle([]string{"true"}, nil), id)
	pid := int(e.state(id)["pid"].(float64))
	if r := e.vetto("delete", id); r.code != 1 || !strings.Contains(r.stderr, "not stopped: created (use --force)") {
		t.Fatalf("delete of a created container: %s; want a refusal", r)
	}
	if st := e.state(id); st["status"] != "created" || int(st["pid"].(float64)) != pid {
		t.Fatalf("the refused delete changed the container: %v", st)
	}
	e.mustVetto("start", id)
	e.waitStatus(id, "stopped")
	e.mustVetto("delete", id)

	id = e.id()
	e.mustVetto("create", "-b", e.bundle([]string{"true"}, nil), id)
	e.mustVetto("delete", "--force", id)
}

func TestDeleteForceRunning(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
	e.waitStatus(id, "running")
	e.mustVetto("delete", "--force", id)
	if pids := processesInCgroup(id); len(pids) != 0 {
		t.Fatalf("processes survive delete --force: %v", pids)
	}
}

func TestRunExitStatus(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"zero", []string{"true"}, 0},
		{"one", []string{"false"}, 1},
		{"forty-two", []string{"sh", "-c", "exit 42"}, 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.vetto("run", "--bundle", e.bundle(tt.args, nil), e.id())
			if r.code != tt.want {
				t.Fatalf("run %v: %s; want exit %d", tt.args, r, tt.want)
			}
		})
	}
}

func TestRunStdio(t *testing.T) {
	e := newEnv(t)
	b := e.bundle([]string{"sh", "-c", "cat; echo to-stderr >&2"}, nil)
	r := e.vettoIn([]byte("hello through stdin\n"), "run", "-b", b, e.id())
	if r.code != 0 || r.stdout != "hello through stdin\n" || !strings.Contains(r.stderr, "to-stderr") {
		t.Fatalf("run: %s", r)
	}
}

func TestRunKeep(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "--keep", "-b", e.bundle([]string{"true"}, nil), id)
	if st := e.state(id); st["status"] != "stopped" {
		t.Fatalf("after run --keep: status %v, want stopped", st["status"])
	}
	e.mustVetto("delete", id)
}

func TestRunDetach(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	pidFile := filepath.Join(e.tmp, "pid")
	e.mustVetto("run", "--detach", "--pid-file", pidFile, "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
	e.waitStatus(id, "running")
	if _, err := os.Stat(pidFile); err != nil {
		t.Fatalf("run -d wrote no pid file: %v", err)
	}
	e.mustVetto("kill", id, "9")
	e.waitStatus(id, "stopped")
	e.mustVetto("delete", id)
}

// startForeground starts `run` in the foreground without waiting for it.
func (e *env) startForeground(id string, args []string) (*exec.Cmd, *os.File) {
	e.t.Helper()
	out := e.tempFile()
	cmd := exec.Command(binary, "--root", e.root, "run", "-b", e.bundle(args, nil), id)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.vetto("state", id)
		if r.code == 0 && strings.Contains(r.stdout, `"status": "running"`) {
			return cmd, out
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("container %s never ran: %s; output %q", id, r, readAll(e.t, out))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("wait: %v", err)
	}
	return ee.ExitCode()
}

// A container killed by signal n makes run exit 128+n, as runc does.
func TestRunSignalDeath(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	cmd, out := e.startForeground(id, []string{"sleep", "1000"})
	e.mustVetto("kill", id, "KILL")
	if code := exitCode(t, cmd); code != 137 {
		t.Fatalf("run exit %d (output %q), want 137", code, readAll(t, out))
	}
}

// Signals sent to the foreground runtime reach the container's init.
func TestRunForwardsSignals(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	cmd, out := e.startForeground(id, []string{"sh", "-c", `trap "exit 5" TERM; trap "exit 6" USR1; echo trapped; while :; do sleep 0.1; done`})
	// "running" is the state once the exec fifo opened, which can be
	// before the shell set its traps (or even exec'd): a signal to pid 1
	// of a pid namespace without a handler is dropped, and the test would
	// hang. Signal once the shell says it is ready.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(readAll(t, out), "trapped") {
		if time.Now().After(deadline) {
			t.Fatalf("the container never set its traps: %q", readAll(t, out))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != 6 {
		t.Fatalf("run exit %d (output %q), want 6 from the container's USR1 trap", code, readAll(t, out))
	}
}

// Every signal is caught before the program runs, however late the
// runtime got to registering it: the fault-injection build registers the
// signals that are not urgent 1.5 s late, and a real-time signal sent to
// the runtime once the program set its trap must still reach the program
// (the Go runtime drops one it has not caught). Only the wait of the
// container's Start for the registration makes it so.
func TestRunForwardsEverySignalOnceTheProgramRuns(t *testing.T) {
	fb := buildFaultBinary(t)
	e := newEnv(t)
	id := e.id()
	out := e.tempFile()
	b := e.bundle([]string{"sh", "-c", `trap "exit 9" 40; echo trapped; while :; do sleep 0.1; done`}, nil)
	cmd := vettoCmdWith(e, fb, "run", "-b", b, id)
	cmd.Env = append(os.Environ(), "TESTONLY_VETTO_FAULT=slow-signals:1500ms")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		e.vetto("delete", "--force", id)
	})
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(readAll(t, out), "trapped") {
		if time.Now().After(deadline) {
			t.Fatalf("the container never set its trap: %q", readAll(t, out))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.Signal(40)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the clean-up
		if code := cmd.ProcessState.ExitCode(); code != 9 {
			t.Fatalf("run exit %d (%v, output %q), want 9 from the program's trap of signal 40", code, err, readAll(t, out))
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("signal 40, sent to the runtime once the program ran, never reached it: %q", readAll(t, out))
	}
	e.assertNothingLeft(id)
}

// libcontainer keeps a container's state in <root>/<id>/backend itself, not
// a level below it (one directory fewer made and removed per container);
// a container an earlier vetto-runtime created, whose state is in
// backend/<id>/, is still started, exec'd into, killed and deleted where
// it is. The earlier layout is made here by moving libcontainer's files of
// a created container one level down, as that version left them; the
// canary socket stays where both layouts keep it.
func TestBackendStateLayouts(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("create", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
	defer e.vetto("delete", "--force", id)
	backend := filepath.Join(e.root, id, "backend")
	if _, err := os.Stat(filepath.Join(backend, "state.json")); err != nil {
		t.Fatalf("libcontainer's state is not in %s: %v", backend, err)
	}
	if _, err := os.Stat(filepath.Join(backend, id)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a directory level below %s: %v", backend, err)
	}

	legacy := filepath.Join(backend, id)
	if err := os.Mkdir(legacy, 0o711); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"state.json", "exec.fifo"} {
		if err := os.Rename(filepath.Join(backend, name), filepath.Join(legacy, name)); err != nil {
			t.Fatalf("make the earlier layout: %v", err)
		}
	}
	if st := e.state(id); st["status"] != "created" {
		t.Fatalf("state of a container of the earlier layout: %v, want created", st)
	}
	e.mustVetto("start", id)
	e.waitStatus(id, "running")
	if r := e.vetto("exec", id, "true"); r.code != 0 {
		t.Fatalf("exec into a container of the earlier layout: exit %d, %s", r.code, r.stderr)
	}
	e.mustVetto("kill", id, "KILL")
	e.waitStatus(id, "stopped")
	e.mustVetto("delete", id)
	if _, err := os.Stat(filepath.Join(e.root, id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("delete left %s: %v", filepath.Join(e.root, id), err)
	}
	if d := cgroupDirs(id); len(d) > 0 {
		t.Errorf("delete left cgroups %v", d)
	}
}
