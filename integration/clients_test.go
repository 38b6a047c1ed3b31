//go:build linux

package integration

// Real clients: containerd (ctr, and CRI through a named runtime) and podman
// (with conmon) drive the built binary exactly as they drive runc. Each test
// starts its own daemon (containerd, on a private socket, root and state) or
// its own podman world (root, runroot, tmpdir, containers.conf) in a temp
// dir, and its cleanup stops it and fails the test if anything is left:
// client, shim or conmon processes, container processes, cgroups,
// vetto-runtime state, mounts, host directories the clients made.

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	clientbin "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// clientTimeout bounds every client command; a hang is a failure, not a
// stuck test run.
const clientTimeout = 2 * time.Minute

// clientNeed fails the test (never skips it) when a client is not installed.
func clientNeed(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Fatalf("%s is not installed (Debian: containerd, podman, conmon, util-linux); run `make deps` as root: %v", n, err)
		}
	}
}

// clientRootfs copies the shared busybox rootfs: containerd and podman
// create mount points and files in a --rootfs directory.
func clientRootfs(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, "rootfs")
	if out, err := exec.Command("cp", "-a", rootfs, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy rootfs: %v: %s", err, out)
	}
	return dst
}

// clientExec runs name with args and env added to the test's environment,
// stdout and stderr to files in dir (a detached child may inherit them),
// stdin from /dev/null.
func clientExec(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := os.CreateTemp(dir, "stdout-")
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.CreateTemp(dir, "stderr-")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		code = ee.ExitCode()
		if ctx.Err() != nil {
			t.Errorf("%s %v: killed after %v", name, args, clientTimeout)
		}
	}
	r := result{stdout: readAll(t, stdout), stderr: readAll(t, stderr), code: code}
	_ = os.Remove(stdout.Name())
	_ = os.Remove(stderr.Name())
	return r
}

// clientQuote quotes args for sh -c (script(1) takes one command string).
func clientQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// clientScript runs argv under script(1), which gives it a terminal, and
// returns the terminal's output and script's exit code (the command's,
// with -e).
func clientScript(t *testing.T, dir string, env []string, argv []string) result {
	t.Helper()
	clientNeed(t, "script")
	return clientExec(t, dir, env, "script", "-qec", clientQuote(argv), "/dev/null")
}

// clientProcsWith lists pids (not this process) whose command line
// contains s: daemons, shims, conmons started for a test all name its
// temp dir.
func clientProcsWith(s string) []int {
	var out []int
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) == 0 {
			continue
		}
		if bytes.Contains(data, []byte(s)) {
			out = append(out, pid)
		}
	}
	return out
}

// clientProcsInCgroup lists pids in cgroup path (as in /proc/<pid>/cgroup,
// e.g. /ns/id) in any hierarchy.
func clientProcsInCgroup(path string) []int {
	var out []int
	files, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasSuffix(line, ":"+path) {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// clientCgroupDirs lists the directories of cgroup path in every hierarchy.
func clientCgroupDirs(path string) []string {
	var out []string
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*" + path)
	out = append(out, dirs...)
	if fi, err := os.Stat("/sys/fs/cgroup" + path); err == nil && fi.IsDir() {
		out = append(out, "/sys/fs/cgroup"+path)
	}
	return out
}

// clientCgroupCandidates are the directories cgroup path could have, one
// per hierarchy (for clientTrackDirs).
func clientCgroupCandidates(path string) []string {
	out := []string{"/sys/fs/cgroup" + path}
	hier, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range hier {
		if h.IsDir() {
			out = append(out, filepath.Join("/sys/fs/cgroup", h.Name())+path)
		}
	}
	return out
}

// clientKill SIGKILLs pids and waits (up to 5s) until they are gone.
func clientKill(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range pids {
		for time.Now().Before(deadline) {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", p)); err != nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// clientWaitGone polls until no process is in cgroup path (10s).
func clientWaitGone(path string) []int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := clientProcsInCgroup(path)
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clientHostDirs remembers which host directories existed before a test,
// so that its cleanup removes (only) those the clients created.
type clientHostDirs struct {
	paths   []string // children before parents
	existed map[string]bool
}

func clientTrackDirs(paths ...string) *clientHostDirs {
	h := &clientHostDirs{paths: paths, existed: map[string]bool{}}
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			h.existed[p] = true
		}
	}
	return h
}

// removeNew removes the directories that did not exist before; one that
// cannot be removed (not empty) is a leak.
func (h *clientHostDirs) removeNew(t *testing.T) {
	for _, p := range h.paths {
		if h.existed[p] {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("leak: %s left and not removable: %v", p, err)
		}
	}
}

// clientNoState fails unless vetto-runtime's state root dir holds no
// container (a missing root is empty).
func clientNoState(t *testing.T, root string, ids ...string) {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read vetto-runtime root %s: %v", root, err)
		return
	}
	for _, en := range entries {
		if len(ids) == 0 || slices.Contains(ids, en.Name()) {
			t.Errorf("leak: vetto-runtime state %s left in %s", en.Name(), root)
		}
	}
}

// clientGone asserts a deleted container left no process and no cgroup.
func clientGone(t *testing.T, cgroupPath string) {
	t.Helper()
	if pids := clientWaitGone(cgroupPath); len(pids) > 0 {
		t.Errorf("leak: processes still in cgroup %s: %v", cgroupPath, pids)
	}
	if dirs := clientCgroupDirs(cgroupPath); len(dirs) > 0 {
		t.Errorf("leak: cgroup %s left: %v", cgroupPath, dirs)
	}
}

// clientVettoState reads `vetto-runtime --root root state id` (root empty:
// the binary's default, as under podman).
func clientVettoState(t *testing.T, dir, root, id string) map[string]any {
	t.Helper()
	args := []string{"state", id}
	if root != "" {
		args = append([]string{"--root", root}, args...)
	}
	r := clientExec(t, dir, nil, binary, args...)
	if r.code != 0 {
		t.Fatalf("vetto-runtime %v: %s (was the container created by vetto-runtime?)", args, r)
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("state %s: %v: %q", id, err, r.stdout)
	}
	if v, ok := st["vetto"].(map[string]any); !ok || v["launchLine"] == nil {
		t.Errorf("state of %s has no vetto.launchLine: %s", id, r.stdout)
	}
	return st
}

// clientFreezer reads whether cgroup path is frozen (v1 freezer, else v2).
func clientFreezer(t *testing.T, path string) string {
	t.Helper()
	if data, err := os.ReadFile("/sys/fs/cgroup/freezer" + path + "/freezer.state"); err == nil {
		return strings.TrimSpace(string(data))
	}
	if data, err := os.ReadFile("/sys/fs/cgroup" + path + "/cgroup.freeze"); err == nil {
		if strings.TrimSpace(string(data)) == "1" {
			return "FROZEN"
		}
		return "THAWED"
	}
	t.Errorf("no freezer for cgroup %s", path)
	return ""
}

// ---------------------------------------------------------------- containerd

// clientContainerd is one containerd daemon: its root, state, socket, the
// runc root its shims give vetto-runtime, and a private /run (an overlay in
// its own mount namespace: the shims' sockets, which containerd 1.6 always
// puts in /run/containerd/s, stay out of the host's /run/containerd).
type clientContainerd struct {
	t        *testing.T
	dir      string
	sock     string
	ns       string
	runcRoot string // vetto-runtime's --root is runcRoot/<namespace>
	fifoDir  string
	rootfs   string
	logPath  string
	cmd      *exec.Cmd
	done     chan struct{}
	ctrIDs   []string          // containers made with ctr
	cgroups  map[string]string // container id -> cgroupsPath
	cri      *clientCRI
	hostDirs *clientHostDirs
	// runtime is the runc binary ctr runs: vetto-runtime, or a wrapper
	// of it (configuredRuntime); "" is the binary under test.
	runtime string
}

// clientContainerdDisabled are plugins these tests do not need (cri is
// enabled again by the named-runtime test).
var clientContainerdDisabled = []string{
	"io.containerd.internal.v1.opt", // would create /opt/containerd
	"io.containerd.internal.v1.tracing",
	"io.containerd.tracing.processor.v1.otlp",
	"io.containerd.snapshotter.v1.aufs",
	"io.containerd.snapshotter.v1.btrfs",
	"io.containerd.snapshotter.v1.devmapper",
	"io.containerd.snapshotter.v1.zfs",
}

// clientStartContainerd starts containerd with a version 2 config: cri
// disabled unless criConfig is given (the [plugins."io.containerd.grpc.v1.cri"]
// tables, with {{dir}} and {{binary}} replaced).
func clientStartContainerd(t *testing.T, criConfig string) *clientContainerd {
	t.Helper()
	clientNeed(t, "containerd", "ctr", "containerd-shim-runc-v2", "unshare")
	dir := t.TempDir()
	c := &clientContainerd{
		t:        t,
		dir:      dir,
		sock:     filepath.Join(dir, "c.sock"),
		ns:       fmt.Sprintf("vetto-test-%06x", rand.IntN(1<<24)),
		runcRoot: filepath.Join(dir, "runc"),
		fifoDir:  filepath.Join(dir, "fifo"),
		logPath:  filepath.Join(dir, "containerd.log"),
		done:     make(chan struct{}),
		cgroups:  map[string]string{},
	}
	for _, d := range []string{"runc", "fifo", "run-upper", "run-work", "cni"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	c.rootfs = clientRootfs(t, dir)
	disabled := slices.Clone(clientContainerdDisabled)
	if criConfig == "" {
		disabled = append(disabled, "io.containerd.grpc.v1.cri")
	}
	quoted := make([]string, len(disabled))
	for i, d := range disabled {
		quoted[i] = strconv.Quote(d)
	}
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = [%s]

[grpc]
  address = %q
[ttrpc]
  address = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), strings.Join(quoted, ", "), c.sock, c.sock+".ttrpc")
	config += strings.NewReplacer("{{dir}}", dir, "{{binary}}", binary).Replace(criConfig)
	configPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	// cgroup parents the runtime creates (ctr's default cgroupsPath is
	// /<namespace>/<id>; CRI's /k8s.io/<id>) and does not remove, as runc.
	var parents []string
	parents = append(parents, clientCgroupCandidates("/"+c.ns)...)
	if criConfig != "" {
		parents = append(parents, clientCgroupCandidates("/k8s.io")...)
	}
	c.hostDirs = clientTrackDirs(parents...)

	logf, err := os.Create(c.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	script := `mount -t overlay overlay -o "lowerdir=/run,upperdir=$1,workdir=$2" /run && exec containerd --config "$3" --root "$4" --state "$5" --address "$6"`
	c.cmd = exec.Command("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh",
		filepath.Join(dir, "run-upper"), filepath.Join(dir, "run-work"), configPath,
		filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.sock)
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start containerd: %v", err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	t.Cleanup(c.cleanup)

	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-c.done:
			t.Fatalf("containerd exited at start:\n%s", c.logTail())
		default:
		}
		if r := clientExec(t, dir, nil, "ctr", "--address", c.sock, "version"); r.code == 0 && strings.Contains(r.stdout, "Server:") {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("containerd did not answer on %s:\n%s", c.sock, c.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *clientContainerd) log() string {
	data, _ := os.ReadFile(c.logPath)
	return string(data)
}

func (c *clientContainerd) logTail() string {
	data := c.log()
	if len(data) > 6000 {
		data = data[len(data)-6000:]
	}
	return data
}

// ctr runs ctr against this daemon, in the test's namespace.
func (c *clientContainerd) ctr(args ...string) result {
	c.t.Helper()
	return clientExec(c.t, c.dir, nil, "ctr", append([]string{"--address", c.sock, "--namespace", c.ns}, args...)...)
}

func (c *clientContainerd) mustCtr(args ...string) result {
	c.t.Helper()
	r := c.ctr(args...)
	if r.code != 0 {
		c.t.Fatalf("ctr %s: %s\ncontainerd log:\n%s", strings.Join(args, " "), r, c.logTail())
	}
	return r
}

// newID returns a container id and remembers it for cleanup.
func (c *clientContainerd) newID(name string) string {
	id := fmt.Sprintf("%s-%06x", name, rand.IntN(1<<24))
	c.ctrIDs = append(c.ctrIDs, id)
	c.cgroups[id] = "/" + c.ns + "/" + id // ctr's default; replaced from the bundle when read
	return id
}

// run returns `ctr run` arguments for id on the rootfs copy with
// vetto-runtime as the runc binary.
func (c *clientContainerd) run(flags []string, id string, args ...string) []string {
	out := append([]string{"run"}, flags...)
	rt := binary
	if c.runtime != "" {
		rt = c.runtime
	}
	out = append(out, "--runc-binary", rt, "--runc-root", c.runcRoot, "--fifo-dir", c.fifoDir,
		"--env", "PATH=/bin", "--rootfs", c.rootfs, id)
	return append(out, args...)
}

// configuredRuntime writes, under dir, a runtime.toml with config and a
// wrapper that runs vetto-runtime with it: what an operator's
// /etc/vetto/runtime.toml is to a client that passes no flag (the shim
// and conmon pass none).
func configuredRuntime(t *testing.T, dir, config string) string {
	t.Helper()
	conf := filepath.Join(dir, "runtime.toml")
	if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(dir, "vetto-runtime-configured")
	script := fmt.Sprintf("#!/bin/sh\nexec %s --config %s \"$@\"\n", binary, conf)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}

// vettoRoot is the --root the shim gives vetto-runtime for namespace ns.
func (c *clientContainerd) vettoRoot(ns string) string { return filepath.Join(c.runcRoot, ns) }

// bundle is the task's bundle directory (config.json, log.json).
func (c *clientContainerd) bundle(ns, id string) string {
	return filepath.Join(c.dir, "state", "io.containerd.runtime.v2.task", ns, id)
}

// readCgroup records the cgroupsPath of a live task from its bundle.
func (c *clientContainerd) readCgroup(ns, id string) string {
	c.t.Helper()
	data, err := os.ReadFile(filepath.Join(c.bundle(ns, id), "config.json"))
	if err != nil {
		c.t.Fatalf("bundle of %s: %v", id, err)
	}
	var s struct {
		Linux struct {
			CgroupsPath string `json:"cgroupsPath"`
		} `json:"linux"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		c.t.Fatal(err)
	}
	p := s.Linux.CgroupsPath
	if p == "" {
		p = "/vetto-runtime/" + id // vetto-runtime's default
	}
	c.cgroups[id] = p
	return p
}

// task returns the pid and status `ctr task ls` shows for id ("" if none).
func (c *clientContainerd) task(id string) (int, string) {
	c.t.Helper()
	r := c.mustCtr("task", "ls")
	for _, line := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == id {
			pid, _ := strconv.Atoi(f[1])
			return pid, f[2]
		}
	}
	return 0, ""
}

func (c *clientContainerd) waitTask(id, want string) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, st := c.task(id)
		if st == want {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s: status %q, want %s", id, st, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// assertDeleted checks that a container deleted through ctr left nothing:
// not in `ctr c ls`, no vetto-runtime state, no process, no cgroup.
func (c *clientContainerd) assertDeleted(id string) {
	c.t.Helper()
	if r := c.mustCtr("containers", "ls", "-q"); slices.Contains(strings.Fields(r.stdout), id) {
		c.t.Errorf("container %s still listed by ctr: %q", id, r.stdout)
	}
	clientNoState(c.t, c.vettoRoot(c.ns), id)
	clientGone(c.t, c.cgroups[id])
}

// cleanup tears down what the test left through containerd, stops the
// daemon, then fails the test for anything that survived.
func (c *clientContainerd) cleanup() {
	t := c.t
	select {
	case <-c.done:
	default:
		for _, id := range c.ctrIDs {
			_ = c.ctr("task", "kill", "-s", "KILL", id)
			_ = c.ctr("task", "rm", "-f", id)
			_ = c.ctr("containers", "rm", id)
		}
		if c.cri != nil {
			c.cri.teardown()
		}
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Errorf("containerd did not exit on SIGTERM")
			_ = c.cmd.Process.Kill()
			<-c.done
		}
	}
	// Shims name the daemon's socket; anything naming the temp dir is ours.
	if pids := clientProcsWith(c.dir); len(pids) > 0 {
		t.Errorf("leak: processes of this containerd survive it: %v", clientCmdlines(pids))
		clientKill(pids)
	}
	for _, ns := range []string{c.ns, "k8s.io"} {
		root := c.vettoRoot(ns)
		clientNoState(t, root)
		entries, _ := os.ReadDir(root)
		for _, en := range entries {
			_ = exec.Command(binary, "--root", root, "delete", "--force", en.Name()).Run()
		}
	}
	for id, cg := range c.cgroups {
		if pids := clientProcsInCgroup(cg); len(pids) > 0 {
			t.Errorf("leak: processes of %s (cgroup %s) alive: %v", id, cg, pids)
			clientKill(pids)
		}
		if dirs := clientCgroupDirs(cg); len(dirs) > 0 {
			t.Errorf("leak: cgroups of %s left: %v", id, dirs)
			for _, d := range dirs {
				_ = os.Remove(d)
			}
		}
	}
	c.hostDirs.removeNew(t)
	if m := mountsUnder(c.dir); len(m) > 0 {
		t.Errorf("leak: mounts left under %s: %v", c.dir, m)
	}
	if t.Failed() {
		t.Logf("containerd log:\n%s", c.logTail())
	}
}

func clientCmdlines(pids []int) []string {
	var out []string
	for _, p := range pids {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		out = append(out, fmt.Sprintf("%d %s", p, bytes.ReplaceAll(bytes.TrimRight(data, "\x00"), []byte{0}, []byte{' '})))
	}
	return out
}

// Foreground `ctr run --rm`: stdio, the exit code passed through, and a
// failing create reported with vetto-runtime's own error text.
func TestClientContainerdRun(t *testing.T) {
	c := clientStartContainerd(t, "")

	id := c.newID("fg")
	r := c.ctr(c.run([]string{"--rm"}, id, "sh", "-c", "echo out-$((6*7)); exit 3")...)
	if r.code != 3 {
		t.Errorf("ctr run --rm: %s, want exit 3 (the container's)", r)
	}
	if !strings.Contains(r.stdout, "out-42") {
		t.Errorf("ctr run --rm: stdout %q, want out-42", r.stdout)
	}
	c.assertDeleted(id)

	bad := c.newID("missing")
	r = c.ctr(c.run([]string{"--rm"}, bad, "nonexistent-cmd")...)
	if r.code == 0 {
		t.Errorf("ctr run of a missing command succeeded: %s", r)
	}
	// vetto-runtime's wording (runc says "runc create failed: ...").
	for _, want := range []string{fmt.Sprintf("create %q", bad), "executable file not found"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("ctr run of a missing command: stderr %q, want %q from vetto-runtime", r.stderr, want)
		}
	}
	c.assertDeleted(bad)
}

// A detached container: exec, ps, pause/resume, metrics, kill, delete.
func TestClientContainerdDetached(t *testing.T) {
	c := clientStartContainerd(t, "")
	clientCtrDetached(t, c, nil)
}

// clientCtrDetached is the detached flow; runtimeFlags go before the
// other `ctr run` flags.
func clientCtrDetached(t *testing.T, c *clientContainerd, runtimeFlags []string) {
	id := c.newID("det")
	c.mustCtr(c.run(append([]string{"-d"}, runtimeFlags...), id, "sleep", "1000")...)
	pid, status := c.task(id)
	if status != "RUNNING" || pid <= 0 {
		t.Fatalf("ctr task ls: %s pid %d status %q, want RUNNING", id, pid, status)
	}
	cg := c.readCgroup(c.ns, id)

	// vetto-runtime made it: its state, under the root the shim passed.
	st := clientVettoState(t, c.dir, c.vettoRoot(c.ns), id)
	if st["status"] != "running" || st["pid"] != float64(pid) {
		t.Errorf("vetto-runtime state of %s: status %v pid %v, want running, %d", id, st["status"], st["pid"], pid)
	}
	// The shim passes --log <bundle>/log.json: the launch line is there.
	if data, err := os.ReadFile(filepath.Join(c.bundle(c.ns, id), "log.json")); err != nil || !strings.Contains(string(data), "sandbox: linux") {
		t.Errorf("launch line not in the shim's log.json (%v): %q", err, data)
	}

	r := c.ctr("task", "exec", "--exec-id", "e1", "--fifo-dir", c.fifoDir, id, "sh", "-c", "echo exec-out; exit 5")
	if r.code != 5 || !strings.Contains(r.stdout, "exec-out") {
		t.Errorf("ctr task exec: %s, want exec-out and exit 5", r)
	}
	c.mustCtr("task", "exec", "-d", "--exec-id", "e2", "--fifo-dir", c.fifoDir, id, "sleep", "999")

	// ps: the init and the detached exec, each in the container's cgroup.
	var pids []int
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids = nil
		r = c.mustCtr("task", "ps", id)
		for _, line := range strings.Split(r.stdout, "\n")[1:] {
			if f := strings.Fields(line); len(f) > 0 {
				if p, err := strconv.Atoi(f[0]); err == nil {
					pids = append(pids, p)
				}
			}
		}
		if len(pids) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(pids) != 2 || !slices.Contains(pids, pid) {
		t.Errorf("ctr task ps %s: pids %v, want the init %d and the exec'd sleep\n%s", id, pids, pid, r.stdout)
	}
	inCg := clientProcsInCgroup(cg)
	for _, p := range pids {
		if !slices.Contains(inCg, p) {
			t.Errorf("pid %d from ctr task ps is not in the container's cgroup %s (%v)", p, cg, inCg)
		}
	}

	c.mustCtr("task", "pause", id)
	if _, st := c.task(id); st != "PAUSED" {
		t.Errorf("after pause: ctr task ls shows %q, want PAUSED", st)
	}
	if fz := clientFreezer(t, cg); fz != "FROZEN" {
		t.Errorf("after pause: freezer of %s is %q, want FROZEN", cg, fz)
	}
	c.mustCtr("task", "resume", id)
	if _, st := c.task(id); st != "RUNNING" {
		t.Errorf("after resume: ctr task ls shows %q, want RUNNING", st)
	}
	if fz := clientFreezer(t, cg); fz != "THAWED" {
		t.Errorf("after resume: freezer of %s is %q, want THAWED", cg, fz)
	}

	r = c.mustCtr("task", "metrics", "--format", "json", id)
	var m struct {
		Pids struct {
			Current uint64 `json:"current"`
		} `json:"pids"`
		Memory map[string]any `json:"memory"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Errorf("ctr task metrics: %v: %q", err, r.stdout)
	}
	if m.Pids.Current != 2 {
		t.Errorf("ctr task metrics: pids.current %d, want 2 (init and exec)\n%s", m.Pids.Current, r.stdout)
	}
	usage := 0.0
	switch u := m.Memory["usage"].(type) {
	case map[string]any: // cgroup v1
		usage, _ = u["usage"].(float64)
	case float64: // cgroup v2
		usage = u
	}
	if usage <= 0 {
		t.Errorf("ctr task metrics: no memory usage\n%s", r.stdout)
	}

	c.mustCtr("task", "kill", "-s", "KILL", id)
	c.waitTask(id, "STOPPED")
	if pids := clientWaitGone(cg); len(pids) > 0 {
		t.Errorf("after ctr task kill -s KILL: processes left in %s: %v", cg, pids)
	}
	c.mustCtr("task", "rm", id)
	if _, st := c.task(id); st != "" {
		t.Errorf("after ctr task rm: task still listed (%s)", st)
	}
	clientNoState(t, c.vettoRoot(c.ns), id)
	c.mustCtr("containers", "rm", id)
	c.assertDeleted(id)
}

// `ctr run -t` gets a pty from vetto-runtime through the shim's console socket.
func TestClientContainerdTTY(t *testing.T) {
	c := clientStartContainerd(t, "")
	id := c.newID("tty")
	argv := append([]string{"ctr", "--address", c.sock, "--namespace", c.ns}, c.run([]string{"--rm", "-t"}, id, "sh", "-c", "tty; exit 4")...)
	r := clientScript(t, c.dir, nil, argv)
	if r.code != 4 {
		t.Errorf("ctr run --rm -t under script: %s, want exit 4", r)
	}
	if !strings.Contains(r.stdout, "/dev/pts/") {
		t.Errorf("ctr run -t: tty printed %q, want /dev/pts/N", r.stdout)
	}
	c.assertDeleted(id)
}

// clientCRIConfig registers vetto-runtime as the runc shim's binary under
// the runtime name "vetto", the handler a Kubernetes RuntimeClass names.
// containerd 1.6 replaces the whole runtimes table, so runc is repeated;
// Root keeps the runtime's state in the test's dir (it defaults to
// /run/containerd/runc). CNI points at an empty dir: the pod uses the host
// network, so none is needed. restrict_oom_score_adj: CRI gives a sandbox
// oom_score_adj -998, which root without CAP_SYS_RESOURCE (some CI
// sandboxes) cannot set with any runtime; containerd then clamps it to its
// own.
const clientCRIConfig = `
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "vetto.test/pause:1"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{{dir}}/cni"
    conf_dir = "{{dir}}/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.vetto]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.vetto.options]
        BinaryName = "{{binary}}"
        Root = "{{dir}}/runc"
`

// A containerd config that names vetto-runtime as a runtime handler: the
// daemon loads it (cri plugin ok), ctr's detached flow runs with the runc v2
// shim given explicitly, and a CRI client (what the kubelet does for a pod
// whose RuntimeClass handler is "vetto") runs a pod sandbox and a container
// through it, execs in it, and removes both.
func TestClientContainerdNamedRuntime(t *testing.T) {
	c := clientStartContainerd(t, clientCRIConfig)

	r := c.mustCtr("plugins", "ls")
	criOK := false
	for _, line := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "io.containerd.grpc.v1" && f[1] == "cri" {
			criOK = f[3] == "ok"
		}
	}
	if !criOK {
		t.Fatalf("cri plugin not ok with the named-runtime config:\n%s\ncontainerd log:\n%s", r.stdout, c.logTail())
	}

	clientCtrDetached(t, c, []string{"--runtime", "io.containerd.runc.v2"})

	clientCRIPod(t, c)
}

// ---------------------------------------------------------------- CRI

// clientCRI is a minimal CRI (runtime.v1) client: gRPC is HTTP/2 with
// length-prefixed protobuf messages, which net/http and a few lines of
// protobuf encoding can speak without generated code.
type clientCRI struct {
	t    *testing.T
	hc   *http.Client
	pods []string
	ctrs []string
}

func clientNewCRI(t *testing.T, sock string) *clientCRI {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		Protocols: new(http.Protocols),
	}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &clientCRI{t: t, hc: &http.Client{Transport: tr, Timeout: clientTimeout}}
}

// clientPB builds a protobuf message.
type clientPB []byte

func (p clientPB) key(field, wire int) clientPB {
	return clientbin.AppendUvarint(p, uint64(field<<3|wire))
}

func (p clientPB) str(field int, s string) clientPB {
	p = clientbin.AppendUvarint(p.key(field, 2), uint64(len(s)))
	return append(p, s...)
}

func (p clientPB) msg(field int, m clientPB) clientPB { return p.str(field, string(m)) }

func (p clientPB) num(field int, v uint64) clientPB {
	return clientbin.AppendUvarint(p.key(field, 0), v)
}

// clientPBField returns field f of a protobuf message: its bytes (wire
// type 2) or its varint (wire type 0).
func clientPBField(b []byte, f int) ([]byte, uint64, bool) {
	for len(b) > 0 {
		k, n := clientbin.Uvarint(b)
		if n <= 0 {
			return nil, 0, false
		}
		b = b[n:]
		field, wire := int(k>>3), k&7
		switch wire {
		case 0:
			v, n := clientbin.Uvarint(b)
			if n <= 0 {
				return nil, 0, false
			}
			b = b[n:]
			if field == f {
				return nil, v, true
			}
		case 1, 5:
			size := 8
			if wire == 5 {
				size = 4
			}
			if len(b) < size {
				return nil, 0, false
			}
			b = b[size:]
		case 2:
			l, n := clientbin.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return nil, 0, false
			}
			val := b[n : n+int(l)]
			b = b[n+int(l):]
			if field == f {
				return val, 0, true
			}
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// call makes one unary RuntimeService call.
func (r *clientCRI) call(method string, req clientPB) ([]byte, error) {
	body := make([]byte, 5, 5+len(req))
	clientbin.BigEndian.PutUint32(body[1:], uint32(len(req)))
	body = append(body, req...)
	hreq, err := http.NewRequest(http.MethodPost, "http://containerd/runtime.v1.RuntimeService/"+method, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/grpc")
	hreq.Header.Set("Te", "trailers")
	resp, err := r.hc.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	status, msg := resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
	if status == "" { // a trailers-only response
		status, msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
	}
	if status != "0" {
		m, _ := url.PathUnescape(msg)
		return nil, fmt.Errorf("%s: grpc status %q (http %d): %s", method, status, resp.StatusCode, m)
	}
	if len(data) < 5 || data[0] != 0 || int(clientbin.BigEndian.Uint32(data[1:5])) != len(data)-5 {
		return nil, fmt.Errorf("%s: malformed response %q", method, data)
	}
	return data[5:], nil
}

func (r *clientCRI) must(method string, req clientPB) []byte {
	r.t.Helper()
	resp, err := r.call(method, req)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp
}

// teardown stops and removes what the test left (cleanup, best effort).
func (r *clientCRI) teardown() {
	for _, id := range r.ctrs {
		_, _ = r.call("StopContainer", clientPB(nil).str(1, id).num(2, 0))
		_, _ = r.call("RemoveContainer", clientPB(nil).str(1, id))
	}
	for _, id := range r.pods {
		_, _ = r.call("StopPodSandbox", clientPB(nil).str(1, id))
		_, _ = r.call("RemovePodSandbox", clientPB(nil).str(1, id))
	}
}

// clientOCIArchive writes an OCI image layout tar of dir (one uncompressed
// layer) named name, running entrypoint.
func clientOCIArchive(t *testing.T, dir, name, path string, entrypoint []string) {
	t.Helper()
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = rel, 0, 0, "", ""
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatalf("layer of %s: %v", dir, err)
	}
	blobs := map[string][]byte{}
	add := func(data []byte) string {
		sum := sha256.Sum256(data)
		d := "sha256:" + hex.EncodeToString(sum[:])
		blobs[d] = data
		return d
	}
	desc := func(mediaType string, data []byte) map[string]any {
		return map[string]any{"mediaType": mediaType, "digest": add(data), "size": len(data)}
	}
	marshal := func(v any) []byte {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	layerDesc := desc("application/vnd.oci.image.layer.v1.tar", layer.Bytes())
	config := marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config":       map[string]any{"Env": []string{"PATH=/bin"}, "Entrypoint": entrypoint},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{layerDesc["digest"].(string)}},
	})
	manifest := marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        desc("application/vnd.oci.image.config.v1+json", config),
		"layers":        []any{layerDesc},
	})
	mdesc := desc("application/vnd.oci.image.manifest.v1+json", manifest)
	mdesc["platform"] = map[string]string{"architecture": runtime.GOARCH, "os": "linux"}
	mdesc["annotations"] = map[string]string{
		"io.containerd.image.name":          name,
		"org.opencontainers.image.ref.name": name[strings.LastIndex(name, ":")+1:],
	}
	index := marshal(map[string]any{"schemaVersion": 2, "manifests": []any{mdesc}})

	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := tar.NewWriter(f)
	write := func(name string, data []byte) {
		if err := out.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := out.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	write("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	write("index.json", index)
	for d, data := range blobs {
		write("blobs/sha256/"+strings.TrimPrefix(d, "sha256:"), data)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// clientCRIPod runs a pod through CRI with runtime handler "vetto".
func clientCRIPod(t *testing.T, c *clientContainerd) {
	const image = "vetto.test/pause:1"
	archive := filepath.Join(c.dir, "image.tar")
	clientOCIArchive(t, c.rootfs, image, archive, []string{"/bin/sleep", "100000"})
	if r := clientExec(t, c.dir, nil, "ctr", "--address", c.sock, "--namespace", "k8s.io", "images", "import", archive); r.code != 0 {
		t.Fatalf("ctr images import: %s", r)
	}
	cri := clientNewCRI(t, c.sock)
	c.cri = cri

	// PodSandboxConfig: metadata{name, uid, namespace}; linux.security_context
	// .namespace_options.network = NODE (2): the host network, no CNI.
	sandbox := clientPB(nil).
		msg(1, clientPB(nil).str(1, "vetto-pod").str(2, fmt.Sprintf("uid-%06x", rand.IntN(1<<24))).str(3, "default")).
		msg(8, clientPB(nil).msg(2, clientPB(nil).msg(1, clientPB(nil).num(1, 2))))

	// An unknown handler is refused: the handler is what selects the runtime.
	if _, err := cri.call("RunPodSandbox", clientPB(nil).msg(1, sandbox).str(2, "no-such-handler")); err == nil || !strings.Contains(err.Error(), "no-such-handler") {
		t.Errorf("RunPodSandbox with an unknown runtime handler: %v, want an error naming it", err)
	}

	var resp []byte
	var err error
	deadline := time.Now().Add(20 * time.Second)
	for {
		// The CRI image cache learns of the import by an event.
		resp, err = cri.call("RunPodSandbox", clientPB(nil).msg(1, sandbox).str(2, "vetto"))
		if err == nil || time.Now().After(deadline) || !strings.Contains(err.Error(), image) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("RunPodSandbox with handler vetto: %v\ncontainerd log:\n%s", err, c.logTail())
	}
	podB, _, _ := clientPBField(resp, 1)
	pod := string(podB)
	if pod == "" {
		t.Fatalf("RunPodSandbox: no pod_sandbox_id in %q", resp)
	}
	cri.pods = append(cri.pods, pod)
	podCg := c.readCgroup("k8s.io", pod)
	if st := clientVettoState(t, c.dir, c.vettoRoot("k8s.io"), pod); st["status"] != "running" {
		t.Errorf("pod sandbox %s: vetto-runtime state %v, want running", pod, st["status"])
	}

	// ContainerConfig: metadata{name}, image{image}, command.
	config := clientPB(nil).
		msg(1, clientPB(nil).str(1, "work")).
		msg(2, clientPB(nil).str(1, image)).
		str(3, "/bin/sleep").str(3, "1000")
	cid, ctrCg := clientCRIStart(c, cri, pod, config, sandbox)
	ctrSt := clientVettoState(t, c.dir, c.vettoRoot("k8s.io"), cid)
	if ctrSt["status"] != "running" {
		t.Errorf("container %s: vetto-runtime state %v, want running", cid, ctrSt["status"])
	}

	// The sandbox config leaves the pid namespace mode at the CRI's
	// default, POD (0): the container joins the sandbox's pid namespace, in
	// its own cgroup, as it does in a pod with shareProcessNamespace. The
	// sandbox's verification takes the container's processes for the
	// container's, not for an escape from the sandbox's cgroup (its monitor
	// would otherwise kill the sandbox, and the pod, within one period).
	podSt := clientVettoState(t, c.dir, c.vettoRoot("k8s.io"), pod)
	podPid, _ := podSt["pid"].(float64)
	ctrPid, _ := ctrSt["pid"].(float64)
	podNS, err1 := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", int(podPid)))
	ctrNS, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", int(ctrPid)))
	if err1 != nil || err2 != nil || podNS != ctrNS {
		t.Errorf("the container's pid namespace %q (%v) is not the sandbox's %q (%v)", ctrNS, err2, podNS, err1)
	}
	r := clientExec(t, c.dir, nil, binary, "--root", c.vettoRoot("k8s.io"), "verify", "--format", "json", pod)
	var v verdicts
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 || v.verdict("P4/contained") != "PASS" || !strings.Contains(v.found("P4/contained"), cid) {
		t.Errorf("verify of the pod sandbox: %s", r)
	}

	// kubectl debug --target=work: an ephemeral container whose pid
	// namespace is the target's (NamespaceOption.pid = TARGET (3),
	// target_id), in a cgroup of its own. The target here is itself a
	// joiner (of the sandbox's namespace, whose owner's verify is the one
	// that judges P4/contained), so the debug container lands in the
	// sandbox's namespace by a second road: the sandbox's verify must take
	// its processes for a sharer's too, and nobody may be stopped.
	debug := clientPB(nil).
		msg(1, clientPB(nil).str(1, "debugger")).
		msg(2, clientPB(nil).str(1, image)).
		str(3, "/bin/sleep").str(3, "1000").
		msg(15, clientPB(nil).msg(2, clientPB(nil).msg(3, clientPB(nil).num(2, 3).str(4, cid))))
	dbg, dbgCg := clientCRIStart(c, cri, pod, debug, sandbox)
	dbgSt := clientVettoState(t, c.dir, c.vettoRoot("k8s.io"), dbg)
	dbgPid, _ := dbgSt["pid"].(float64)
	if dbgNS, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", int(dbgPid))); err != nil || dbgNS != ctrNS {
		t.Errorf("the debug container's pid namespace %q (%v) is not its target's %q", dbgNS, err, ctrNS)
	}
	r = clientExec(t, c.dir, nil, binary, "--root", c.vettoRoot("k8s.io"), "verify", "--format", "json", pod)
	v = verdicts{}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 || v.verdict("P4/contained") != "PASS" || !strings.Contains(v.found("P4/contained"), dbg) {
		t.Errorf("verify of the pod sandbox with a debug container targeting its container: %s", r)
	}
	for _, id := range []string{cid, pod, dbg} {
		if st := clientVettoState(t, c.dir, c.vettoRoot("k8s.io"), id); st["status"] != "running" {
			t.Errorf("%s after the verifies: vetto-runtime state %v, want running", id, st["status"])
		}
	}
	cri.must("StopContainer", clientPB(nil).str(1, dbg).num(2, 1))
	cri.must("RemoveContainer", clientPB(nil).str(1, dbg))
	cri.ctrs = slices.DeleteFunc(cri.ctrs, func(id string) bool { return id == dbg })
	clientGone(t, dbgCg)

	// ExecSync{container_id, cmd, timeout} -> {stdout, stderr, exit_code}.
	resp = cri.must("ExecSync", clientPB(nil).str(1, cid).str(2, "sh").str(2, "-c").str(2, "echo cri-exec; exit 3").num(3, 30))
	stdout, _, _ := clientPBField(resp, 1)
	_, code, _ := clientPBField(resp, 3)
	if string(stdout) != "cri-exec\n" || int32(code) != 3 {
		t.Errorf("ExecSync: stdout %q exit %d, want \"cri-exec\\n\" and 3", stdout, int32(code))
	}

	cri.must("StopContainer", clientPB(nil).str(1, cid).num(2, 1))
	cri.must("RemoveContainer", clientPB(nil).str(1, cid))
	cri.ctrs = nil
	cri.must("StopPodSandbox", clientPB(nil).str(1, pod))
	cri.must("RemovePodSandbox", clientPB(nil).str(1, pod))
	cri.pods = nil
	clientNoState(t, c.vettoRoot("k8s.io"))
	clientGone(t, ctrCg)
	clientGone(t, podCg)
}

// clientCRIStart creates and starts the container config in pod (its
// sandbox config as CreateContainer wants it again), records it for the
// cleanup, and returns its id and the cgroup containerd put it in.
func clientCRIStart(c *clientContainerd, cri *clientCRI, pod string, config, sandbox clientPB) (id, cgroup string) {
	c.t.Helper()
	resp := cri.must("CreateContainer", clientPB(nil).str(1, pod).msg(2, config).msg(3, sandbox))
	idB, _, _ := clientPBField(resp, 1)
	if id = string(idB); id == "" {
		c.t.Fatalf("CreateContainer: no container_id in %q", resp)
	}
	cri.ctrs = append(cri.ctrs, id)
	cri.must("StartContainer", clientPB(nil).str(1, id))
	return id, c.readCgroup("k8s.io", id)
}

// ---------------------------------------------------------------- podman

// clientPodman is one podman world: its storage (vfs), runroot, tmpdir,
// network config dir, events log and containers.conf, all under the test's
// temp dir (a short one: podman refuses a runroot over 50 characters).
// podman passes vetto-runtime no --root (its --runtime-flag is
// lost by the cleanup process conmon starts), so the runtime's state is in
// its default /run/vetto-runtime.
type clientPodman struct {
	t        *testing.T
	dir      string
	env      []string
	global   []string
	rootfs   string
	hostDirs *clientHostDirs
}

// clientVettoDefaultRoot is vetto-runtime's --root when none is given (root).
const clientVettoDefaultRoot = "/run/vetto-runtime"

func clientStartPodman(t *testing.T) *clientPodman {
	t.Helper()
	clientNeed(t, "podman", "conmon")
	// Not t.TempDir(): podman refuses a runroot longer than 50 characters.
	dir, err := os.MkdirTemp("", "vp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // runs last, after p.cleanup
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	p := &clientPodman{t: t, dir: dir}
	p.rootfs = clientRootfs(t, dir)
	// podman 4.3 and its conmon make these on the host whatever the config
	// says; remove them afterwards if this test made them.
	var paths []string
	paths = append(paths, clientCgroupCandidates("/libpod_parent/conmon")...)
	paths = append(paths, clientCgroupCandidates("/libpod_parent")...)
	paths = append(paths, "/run/containers/networks", "/run/containers", clientVettoDefaultRoot)
	p.hostDirs = clientTrackDirs(paths...)

	// Root without CAP_SYS_RESOURCE (some CI sandboxes) cannot raise a
	// limit over its hard limit, and podman's defaults for root (nofile
	// 1048576, nproc 32768) then fail in every runtime, runc and crun alike
	// ("error setting rlimit type 7: operation not permitted"); ask for no
	// more than this process has.
	var nofile, nproc unix.Rlimit
	_ = unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile)
	_ = unix.Getrlimit(unix.RLIMIT_NPROC, &nproc)
	nofileMax, nprocMax := min(nofile.Max, 1048576), min(nproc.Max, 32768)

	conf := fmt.Sprintf(`[containers]
netns = "none"
default_ulimits = ["nofile=%d:%d", "nproc=%d:%d"]

[engine]
# podman passes --log (and --log-format=json) only to runtimes in this list;
# vetto-runtime's errors then reach podman's output as text.
runtime_supports_json = ["crun", "runc", "kata", "runsc", "krun", %q]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = %q
tmp_dir = %q
volume_path = %q
static_dir = %q

[network]
network_config_dir = %q
`, nofileMax, nofileMax, nprocMax, nprocMax, filepath.Base(binary),
		filepath.Join(dir, "events.log"), filepath.Join(dir, "tmp"), filepath.Join(dir, "volumes"),
		filepath.Join(dir, "root", "libpod"), filepath.Join(dir, "net"))
	storage := fmt.Sprintf("[storage]\ndriver = \"vfs\"\ngraphroot = %q\nrunroot = %q\n",
		filepath.Join(dir, "root"), filepath.Join(dir, "runroot"))
	for name, data := range map[string]string{"containers.conf": conf, "storage.conf": storage} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.env = []string{
		"CONTAINERS_CONF=" + filepath.Join(dir, "containers.conf"),
		"CONTAINERS_STORAGE_CONF=" + filepath.Join(dir, "storage.conf"),
	}
	// --runtime only on `run`: podman records the runtime's path with the
	// container, and exec, stop, rm use it.
	p.global = []string{
		"--root", filepath.Join(dir, "root"),
		"--runroot", filepath.Join(dir, "runroot"),
		"--storage-driver", "vfs",
		"--cgroup-manager", "cgroupfs",
		"--events-backend", "file",
		"--tmpdir", filepath.Join(dir, "tmp"),
		"--network-config-dir", filepath.Join(dir, "net"),
	}
	t.Cleanup(p.cleanup)
	return p
}

func (p *clientPodman) podman(args ...string) result {
	p.t.Helper()
	return clientExec(p.t, p.dir, p.env, "podman", append(slices.Clone(p.global), args...)...)
}

func (p *clientPodman) mustPodman(args ...string) result {
	p.t.Helper()
	r := p.podman(args...)
	if r.code != 0 {
		p.t.Fatalf("podman %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// argv is the full podman command line (for script).
func (p *clientPodman) argv(args ...string) []string {
	return append(append([]string{"podman"}, p.global...), args...)
}

// ids lists every container this podman created, from its events log.
func (p *clientPodman) ids() []string {
	data, _ := os.ReadFile(filepath.Join(p.dir, "events.log"))
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		var ev struct{ ID, Type, Status string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "container" && ev.ID != "" && !slices.Contains(out, ev.ID) {
			out = append(out, ev.ID)
		}
	}
	return out
}

// clientPodmanCgroup is the cgroupsPath podman's cgroupfs manager gives
// container id.
func clientPodmanCgroup(id string) string { return "/libpod_parent/libpod-" + id }

// assertGone waits for podman's cleanup of container id and checks that
// nothing of it is left: vetto-runtime state, processes, cgroup.
func (p *clientPodman) assertGone(id string) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(clientVettoDefaultRoot, id)); err != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	clientNoState(p.t, clientVettoDefaultRoot, id)
	clientGone(p.t, clientPodmanCgroup(id))
}

// lastID is the id of the container the last podman command created.
func (p *clientPodman) lastID() string {
	p.t.Helper()
	ids := p.ids()
	if len(ids) == 0 {
		p.t.Fatal("podman's events log names no container")
	}
	return ids[len(ids)-1]
}

func (p *clientPodman) cleanup() {
	t := p.t
	ids := p.ids()
	if len(ids) > 0 {
		_ = clientExec(t, p.dir, p.env, "podman", append(slices.Clone(p.global), "rm", "--all", "--force", "--time", "0")...)
	}
	// conmon and podman's cleanup processes name the temp dir.
	deadline := time.Now().Add(10 * time.Second)
	var pids []int
	for {
		pids = clientProcsWith(p.dir)
		if len(pids) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(pids) > 0 {
		t.Errorf("leak: podman/conmon processes survive: %v", clientCmdlines(pids))
		clientKill(pids)
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(clientVettoDefaultRoot, id)); err == nil {
			t.Errorf("leak: vetto-runtime state of %s left in %s", id, clientVettoDefaultRoot)
			_ = exec.Command(binary, "delete", "--force", id).Run()
			_ = os.RemoveAll(filepath.Join(clientVettoDefaultRoot, id))
		}
		cg := clientPodmanCgroup(id)
		if pids := clientProcsInCgroup(cg); len(pids) > 0 {
			t.Errorf("leak: processes of %s alive: %v", id, pids)
			clientKill(pids)
		}
		if dirs := clientCgroupDirs(cg); len(dirs) > 0 {
			t.Errorf("leak: cgroups of %s left: %v", id, dirs)
			for _, d := range dirs {
				_ = os.Remove(d)
			}
		}
	}
	p.hostDirs.removeNew(t)
	if m := mountsUnder(p.dir); len(m) > 0 {
		t.Errorf("leak: mounts left under %s: %v", p.dir, m)
		for _, mp := range slices.Backward(m) {
			_ = syscall.Unmount(mp, syscall.MNT_DETACH)
		}
	}
}

// Foreground: stdout and the exit code pass through.
func TestClientPodmanRun(t *testing.T) {
	p := clientStartPodman(t)
	r := p.podman("--runtime", binary, "run", "--rm", "--rootfs", p.rootfs, "sh", "-c", "echo out-$((6*7)); exit 3")
	if r.code != 3 {
		t.Errorf("podman run --rm: %s, want exit 3", r)
	}
	if !strings.Contains(r.stdout, "out-42") {
		t.Errorf("podman run --rm: stdout %q, want out-42", r.stdout)
	}
	p.assertGone(p.lastID())
	if r := p.mustPodman("ps", "-aq"); strings.TrimSpace(r.stdout) != "" {
		t.Errorf("podman ps -a after run --rm: %q", r.stdout)
	}
}

// Detached: vetto-runtime's state and log, exec, stop, rm.
func TestClientPodmanDetached(t *testing.T) {
	p := clientStartPodman(t)
	id := strings.TrimSpace(p.mustPodman("--runtime", binary, "run", "-d", "--rootfs", p.rootfs, "sleep", "1000").stdout)
	if len(id) != 64 {
		t.Fatalf("podman run -d printed %q, want a container id", id)
	}
	// exec, stop, rm get no --runtime: podman uses the one it recorded.
	if r := p.mustPodman("inspect", "--format", "{{.OCIRuntime}}", id); strings.TrimSpace(r.stdout) != binary {
		t.Errorf("podman inspect: OCIRuntime %q, want %s", r.stdout, binary)
	}
	st := clientVettoState(t, p.dir, "", id)
	if st["status"] != "running" {
		t.Errorf("vetto-runtime state of %s: %v, want running", id, st["status"])
	}
	// runtime_supports_json: podman passed --log, and the launch line is in it.
	logPath := filepath.Join(p.dir, "runroot", "vfs-containers", id, "userdata", "oci-log")
	if data, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(data), "sandbox: linux") {
		t.Errorf("launch line not in podman's runtime log %s (%v): %q", logPath, err, data)
	}

	if r := p.mustPodman("exec", id, "echo", "hi"); r.stdout != "hi\n" {
		t.Errorf("podman exec echo hi: stdout %q", r.stdout)
	}
	if r := p.podman("exec", id, "sh", "-c", "exit 6"); r.code != 6 {
		t.Errorf("podman exec exit 6: %s", r)
	}

	// sleep as pid 1 ignores SIGTERM: stop waits 1s, then SIGKILL.
	p.mustPodman("stop", "-t", "1", id)
	if r := p.mustPodman("inspect", "--format", "{{.State.Status}}", id); strings.TrimSpace(r.stdout) != "exited" {
		t.Errorf("after podman stop: status %q, want exited", r.stdout)
	}
	if pids := clientWaitGone(clientPodmanCgroup(id)); len(pids) > 0 {
		t.Errorf("after podman stop: processes left: %v", pids)
	}
	p.mustPodman("rm", id)
	p.assertGone(id)
}

// podman run --pid container:X puts the second container in the first's
// pid namespace, each in its own cgroup. The first's verification must
// take the second's processes for that container's, not for an escape:
// verify passes (before the fix it failed P4/contained and killed the
// first, and with it the namespace). Both still run, podman can stop and
// remove both, and nothing of them is left.
func TestClientPodmanSharedPidNamespace(t *testing.T) {
	p := clientStartPodman(t)
	first := strings.TrimSpace(p.mustPodman("--runtime", binary, "run", "-d", "--rootfs", p.rootfs, "sleep", "1000").stdout)
	second := strings.TrimSpace(p.mustPodman("--runtime", binary, "run", "-d", "--pid", "container:"+first, "--rootfs", p.rootfs, "sleep", "1001").stdout)
	if r := p.mustPodman("exec", first, "ps", "-o", "args"); !strings.Contains(r.stdout, "sleep 1001") {
		t.Fatalf("the second container's process is not in the first's pid namespace: ps %q", r.stdout)
	}
	r := clientExec(t, p.dir, nil, binary, "verify", "--format", "json", first)
	var v verdicts
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 || v.verdict("P4/contained") != "PASS" {
		t.Fatalf("verify of the first container: %s", r)
	}
	for _, id := range []string{first, second} {
		if st := clientVettoState(t, p.dir, "", id); st["status"] != "running" {
			t.Errorf("%s after verify: %v, want running", id, st["status"])
		}
	}
	p.mustPodman("stop", "-t", "1", second, first)
	// One at a time: podman refuses to remove the first while the
	// second, which depends on it, is still there.
	p.mustPodman("rm", second)
	p.mustPodman("rm", first)
	p.assertGone(second)
	p.assertGone(first)
}

// -t: the container gets a pty (conmon's console socket).
func TestClientPodmanTTY(t *testing.T) {
	p := clientStartPodman(t)
	r := clientScript(t, p.dir, p.env, p.argv("--runtime", binary, "run", "--rm", "-t", "--rootfs", p.rootfs, "sh", "-c", "tty; exit 4"))
	if r.code != 4 {
		t.Errorf("podman run --rm -t under script: %s, want exit 4", r)
	}
	if !strings.Contains(r.stdout, "/dev/pts/") {
		t.Errorf("podman run -t: tty printed %q, want /dev/pts/N", r.stdout)
	}
	p.assertGone(p.lastID())
}

// A missing command: podman exits 127 with vetto-runtime's reason.
func TestClientPodmanMissingCommand(t *testing.T) {
	p := clientStartPodman(t)
	r := p.podman("--runtime", binary, "run", "--rootfs", p.rootfs, "nonexistent-cmd")
	if r.code != 127 {
		t.Errorf("podman run of a missing command: %s, want exit 127", r)
	}
	if !strings.Contains(r.stderr, "executable file not found") {
		t.Errorf("podman run of a missing command: stderr %q, want vetto-runtime's reason", r.stderr)
	}
	id := p.lastID()
	p.mustPodman("rm", id)
	p.assertGone(id)
}

// A create vetto-runtime refuses (a bundle asking for level strict that
// podman's default spec does not meet): podman shows vetto-runtime's text,
// from the JSON log (runtime_supports_json), not as a raw log line.
func TestClientPodmanFailedCreate(t *testing.T) {
	p := clientStartPodman(t)
	r := p.podman("--runtime", binary, "run", "--rm", "--annotation", "dev.vetto.level=strict", "--rootfs", p.rootfs, "true")
	if r.code != 126 {
		t.Errorf("podman run refused by vetto-runtime: %s, want podman's 126 (OCI runtime error)", r)
	}
	if !strings.Contains(r.stderr, "level strict refuses this launch") {
		t.Errorf("podman's stderr lacks vetto-runtime's error: %q", r.stderr)
	}
	if strings.Contains(r.stderr, `msg="create`) {
		t.Errorf("vetto-runtime's error reached podman as a raw log line (no --log from runtime_supports_json?): %q", r.stderr)
	}
	p.assertGone(p.lastID())
}

// After a failed create, and after a container is deleted, both clients run
// `delete --force` on a container that no longer exists (podman to undo the
// create, containerd's shim when it cleans up after itself). runc and crun
// exit 0 for that; each client logs an error when the runtime does not.
func TestClientDeleteOfGoneContainer(t *testing.T) {
	t.Run("podman", func(t *testing.T) {
		p := clientStartPodman(t)
		r := p.podman("--runtime", binary, "run", "--rm", "--rootfs", p.rootfs, "nonexistent-cmd")
		if r.code != 127 {
			t.Errorf("podman run of a missing command: %s, want exit 127", r)
		}
		for _, bad := range []string{"container does not exist", "from runtime after creation failed"} {
			if strings.Contains(r.stderr, bad) {
				t.Errorf("podman's undo of the failed create ran `vetto-runtime delete --force` on the "+
					"container, which failed (%q); runc and crun exit 0 there. stderr: %q", bad, r.stderr)
			}
		}
		p.assertGone(p.lastID())
	})
	t.Run("containerd", func(t *testing.T) {
		c := clientStartContainerd(t, "")
		id := c.newID("gone")
		if r := c.ctr(c.run([]string{"--rm"}, id, "true")...); r.code != 0 {
			t.Fatalf("ctr run --rm true: %s", r)
		}
		c.assertDeleted(id)
		// The shim's own cleanup (`containerd-shim-runc-v2 delete`) then runs
		// `delete --force` on the gone container. Its outcome is not asserted
		// from containerd's log: in this test's private mount namespace that
		// call fails now and then with "exit status 255" and no output for
		// runc 1.1.5 too (4 of 30 runs, TESTONLY_VETTO_BINARY=/usr/sbin/runc),
		// so it says nothing about vetto-runtime. What vetto must do there —
		// exit 0, print nothing — is pinned by TestBadUnknownID/delete-force.
	})
}
