//go:build darwin

package darwin

// Integration tests on a real Mac: they drive the built binary through
// create/start/kill/delete, and a workload that tries to get out. They
// have never been run: the project has no macOS host. They fail, never
// skip, when the host cannot run them (no sandbox-exec, no sandbox_check):
// a skip is not a pass.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/spec"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary is TESTONLY_VETTO_BINARY, or the module built once for the test.
func binary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TESTONLY_VETTO_BINARY"); p != "" {
		return p
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vetto-darwin-it-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "vetto-runtime")
		cmd := exec.Command("go", "build", "-o", binPath, "..")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type env struct {
	t       *testing.T
	bin     string
	root    string
	bundle  string
	project string
	secret  string
}

func realDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newEnv writes a bundle: the system read-only, a project read-write with
// a masked .env holding a secret, network none.
func newEnv(t *testing.T, args ...string) *env {
	t.Helper()
	if _, err := os.Stat(sandboxExec); err != nil {
		t.Fatalf("this Mac has no %s: %v", sandboxExec, err)
	}
	e := &env{t: t, bin: binary(t), root: realDir(t), bundle: realDir(t), project: realDir(t)}
	e.secret = fmt.Sprintf("SECRET=%d", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(e.project, ".env"), []byte(e.secret), 0o600); err != nil {
		t.Fatal(err)
	}
	ro := []string{"bind", "ro"}
	masked, _ := json.Marshal([]string{filepath.Join(e.project, ".env")})
	s := &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "/", Readonly: true},
		Process: &specs.Process{User: specs.User{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}, Args: args,
			Env: []string{"PATH=/usr/bin:/bin"}, Cwd: e.project},
		Mounts: []specs.Mount{
			{Destination: "/bin", Type: "bind", Source: "/bin", Options: ro},
			{Destination: "/usr", Type: "bind", Source: "/usr", Options: ro},
			{Destination: "/System", Type: "bind", Source: "/System", Options: ro},
			{Destination: "/private/etc", Type: "bind", Source: "/private/etc", Options: ro},
			{Destination: e.project, Type: "bind", Source: e.project, Options: []string{"bind", "rw"}},
		},
		Annotations: map[string]string{spec.AnnotationNet: "none", spec.AnnotationMasked: string(masked)},
	}
	data, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(e.bundle, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) run(args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(e.bin, append([]string{"--root", e.root}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func (e *env) must(args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("vetto-runtime %v: exit %d: %s", args, code, errOut)
	}
	return out
}

func (e *env) status(id string) string {
	e.t.Helper()
	var st struct{ Status string }
	if err := json.Unmarshal([]byte(e.must("state", id)), &st); err != nil {
		e.t.Fatal(err)
	}
	return st.Status
}

func (e *env) create(id string) int {
	e.t.Helper()
	e.must("create", "--bundle", e.bundle, id)
	e.t.Cleanup(func() { e.run("delete", "--force", id) })
	var st struct{ Pid int }
	_ = json.Unmarshal([]byte(e.must("state", id)), &st)
	return st.Pid
}

// backendState is the backend's record, with its verdicts.
func (e *env) backendState(id string) *state {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, id, "backend", stateName))
	if err != nil {
		e.t.Fatal(err)
	}
	st := &state{}
	if err := json.Unmarshal(data, st); err != nil {
		e.t.Fatal(err)
	}
	return st
}

func alive(pid int) bool { return unix.Kill(pid, 0) == nil }

func TestLifecycle(t *testing.T) {
	e := newEnv(t, "sleep", "30")
	pid := e.create("life")
	if got := e.status("life"); got != "created" {
		t.Fatalf("status after create = %s", got)
	}
	if !alive(pid) {
		t.Fatalf("held pid %d is not alive", pid)
	}
	if in, err := sandboxed(pid); err != nil || !in {
		t.Fatalf("held pid %d: sandboxed=%v err=%v", pid, in, err)
	}
	e.must("start", "life")
	if got := e.status("life"); got != "running" {
		t.Fatalf("status after start = %s", got)
	}
	for _, r := range e.backendState("life").Verdicts {
		if r.Verdict != hooks.Pass {
			t.Errorf("verdict not PASS on a real Mac: %s", r)
		}
	}
	e.must("kill", "life", "KILL")
	deadline := time.Now().Add(5 * time.Second)
	for e.status("life") != "stopped" {
		if time.Now().After(deadline) {
			t.Fatal("not stopped 5s after SIGKILL")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.must("delete", "life")
	if alive(pid) {
		t.Fatalf("pid %d alive after delete", pid)
	}
	if _, err := os.Stat(filepath.Join(e.root, "life")); !os.IsNotExist(err) {
		t.Fatalf("state left after delete: %v", err)
	}
}

// The canaries the host judges, run by the workload itself this time:
// a masked read, a write outside the roots, a loopback connect.
func TestWorkloadCanaries(t *testing.T) {
	lis, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := lis.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	home, _ := os.UserHomeDir()
	outside := filepath.Join(home, fmt.Sprintf(".vetto-escape-%d", time.Now().UnixNano()))
	t.Cleanup(func() { os.Remove(outside) })
	port := lis.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`cat .env > leaked 2>/dev/null; echo x > %q; nc -z -w 1 127.0.0.1 %d; echo ok > inside`, outside, port)
	e := newEnv(t, "sh", "-c", script)
	e.must("run", "--bundle", e.bundle, "canaries")
	if b, err := os.ReadFile(filepath.Join(e.project, "inside")); err != nil || strings.TrimSpace(string(b)) != "ok" {
		t.Fatalf("positive control: the workload could not write its project: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.project, "leaked")); bytes.Contains(b, []byte(e.secret)) {
		t.Fatal("the workload read the masked .env")
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatalf("the workload wrote %s outside its roots", outside)
	}
	select {
	case <-accepted:
		t.Fatal("the workload reached the host's loopback listener")
	case <-time.After(200 * time.Millisecond):
	}
}

// A workload that tries to leave the sandbox: a nested sandbox-exec with
// an allow-default profile, osascript (Apple Events), open (LaunchServices
// starts apps outside the sandbox), and a setsid double fork that outlives
// the process group and then writes outside. None may get a file out.
func TestEscapeAttempts(t *testing.T) {
	home, _ := os.UserHomeDir()
	mark := fmt.Sprintf(".vetto-escape-%d", time.Now().UnixNano())
	target := filepath.Join(home, mark)
	t.Cleanup(func() {
		for _, s := range []string{"1", "2", "3", "4"} {
			os.Remove(target + s)
		}
	})
	script := strings.Join([]string{
		fmt.Sprintf(`/usr/bin/sandbox-exec -p '(version 1)(allow default)' /usr/bin/touch %q`, target+"1"),
		fmt.Sprintf(`/usr/bin/osascript -e 'do shell script "touch %s"'`, target+"2"),
		fmt.Sprintf(`/usr/bin/open -a Terminal %q`, target+"3"),
		fmt.Sprintf(`/usr/bin/perl -e 'use POSIX; if (fork()==0) { POSIX::setsid(); if (fork()==0) { sleep 2; open(F, ">", "%s"); exit } exit } '`, target+"4"),
		"true",
	}, " ; ")
	e := newEnv(t, "sh", "-c", script)
	e.must("run", "--bundle", e.bundle, "escape")
	time.Sleep(3 * time.Second)
	for _, s := range []string{"1", "2", "3", "4"} {
		if _, err := os.Stat(target + s); err == nil {
			t.Errorf("escape %s wrote %s", s, target+s)
		}
	}
	// The escaped grandchild is the documented degraded-cleanup: say if
	// it outlived delete, and kill it.
	if out, err := exec.Command("pgrep", "-f", "sleep 2; open").Output(); err == nil && len(out) > 0 {
		t.Logf("degraded-cleanup: a setsid double fork outlived delete: %s", out)
		_ = exec.Command("pkill", "-f", "sleep 2; open").Run()
	}
}

// A bundle the sandbox cannot honour is refused with every reason, exit
// 125, and nothing runs.
func TestRefusedBundle(t *testing.T) {
	e := newEnv(t, "true")
	var s specs.Spec
	data, _ := os.ReadFile(filepath.Join(e.bundle, "config.json"))
	_ = json.Unmarshal(data, &s)
	s.Linux = &specs.Linux{Seccomp: &specs.LinuxSeccomp{DefaultAction: specs.ActErrno}, Namespaces: []specs.LinuxNamespace{{Type: specs.PIDNamespace}}}
	data, _ = json.Marshal(&s)
	_ = os.WriteFile(filepath.Join(e.bundle, "config.json"), data, 0o644)
	_, errOut, code := e.run("create", "--bundle", e.bundle, "refused")
	if code != 125 || !strings.Contains(errOut, "darwin.seccomp") || !strings.Contains(errOut, "darwin.namespaces") {
		t.Fatalf("create: exit %d, %s; want 125 naming darwin.seccomp and darwin.namespaces", code, errOut)
	}
}

func TestDoctor(t *testing.T) {
	e := newEnv(t, "true")
	out := e.must("doctor", "--format", "json")
	var d struct {
		Probes []struct{ Name, Status string }
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Probes {
		switch p.Name {
		case probeSandboxExec, probeProfile, probeCheck:
			if p.Status != "supported" {
				t.Errorf("doctor: %s is %s on this Mac", p.Name, p.Status)
			}
		}
	}
}
