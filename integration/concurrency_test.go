//go:build linux

package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// concVetto is e.vetto for goroutines: it never calls t.Fatal (which only
// the test's goroutine may) and reports a failure to run as code -1.
func concVetto(e *env, args ...string) result {
	cmd := exec.Command(binary, append([]string{"--root", e.root}, args...)...)
	stdout, err := os.CreateTemp(e.tmp, "conc-")
	if err != nil {
		return result{code: -1, stderr: err.Error()}
	}
	defer stdout.Close()
	stderr, err := os.CreateTemp(e.tmp, "conc-")
	if err != nil {
		return result{code: -1, stderr: err.Error()}
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return result{code: -1, stderr: err.Error()}
		}
		code = ee.ExitCode()
	}
	out, _ := os.ReadFile(stdout.Name())
	errOut, _ := os.ReadFile(stderr.Name())
	return result{stdout: string(out), stderr: string(errOut), code: code}
}

// concAll runs the commands args[i] all at once (released together) and
// returns their results in order.
func concAll(e *env, args [][]string) []result {
	results := make([]result, len(args))
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i, a := range args {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			results[i] = concVetto(e, a...)
		}()
	}
	close(gate)
	wg.Wait()
	return results
}

// concRepeat is n copies of args.
func concRepeat(n int, args ...string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = args
	}
	return out
}

// concMount bind-mounts dir into the container at the same path.
func concMount(dir string) func(*specs.Spec) {
	return func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: dir, Type: "bind", Source: dir, Options: []string{"rbind", "rw"}})
	}
}

func concMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
}

// concCheckPanic fails the test if any result's output shows a Go panic.
func concCheckPanic(t *testing.T, rs ...result) {
	t.Helper()
	for _, r := range rs {
		if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "fatal error") {
			t.Errorf("runtime crashed: %s", r)
		}
	}
}

// concListEmpty fails the test unless `list -q` shows no container.
func concListEmpty(e *env) {
	e.t.Helper()
	if r := e.mustVetto("list", "-q"); strings.TrimSpace(r.stdout) != "" {
		e.t.Fatalf("containers left: %q", r.stdout)
	}
}

// Of concurrent starts of one created container exactly one succeeds, and
// the user process runs once.
func TestConcStart(t *testing.T) {
	for _, n := range []int{2, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			dir := filepath.Join(e.tmp, "log")
			concMkdir(t, dir)
			ran := filepath.Join(dir, "ran")
			b := e.bundle([]string{"sh", "-c", "echo ran >> " + ran + "; exec sleep 1000"}, concMount(dir))
			e.mustVetto("create", "-b", b, id)

			results := concAll(e, concRepeat(n, "start", id))
			concCheckPanic(t, results...)
			ok := 0
			for _, r := range results {
				switch {
				case r.code == 0:
					ok++
				case r.code < 0:
					t.Errorf("start did not run: %s", r)
				case !strings.Contains(r.stderr, "cannot start an already running container"):
					t.Errorf("losing start: %s; want 'cannot start an already running container'", r)
				}
			}
			if ok != 1 {
				t.Errorf("%d of %d concurrent starts succeeded, want exactly 1: %v", ok, n, results)
			}
			e.waitStatus(id, "running")
			// The process appends before it sleeps: wait for the line.
			deadline := time.Now().Add(5 * time.Second)
			var data []byte
			for {
				data, _ = os.ReadFile(ran)
				if len(data) > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // room for a second run to show
			data, _ = os.ReadFile(ran)
			if lines := strings.Count(string(data), "ran\n"); lines != 1 {
				t.Errorf("user process ran %d times, want 1", lines)
			}
			e.mustVetto("delete", "--force", id)
		})
	}
}

// Of concurrent creates of one id exactly one succeeds; the others are told
// the id is taken.
func TestConcCreateSameID(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	b := e.bundle([]string{"sleep", "1000"}, nil)
	const n = 8
	results := concAll(e, concRepeat(n, "create", "-b", b, id))
	concCheckPanic(t, results...)
	ok := 0
	for _, r := range results {
		switch {
		case r.code == 0:
			ok++
		case r.code < 0:
			t.Errorf("create did not run: %s", r)
		case !strings.Contains(r.stderr, "container with given ID already exists"):
			t.Errorf("losing create: %s; want 'container with given ID already exists'", r)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of %d concurrent creates succeeded, want exactly 1: %v", ok, n, results)
	}
	if st := e.state(id); st["status"] != "created" {
		t.Errorf("winner's container: status %v, want created", st["status"])
	}
	if r := e.mustVetto("list", "-q"); strings.TrimSpace(r.stdout) != id {
		t.Errorf("list -q %q, want only %s", r.stdout, id)
	}
	e.mustVetto("delete", "--force", id)
	concListEmpty(e)
}

// Many containers can be run and force-deleted at once.
func TestConcRunDelete(t *testing.T) {
	e := newEnv(t)
	b := e.bundle([]string{"sleep", "1000"}, nil)
	const n = 8
	ids := make([]string, n)
	var runs, deletes [][]string
	for i := range ids {
		ids[i] = e.id()
		runs = append(runs, []string{"run", "-d", "-b", b, ids[i]})
		deletes = append(deletes, []string{"delete", "--force", ids[i]})
	}
	results := concAll(e, runs)
	concCheckPanic(t, results...)
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("run -d %s: %s", ids[i], r)
		}
	}
	for _, id := range ids {
		e.waitStatus(id, "running")
	}
	results = concAll(e, deletes)
	concCheckPanic(t, results...)
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("delete --force %s: %s", ids[i], r)
		}
	}
	concListEmpty(e)
	for _, id := range ids {
		if pids := processesInCgroup(id); len(pids) > 0 {
			t.Errorf("processes of %s survive: %v", id, pids)
		}
	}
}

// kill and delete --force racing on one container both finish, and the
// container is gone.
func TestConcKillDelete(t *testing.T) {
	for round := range 5 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
			e.waitStatus(id, "running")
			results := concAll(e, [][]string{{"kill", id, "KILL"}, {"delete", "--force", id}})
			concCheckPanic(t, results...)
			kill, del := results[0], results[1]
			if kill.code != 0 && !strings.Contains(kill.stderr, "container not running") && !strings.Contains(kill.stderr, "container does not exist") {
				t.Errorf("kill racing delete: %s; want success, 'container not running' or 'container does not exist'", kill)
			}
			if del.code != 0 {
				t.Errorf("delete --force racing kill: %s", del)
			}
			concListEmpty(e)
			if pids := processesInCgroup(id); len(pids) > 0 {
				t.Errorf("processes of %s survive: %v", id, pids)
			}
		})
	}
}

// kill takes a signal by name, with or without SIG, in any case, or by
// number.
func TestKillSignalSpellings(t *testing.T) {
	for _, sig := range []string{"KILL", "SIGKILL", "9", "kill"} {
		t.Run(sig, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
			e.waitStatus(id, "running")
			e.mustVetto("kill", id, sig)
			e.waitStatus(id, "stopped")
			e.mustVetto("delete", id)
		})
	}
}

// kill --all signals every process in the container's cgroup, kill alone
// only the init. Without a pid namespace of its own a container's processes
// outlive its init, except that SIGKILL goes to all of them anyway (as in
// runc 1.2, to leave nothing behind); delete reaps whatever kill left.
func TestKillAll(t *testing.T) {
	tests := []struct {
		name     string
		pidNS    bool
		all      bool
		sig      string
		wantLeft int // live processes after the init stopped
	}{
		{"all KILL", true, true, "KILL", 0},
		{"all KILL shared pid ns", false, true, "KILL", 0},
		{"all TERM shared pid ns", false, true, "TERM", 0},
		{"init TERM shared pid ns", false, false, "TERM", 2},
		{"init KILL shared pid ns", false, false, "KILL", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			b := e.bundle([]string{"sh", "-c", "sleep 1000 & sleep 1000 & wait"}, func(s *specs.Spec) {
				if tt.pidNS {
					return
				}
				var ns []specs.LinuxNamespace
				for _, n := range s.Linux.Namespaces {
					if n.Type != specs.PIDNamespace {
						ns = append(ns, n)
					}
				}
				s.Linux.Namespaces = ns
			})
			e.mustVetto("run", "-d", "-b", b, id)
			e.waitStatus(id, "running")
			deadline := time.Now().Add(5 * time.Second)
			for len(concLive(id)) < 3 {
				if time.Now().After(deadline) {
					t.Fatalf("container's processes: %v, want sh and two sleeps", concLive(id))
				}
				time.Sleep(20 * time.Millisecond)
			}
			args := []string{"kill", id, tt.sig}
			if tt.all {
				args = []string{"kill", "--all", id, tt.sig}
			}
			e.mustVetto(args...)
			e.waitStatus(id, "stopped")
			deadline = time.Now().Add(5 * time.Second)
			for len(concLive(id)) > tt.wantLeft && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // let a wrong kill show
			if live := concLive(id); len(live) != tt.wantLeft {
				t.Errorf("after %v: live processes %v, want %d", args, live, tt.wantLeft)
			}
			e.mustVetto("delete", id)
			if live := concLive(id); len(live) > 0 {
				t.Errorf("delete left processes: %v", live)
			}
		})
	}
}

// concLive lists the processes in container id's cgroup that are not
// zombies (a zombie waits for whoever adopted it, maybe the host's init).
func concLive(id string) []string {
	var out []string
	for _, p := range processesInCgroup(id) {
		data, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) S ...: the state follows the last ')'.
		s := string(data)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			continue
		}
		out = append(out, p)
	}
	return out
}

// kill of a stopped container fails as runc's does; with --all it is not an
// error (runc-kill(8): "When this option is set, no error is returned if the
// container is stopped").
func TestKillStopped(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"init", []string{"kill"}, 1, "container not running"},
		{"all", []string{"kill", "--all"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			e.mustVetto("run", "-d", "-b", e.bundle([]string{"true"}, nil), id)
			e.waitStatus(id, "stopped")
			r := e.vetto(append(tt.args, id, "KILL")...)
			if r.code != tt.wantCode || !strings.Contains(r.stderr, tt.wantErr) {
				t.Errorf("%v of a stopped container: %s; want exit %d and %q", tt.args, r, tt.wantCode, tt.wantErr)
			}
			e.mustVetto("delete", id)
		})
	}
}

// kill without a signal sends SIGTERM.
func TestKillDefaultSignal(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	dir := filepath.Join(e.tmp, "log")
	concMkdir(t, dir)
	got, ready := filepath.Join(dir, "got"), filepath.Join(dir, "ready")
	script := fmt.Sprintf(`trap "echo TERM > %s; exit 3" TERM; trap "echo INT > %s; exit 4" INT; touch %s; while :; do sleep 0.1; done`, got, got, ready)
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sh", "-c", script}, concMount(dir)), id)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("container never installed its traps")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.mustVetto("kill", id)
	e.waitStatus(id, "stopped")
	data, err := os.ReadFile(got)
	if err != nil || strings.TrimSpace(string(data)) != "TERM" {
		t.Errorf("container's trap saw %q (%v), want TERM", data, err)
	}
	e.mustVetto("delete", id)
}

// --preserve-fds N passes the runtime's fds 3..3+N-1 on to the container,
// and no others.
func TestPreserveFds(t *testing.T) {
	tests := []struct {
		name     string
		preserve int
		fd       int
		want     bool
	}{
		{"none", 0, 3, false},
		{"one", 1, 3, true},
		{"second of two", 2, 4, true},
		{"beyond", 1, 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			var extra []*os.File
			for i := 0; i < 2; i++ {
				f := e.tempFile()
				defer f.Close()
				if _, err := fmt.Fprintf(f, "preserved-%d", 3+i); err != nil {
					t.Fatal(err)
				}
				if _, err := f.Seek(0, 0); err != nil {
					t.Fatal(err)
				}
				extra = append(extra, f)
			}
			b := e.bundle([]string{"sh", "-c", fmt.Sprintf("cat <&%d", tt.fd)}, nil)
			stdout, stderr := e.tempFile(), e.tempFile()
			defer stdout.Close()
			defer stderr.Close()
			cmd := exec.Command(binary, "--root", e.root, "create", "--preserve-fds", fmt.Sprint(tt.preserve), "-b", b, id)
			cmd.Stdout, cmd.Stderr = stdout, stderr
			cmd.ExtraFiles = extra
			if err := cmd.Run(); err != nil {
				t.Fatalf("create --preserve-fds %d: %v: %q", tt.preserve, err, readAll(t, stderr))
			}
			e.mustVetto("start", id)
			e.waitStatus(id, "stopped")
			e.mustVetto("delete", id)
			out := readAll(t, stdout)
			want := fmt.Sprintf("preserved-%d", tt.fd)
			if tt.want && out != want {
				t.Errorf("container read %q from fd %d, want %q (stderr %q)", out, tt.fd, want, readAll(t, stderr))
			}
			if !tt.want && strings.Contains(out, "preserved") {
				t.Errorf("container read %q from fd %d, which --preserve-fds %d does not pass", out, tt.fd, tt.preserve)
			}
		})
	}
}
