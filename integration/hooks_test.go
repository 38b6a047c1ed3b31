//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// hookPhases are the six OCI hook phases in the order the spec runs them.
var hookPhases = []string{"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"}

// hookEnv is every hook's environment: hooks get exactly their env list.
var hookEnv = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}

// hookShell is a hook running script with /bin/sh, which exists on the host
// and in the busybox rootfs (startContainer runs inside the container).
func hookShell(script string) specs.Hook {
	return specs.Hook{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Env: hookEnv}
}

// hookLogDir makes a directory under the test's tmp and bind-mounts it into
// the container at the same absolute path, so that a hook sees it under one
// name whatever mount namespace it runs in.
func hookLogDir(e *env) (string, func(*specs.Spec)) {
	e.t.Helper()
	dir := filepath.Join(e.tmp, "hooklog")
	if err := os.Mkdir(dir, 0o777); err != nil {
		e.t.Fatal(err)
	}
	return dir, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: dir, Type: "bind", Source: dir, Options: []string{"rbind", "rw"}})
	}
}

// hookSet sets phase's hooks of s to list.
func hookSet(s *specs.Spec, phase string, list ...specs.Hook) {
	if s.Hooks == nil {
		s.Hooks = &specs.Hooks{}
	}
	switch phase {
	case "prestart":
		//lint:ignore SA1019 deprecated in the spec, still honoured, so tested
		s.Hooks.Prestart = list
	case "createRuntime":
		s.Hooks.CreateRuntime = list
	case "createContainer":
		s.Hooks.CreateContainer = list
	case "startContainer":
		s.Hooks.StartContainer = list
	case "poststart":
		s.Hooks.Poststart = list
	case "poststop":
		s.Hooks.Poststop = list
	default:
		panic("unknown hook phase " + phase)
	}
}

// hookOrderSpec makes every phase append its name to dir/order.
func hookOrderSpec(dir string, mount func(*specs.Spec)) func(*specs.Spec) {
	return func(s *specs.Spec) {
		mount(s)
		for _, p := range hookPhases {
			hookSet(s, p, hookShell("echo "+p+" >> "+filepath.Join(dir, "order")))
		}
	}
}

// hookOrder reads dir/order as a list of phase names.
func hookOrder(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "order"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

func hookCheckOrder(t *testing.T, when string, dir string, want []string) {
	t.Helper()
	got := hookOrder(t, dir)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("hooks run %s: %v, want %v", when, got, want)
	}
}

// hookListEmpty fails the test unless `list -q` shows no container.
func hookListEmpty(e *env) {
	e.t.Helper()
	if r := e.mustVetto("list", "-q"); strings.TrimSpace(r.stdout) != "" {
		e.t.Fatalf("containers left: %q", r.stdout)
	}
}

// The six phases run at the points of the lifecycle the spec gives them, in
// order: prestart, createRuntime, createContainer at create; startContainer
// and then poststart at start; poststop at delete.
func TestHookOrder(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	dir, mount := hookLogDir(e)
	b := e.bundle([]string{"sh", "-c", "sleep 0.2"}, hookOrderSpec(dir, mount))

	e.mustVetto("create", "-b", b, id)
	hookCheckOrder(t, "by create", dir, hookPhases[:3])

	e.mustVetto("start", id)
	hookCheckOrder(t, "by start", dir, hookPhases[:5])

	e.waitStatus(id, "stopped")
	hookCheckOrder(t, "once the process ended", dir, hookPhases[:5])
	e.mustVetto("delete", id)
	hookCheckOrder(t, "by delete", dir, hookPhases)
}

// Foreground run goes through the whole lifecycle, hooks included.
func TestHookRunForeground(t *testing.T) {
	e := newEnv(t)
	dir, mount := hookLogDir(e)
	b := e.bundle([]string{"sh", "-c", "exit 0"}, hookOrderSpec(dir, mount))
	id := e.id()
	if r := e.vetto("run", "-b", b, id); r.code != 0 {
		t.Fatalf("run: %s", r)
	}
	hookCheckOrder(t, "by run", dir, hookPhases)
	hookListEmpty(e)
}

// Every hook gets the container's OCI state as JSON on stdin.
func TestHookStateOnStdin(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	dir, mount := hookLogDir(e)
	b := e.bundle([]string{"sleep", "1000"}, func(s *specs.Spec) {
		mount(s)
		for _, p := range hookPhases {
			hookSet(s, p, hookShell("cat > "+filepath.Join(dir, p+".json")))
		}
	})
	e.mustVetto("create", "-b", b, id)
	initPid := e.state(id)["pid"].(float64)
	e.mustVetto("start", id)
	e.mustVetto("kill", id, "KILL")
	e.waitStatus(id, "stopped")
	e.mustVetto("delete", id)

	// The status each phase sees is runc's: creating until the init waits
	// for start, created in startContainer, running in poststart (after the
	// process started) and stopped in poststop (after delete).
	//
	// The pid is "as seen by the runtime" for hooks in the runtime
	// namespace and "as seen by the container" for those in the
	// container's (createContainer, startContainer): there the init is 1.
	// poststop's container has no process any more.
	init := int(initPid)
	tests := []struct {
		phase      string
		wantStatus string
		wantPid    int // -1: any
	}{
		{"prestart", "creating", init},
		{"createRuntime", "creating", init},
		{"createContainer", "creating", 1},
		{"startContainer", "created", 1},
		{"poststart", "running", init},
		{"poststop", "stopped", -1},
	}
	for _, tt := range tests {
		t.Run(tt.phase, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tt.phase+".json"))
			if err != nil {
				t.Fatalf("%s hook wrote no state: %v", tt.phase, err)
			}
			var st specs.State
			if err := json.Unmarshal(data, &st); err != nil {
				t.Fatalf("%s hook stdin is not JSON: %v: %q", tt.phase, err, data)
			}
			if st.ID != id {
				t.Errorf("id %q, want %q", st.ID, id)
			}
			if st.Bundle != b {
				t.Errorf("bundle %q, want %q", st.Bundle, b)
			}
			if st.Version == "" {
				t.Errorf("no ociVersion in %s", data)
			}
			if string(st.Status) != tt.wantStatus {
				t.Errorf("status %q, want %q", st.Status, tt.wantStatus)
			}
			if tt.wantPid >= 0 && st.Pid != tt.wantPid {
				t.Errorf("pid %d, want %d (init on the host: %d)", st.Pid, tt.wantPid, init)
			}
		})
	}
}

// A failing poststart hook fails start and stops the container.
func TestHookPoststartFailure(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	b := e.bundle([]string{"sleep", "1000"}, func(s *specs.Spec) {
		hookSet(s, "poststart", hookShell("echo hook-said-no >&2; exit 1"))
	})
	e.mustVetto("create", "-b", b, id)
	r := e.vetto("start", id)
	if r.code == 0 || !strings.Contains(r.stderr, "poststart") {
		t.Fatalf("start with a failing poststart hook: %s; want failure naming poststart", r)
	}
	if !strings.Contains(r.stderr, "hook-said-no") {
		t.Errorf("start error %q lacks the hook's output", r.stderr)
	}
	e.waitStatus(id, "stopped")
	hookWaitNoProcesses(t, id)
	e.mustVetto("delete", id)
	hookListEmpty(e)
}

// hookWaitNoProcesses waits until container id's cgroup holds no process.
func hookWaitNoProcesses(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := processesInCgroup(id)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of %s still alive: %v", id, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A failing hook of a create phase fails create and leaves nothing.
func TestHookCreateFailure(t *testing.T) {
	for _, phase := range []string{"prestart", "createRuntime", "createContainer"} {
		t.Run(phase, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			dir, mount := hookLogDir(e)
			b := e.bundle([]string{"sleep", "1000"}, func(s *specs.Spec) {
				hookOrderSpec(dir, mount)(s)
				hookSet(s, phase, hookShell("exit 1"))
			})
			r := e.vetto("create", "-b", b, id)
			if r.code == 0 {
				t.Fatalf("create with a failing %s hook succeeded: %s", phase, r)
			}
			if !strings.Contains(r.stderr, phase) {
				t.Errorf("create error %q does not name %s", r.stderr, phase)
			}
			hookListEmpty(e)
			if r := e.vetto("state", id); r.code == 0 {
				t.Errorf("state after failed create: %s", r)
			}
			// The user process never ran, so no later phase may have.
			for _, p := range hookOrder(t, dir) {
				if p == "startContainer" || p == "poststart" {
					t.Errorf("%s hook ran after a failed create", p)
				}
			}
		})
	}
}

// A failing poststop hook is only a warning: delete succeeds.
func TestHookPoststopFailure(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	b := e.bundle([]string{"true"}, func(s *specs.Spec) {
		hookSet(s, "poststop", hookShell("exit 1"))
	})
	e.mustVetto("run", "--keep", "-b", b, id)
	r := e.vetto("delete", id)
	if r.code != 0 {
		t.Fatalf("delete with a failing poststop hook: %s; want success", r)
	}
	if !strings.Contains(r.stderr, "poststop") {
		t.Errorf("delete stderr %q: want a warning naming poststop", r.stderr)
	}
	if r := e.vetto("state", id); r.code == 0 || !strings.Contains(r.stderr, "container does not exist") {
		t.Errorf("state after delete: %s; want 'container does not exist'", r)
	}
	hookListEmpty(e)
}

// A hook that outlives its timeout is killed and fails the operation.
func TestHookTimeout(t *testing.T) {
	one := 1
	tests := []struct {
		name  string
		phase string
		hook  specs.Hook
		// op runs the failing command; prepare what comes before it.
		prepare []string
		op      string
	}{
		// createRuntime runs in libcontainer.
		{"createRuntime", "createRuntime", specs.Hook{Path: "/bin/sleep", Args: []string{"sleep", "10"}, Timeout: &one}, nil, "create"},
		// poststart runs in the core; the hook's child keeps its output
		// open after the hook itself is killed.
		{"poststart", "poststart", specs.Hook{Path: "/bin/sh", Args: []string{"sh", "-c", "sleep 10; true"}, Env: hookEnv, Timeout: &one}, []string{"create"}, "start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			b := e.bundle([]string{"sleep", "1000"}, func(s *specs.Spec) { hookSet(s, tt.phase, tt.hook) })
			if tt.prepare != nil {
				e.mustVetto(append(tt.prepare, "-b", b, id)...)
			}
			args := []string{tt.op, id}
			if tt.op == "create" {
				args = []string{"create", "-b", b, id}
			}
			begin := time.Now()
			r := e.vetto(args...)
			took := time.Since(begin)
			if r.code == 0 {
				t.Fatalf("%s with a hanging %s hook: %s; want failure", tt.op, tt.phase, r)
			}
			if took > 8*time.Second {
				t.Errorf("%s took %s with a 1s hook timeout", tt.op, took)
			}
			if !strings.Contains(r.stderr, "timeout") {
				t.Errorf("%s error %q does not mention the timeout", tt.op, r.stderr)
			}
			if tt.op == "create" {
				hookListEmpty(e)
			} else {
				e.waitStatus(id, "stopped")
				e.mustVetto("delete", id)
			}
		})
	}
}

// A failing startContainer hook must fail start ("the runtime MUST generate
// an error, stop the container, and continue the lifecycle at step 12"):
// the user process never runs, so neither may the poststart hooks, which
// come "after the user-specified process is executed".
func TestHookStartContainerFailure(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	dir, mount := hookLogDir(e)
	b := e.bundle([]string{"sh", "-c", "echo user-process-ran >> " + filepath.Join(dir, "order") + "; sleep 1000"}, func(s *specs.Spec) {
		hookOrderSpec(dir, mount)(s)
		hookSet(s, "startContainer", hookShell("exit 1"))
	})
	e.mustVetto("create", "-b", b, id)
	r := e.vetto("start", id)
	e.waitStatus(id, "stopped")
	e.mustVetto("delete", id)
	got := hookOrder(t, dir)
	for _, p := range got {
		if p == "user-process-ran" || p == "poststart" {
			t.Errorf("%s after a failed startContainer hook (order %v)", p, got)
		}
	}
	if r.code == 0 || !strings.Contains(r.stderr, "startContainer") {
		t.Errorf("start with a failing startContainer hook: %s; want failure naming startContainer", r)
	}
}
