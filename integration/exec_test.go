//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runningContainer starts a detached container that sleeps, under level
// strict so it has a seccomp filter, no_new_privs and minimal capabilities.
func (e *env) runningContainer() string {
	e.t.Helper()
	id := e.id()
	e.mustVetto("run", "-d", "--security-level", "strict", "-b", e.bundle([]string{"sleep", "1000"}, strictSpec), id)
	e.waitStatus(id, "running")
	return id
}

func TestExecGetsTheContainersSandbox(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer()
	initPid := int(e.state(id)["pid"].(float64))
	r := e.vetto("exec", id, "sh", "-c", `grep -E "^(Seccomp|NoNewPrivs|CapEff):" /proc/self/status; readlink /proc/self/ns/net; exit 7`)
	if r.code != 7 {
		t.Fatalf("exec: %s; want the process's exit status 7", r)
	}
	for _, want := range []string{"Seccomp:\t2", "NoNewPrivs:\t1", "CapEff:\t0000000000000421"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("exec'd process status %q lacks %q", r.stdout, want)
		}
	}
	hostNet, _ := os.Readlink("/proc/" + strconv.Itoa(initPid) + "/ns/net")
	if !strings.Contains(r.stdout, hostNet) {
		t.Errorf("exec'd process in net ns %q, want the container's %s", r.stdout, hostNet)
	}
	if r := e.vettoIn([]byte("through stdin\n"), "exec", id, "cat"); r.code != 0 || r.stdout != "through stdin\n" {
		t.Errorf("exec cat with stdin: %s", r)
	}
}

// An exec'd process never gets more than the container's own process.
func TestExecBoundedByContainer(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer()
	proc := filepath.Join(e.tmp, "process.json")
	write := func(body string) {
		if err := os.WriteFile(proc, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
		body string
		want string
	}{
		{"--cap outside the bounding set", []string{"exec", "--cap", "CAP_SYS_ADMIN", id, "true"}, "", "CAP_SYS_ADMIN"},
		{"--cap the kernel does not know", []string{"exec", "--cap", "CAP_NOPE", id, "true"}, "", `--cap: unknown capability \"CAP_NOPE\"`},
		{"process file with a privileged capability", []string{"exec", "--process", proc, id},
			`{"args":["true"],"cwd":"/","noNewPrivileges":true,"capabilities":{"bounding":["CAP_SYS_ADMIN"],"effective":["CAP_SYS_ADMIN"],"permitted":["CAP_SYS_ADMIN"]}}`, "CAP_SYS_ADMIN"},
		{"process file dropping no_new_privs", []string{"exec", "--process", proc, id},
			`{"args":["true"],"cwd":"/","noNewPrivileges":false}`, "no_new_privs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.body != "" {
				write(tt.body)
			}
			r := e.vetto(tt.args...)
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("%s; want exit 1 naming %q", r, tt.want)
			}
		})
	}
	// A capability the container has is fine, and so is a process file
	// within the container's bounds.
	e.mustVetto("exec", "--cap", "CAP_KILL", id, "true")
	write(`{"args":["sh","-c","exit 4"],"env":["PATH=/bin"],"cwd":"/","noNewPrivileges":true,"capabilities":{"bounding":["CAP_KILL"],"effective":["CAP_KILL"],"permitted":["CAP_KILL"]}}`)
	if r := e.vetto("exec", "--process", proc, id); r.code != 4 {
		t.Fatalf("exec --process within bounds: %s; want exit 4", r)
	}
}

func TestExecDetachPidFile(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer()
	pidFile := filepath.Join(e.tmp, "exec.pid")
	e.mustVetto("exec", "-d", "--pid-file", pidFile, id, "sleep", "100")
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("detached exec wrote no pid file: %v", err)
	}
	if comm, _ := os.ReadFile("/proc/" + string(raw) + "/comm"); strings.TrimSpace(string(comm)) != "sleep" {
		t.Fatalf("pid file %q names %q, want the exec'd sleep", raw, comm)
	}
	// A failing detached exec writes no pid file (conmon's only signal).
	missing := filepath.Join(e.tmp, "missing.pid")
	if r := e.vetto("exec", "-d", "--pid-file", missing, id, "/nonexistent"); r.code == 0 {
		t.Fatalf("exec of a missing binary: %s", r)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("a failed exec wrote its pid file")
	}
}

func TestExecWrongState(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "--keep", "-b", e.bundle([]string{"true"}, nil), id)
	if r := e.vetto("exec", id, "true"); r.code != 1 || !strings.Contains(r.stderr, "cannot exec in a stopped container") {
		t.Fatalf("exec in a stopped container: %s", r)
	}
	if r := e.vetto("exec", "nope", "true"); r.code != 1 || !strings.Contains(r.stderr, "container does not exist") {
		t.Fatalf("exec in an unknown container: %s", r)
	}
}

func TestPsPauseResume(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer()
	initPid := int(e.state(id)["pid"].(float64))
	r := e.mustVetto("ps", "--format", "json", id)
	var pids []int
	if err := json.Unmarshal([]byte(r.stdout), &pids); err != nil || len(pids) != 1 || pids[0] != initPid {
		t.Fatalf("ps json %q (%v): want [%d]", r.stdout, err, initPid)
	}
	r = e.mustVetto("ps", id)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "PID") || !strings.Contains(lines[1], "sleep 1000") {
		t.Fatalf("ps table %q: want a header and the sleep", r.stdout)
	}
	e.mustVetto("pause", id)
	if st := e.state(id)["status"]; st != "paused" {
		t.Fatalf("after pause: %v", st)
	}
	if r := e.vetto("exec", id, "true"); r.code != 1 || !strings.Contains(r.stderr, "paused") {
		t.Errorf("exec in a paused container: %s", r)
	}
	// As runc (libcontainer): pausing a paused container is an error.
	if r := e.vetto("pause", id); r.code != 1 || !strings.Contains(r.stderr, "container not running") {
		t.Errorf("pause of a paused container: %s", r)
	}
	e.mustVetto("resume", id)
	if st := e.state(id)["status"]; st != "running" {
		t.Fatalf("after resume: %v", st)
	}
	if r := e.vetto("resume", id); r.code != 1 || !strings.Contains(r.stderr, "container not paused") {
		t.Errorf("resume of a running container: %s", r)
	}
}

func TestEventsAndUpdate(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer()
	r := e.mustVetto("events", "--stats", id)
	var ev struct {
		Type, ID string
		Data     struct {
			Pids struct {
				Current uint64 `json:"current"`
				Limit   uint64 `json:"limit"`
			} `json:"pids"`
			Memory struct {
				Usage struct {
					Usage uint64 `json:"usage"`
					Limit uint64 `json:"limit"`
				} `json:"usage"`
			} `json:"memory"`
			CPU struct {
				Usage struct {
					Total uint64 `json:"total"`
				} `json:"usage"`
			} `json:"cpu"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &ev); err != nil {
		t.Fatalf("events --stats %q: %v", r.stdout, err)
	}
	if ev.Type != "stats" || ev.ID != id || ev.Data.Pids.Current != 1 || ev.Data.Pids.Limit != 64 || ev.Data.Memory.Usage.Usage == 0 || ev.Data.Memory.Usage.Limit != 256<<20 {
		t.Fatalf("events --stats: %+v", ev)
	}
	e.mustVetto("update", "--memory", "128m", "--pids-limit", "32", id)
	pidsMax := "/sys/fs/cgroup/pids/vetto-runtime/" + id + "/pids.max" // the v1 controller (hybrid)
	if !fileExists(pidsMax) {
		pidsMax = "/sys/fs/cgroup/vetto-runtime/" + id + "/pids.max" // pure v2
	}
	if got, _ := os.ReadFile(pidsMax); strings.TrimSpace(string(got)) != "32" {
		t.Errorf("pids.max after update = %q, want 32", got)
	}
	r = e.vettoIn([]byte(`{"memory":{"limit":100663296}}`), "update", "--resources", "-", id)
	if r.code != 0 {
		t.Fatalf("update --resources -: %s", r)
	}
	r = e.mustVetto("events", "--stats", id)
	if err := json.Unmarshal([]byte(r.stdout), &ev); err != nil || ev.Data.Memory.Usage.Limit != 96<<20 || ev.Data.Pids.Limit != 32 {
		t.Fatalf("stats after update: %+v (%v); want memory limit 96 MiB and pids 32", ev.Data, err)
	}
	if r := e.vetto("update", "--memory", "lots", id); r.code != 1 || !strings.Contains(r.stderr, "--memory") {
		t.Errorf("update with a bad size: %s", r)
	}
	// cpu.idle is cgroup v2's (a v1 cpu controller has none: runc and
	// vetto-runtime leave it there).
	e.mustVetto("update", "--cpu-idle", "1", id)
	if idle := "/sys/fs/cgroup/vetto-runtime/" + id + "/cpu.idle"; fileExists(idle) {
		if got, _ := os.ReadFile(idle); strings.TrimSpace(string(got)) != "1" {
			t.Errorf("cpu.idle after update --cpu-idle 1 = %q", got)
		}
	}
	if r := e.vetto("update", "--cpu-idle", "2", id); r.code != 1 || !strings.Contains(r.stderr, "--cpu-idle") {
		t.Errorf("update --cpu-idle 2: %s", r)
	}
	if r := e.vetto("checkpoint", id); r.code != 1 || !strings.Contains(r.stderr, "not supported") {
		t.Errorf("checkpoint: %s", r)
	}
}

// exec --cgroup (runc's): the process runs in a sub-cgroup of the
// container's, still under its limits and its cgroup.kill; a path that
// climbs out of the container's cgroup is refused before anything runs.
func TestExecIntoSubCgroup(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer()
	dirs := cgroupDirs(id)
	for _, dir := range dirs {
		sub := filepath.Join(dir, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		// A v1 cpuset cgroup takes no process before it has CPUs and
		// memory nodes.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil && !fileExists(filepath.Join(filepath.Dir(dir), "cgroup.controllers")) {
				if err := os.WriteFile(filepath.Join(sub, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, bad := range [][]string{{"../.."}, {"memory:../escaped"}, {"cpu:a", "cpu:b"}} {
		args := []string{"exec"}
		for _, b := range bad {
			args = append(args, "--cgroup", b)
		}
		r := e.vetto(append(args, id, "sh", "-c", "echo RAN")...)
		if r.code != 1 || !strings.Contains(r.stderr, "--cgroup") || strings.Contains(r.stdout, "RAN") {
			t.Errorf("exec --cgroup %q: %s; want exit 1 naming --cgroup, nothing run", bad, r)
		}
	}
	pidFile := filepath.Join(e.tmp, "exec.pid")
	e.mustVetto("exec", "-d", "--cgroup", "sub", "--pid-file", pidFile, id, "sleep", "1000")
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	membership, err := os.ReadFile("/proc/" + strings.TrimSpace(string(pid)) + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(membership), "/vetto-runtime/"+id+"/sub\n"); n != len(dirs) {
		t.Errorf("the exec'd process is in the sub-cgroup in %d hierarchies, want %d:\n%s", n, len(dirs), membership)
	}
	// The teardown takes the sub-cgroups with the container's (the leak
	// check of the test's end looks for what is left).
	e.mustVetto("delete", "--force", id)
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%s left after delete: %v", dir, err)
		}
	}
}

// exec -e takes a value as it is, commas and all, as runc does.
func TestExecEnvValueWithCommas(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer()
	r := e.mustVetto("exec", "-e", "NO_PROXY=a.test,b.test", "-e", "Y=1", id, "sh", "-c", `echo "$NO_PROXY $Y"`)
	if r.stdout != "a.test,b.test 1\n" {
		t.Errorf("exec -e NO_PROXY=a.test,b.test: stdout %q", r.stdout)
	}
}
