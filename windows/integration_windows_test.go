//go:build windows

package windows

// Integration tests on a real Windows host: they drive the built binary
// through create/start/kill/delete, the canaries, and a workload that
// tries to leave its job. They have never been run: the project has no
// Windows host. They fail, never skip, when the host cannot run them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/windows"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// The test binary is also the workload of TestBreakaway: run inside the
// job with VETTO_TEST_HELPER=breakaway it tries to start a child outside
// the job and reports what the kernel says.
func TestMain(m *testing.M) {
	if os.Getenv("VETTO_TEST_HELPER") == "breakaway" {
		os.Exit(breakawayHelper())
	}
	os.Exit(m.Run())
}

// breakawayHelper starts a child normally first (the control: it must
// work, and the child must be in a job), then asks for
// CREATE_BREAKAWAY_FROM_JOB, which a job without a breakaway flag must
// refuse.
func breakawayHelper() int {
	spawn := func(flags uint32) (windows.Handle, error) {
		cmd, _ := windows.UTF16FromString(`C:\Windows\System32\cmd.exe /c exit 0`)
		var si windows.StartupInfo
		si.Cb = uint32(unsafe.Sizeof(si))
		var pi windows.ProcessInformation
		if err := windows.CreateProcess(nil, &cmd[0], nil, nil, false, flags|windows.CREATE_SUSPENDED, nil, nil, &si, &pi); err != nil {
			return 0, err
		}
		windows.CloseHandle(pi.Thread)
		return pi.Process, nil
	}
	child, err := spawn(0)
	if err != nil {
		fmt.Println("control: could not start a child at all:", err)
		return 4
	}
	in, err := isProcessInJob(child, 0)
	_ = windows.TerminateProcess(child, 1)
	if err != nil || !in {
		fmt.Println("control: the child is not in a job:", in, err)
		return 5
	}
	child, err = spawn(windows.CREATE_BREAKAWAY_FROM_JOB)
	if err != nil {
		fmt.Println("breakaway refused:", err)
		return 0
	}
	_ = windows.TerminateProcess(child, 1)
	fmt.Println("breakaway succeeded")
	return 3
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func binary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TESTONLY_VETTO_BINARY"); p != "" {
		return p
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vetto-windows-it-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "vetto-runtime.exe")
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
	t                          *testing.T
	bin, root, bundle, project string
	secret                     string
}

func newEnv(t *testing.T, extra []specs.Mount, args ...string) *env {
	t.Helper()
	e := &env{t: t, bin: binary(t), root: t.TempDir(), bundle: t.TempDir(), project: t.TempDir()}
	e.secret = fmt.Sprintf("SECRET=%d", time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(e.project, ".env"), []byte(e.secret), 0o600); err != nil {
		t.Fatal(err)
	}
	masked, _ := json.Marshal([]string{filepath.Join(e.project, ".env")})
	s := &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: `C:\`},
		Process: &specs.Process{Args: args, Env: []string{`PATH=C:\Windows\System32;C:\Windows`, `SystemRoot=C:\Windows`}, Cwd: e.project},
		Mounts: append([]specs.Mount{
			{Destination: e.project, Type: "bind", Source: e.project, Options: []string{"bind", "rw"}},
		}, extra...),
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

func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, _ := windows.WaitForSingleObject(h, 0)
	return ev == uint32(windows.WAIT_TIMEOUT)
}

func TestLifecycle(t *testing.T) {
	e := newEnv(t, nil, `C:\Windows\System32\ping.exe`, "-n", "30", "localhost")
	e.must("create", "--bundle", e.bundle, "life")
	t.Cleanup(func() { e.run("delete", "--force", "life") })
	if got := e.status("life"); got != "created" {
		t.Fatalf("status after create = %s", got)
	}
	st := e.backendState("life")
	for _, r := range st.Verdicts {
		if r.Verdict != hooks.Pass {
			t.Errorf("pre-launch verdict not PASS on a real host: %s", r)
		}
	}
	e.must("start", "life")
	if got := e.status("life"); got != "running" {
		t.Fatalf("status after start = %s", got)
	}
	for _, r := range e.backendState("life").Verdicts {
		if r.Verdict != hooks.Pass {
			t.Errorf("verdict not PASS on a real host: %s", r)
		}
	}
	e.must("kill", "--all", "life", "KILL")
	deadline := time.Now().Add(5 * time.Second)
	for e.status("life") != "stopped" {
		if time.Now().After(deadline) {
			t.Fatal("not stopped 5s after kill")
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.must("delete", "life")
	if processAlive(st.Pid) || processAlive(st.HolderPid) {
		t.Fatalf("process %d or holder %d alive after delete", st.Pid, st.HolderPid)
	}
	// The grants are gone: no entry for the container's SID is left on
	// the project.
	sid, _ := windows.StringToSid(st.SID)
	if denied, _ := hasDenyEntry(filepath.Join(e.project, ".env"), sid); denied {
		t.Fatal("the mask's deny entry outlived delete")
	}
}

// The workload itself tries the canaries: read the masked .env, write
// outside its roots, connect to the host's loopback.
func TestWorkloadCanaries(t *testing.T) {
	lis, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	reached := make(chan struct{}, 1)
	go func() {
		if c, err := lis.Accept(); err == nil {
			c.Close()
			reached <- struct{}{}
		}
	}()
	outside := filepath.Join(os.TempDir(), fmt.Sprintf("vetto-escape-%d", time.Now().UnixNano()))
	t.Cleanup(func() { os.Remove(outside) })
	port := lis.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`type .env > leaked & echo x > "%s" & powershell -NoProfile -Command "(New-Object Net.Sockets.TcpClient).Connect('127.0.0.1', %d)" & echo ok > inside`, outside, port)
	e := newEnv(t, nil, `C:\Windows\System32\cmd.exe`, "/c", script)
	e.must("run", "--bundle", e.bundle, "canaries")
	if b, err := os.ReadFile(filepath.Join(e.project, "inside")); err != nil || !strings.Contains(string(b), "ok") {
		t.Fatalf("positive control: the workload could not write its project: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.project, "leaked")); bytes.Contains(b, []byte(e.secret)) {
		t.Fatal("the workload read the masked .env")
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatalf("the workload wrote %s", outside)
	}
	select {
	case <-reached:
		t.Fatal("the workload reached the host's loopback listener")
	case <-time.After(200 * time.Millisecond):
	}
}

// A workload that tries to leave the job: CREATE_BREAKAWAY_FROM_JOB must
// be refused; explorer and "start" (ShellExecute) must not get a process
// out of the job.
func TestBreakaway(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(self)
	e := newEnv(t, []specs.Mount{{Destination: dir, Type: "bind", Source: dir, Options: []string{"bind", "ro"}}}, self, "-test.run=^$")
	// The helper's environment selects it.
	var s specs.Spec
	data, _ := os.ReadFile(filepath.Join(e.bundle, "config.json"))
	_ = json.Unmarshal(data, &s)
	s.Process.Env = append(s.Process.Env, "VETTO_TEST_HELPER=breakaway")
	data, _ = json.Marshal(&s)
	_ = os.WriteFile(filepath.Join(e.bundle, "config.json"), data, 0o644)
	out, errOut, code := e.run("run", "--bundle", e.bundle, "breakaway")
	if code != 0 || !strings.Contains(out, "breakaway refused") {
		t.Fatalf("breakaway helper: exit %d, %s %s", code, out, errOut)
	}

	before := explorerPids(t)
	e2 := newEnv(t, nil, `C:\Windows\System32\cmd.exe`, "/c", `start "" notepad.exe & explorer.exe C:\ & ping -n 3 localhost > nul`)
	e2.must("run", "--bundle", e2.bundle, "shell")
	time.Sleep(time.Second)
	for _, p := range explorerPids(t) {
		if !slices.Contains(before, p) {
			t.Errorf("a process %d outlived the job: explorer or start escaped it", p)
		}
	}
}

func explorerPids(t *testing.T) []int {
	out, err := exec.Command("tasklist", "/FO", "CSV", "/NH").Output()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, `","`)
		if len(f) > 1 && (strings.Contains(strings.ToLower(f[0]), "notepad") || strings.Contains(strings.ToLower(f[0]), "explorer")) {
			var pid int
			fmt.Sscanf(f[1], "%d", &pid)
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestRefusedBundle(t *testing.T) {
	e := newEnv(t, nil, "cmd.exe")
	var s specs.Spec
	data, _ := os.ReadFile(filepath.Join(e.bundle, "config.json"))
	_ = json.Unmarshal(data, &s)
	s.Annotations[spec.AnnotationNet] = "host"
	s.Process.Rlimits = []specs.POSIXRlimit{{Type: "RLIMIT_NOFILE", Soft: 1, Hard: 1}}
	data, _ = json.Marshal(&s)
	_ = os.WriteFile(filepath.Join(e.bundle, "config.json"), data, 0o644)
	_, errOut, code := e.run("create", "--bundle", e.bundle, "refused")
	if code != 125 || !strings.Contains(errOut, "windows.network") || !strings.Contains(errOut, "windows.rlimits") {
		t.Fatalf("create: exit %d, %s; want 125 naming windows.network and windows.rlimits", code, errOut)
	}
}

// The quoter agrees with the system's own parser.
func TestComposeCommandLineMatchesWindows(t *testing.T) {
	args := []string{`C:\Program Files\x.exe`, "a b", "", `"`, `a\`, `a\"b`, "tab\tx", "проект"}
	got, err := windows.DecomposeCommandLine(composeCommandLine(args))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, args) {
		t.Fatalf("DecomposeCommandLine = %q, want %q", got, args)
	}
}
