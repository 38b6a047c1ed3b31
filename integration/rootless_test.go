//go:build linux

package integration

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The rootless suite: a normal user runs vetto-runtime, without root and
// without sudo. As root (CI) each test creates that user, with a
// subordinate id range, and removes it after; as a normal user (the VM
// tier runs ^TestRootless as "tester", inside a unit of its own systemd
// user manager with its cgroup delegated) the tests run as that user.
//
// What is judged depends on the host, and each test asserts it for this
// host: with a systemd user manager reachable, --systemd-cgroup gives the
// container a delegated cgroup, and limits and cgroup.kill hold; without
// one (this CI host: no systemd), the launch is refused at standard unless
// cgroup-kill and limits are accepted as named degradations, and teardown
// goes through the pid namespace. Never a silent PASS.

// rootless is the user of one test.
type rootless struct {
	t        *testing.T
	name     string
	uid, gid int
	// home holds the user's projects and bundles; xdg is its
	// XDG_RUNTIME_DIR; bin the runtime binary, copied where the user can
	// run it.
	home, xdg, bin string
	// created: the test made the user, runs the runtime as it, and
	// removes it.
	created bool
	// systemd: a systemd user manager is reachable ($XDG_RUNTIME_DIR/bus),
	// so --systemd-cgroup gets a delegated cgroup.
	systemd bool
	audit   string
}

func newRootless(t *testing.T) *rootless {
	t.Helper()
	rl := &rootless{t: t}
	base := t.TempDir()
	if os.Geteuid() != 0 {
		rl.uid, rl.gid = os.Getuid(), os.Getgid()
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		rl.name, rl.home = u.Username, base
		rl.xdg = os.Getenv("XDG_RUNTIME_DIR")
		if rl.xdg == "" {
			rl.xdg = filepath.Join(base, "run")
			mkdirAs(t, rl.xdg, 0o700, rl.uid, rl.gid)
		}
	} else {
		rl.createUser(base)
	}
	if _, err := os.Stat(filepath.Join(rl.xdg, "bus")); err == nil {
		rl.systemd = true
	}
	rl.bin = filepath.Join(rl.home, "vetto-runtime")
	rl.audit = filepath.Join(rl.home, "audit.jsonl")
	t.Cleanup(rl.cleanup)
	copyFile(t, binary, rl.bin, 0o755)
	return rl
}

// createUser adds a normal user with a home below base and a subordinate
// id range, the way a distribution's useradd does.
func (rl *rootless) createUser(base string) {
	t := rl.t
	for d := base; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	rl.name = fmt.Sprintf("vrl%06x", rand.IntN(1<<24))
	rl.home = filepath.Join(base, "home")
	if out, err := exec.Command("useradd", "--no-create-home", "--home-dir", rl.home, "--user-group", "--shell", "/bin/sh", rl.name).CombinedOutput(); err != nil {
		t.Fatalf("useradd %s: %v: %s", rl.name, err, out)
	}
	rl.created = true
	// Registered at once, so it runs last and whatever fails before or
	// after: the user never outlives the test.
	t.Cleanup(rl.removeUser)
	u, err := user.Lookup(rl.name)
	if err != nil {
		t.Fatal(err)
	}
	rl.uid, _ = strconv.Atoi(u.Uid)
	rl.gid, _ = strconv.Atoi(u.Gid)
	if !hasSubordinate("/etc/subuid", rl.name) || !hasSubordinate("/etc/subgid", rl.name) {
		start := 3_000_000 + 65536*rand.IntN(1000)
		r := fmt.Sprintf("%d-%d", start, start+65535)
		if out, err := exec.Command("usermod", "--add-subuids", r, "--add-subgids", r, rl.name).CombinedOutput(); err != nil {
			t.Fatalf("usermod --add-subuids %s: %v: %s", rl.name, err, out)
		}
	}
	mkdirAs(t, rl.home, 0o755, rl.uid, rl.gid)
	rl.xdg = filepath.Join(rl.home, "run")
	mkdirAs(t, rl.xdg, 0o700, rl.uid, rl.gid)
}

func hasSubordinate(file, name string) bool {
	data, _ := os.ReadFile(file)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, name+":") {
			return true
		}
	}
	return false
}

// cleanup deletes what the user's runtime left, kills what the user still
// runs (a leak, reported), and removes the user.
func (rl *rootless) cleanup() {
	t := rl.t
	if _, err := os.Stat(rl.bin); err != nil {
		return // newRootless stopped before the binary was in place
	}
	if r := rl.vetto("list", "-q"); r.code == 0 {
		for _, id := range strings.Fields(r.stdout) {
			t.Errorf("leak: container %s left in the user's state", id)
			rl.vetto("delete", "--force", id)
		}
	}
	if m := mountsUnder(rl.home); len(m) > 0 {
		t.Errorf("leak: mounts left under %s: %v", rl.home, m)
	}
}

// removeUser kills what the created user still runs (a leak, reported)
// and removes the user and its subordinate ranges.
func (rl *rootless) removeUser() {
	t := rl.t
	deadline := time.Now().Add(5 * time.Second)
	for rl.uid > 0 {
		pids := processesOf(rl.uid)
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("leak: processes of %s still alive: %v", rl.name, pids)
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			time.Sleep(100 * time.Millisecond)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out, err := exec.Command("userdel", rl.name).CombinedOutput(); err != nil {
		t.Errorf("userdel %s: %v: %s", rl.name, err, out)
	}
	for _, f := range []string{"/etc/subuid", "/etc/subgid"} {
		if hasSubordinate(f, rl.name) {
			_ = exec.Command("sed", "-i", "/^"+rl.name+":/d", f).Run()
		}
	}
}

// processesOf lists the live processes whose real uid is uid.
func processesOf(uid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if processUID(pid) == uid && !isZombie(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func processUID(pid int) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return -1
}

func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

// env is the environment of the user's shell: its own runtime directory,
// home, and nothing of the test's.
func (rl *rootless) env(xdg bool) []string {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + rl.home, "USER=" + rl.name, "LOGNAME=" + rl.name,
		"SECRET_TOKEN=planted-env-secret"}
	if xdg {
		env = append(env, "XDG_RUNTIME_DIR="+rl.xdg)
	}
	if !rl.created {
		// The VM tier's user session: its bus, its CI flag.
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") || strings.HasPrefix(kv, "CI=") {
				env = append(env, kv)
			}
		}
	}
	return env
}

// vetto runs the runtime as the user, in its home.
func (rl *rootless) vetto(args ...string) result { return rl.vettoEnv(rl.env(true), args...) }

func (rl *rootless) vettoEnv(env []string, args ...string) result {
	rl.t.Helper()
	return rl.run(env, rl.bin, append([]string{"--audit-log", rl.audit}, args...)...)
}

// run runs name as the user, in its home, with env.
func (rl *rootless) run(env []string, name string, args ...string) result {
	rl.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = env, rl.home
	if rl.created {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(rl.uid), Gid: uint32(rl.gid)}}
	}
	return runCaptured(rl.t, cmd, rl.home)
}

// launch is cmd (create or run) with rest, as a user passes it on this
// host for the container to have a cgroup: the global --systemd-cgroup
// where a user manager delegates one; where nothing does, the two
// degradations accepted by name.
func (rl *rootless) launch(cmd string, rest ...string) []string {
	if rl.systemd {
		return append([]string{"--systemd-cgroup", cmd}, rest...)
	}
	return append([]string{cmd, "--allow-degraded=cgroup-kill,limits"}, rest...)
}

// project makes a project of the user's with a secret in it.
func (rl *rootless) project() string {
	p := filepath.Join(rl.home, fmt.Sprintf("project-%06x", rand.IntN(1<<24)))
	for path, content := range map[string]string{
		"README":          "hello from the project\n",
		".env":            "API_TOKEN=planted-dotenv-secret\n",
		"secrets/key.pem": "planted-dir-secret\n",
	} {
		full := filepath.Join(p, path)
		mkdirAs(rl.t, filepath.Dir(full), 0o755, rl.uid, rl.gid)
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			rl.t.Fatal(err)
		}
		if err := os.Chown(full, rl.uid, rl.gid); err != nil {
			rl.t.Fatal(err)
		}
	}
	return p
}

// compile writes policy and compiles it, as the user, into a bundle of its
// own for project running `sh -c script`.
func (rl *rootless) compile(policy, project, script string) string {
	rl.t.Helper()
	file := filepath.Join(rl.home, fmt.Sprintf("policy-%06x.toml", rand.IntN(1<<24)))
	if err := os.WriteFile(file, []byte(policy), 0o644); err != nil {
		rl.t.Fatal(err)
	}
	bundle := filepath.Join(rl.home, fmt.Sprintf("bundle-%06x", rand.IntN(1<<24)))
	mkdirAs(rl.t, bundle, 0o755, rl.uid, rl.gid)
	if r := rl.vetto("spec", "--policy", file, "--bundle", bundle, "--project", project, "--", "sh", "-c", script); r.code != 0 {
		rl.t.Fatalf("spec --policy as %s: %s", rl.name, r)
	}
	return bundle
}

func (rl *rootless) id() string { return fmt.Sprintf("%s-%06x", rl.t.Name(), rand.IntN(1<<24)) }

// receipt is the last receipt the user's audit log holds for id.
func (rl *rootless) receipt(id string) map[string]any {
	rl.t.Helper()
	data, err := os.ReadFile(rl.audit)
	if err != nil {
		rl.t.Fatalf("audit log: %v", err)
	}
	var last map[string]any
	for _, line := range strings.Split(string(data), "\n") {
		var ev struct {
			ID      string         `json:"id"`
			Event   string         `json:"event"`
			Receipt map[string]any `json:"receipt"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.ID == id && ev.Event == "receipt" {
			last = ev.Receipt
		}
	}
	if last == nil {
		rl.t.Fatalf("no receipt for %s in %s", id, rl.audit)
	}
	return last
}

// assertNothingLeft checks that a refused launch left no container, and no
// process of the user's, behind.
func (rl *rootless) assertNothingLeft() {
	rl.t.Helper()
	if r := rl.vetto("list", "-q"); strings.TrimSpace(r.stdout) != "" {
		rl.t.Errorf("containers left after a refused launch: %q", r.stdout)
	}
	if rl.created {
		if pids := processesOf(rl.uid); len(pids) > 0 {
			rl.t.Errorf("processes of %s left after a refused launch: %v", rl.name, pids)
		}
	}
}

func mkdirAs(t *testing.T, dir string, mode os.FileMode, uid, gid int) {
	t.Helper()
	if err := os.MkdirAll(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// A normal user sandboxes a command in its own project from a policy: the
// masks, the environment filter and the absent network hold, what the
// sandbox writes belongs to the user, the exit status passes through, and
// the launch line says rootless and names what this host could not give.
func TestRootlessPolicyRun(t *testing.T) {
	rl := newRootless(t)
	p := rl.project()
	script := `cat README; cat .env secrets/key.pem 2>&1; cat /etc/shadow 2>&1; env | grep -c planted-env-secret; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status | tr -d '\t'; echo ok > written; exit 7`
	bundle := rl.compile("extends = \"default\"\n[filesystem]\ndeny = [\"$PROJECT/secrets\"]\n", p, script)
	id := rl.id()
	r := rl.vetto(rl.launch("run", "--bundle", bundle, id)...)
	if r.code != 7 {
		t.Fatalf("policy run as %s: %s; want the script's exit 7", rl.name, r)
	}
	for _, want := range []string{"hello from the project", "\n0\nlo\n", "NoNewPrivs:1", "Seccomp:2"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout %q lacks %q", r.stdout, want)
		}
	}
	for _, secret := range []string{"planted-dotenv-secret", "planted-dir-secret", "root:"} {
		if strings.Contains(r.stdout, secret) {
			t.Errorf("the sandbox read %s: stdout %q", secret, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "sandbox: linux rootless ") {
		t.Errorf("launch line does not say rootless: %q", r.stderr)
	}
	// Verified from the user's side of the host, canaries included (the
	// init stays readable to its user until the program execs).
	if strings.Contains(r.stderr, "not verified") || strings.Contains(r.stderr, "UNAVAILABLE") {
		t.Errorf("the rootless run was not verified: %q", r.stderr)
	}
	named := strings.Contains(r.stderr, "cgroup-kill: no cgroup delegated to uid "+strconv.Itoa(rl.uid)) &&
		strings.Contains(r.stderr, "linux.resources (memory, pids) not applied")
	if named == rl.systemd {
		t.Errorf("systemd user manager %v, but the launch line names the no-cgroup degradations: %v (%q)", rl.systemd, named, r.stderr)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(p, "written"), &st); err != nil {
		t.Fatalf("the sandbox's write in the project: %v", err)
	}
	if int(st.Uid) != rl.uid || int(st.Gid) != rl.gid {
		t.Errorf("the sandbox's file is owned by %d:%d, want the user's %d:%d", st.Uid, st.Gid, rl.uid, rl.gid)
	}
	if rm := exec.Command("rm", "-rf", p); rl.created {
		rm.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(rl.uid), Gid: uint32(rl.gid)}}
		if out, err := rm.CombinedOutput(); err != nil {
			t.Errorf("the user cannot remove its own project after the run: %v: %s", err, out)
		}
	}
}

// Without a delegated cgroup the launch is refused at standard (no
// cgroup.kill, no limits), with the flag that accepts it named; at strict
// nothing accepts it; accepting one of the two is not enough. Nothing is
// left behind by a refusal.
func TestRootlessRefusedWithoutDelegation(t *testing.T) {
	rl := newRootless(t)
	bundle := rl.compile(`extends = "default"`, rl.project(), "echo ran")
	tests := []struct {
		name  string
		flags []string
		want  []string
	}{
		{"standard", nil, []string{"no cgroup delegated to uid " + strconv.Itoa(rl.uid), "teardown kills the container's pid namespace", "--allow-degraded=cgroup-kill", "--allow-degraded=limits"}},
		{"limits only", []string{"--allow-degraded=limits"}, []string{"--allow-degraded=cgroup-kill"}},
		{"strict", []string{"--security-level", "strict", "--allow-degraded=cgroup-kill,limits"}, []string{"level strict allows no degradation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No --systemd-cgroup: the cgroupfs driver, and no cgroup of
			// the user's below /sys/fs/cgroup/vetto-runtime.
			r := rl.vetto(append(append([]string{"run"}, tt.flags...), "--bundle", bundle, rl.id())...)
			if r.code != 125 || strings.Contains(r.stdout, "ran") {
				t.Fatalf("run without a delegated cgroup, %v: %s; want 125 and nothing run", tt.flags, r)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("refusal %q lacks %q", r.stderr, w)
				}
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n > 0 {
				t.Errorf("refusal is %d lines, want one: %q", n+1, r.stderr)
			}
			rl.assertNothingLeft()
		})
	}
}

// Teardown of a container with children the init does not wait for: every
// one is killed and proved gone — through the delegated cgroup where there
// is one, through the pid namespace where there is none — and the receipt
// says which.
func TestRootlessTeardown(t *testing.T) {
	rl := newRootless(t)
	bundle := rl.compile(`extends = "default"`, rl.project(), "sleep 1000 & sleep 1000 & (sleep 1000 &); exec sleep 1000")
	id := rl.id()
	if r := rl.vetto(rl.launch("run", "-d", "--bundle", bundle, id)...); r.code != 0 {
		t.Fatalf("run -d: %s", r)
	}
	var pids []int
	deadline := time.Now().Add(5 * time.Second)
	for len(pids) < 4 && time.Now().Before(deadline) {
		r := rl.vetto("ps", "--format", "json", id)
		if r.code != 0 {
			t.Fatalf("ps: %s", r)
		}
		pids = nil
		if err := json.Unmarshal([]byte(r.stdout), &pids); err != nil {
			t.Fatalf("ps --format json: %v: %q", err, r.stdout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(pids) < 4 {
		t.Fatalf("ps lists %v, want the init and its three sleeps", pids)
	}
	if r := rl.vetto("delete", "--force", id); r.code != 0 {
		t.Fatalf("delete --force: %s", r)
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil && !isZombie(pid) {
			t.Errorf("pid %d of the container is alive after delete --force", pid)
		}
	}
	rec := rl.receipt(id)
	wantMethod := "pid-namespace"
	if rl.systemd {
		wantMethod = "cgroup.kill"
	}
	if rec["method"] != wantMethod || rec["pid_namespace_gone"] != true || rec["remaining"] != nil {
		t.Errorf("receipt %v; want method %s, the pid namespace gone, nothing remaining", rec, wantMethod)
	}
	if k, _ := rec["killed"].(float64); k < 4 {
		t.Errorf("receipt killed %v, want at least the 4 processes ps listed", rec["killed"])
	}

	// In the foreground: the init exits and leaves a child; run returns
	// the init's status and the child does not outlive it.
	bundle = rl.compile(`extends = "default"`, rl.project(), "sleep 1001 & exit 3")
	if r := rl.vetto(rl.launch("run", "--bundle", bundle, rl.id())...); r.code != 3 {
		t.Fatalf("run of an init that leaves a child: %s; want exit 3", r)
	}
	for _, pid := range processesOf(rl.uid) {
		if cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(cmd), "sleep\x001001") {
			t.Errorf("the container's child pid %d outlived run", pid)
		}
	}
}

// Limits as the host can hold them: read back from the delegated cgroup
// (verify's P7 PASS) under a systemd user manager; named as not applied,
// and never read back as a PASS, where there is no cgroup.
func TestRootlessLimits(t *testing.T) {
	rl := newRootless(t)
	bundle := rl.compile("extends = \"default\"\n[limits]\nmemory = \"64MiB\"\npids = 32\n", rl.project(), "exec sleep 1000")
	id := rl.id()
	r := rl.vetto(rl.launch("run", "-d", "--bundle", bundle, id)...)
	if r.code != 0 {
		t.Fatalf("run -d with limits: %s", r)
	}
	defer rl.vetto("delete", "--force", id)
	v := rl.vetto("verify", id)
	if v.code != 0 || !strings.Contains(v.stdout, "verification of "+id+": PASS") {
		t.Fatalf("verify: %s; want PASS", v)
	}
	p7 := func(which string) bool {
		for _, line := range strings.Split(v.stdout, "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "P7/limits/"+which && f[1] == "PASS" {
				return true
			}
		}
		return false
	}
	if rl.systemd {
		if !p7("memory") || !p7("pids") {
			t.Errorf("delegated cgroup: verify does not read both limits back as PASS:\n%s", v.stdout)
		}
		return
	}
	if p7("memory") || p7("pids") {
		t.Errorf("no cgroup, yet verify reads a limit back as PASS:\n%s", v.stdout)
	}
	if !strings.Contains(r.stderr, "limits: no cgroup delegated") {
		t.Errorf("launch line does not name the limits not applied: %q", r.stderr)
	}
}

// Without $XDG_RUNTIME_DIR and --root there is no state root of the
// user's own: one line that says what to do, exit 1, nothing made.
func TestRootlessStateRoot(t *testing.T) {
	rl := newRootless(t)
	bundle := rl.compile(`extends = "default"`, rl.project(), "echo ran")
	r := rl.vettoEnv(rl.env(false), "run", "--bundle", bundle, rl.id())
	if r.code != 1 || !strings.Contains(r.stderr, "XDG_RUNTIME_DIR is unset") || !strings.Contains(r.stderr, "--root") || strings.Contains(r.stdout, "ran") {
		t.Fatalf("run without XDG_RUNTIME_DIR: %s; want exit 1 naming XDG_RUNTIME_DIR and --root", r)
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n > 0 {
		t.Errorf("%d lines, want one: %q", n+1, r.stderr)
	}
	// With --root of its own it runs.
	root := filepath.Join(rl.home, "state")
	r = rl.vettoEnv(rl.env(false), append([]string{"--root", root}, rl.launch("run", "--bundle", bundle, rl.id())...)...)
	if rl.systemd {
		return // --systemd-cgroup needs the session's bus, which needs XDG_RUNTIME_DIR
	}
	if r.code != 0 || !strings.Contains(r.stdout, "ran") {
		t.Errorf("run with --root %s: %s", root, r)
	}
}

// A created rootless container keeps its init readable by its user until
// start's canaries have run, so nothing may exec into it before start;
// after start exec works as usual.
func TestRootlessExecBeforeStart(t *testing.T) {
	rl := newRootless(t)
	bundle := rl.compile(`extends = "default"`, rl.project(), "exec sleep 1000")
	id := rl.id()
	if r := rl.vetto(rl.launch("create", "--bundle", bundle, id)...); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	defer rl.vetto("delete", "--force", id)
	if r := rl.vetto("exec", id, "true"); r.code == 0 || !strings.Contains(r.stderr, "before start") {
		t.Errorf("exec before start: %s; want a refusal that says start first", r)
	}
	if r := rl.vetto("start", id); r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	if r := rl.vetto("exec", id, "sh", "-c", "echo from-exec"); r.code != 0 || !strings.Contains(r.stdout, "from-exec") {
		t.Errorf("exec after start: %s", r)
	}
}

// doctor as the user says it is rootless, whether it has a cgroup, and
// which levels this user can honour for that.
func TestRootlessDoctor(t *testing.T) {
	rl := newRootless(t)
	r := rl.vetto("doctor", "--format", "json")
	if r.code != 0 {
		t.Fatalf("doctor: %s", r)
	}
	var doc struct {
		Probes []struct{ Name, Status, Detail string }
		Levels []struct {
			Level   string
			OK      bool
			Missing []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("doctor --format json: %v: %s", err, r.stdout)
	}
	probes := map[string]string{}
	for _, p := range doc.Probes {
		probes[p.Name] = p.Status + " " + p.Detail
	}
	if !strings.HasPrefix(probes["rootless"], "supported uid "+strconv.Itoa(rl.uid)) {
		t.Errorf("rootless probe %q", probes["rootless"])
	}
	if got := strings.HasPrefix(probes["cgroup-delegation"], "supported"); got != rl.systemd {
		t.Errorf("cgroup-delegation %q, systemd user manager %v", probes["cgroup-delegation"], rl.systemd)
	}
	if !strings.HasPrefix(probes["userns-probe"], "supported") {
		t.Errorf("userns-probe %q: this host lets a user create user and network namespaces", probes["userns-probe"])
	}
	for _, l := range doc.Levels {
		if l.Level == "standard" && l.OK != rl.systemd {
			t.Errorf("level standard ok=%v missing %v, but systemd user manager %v", l.OK, l.Missing, rl.systemd)
		}
	}
}

// Rootless podman runs vetto-runtime in its own user namespace (the
// runtime is uid 0 there, with the user's $XDG_RUNTIME_DIR): run with the
// exit status, detached, exec, stop, rm. Where no cgroup is delegated the
// degradations are accepted through podman's --runtime-flag, and without
// them podman's run fails with vetto-runtime's refusal.
func TestClientPodmanRootless(t *testing.T) {
	clientNeed(t, "podman", "conmon")
	rl := newRootless(t)
	tunForUsers(t)
	rfs := filepath.Join(rl.home, "rootfs")
	if out, err := exec.Command("cp", "-a", rootfs, rfs).CombinedOutput(); err != nil {
		t.Fatalf("copy rootfs: %v: %s", err, out)
	}
	if rl.created {
		if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", rl.uid, rl.gid), rfs).CombinedOutput(); err != nil {
			t.Fatalf("chown rootfs: %v: %s", err, out)
		}
	}
	env := rl.env(true)
	podman := func(args ...string) result {
		t.Helper()
		return rl.run(env, "podman", append([]string{"--cgroup-manager", "cgroupfs", "--events-backend", "file"}, args...)...)
	}
	t.Cleanup(func() {
		podman("rm", "--all", "--force", "--time", "0")
		podman("system", "reset", "--force")
	})
	runtimeArgs := []string{"--runtime", rl.bin}
	if !rl.systemd {
		if r := podman(append(runtimeArgs, "run", "--rm", "--rootfs", rfs, "true")...); r.code == 0 || !strings.Contains(r.stderr, "--allow-degraded=cgroup-kill") {
			t.Errorf("rootless podman without a delegated cgroup, degradations not accepted: %s; want vetto-runtime's refusal", r)
		}
		runtimeArgs = append(runtimeArgs, "--runtime-flag", "allow-degraded=cgroup-kill,limits")
	}
	if r := podman(append(runtimeArgs, "run", "--rm", "--rootfs", rfs, "sh", "-c", "echo out-$((6*7)); exit 3")...); r.code != 3 || !strings.Contains(r.stdout, "out-42") {
		t.Fatalf("rootless podman run: %s; want out-42 and exit 3", r)
	}
	r := podman(append(runtimeArgs, "run", "-d", "--rootfs", rfs, "sleep", "1000")...)
	id := strings.TrimSpace(r.stdout)
	if r.code != 0 || len(id) != 64 {
		t.Fatalf("rootless podman run -d: %s", r)
	}
	if r := podman("exec", id, "sh", "-c", "echo from-exec"); r.code != 0 || !strings.Contains(r.stdout, "from-exec") {
		t.Errorf("rootless podman exec: %s", r)
	}
	if r := podman("stop", "--time", "1", id); r.code != 0 {
		t.Errorf("rootless podman stop: %s", r)
	}
	if r := podman("rm", id); r.code != 0 {
		t.Errorf("rootless podman rm: %s", r)
	}
	if r := rl.vettoEnv(env, "list", "-q"); strings.TrimSpace(r.stdout) != "" {
		t.Errorf("vetto-runtime state left after podman rm: %q", r.stdout)
	}
}

// Ubuntu's AppArmor restriction of unprivileged user namespaces, with its
// stand-in: this host has no AppArmor, so the fault-injection build sees
// the restriction on and has the kernel refuse its probe's uid map write,
// at the step the restriction fails it (a map of an id not the user's).
// The launch is refused before anything is made, in one line naming the
// step and the profile to install; doctor says the same.
func TestRootlessAppArmorRestricted(t *testing.T) {
	rl := newRootless(t)
	copyFile(t, buildFaultBinary(t), rl.bin, 0o755)
	bundle := rl.compile(`extends = "default"`, rl.project(), "echo ran")
	env := append(rl.env(true), "TESTONLY_VETTO_FAULT=apparmor-userns")
	r := rl.vettoEnv(env, rl.launch("run", "--bundle", bundle, rl.id())...)
	if r.code != 125 || strings.Contains(r.stdout, "ran") {
		t.Fatalf("run under the restriction: %s; want 125 before anything ran", r)
	}
	for _, want := range []string{"cannot write its uid and gid maps", "packaging/apparmor/vetto-runtime", "[rootless.user-namespace]"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("refusal %q lacks %q", r.stderr, want)
		}
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n > 0 {
		t.Errorf("refusal is %d lines, want one: %q", n+1, r.stderr)
	}
	rl.assertNothingLeft()
	d := rl.vettoEnv(env, "doctor")
	if !strings.Contains(d.stdout, "userns-probe") || !strings.Contains(d.stdout, "cannot write its uid and gid maps") {
		t.Errorf("doctor under the restriction:\n%s", d.stdout)
	}
	// Without the stand-in the same user and bundle run.
	copyFile(t, binary, rl.bin, 0o755)
	if r := rl.vetto(rl.launch("run", "--bundle", bundle, rl.id())...); r.code != 0 || !strings.Contains(r.stdout, "ran") {
		t.Errorf("run without the restriction: %s", r)
	}
}

// A network allowlist needs the egress relay, which only a root runtime
// starts: as a normal user the allowlist is the network degradation —
// refused at standard, naming why and the flag; accepted, the container
// runs with no network at all, never with the host's.
func TestRootlessNetworkAllowlist(t *testing.T) {
	rl := newRootless(t)
	bundle := rl.compile("extends = \"default\"\n[network]\nmode = \"allowlist\"\nallow = [\"example.com\"]\n", rl.project(),
		"tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
	r := rl.vetto(rl.launch("run", "--bundle", bundle, rl.id())...)
	if r.code != 125 || !strings.Contains(r.stderr, "which a rootless runtime does not start") || !strings.Contains(r.stderr, "--allow-degraded=network") {
		t.Fatalf("allowlist as a normal user: %s; want 125 naming the relay and --allow-degraded=network", r)
	}
	rl.assertNothingLeft()
	args := rl.launch("run", "--allow-degraded=network", "--bundle", bundle, rl.id())
	r = rl.vetto(args...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "lo" || !strings.Contains(r.stderr, "network: network mode \"allowlist\" needs the egress relay") {
		t.Errorf("allowlist accepted as degraded: %s; want only lo, the degradation named", r)
	}
}

// tunForUsers makes /dev/net/tun usable by every user for the test, as
// udev's rule leaves it on a host that has udev (0666): rootless podman's
// slirp4netns opens it as the user to give the container its network. A
// host without udev (a bare VM, a container) may have it 0600; its mode
// is put back afterwards.
func tunForUsers(t *testing.T) {
	t.Helper()
	const tun = "/dev/net/tun"
	fi, err := os.Stat(tun)
	if err != nil || os.Geteuid() != 0 || fi.Mode().Perm()&0o006 == 0o006 {
		return // missing (slirp4netns then says so), not ours to change, or usable
	}
	if err := os.Chmod(tun, fi.Mode().Perm()|0o666); err != nil {
		t.Fatalf("chmod %s for the rootless user: %v", tun, err)
	}
	t.Cleanup(func() { _ = os.Chmod(tun, fi.Mode().Perm()) })
}

// A rootless runtime starts its containers' inits from the init executable
// too, written into the user's own evidence directory (~/.local/state/
// vetto-runtime/bin) as the user's: from a sealed memfd copy of it
// (overlayfs needs root), which no process of the user's can write, and
// the installed file stays what its name says.
func TestRootlessInitExecutable(t *testing.T) {
	rl := newRootless(t)
	bundle := rl.compile(`extends = "default"`, rl.project(), "exec sleep 1000")
	id := rl.id()
	if r := rl.vetto(rl.launch("create", "--bundle", bundle, id)...); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	defer rl.vetto("delete", "--force", id)
	r := rl.vetto("state", id)
	var st struct{ Pid int }
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Pid <= 0 {
		t.Fatalf("state: %s: %v", r, err)
	}
	exe := fmt.Sprintf("/proc/%d/exe", st.Pid)
	sum := fileDigest(t, exe)
	if sum == fileDigest(t, rl.bin) {
		t.Fatalf("the init runs the runtime's own binary, not the init executable")
	}
	installed := filepath.Join(rl.home, ".local/state/vetto-runtime/bin", "vetto-runtime-init-"+hex.EncodeToString(sum[:])[:32])
	var fst unix.Stat_t
	if err := unix.Lstat(installed, &fst); err != nil {
		t.Fatalf("the init executable is not in the user's evidence directory: %v", err)
	}
	if fst.Mode&unix.S_IFMT != unix.S_IFREG || fst.Mode&0o7777 != 0o500 || int(fst.Uid) != rl.uid {
		t.Errorf("%s: mode %o, uid %d; want a regular file of uid %d, 0500", installed, fst.Mode, fst.Uid, rl.uid)
	}
	if link, err := os.Readlink(exe); err != nil || !strings.HasPrefix(link, "/memfd:") {
		t.Errorf("%s -> %q, %v; want a sealed memfd", exe, link, err)
	}
	if w := rl.run(rl.env(true), "sh", "-c", "echo pwned >> "+exe); w.code == 0 {
		t.Errorf("the user wrote the init's executable through %s: %s", exe, w)
	}
	if fileDigest(t, installed) != sum {
		t.Errorf("%s changed", installed)
	}
}
