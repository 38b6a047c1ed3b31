//go:build linux

// Package integration drives the built vetto-runtime binary against real
// containers. It needs root and a kernel with namespaces and cgroups; it
// imports nothing of vetto-runtime's own packages, only the binary.
package integration

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

var (
	// binary is the vetto-runtime under test: $TESTONLY_VETTO_BINARY, or
	// built once. (Not VETTO_*: the runtime refuses such variables at
	// strict, and this one is in its environment.)
	binary string
	// rootfs is a shared busybox root filesystem, mounted read-only.
	rootfs string
	// harnessTmp is the test binary's temporary directory, removed when
	// it exits (the shared builds live there).
	harnessTmp string
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	flag.Parse()
	if os.Geteuid() != 0 && !rootlessOnly() {
		// A skip is never a pass: in CI this is a failure.
		fmt.Fprintln(os.Stderr, "integration tests need root (they run real containers); as a normal user only the rootless suite runs (-test.run '^TestRootless')")
		if os.Getenv("CI") != "" {
			return 1
		}
		return 0
	}
	tmp, err := os.MkdirTemp("", "vetto-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	harnessTmp = tmp
	// Searchable by the unprivileged uid a policy bundle's sandbox runs
	// as (see newEnv).
	if err := os.Chmod(tmp, 0o711); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	binary = os.Getenv("TESTONLY_VETTO_BINARY")
	if binary == "" {
		binary = filepath.Join(tmp, "vetto-runtime")
		if out, err := buildRuntime(binary); err != nil {
			fmt.Fprintf(os.Stderr, "build vetto-runtime: %v\n%s", err, out)
			return 1
		}
	} else if binary, err = filepath.Abs(binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rootfs = filepath.Join(tmp, "rootfs")
	if err := makeRootfs(rootfs); err != nil {
		fmt.Fprintln(os.Stderr, "make rootfs:", err)
		return 1
	}
	if vettoSeccomp, err = compiledSeccomp(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "vetto's seccomp profile:", err)
		return 1
	}
	return m.Run()
}

// rootlessOnly: -test.run selects the rootless suite alone, which a normal
// user runs as itself (the VM tier's "tester").
func rootlessOnly() bool {
	f := flag.Lookup("test.run")
	return f != nil && strings.HasPrefix(f.Value.String(), "^TestRootless")
}

// vettoSeccomp is vetto's own seccomp profile (deny by default), as the
// policy compiler writes it: the filter strict bundles in these tests use.
var vettoSeccomp *specs.LinuxSeccomp

// compiledSeccomp takes linux.seccomp from a bundle `spec --profile strict`
// compiles (the tests import nothing of the runtime's).
func compiledSeccomp(tmp string) (*specs.LinuxSeccomp, error) {
	project, bundle := filepath.Join(tmp, "seccomp-project"), filepath.Join(tmp, "seccomp-bundle")
	for _, d := range []string{project, bundle} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	defer os.RemoveAll(bundle)
	defer os.RemoveAll(project)
	cmd := exec.Command(binary, "spec", "--profile", "strict", "--project", project, "--bundle", bundle, "--", "true")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		return nil, err
	}
	var s specs.Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if s.Linux == nil || s.Linux.Seccomp == nil {
		return nil, fmt.Errorf("the compiled strict bundle has no seccomp profile")
	}
	return s.Linux.Seccomp, nil
}

// makeRootfs builds a minimal root filesystem from Debian's busybox-static.
func makeRootfs(dir string) error {
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return fmt.Errorf("busybox not found (install busybox-static): %w", err)
	}
	if out, err := exec.Command("file", "-L", bb).Output(); err == nil && bytes.Contains(out, []byte("dynamically linked")) {
		return fmt.Errorf("%s is dynamically linked; install busybox-static", bb)
	}
	// run/notify: where a relayed NOTIFY_SOCKET is mounted (notify_test.go),
	// made here so that no test has the runtime make it in the shared rootfs.
	for _, d := range []string{"bin", "proc", "sys", "dev", "tmp", "etc", "mnt", "run/notify"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "busybox"), data, 0o755); err != nil {
		return err
	}
	out, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return err
	}
	for _, applet := range strings.Fields(string(out)) {
		if applet == "busybox" {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(dir, "bin", applet)); err != nil && !os.IsExist(err) {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "etc", "passwd"), []byte("root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n"), 0o644)
}

// env is one test's world: its own state root, its containers, and a leak
// check when the test ends, pass or fail.
type env struct {
	t    *testing.T
	root string
	tmp  string
	ids  []string
	// fault, when set, runs the fault-injection build with
	// TESTONLY_VETTO_FAULT=fault instead of the binary under test.
	fault string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	tmp := t.TempDir()
	// Policy bundles run in a user namespace whose root is an
	// unprivileged host uid: it sets up its rootfs from inside, so it
	// must be able to enter the directories above it (t.TempDir makes
	// them 0700). Search only: nothing here is readable or writable by
	// others.
	for dir := tmp; dir != os.TempDir() && dir != "/"; dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	e := &env{t: t, root: filepath.Join(tmp, "state"), tmp: tmp}
	t.Cleanup(e.cleanup)
	return e
}

// id returns a fresh container id and remembers it for the leak check.
func (e *env) id() string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, e.t.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	id := fmt.Sprintf("%s-%06x", name, rand.IntN(1<<24))
	e.ids = append(e.ids, id)
	return id
}

// result is one command's outcome.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
}

// vetto runs the binary with --root set to this test's root.
func (e *env) vetto(args ...string) result {
	e.t.Helper()
	return e.vettoIn(nil, args...)
}

func (e *env) vettoIn(stdin []byte, args ...string) result {
	e.t.Helper()
	bin := binary
	if e.fault != "" {
		bin = buildFaultBinary(e.t)
	}
	cmd := exec.Command(bin, append([]string{"--root", e.root}, args...)...)
	if e.fault != "" {
		cmd.Env = append(os.Environ(), "TESTONLY_VETTO_FAULT="+e.fault)
	}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return e.runCmd(cmd)
}

// runCmd runs cmd to completion with files, not pipes, for its stdout and
// stderr: a detached container inherits the runtime's stdio (as with
// runc), and exec.Cmd would wait for a pipe's EOF that only comes when the
// container exits. containerd also hands over files.
func (e *env) runCmd(cmd *exec.Cmd) result {
	e.t.Helper()
	return runCaptured(e.t, cmd, e.tmp)
}

// runCaptured is runCmd with its stdio files in dir, removed after.
func runCaptured(t *testing.T, cmd *exec.Cmd, dir string) result {
	t.Helper()
	var files [2]*os.File
	for i := range files {
		f, err := os.CreateTemp(dir, "stdio-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(f.Name())
		defer f.Close()
		files[i] = f
	}
	cmd.Stdout, cmd.Stderr = files[0], files[1]
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("run %v: %v", cmd.Args, err)
		}
		code = ee.ExitCode()
	}
	return result{stdout: readAll(t, files[0]), stderr: readAll(t, files[1]), code: code}
}

func (e *env) tempFile() *os.File {
	e.t.Helper()
	f, err := os.CreateTemp(e.tmp, "stdio-")
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

func readAll(t *testing.T, f *os.File) string {
	t.Helper()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// mustVetto runs the binary and fails the test unless it exits 0.
func (e *env) mustVetto(args ...string) result {
	e.t.Helper()
	r := e.vetto(args...)
	if r.code != 0 {
		e.t.Fatalf("vetto-runtime %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// bundle writes a bundle running args on the shared rootfs and returns its
// directory. edit, if given, changes the spec before it is written.
func (e *env) bundle(args []string, edit func(*specs.Spec)) string {
	e.t.Helper()
	dir, err := os.MkdirTemp(e.tmp, "bundle-")
	if err != nil {
		e.t.Fatal(err)
	}
	s := baseSpec(e.t, args)
	if edit != nil {
		edit(s)
	}
	writeSpec(e.t, dir, s)
	return dir
}

// baseSpec is the runtime's own default spec (from `spec`), running args.
func baseSpec(t *testing.T, args []string) *specs.Spec {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(binary, "spec", "--bundle", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vetto-runtime spec: %v: %s", err, out)
	}
	var s specs.Spec
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	s.Root.Path = rootfs
	s.Root.Readonly = true
	s.Process.Terminal = false
	s.Process.Args = args
	s.Mounts = append(s.Mounts, specs.Mount{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}})
	return &s
}

func writeSpec(t *testing.T, dir string, s *specs.Spec) {
	t.Helper()
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// state returns the parsed `state` of id.
func (e *env) state(id string) map[string]any {
	e.t.Helper()
	r := e.mustVetto("state", id)
	var st map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		e.t.Fatalf("state %s: %v: %q", id, err, r.stdout)
	}
	return st
}

// waitStatus polls until container id has status want.
func (e *env) waitStatus(id, want string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := e.state(id)
		if st["status"] == want {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("container %s: status %v, want %s", id, st["status"], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cleanup force-deletes what the test left, then fails the test if
// anything of its containers survived: state, processes, cgroups, mounts.
func (e *env) cleanup() {
	t := e.t
	if out, err := exec.Command(binary, "--root", e.root, "list", "-q").Output(); err == nil {
		for _, id := range strings.Fields(string(out)) {
			_ = exec.Command(binary, "--root", e.root, "delete", "--force", id).Run()
		}
	}
	if entries, err := os.ReadDir(e.root); err == nil && len(entries) > 0 {
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
			_ = os.RemoveAll(filepath.Join(e.root, en.Name()))
		}
		t.Errorf("leak: state left under --root: %v", names)
	}
	for _, id := range e.ids {
		if pids := processesInCgroup(id); len(pids) > 0 {
			t.Errorf("leak: processes of %s still alive: %v", id, pids)
			for _, p := range pids {
				_ = exec.Command("kill", "-9", p).Run()
			}
		}
		if dirs := cgroupDirs(id); len(dirs) > 0 {
			t.Errorf("leak: cgroups of %s left: %v", id, dirs)
			for _, d := range dirs {
				_ = os.Remove(d)
			}
		}
	}
	if m := mountsUnder(e.tmp); len(m) > 0 {
		t.Errorf("leak: mounts left under %s: %v", e.tmp, m)
	}
}

// cgroupDirs lists the cgroup directories named for container id in every
// hierarchy (v1 controllers and the v2 unified one).
func cgroupDirs(id string) []string {
	var out []string
	hier, _ := filepath.Glob("/sys/fs/cgroup/*/vetto-runtime/" + id)
	out = append(out, hier...)
	if _, err := os.Stat("/sys/fs/cgroup/vetto-runtime/" + id); err == nil {
		out = append(out, "/sys/fs/cgroup/vetto-runtime/"+id)
	}
	return out
}

// processesInCgroup finds host processes whose cgroup names container id.
func processesInCgroup(id string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if bytes.Contains(data, []byte("/vetto-runtime/"+id+"\n")) {
			out = append(out, filepath.Base(filepath.Dir(p)))
		}
	}
	return out
}

// mountsUnder lists host mount points below dir.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir) {
			out = append(out, fields[4])
		}
	}
	return out
}

// buildRuntime builds vetto-runtime the way the Makefile does: static, so
// it can re-exec itself inside a container's rootfs, with the helper
// executables (cmd/vetto-runtime-init, cmd/vetto-runtime-relay) built with
// the same tags and embedded. extraTags are added to the Makefile's build
// tags, for all three: the fault-injection build's init has its faults
// too. The helpers and their digests reach the embed through go build's
// -overlay, beside out, so the tree's own (make build's) are left alone.
func buildRuntime(out string, extraTags ...string) ([]byte, error) {
	initTags := strings.Join(append([]string{"seccomp", "netgo", "osusergo"}, extraTags...), ",")
	tags := strings.Join(append([]string{"seccomp", "netgo", "osusergo", "urfave_cli_no_docs", "embedinit"}, extraTags...), ",")
	repo, err := filepath.Abs("..")
	if err != nil {
		return nil, err
	}
	replace := map[string]string{}
	for _, h := range []struct{ name, embed string }{
		{"vetto-runtime-init", "linux/initexe/vetto-runtime-init"},
		{"vetto-runtime-relay", "linux/relayexe/vetto-runtime-relay"},
	} {
		exe := out + "-" + strings.TrimPrefix(h.name, "vetto-runtime-")
		cmd := exec.Command("go", "build", "-tags", initTags, "-trimpath", "-ldflags", "-s -w -extldflags=-static", "-o", exe, "../cmd/"+h.name)
		if b, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("build %s: %w", h.name, err)
		}
		data, err := os.ReadFile(exe)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		if err := os.WriteFile(exe+".sha256", []byte(hex.EncodeToString(sum[:])+"\n"), 0o644); err != nil {
			return nil, err
		}
		replace[filepath.Join(repo, h.embed)] = exe
		replace[filepath.Join(repo, h.embed+".sha256")] = exe + ".sha256"
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(out+"-overlay.json", overlay, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "build", "-overlay", out+"-overlay.json", "-tags", tags, "-trimpath", "-ldflags", "-extldflags=-static", "-o", out, "..")
	return cmd.CombinedOutput()
}
