//go:build linux

package integration

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// badErrorLine is the one line a failing command writes to stderr in the
// default text log format.
var badErrorLine = regexp.MustCompile(`^time="[^"]+" level=error msg=".*"\n$`)

// badExpectError fails the test unless r is a failure with exit 1, an empty
// stdout and exactly one text-format error line on stderr that contains
// every one of wants.
func badExpectError(t *testing.T, r result, wants ...string) {
	t.Helper()
	badExpectExit(t, r, 1, wants...)
}

// badExpectExit is badExpectError for another exit code (125: the sandbox
// could not be established).
func badExpectExit(t *testing.T, r result, code int, wants ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("got exit %d, want %d (%s)", r.code, code, r)
	}
	if r.stdout != "" {
		t.Errorf("got stdout %q, want none", r.stdout)
	}
	if n := strings.Count(r.stderr, "\n"); n != 1 || !badErrorLine.MatchString(r.stderr) {
		t.Errorf("got stderr %q (%d lines), want exactly one line `time=... level=error msg=...`", r.stderr, n)
	}
	for _, w := range wants {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("got stderr %q, want it to contain %q", r.stderr, w)
		}
	}
}

// badNothingLeft fails the test if any container state is under --root.
func badNothingLeft(t *testing.T, e *env) {
	t.Helper()
	if r := e.mustVetto("list", "-q"); r.stdout != "" {
		t.Errorf("got list -q %q, want no containers", r.stdout)
	}
	entries, err := os.ReadDir(e.root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		t.Errorf("got entries %v under --root, want none", names)
	}
}

// badRawBundle writes a bundle whose config.json is exactly content (no
// config.json if content is nil).
func badRawBundle(t *testing.T, e *env, content []byte) string {
	t.Helper()
	dir, err := os.MkdirTemp(e.tmp, "bundle-")
	if err != nil {
		t.Fatal(err)
	}
	if content != nil {
		if err := os.WriteFile(filepath.Join(dir, "config.json"), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// badStatus returns the status and pid of container id.
func badStatus(e *env, id string) (string, int) {
	e.t.Helper()
	st := e.state(id)
	status, _ := st["status"].(string)
	pid, _ := st["pid"].(float64)
	return status, int(pid)
}

func TestBadBundle(t *testing.T) {
	tests := []struct {
		name string
		// bundle returns the --bundle argument and the strings the error
		// must contain.
		bundle func(t *testing.T, e *env) (string, []string)
	}{
		{"missing-dir", func(t *testing.T, e *env) (string, []string) {
			dir := filepath.Join(e.tmp, "no-such-bundle")
			return dir, []string{dir, "no such file or directory"}
		}},
		{"no-config-json", func(t *testing.T, e *env) (string, []string) {
			dir := badRawBundle(t, e, nil)
			return dir, []string{filepath.Join(dir, "config.json"), "no such file or directory"}
		}},
		{"not-json", func(t *testing.T, e *env) (string, []string) {
			dir := badRawBundle(t, e, []byte("this is { not json\n"))
			return dir, []string{dir, "invalid config.json"}
		}},
		{"empty-args", func(t *testing.T, e *env) (string, []string) {
			dir := e.bundle([]string{"true"}, func(s *specs.Spec) { s.Process.Args = []string{} })
			return dir, []string{"process.args"}
		}},
		{"relative-cwd", func(t *testing.T, e *env) (string, []string) {
			dir := e.bundle([]string{"true"}, func(s *specs.Spec) { s.Process.Cwd = "relative/dir" })
			return dir, []string{"process.cwd", "relative/dir"}
		}},
		{"missing-rootfs", func(t *testing.T, e *env) (string, []string) {
			missing := filepath.Join(e.tmp, "no-such-rootfs")
			dir := e.bundle([]string{"true"}, func(s *specs.Spec) { s.Root.Path = missing })
			return dir, []string{"root.path", missing}
		}},
		{"wrong-json-type", func(t *testing.T, e *env) (string, []string) {
			dir := badRawBundle(t, e, []byte(`{"ociVersion": "1.0.2", "process": {"args": "notalist", "cwd": "/"}, "root": {"path": "rootfs"}}`))
			return dir, []string{"process.args"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			bundle, wants := tt.bundle(t, e)
			r := e.vetto("create", "--bundle", bundle, e.id())
			badExpectError(t, r, wants...)
			badNothingLeft(t, e)
		})
	}
}

// A second create with the same id fails and leaves the first alone.
func TestBadDuplicateID(t *testing.T) {
	tests := []struct {
		name string
		cmd  string // the second command: create, or run which creates first
	}{
		{"create", "create"},
		{"run", "run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			b := e.bundle([]string{"sleep", "1000"}, nil)
			e.mustVetto("create", "-b", b, id)
			_, pid := badStatus(e, id)

			r := e.vetto(tt.cmd, "-b", e.bundle([]string{"true"}, nil), id)
			badExpectError(t, r, "container with given ID already exists", id)

			st := e.state(id)
			if st["status"] != "created" || int(st["pid"].(float64)) != pid || st["bundle"] != b {
				t.Errorf("first container after duplicate %s: got status %v pid %v bundle %v, want created %d %s",
					tt.cmd, st["status"], st["pid"], st["bundle"], pid, b)
			}
			if err := unix.Kill(pid, 0); err != nil {
				t.Errorf("first container's init %d: got %v, want it alive", pid, err)
			}
			e.mustVetto("delete", "--force", id)
			badNothingLeft(t, e)
		})
	}
}

func TestBadUnknownID(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"start", []string{"start"}},
		{"state", []string{"state"}},
		{"kill", []string{"kill"}},
		{"kill-with-signal", []string{"kill", "--all"}},
		{"delete", []string{"delete"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			r := e.vetto(append(tt.args, id)...)
			badExpectError(t, r, "container does not exist", id)
			badNothingLeft(t, e)
		})
	}
	// As runc: delete --force of a container that is gone succeeds
	// (containerd's shim and podman both rely on it), and says nothing.
	t.Run("delete-force", func(t *testing.T) {
		e := newEnv(t)
		r := e.vetto("delete", "--force", e.id())
		if r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Fatalf("delete --force of an unknown id: %s; want exit 0 and no output", r)
		}
		badNothingLeft(t, e)
	})
}

func TestBadInvalidID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		// escape is a path, relative to the test's temp dir (which holds
		// --root as "state"), that a runtime using the id as a path would
		// create; "" if there is none to check.
		escape string
	}{
		{"dotdot-slash", "../x", "x"},
		{"slash", "a/b", "state/a"},
		{"dot", ".", ""},
		{"dotdot", "..", ""},
	}
	for _, tt := range tests {
		for _, cmd := range []string{"create", "state"} {
			t.Run(tt.name+"/"+cmd, func(t *testing.T) {
				e := newEnv(t)
				before, err := os.ReadDir(e.tmp)
				if err != nil {
					t.Fatal(err)
				}
				args := []string{cmd, tt.id}
				if cmd == "create" {
					args = []string{cmd, "-b", e.bundle([]string{"true"}, nil), tt.id}
				}
				r := e.vetto(args...)
				badExpectError(t, r, "invalid container ID format")
				badNothingLeft(t, e)
				if tt.escape != "" {
					if _, err := os.Lstat(filepath.Join(e.tmp, tt.escape)); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("%s %q: got %s present (err %v), want nothing created there", cmd, tt.id, tt.escape, err)
					}
				}
				after, err := os.ReadDir(e.tmp)
				if err != nil {
					t.Fatal(err)
				}
				if got := badNewEntries(before, after); len(got) > 0 {
					t.Errorf("%s %q: got new entries %v beside --root, want none", cmd, tt.id, got)
				}
			})
		}
	}
}

// badNewEntries lists the names in after that are not in before, leaving
// out the harness's own stdio and bundle files and the state root.
func badNewEntries(before, after []os.DirEntry) []string {
	seen := map[string]bool{}
	for _, en := range before {
		seen[en.Name()] = true
	}
	var out []string
	for _, en := range after {
		n := en.Name()
		if seen[n] || strings.HasPrefix(n, "stdio-") || strings.HasPrefix(n, "bundle-") || n == "state" {
			continue
		}
		out = append(out, n)
	}
	return out
}

// Operations the container's state does not allow fail and change nothing.
func TestBadWrongState(t *testing.T) {
	tests := []struct {
		name string
		// setup makes the container and returns the status it must keep.
		setup func(e *env, id string) string
		args  func(id string) []string
		wants []string
	}{
		{
			name: "start-running",
			setup: func(e *env, id string) string {
				e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
				e.waitStatus(id, "running")
				return "running"
			},
			args:  func(id string) []string { return []string{"start", id} },
			wants: []string{"cannot start an already running container"},
		},
		{
			name: "start-stopped",
			setup: func(e *env, id string) string {
				e.mustVetto("run", "--keep", "-b", e.bundle([]string{"true"}, nil), id)
				return "stopped"
			},
			args:  func(id string) []string { return []string{"start", id} },
			wants: []string{"cannot start a container that has stopped"},
		},
		{
			name: "delete-running",
			setup: func(e *env, id string) string {
				e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
				e.waitStatus(id, "running")
				return "running"
			},
			args:  func(id string) []string { return []string{"delete", id} },
			wants: []string{"that is not stopped"},
		},
		{
			// The container dies on TERM (and the other common defaults),
			// so a kill that fell back to a default signal would show.
			name: "kill-unknown-signal",
			setup: func(e *env, id string) string {
				e.mustVetto("run", "-d", "-b", e.bundle([]string{"sh", "-c", `trap "exit 3" TERM INT HUP USR1; while :; do sleep 0.1; done`}, nil), id)
				e.waitStatus(id, "running")
				return "running"
			},
			args:  func(id string) []string { return []string{"kill", id, "NOPE"} },
			wants: []string{"unknown signal", "NOPE"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			want := tt.setup(e, id)
			_, pid := badStatus(e, id)

			r := e.vetto(tt.args(id)...)
			badExpectError(t, r, tt.wants...)

			// Give a wrongly sent signal time to land.
			time.Sleep(300 * time.Millisecond)
			if got, gotPid := badStatus(e, id); got != want || gotPid != pid {
				t.Errorf("after %v: got status %s pid %d, want %s pid %d", tt.args(id), got, gotPid, want, pid)
			}
			if want == "running" {
				if err := unix.Kill(pid, 0); err != nil {
					t.Errorf("after %v: init %d: got %v, want it alive", tt.args(id), pid, err)
				}
			}
			e.mustVetto("delete", "--force", id)
			badNothingLeft(t, e)
		})
	}
}

func TestBadMissingExecutable(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"absolute-path", []string{"/nonexistent"}, "no such file or directory"},
		{"path-lookup", []string{"nonexistent-cmd"}, "executable file not found in $PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			r := e.vetto("create", "-b", e.bundle(tt.args, nil), id)
			badExpectError(t, r, tt.want, tt.args[0])
			badNothingLeft(t, e)
			if pids := processesInCgroup(id); len(pids) > 0 {
				t.Errorf("got processes %v in the failed container's cgroup, want none", pids)
			}
		})
	}
}

func TestBadConsoleSocket(t *testing.T) {
	tests := []struct {
		name     string
		terminal bool
		socket   bool
		wants    []string
	}{
		{"terminal-without-socket", true, false, []string{"console socket", "tty"}},
		{"socket-without-terminal", false, true, []string{"cannot use console socket"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			b := e.bundle([]string{"true"}, func(s *specs.Spec) { s.Process.Terminal = tt.terminal })
			args := []string{"create", "-b", b}
			if tt.socket {
				// A socket that works, so that only the rule can fail.
				path := filepath.Join(e.tmp, "c.sock")
				l, err := net.Listen("unix", path)
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				args = append(args, "--console-socket", path)
			}
			r := e.vetto(append(args, id)...)
			badExpectError(t, r, tt.wants...)
			badNothingLeft(t, e)
		})
	}
}

// badVettoFiles runs the binary with extra open files as fds 3, 4, ...
func badVettoFiles(e *env, extra []*os.File, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(binary, append([]string{"--root", e.root}, args...)...)
	cmd.ExtraFiles = extra
	return e.runCmd(cmd)
}

// --preserve-fds N must refuse fds the caller did not pass, not hand the
// runtime's own open files to the container.
func TestBadPreserveFDs(t *testing.T) {
	tests := []struct {
		name  string
		open  int // how many fds from 3 on the caller passes
		n     string
		wants []string
	}{
		{"none-open", 0, "2", []string{"--preserve-fds", "fd 3 is not open"}},
		{"one-of-two-open", 1, "2", []string{"--preserve-fds", "fd 4 is not open"}},
		{"one-of-one-missing", 0, "1", []string{"--preserve-fds", "fd 3 is not open"}},
		// More fds than any process can have: an error, not the runtime
		// allocating for them until the Go runtime dies of it.
		{"beyond-any-fd-table", 0, "99999999999", []string{"--preserve-fds=99999999999", "more fds than a process can have open"}},
		{"max-int", 0, "9223372036854775807", []string{"--preserve-fds=9223372036854775807", "more fds than a process can have open"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			var extra []*os.File
			for i := 0; i < tt.open; i++ {
				extra = append(extra, e.tempFile())
			}
			defer func() {
				for _, f := range extra {
					f.Close()
				}
			}()
			r := badVettoFiles(e, extra, "create", "--preserve-fds", tt.n, "-b", e.bundle([]string{"true"}, nil), e.id())
			badExpectError(t, r, tt.wants...)
			badNothingLeft(t, e)
		})
	}
}

func TestBadSystemdCgroup(t *testing.T) {
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		t.Skip("systemd is running on this host (/run/systemd/system exists); --systemd-cgroup would work")
	}
	tests := []struct {
		name string
		cmd  string
	}{
		{"create", "create"},
		{"run", "run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			r := e.vetto("--systemd-cgroup", tt.cmd, "-b", e.bundle([]string{"true"}, nil), id)
			// The backend cannot build the sandbox: 125, not a usage
			// error (the launch-evaluator issue, 13.8).
			badExpectExit(t, r, 125, "systemd")
			badNothingLeft(t, e)
		})
	}
}

func TestBadLogFormat(t *testing.T) {
	tests := []struct {
		name   string
		format string
		args   []string
	}{
		{"state", "bogus", []string{"state", "x"}},
		{"list", "xml", []string{"list"}},
		{"create", "yaml", []string{"create", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			r := e.vetto(append([]string{"--log-format", tt.format}, tt.args...)...)
			badExpectError(t, r, "--log-format", tt.format)
			badNothingLeft(t, e)
		})
	}
}

// TestBadBundleConfigFile is a bundle whose config.json is not a file of
// the bundle, as someone handing a CI job a bundle would make it. Each
// `run` must come back at once (a fifo used to block it for good, deaf to
// SIGTERM), exit 1 with one line naming what config.json is, and leave
// nothing; a symlink out of the bundle must not lend this bundle another
// spec — here one whose environment holds a secret the bundle's author
// cannot read. A symlink inside the bundle still runs.
func TestBadBundleConfigFile(t *testing.T) {
	const secret = "VICTIM_TOKEN=s3cr3t-9f2c"
	tests := []struct {
		name string
		// make turns dir/config.json into the case; victim is a valid
		// spec outside the bundle.
		make func(t *testing.T, dir, victim string)
		want string // "" for a run that succeeds
	}{
		{"fifo", func(t *testing.T, dir, _ string) {
			if err := unix.Mkfifo(filepath.Join(dir, "config.json"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "config.json is a fifo, not a regular file"},
		{"socket", func(t *testing.T, dir, _ string) {
			l, err := net.Listen("unix", filepath.Join(dir, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
		}, "config.json is a socket, not a regular file"},
		{"device", func(t *testing.T, dir, _ string) {
			if err := unix.Mknod(filepath.Join(dir, "config.json"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 5))); err != nil {
				t.Fatal(err)
			}
		}, "config.json is a character device, not a regular file"},
		{"directory", func(t *testing.T, dir, _ string) {
			if err := os.Mkdir(filepath.Join(dir, "config.json"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "config.json is a directory, not a regular file"},
		{"symlink to another bundle's spec", func(t *testing.T, dir, victim string) {
			if err := os.Symlink(victim, filepath.Join(dir, "config.json")); err != nil {
				t.Fatal(err)
			}
		}, "config.json is a symlink that leads out of the bundle, to " + "VICTIM"},
		{"relative symlink to another bundle's spec", func(t *testing.T, dir, victim string) {
			rel, err := filepath.Rel(dir, victim)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(rel, filepath.Join(dir, "config.json")); err != nil {
				t.Fatal(err)
			}
		}, "config.json is a symlink that leads out of the bundle"},
		// The control: the same spec, copied into the bundle, runs.
		{"symlink in the bundle", func(t *testing.T, dir, victim string) {
			data, err := os.ReadFile(victim)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "spec.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("spec.json", filepath.Join(dir, "config.json")); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			victimDir := e.bundle([]string{"sh", "-c", "echo $VICTIM_TOKEN"}, func(s *specs.Spec) {
				s.Process.Env = append(s.Process.Env, secret)
			})
			victim := filepath.Join(victimDir, "config.json")
			dir, err := os.MkdirTemp(e.tmp, "bundle-")
			if err != nil {
				t.Fatal(err)
			}
			tt.make(t, dir, victim)
			want := strings.ReplaceAll(tt.want, "VICTIM", victim)

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, "--root", e.root, "run", "--bundle", dir, e.id())
			cmd.WaitDelay = 5 * time.Second
			start := time.Now()
			r := runCaptured(t, cmd, e.tmp)
			if ctx.Err() != nil {
				// The hung run is gone; let a fifo's open go for the cleanup.
				if f, err := os.OpenFile(filepath.Join(dir, "config.json"), os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
				t.Fatalf("run did not return in %v (killed): %s", time.Since(start).Round(time.Second), r)
			}
			if want != "" && strings.Contains(r.stdout+r.stderr, "s3cr3t") {
				t.Errorf("the bundle's program printed the other spec's secret: %s", r)
			}
			if want == "" {
				if r.code != 0 {
					t.Errorf("got %s, want a run that exits 0", r)
				}
			} else {
				badExpectError(t, r, want)
			}
			badNothingLeft(t, e)
		})
	}
}

// A file the caller names — an exec's --process, an update's --resources,
// the operator's --config, a policy — is read up to a bound: /dev/zero is
// one clear line (exit 1), not a runtime that reads until the machine's
// memory is gone or hangs. A pipe (`--process <(…)`, `-r -`) still works.
func TestBadInputFileBounded(t *testing.T) {
	e := newEnv(t)
	id := e.runningContainer()
	bundle := filepath.Join(e.tmp, "policy-bundle")
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"exec", "--process", "/dev/zero", id},
		{"update", "--resources", "/dev/zero", id},
		{"--config", "/dev/zero", "list"},
		{"spec", "--policy", "/dev/zero", "--bundle", bundle},
		{"policy", "check", "/dev/zero"},
	} {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append([]string{"--root", e.root}, args...)...)
			badExpectError(t, e.runCmd(cmd), "/dev/zero is larger than")
		})
	}
	r := e.vettoIn([]byte(`{"pids":{"limit":100}}`), "update", "--resources", "-", id)
	if r.code != 0 {
		t.Errorf("update --resources - from a pipe: %s", r)
	}
}
