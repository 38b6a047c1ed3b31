//go:build linux

package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Landlock access rights (linux/landlock.h) for hand-written rulesets.
const (
	llExecute   = 1 << 0
	llWriteFile = 1 << 1
	llReadFile  = 1 << 2
	llReadDir   = 1 << 3
	llMakeChar  = 1 << 6
	llMakeBlock = 1 << 11
	llIoctlDev  = 1 << 15
	// llAllFS, every right the host enforces: landlock_abi_test.go.
)

// landlockRules writes a dev.vetto.landlock annotation handling every fs
// right the host enforces (up to ABI 5) and granting access by path.
func landlockRules(grants map[uint64][]string) string {
	type pb struct {
		AllowedAccess uint64   `json:"allowedAccess"`
		Paths         []string `json:"paths"`
	}
	var rules []pb
	for access, paths := range grants {
		// A right the host does not handle cannot be granted either.
		rules = append(rules, pb{access & llAllFS, paths})
	}
	data, _ := json.Marshal(map[string]any{
		"ruleset": map[string]uint64{"handledAccessFS": llAllFS},
		"rules":   map[string]any{"pathBeneath": rules},
	})
	return string(data)
}

// escapeRules grants read and execute on /bin, everything but device
// creation on /data/inside and /tmp, /proc and /dev as a process needs
// them; nothing else: not /etc, not /data/outside, not /data.
var escapeRules = landlockRules(map[uint64][]string{
	llExecute | llReadFile | llReadDir:                {"/bin"},
	llAllFS &^ (llMakeChar | llMakeBlock):             {"/data/inside", "/tmp"},
	llReadFile | llWriteFile | llReadDir:              {"/proc"},
	llReadFile | llWriteFile | llReadDir | llIoctlDev: {"/dev"},
})

// escapeScript tries each way out; "ATTACK <name> OK" means it got the
// planted secret (or wrote where it must not), "DENIED" that it did not.
const escapeScript = `
echo "CONTROL read-inside $(cat /data/inside/file)"
echo ok > /data/inside/new && echo "CONTROL write-inside $(cat /data/inside/new)"
got() { name=$1; shift; if "$@" 2>/dev/null | grep -q SECRET; then echo "ATTACK $name OK"; else echo "ATTACK $name DENIED"; fi; }
did() { name=$1; shift; if "$@" 2>/dev/null; then echo "ATTACK $name OK"; else echo "ATTACK $name DENIED"; fi; }
got read-outside cat /data/outside/secret
got dotdot cat /data/inside/../outside/secret
got symlink-planted sh -c 'ln -s /data/outside/secret /data/inside/sl; cat /data/inside/sl'
got dir-symlink-planted sh -c 'ln -s /data/outside /data/inside/dl; cat /data/inside/dl/secret'
got hard-link sh -c 'ln /data/outside/secret /data/inside/hl && cat /data/inside/hl'
got proc-self-root cat /proc/self/root/data/outside/secret
got proc-1-cwd cat /proc/1/cwd/secret
got relative-to-cwd cat secret
got rootfs-outside-rules sh -c 'cat /etc/passwd | sed s/root/SECRET/'
got bind-mount sh -c 'mkdir -p /data/inside/m && mount --bind /data/outside /data/inside/m && cat /data/inside/m/secret'
got handle-in-mount /data/inside/sysprobe handle-read /data/inside $HANDLE_IN
got handle-beyond-bind /data/inside/sysprobe handle-read /data/inside $HANDLE_BEYOND
did write-outside sh -c 'echo pwned > /data/outside/w1'
did write-dotdot sh -c 'echo pwned > /data/inside/../outside/w2'
did write-dir-symlink sh -c 'ln -s /data/outside /data/inside/wl; echo pwned > /data/inside/wl/w3'
did rename-out mv /data/inside/file /data/outside/moved
did truncate-outside sh -c ': > /data/outside/secret'
`

// escapeWorld makes the host side of one run: data/inside (granted),
// data/outside with the secret (bound into the container, not granted),
// and beyond/secret on the same filesystem but outside the bind.
func escapeWorld(t *testing.T, dir string) (data string, env []string) {
	t.Helper()
	data = filepath.Join(dir, "data")
	for path, content := range map[string]string{
		"data/inside/file":    "inside-content",
		"data/outside/secret": "SECRET-outside",
		"beyond/secret":       "SECRET-beyond-the-bind",
	} {
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	buildSysprobe(t, filepath.Join(data, "inside"))
	for name, path := range map[string]string{"HANDLE_IN": "data/outside/secret", "HANDLE_BEYOND": "beyond/secret"} {
		h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, filepath.Join(dir, path), 0)
		if err != nil {
			t.Fatalf("name_to_handle_at %s: %v", path, err)
		}
		env = append(env, fmt.Sprintf("%s=%d %s", name, h.Type(), hex.EncodeToString(h.Bytes())))
	}
	return data, env
}

// escapeSpec is container root with every capability the test holds
// (CAP_SYS_ADMIN, CAP_DAC_READ_SEARCH), no seccomp filter, /data a
// writable bind of the whole data directory, and its cwd in
// data/outside: the mount namespace lets every attack through, so only
// Landlock can stop them.
func escapeSpec(t *testing.T, data string, env []string, rules string) func(*specs.Spec) {
	caps := withAllCaps(t)
	return func(s *specs.Spec) {
		caps(s)
		s.Process.NoNewPrivileges = true
		s.Process.Env = append(s.Process.Env, env...)
		s.Process.Cwd = "/data/outside"
		s.Linux.Seccomp = nil
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Type: "bind", Source: data, Options: []string{"rbind", "rw"}})
		if rules != "" {
			s.Annotations = map[string]string{"dev.vetto.landlock": rules}
		}
	}
}

func parseAttacks(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "ATTACK" {
			got[f[1]] = f[2]
		}
	}
	return got
}

// Container root — every capability, no seccomp — cannot read outside the
// Landlock read roots nor write outside the write roots, by any of the
// usual tricks. Each attack is first run in the same bundle without the
// Landlock annotation, where it must succeed: the mount namespace alone
// does not stop it, so the test shows Landlock does.
func TestLandlockEscapes(t *testing.T) {
	e := newEnv(t)
	attacks := []string{
		"read-outside", "dotdot", "symlink-planted", "dir-symlink-planted", "hard-link",
		"proc-self-root", "proc-1-cwd", "relative-to-cwd", "rootfs-outside-rules", "bind-mount",
		"handle-in-mount", "handle-beyond-bind",
		"write-outside", "write-dotdot", "write-dir-symlink", "rename-out", "truncate-outside",
	}
	run := func(mode, rules string) (map[string]string, string) {
		dir := filepath.Join(e.tmp, mode)
		data, env := escapeWorld(t, dir)
		r := e.vetto("run", "--bundle", e.bundle([]string{"sh", "-c", escapeScript}, escapeSpec(t, data, env, rules)), e.id())
		if r.code != 0 {
			t.Fatalf("%s run: %s", mode, r)
		}
		for _, want := range []string{"CONTROL read-inside inside-content", "CONTROL write-inside ok"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s run: the allowed root does not work, no %q in %s", mode, want, r.stdout)
			}
		}
		return parseAttacks(r.stdout), data
	}

	control, _ := run("control", "")
	landlocked, data := run("landlocked", escapeRules)
	for _, a := range attacks {
		t.Logf("%-22s without Landlock %-6s with %s", a, control[a], landlocked[a])
		if control[a] != "OK" {
			t.Errorf("%s: without Landlock the attack does not work (%q), so it proves nothing", a, control[a])
		}
		if landlocked[a] != "DENIED" {
			t.Errorf("%s: under Landlock the attack got through (%q)", a, landlocked[a])
		}
	}
	// From the host: nothing was written outside the write root, and the
	// secret is intact.
	for _, name := range []string{"w1", "w2", "w3", "moved"} {
		if _, err := os.Stat(filepath.Join(data, "outside", name)); err == nil {
			t.Errorf("data/outside/%s exists on the host after the landlocked run", name)
		}
	}
	if b, err := os.ReadFile(filepath.Join(data, "outside", "secret")); err != nil || string(b) != "SECRET-outside" {
		t.Errorf("the secret on the host is now %q, %v", b, err)
	}
}

// The shim is invisible to the workload: same pid (1), argv, environment,
// cwd and exit status; /proc/self/exe is the workload's binary, not the
// runtime; only the fds it was given, --preserve-fds included; and a
// signal reaches the workload as pid 1. An exec'd process gets the same
// restriction.
func TestLandlockShimTransparent(t *testing.T) {
	e := newEnv(t)
	rules := landlockRules(map[uint64][]string{
		llExecute | llReadFile | llReadDir:                {"/bin"},
		llAllFS &^ (llMakeChar | llMakeBlock):             {"/tmp"},
		llReadFile | llWriteFile | llReadDir:              {"/proc"},
		llReadFile | llWriteFile | llReadDir | llIoctlDev: {"/dev"},
	})
	ll := func(s *specs.Spec) {
		s.Process.Env = append(s.Process.Env, "MARK=a b  c")
		s.Process.Cwd = "/tmp"
		s.Annotations = map[string]string{"dev.vetto.landlock": rules}
	}
	script := `echo "pid=$$ argv=$0|$1 cwd=$(pwd) mark=[$MARK] exe=$(readlink /proc/self/exe) fds=$(ls /proc/$$/fd | tr '\n' ,)"
cat /etc/passwd >/dev/null 2>&1 || echo "etc denied"
cat <&3
exit 7`
	extra, err := os.CreateTemp(e.tmp, "preserved-")
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if _, err := extra.WriteString("preserved-fd-content\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := extra.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	cmd := vettoCmd(e, "run", "--preserve-fds", "1", "--bundle", e.bundle([]string{"sh", "-c", script, "first"}, ll), e.id())
	cmd.ExtraFiles = []*os.File{extra}
	r := e.runCmd(cmd)
	if r.code != 7 {
		t.Fatalf("run: %s; want the workload's exit status 7", r)
	}
	for _, want := range []string{
		"pid=1 argv=first|", "cwd=/tmp", "mark=[a b  c]", "exe=/bin/busybox",
		// 0-2 and the preserved fd 3; ls's own directory fd is the last.
		"fds=0,1,2,3,4,", "etc denied", "preserved-fd-content",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("workload output lacks %q: %s", want, r)
		}
	}

	// Signals: pid 1 with a trap gets SIGTERM; the exit status is its own.
	id := e.id()
	e.mustVetto("run", "-d", "--bundle", e.bundle([]string{"sh", "-c", "trap 'exit 42' TERM; echo ready > /tmp/ready; while :; do sleep 0.1; done"}, ll), id)
	st := e.state(id)
	if v := st["vetto"].(map[string]any); v["landlock"] == nil {
		t.Errorf("state shows no vetto.landlock: %v", v)
	}
	// exec: the same restriction, in the same container.
	// It also waits until pid 1 has set its trap: a signal to a pid
	// namespace's init without a handler is dropped.
	x := e.vetto("exec", id, "sh", "-c", "while [ ! -e /tmp/ready ]; do sleep 0.05; done; cat /etc/passwd >/dev/null 2>&1 && echo read-etc || echo etc-denied; readlink /proc/self/exe; cat /tmp/ready")
	if x.code != 0 || !strings.Contains(x.stdout, "etc-denied") || !strings.Contains(x.stdout, "/bin/busybox") || !strings.Contains(x.stdout, "ready") {
		t.Errorf("exec: %s; want /etc denied, the exec'd binary as exe, /tmp readable", x)
	}
	e.mustVetto("kill", id, "TERM")
	e.waitStatus(id, "stopped")
	e.mustVetto("delete", id)
}

// What Landlock cannot work with is refused at create, before anything
// runs: no no_new_privs, a ruleset that does not parse. (No /proc is no
// reason: the restriction happens in the init, nothing is re-executed.)
func TestLandlockRefusals(t *testing.T) {
	rules := landlockRules(map[uint64][]string{llExecute | llReadFile | llReadDir: {"/"}})
	tests := []struct {
		name string
		edit func(*specs.Spec)
		want string
	}{
		{"no no_new_privs", func(s *specs.Spec) { s.Process.NoNewPrivileges = false }, "noNewPrivileges: true"},
		{"bad ruleset", func(s *specs.Spec) {
			s.Annotations["dev.vetto.landlock"] = `{"ruleset":{"handledAccessFS":1},"rules":{"future":[]}}`
		}, "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			r := e.vetto("create", "--bundle", e.bundle([]string{"true"}, func(s *specs.Spec) {
				s.Process.NoNewPrivileges = true
				s.Annotations = map[string]string{"dev.vetto.landlock": rules}
				tt.edit(s)
			}), id)
			if r.code == 0 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("%s; want a refusal saying %q", r, tt.want)
			}
			e.assertNothingLeft(id)
		})
	}
}

// The init — a sealed view of the init executable — paused in its pre-exec step
// (fault injection) before it restricts itself: the moment a process in
// the container would attack it. A second process there — root, every
// capability, no seccomp and no Landlock (a fault-injection exec without
// the restriction: the worst case of a process that got out of its
// domain) — cannot write the init's executable, remount it writable or
// bind over it, and finds no host fd in the init that would survive its
// exec. Afterwards the workload runs, as itself.
func TestLandlockShimCannotBeAttacked(t *testing.T) {
	fb := buildFaultBinary(t)
	e := newEnv(t)
	id := e.id()
	rules := landlockRules(map[uint64][]string{llExecute | llReadFile | llReadDir: {"/"}})
	caps := withAllCaps(t)
	bundle := e.bundle([]string{"sh", "-c", "echo workload=$(readlink /proc/self/exe) pid=$$"}, func(s *specs.Spec) {
		caps(s)
		s.Process.NoNewPrivileges = true
		s.Process.Env = append(s.Process.Env, "TESTONLY_VETTO_FAULT=shim-pause:5s")
		s.Linux.Seccomp = nil
		s.Annotations = map[string]string{"dev.vetto.landlock": rules}
	})
	out := e.tempFile()
	defer out.Close()
	create := vettoCmdWith(e, fb, "create", "--bundle", bundle, id)
	create.Stdout, create.Stderr = out, out
	if err := create.Run(); err != nil {
		t.Fatalf("create: %v: %s", err, readAll(t, out))
	}
	pid := int(e.state(id)["pid"].(float64))
	// The init runs a sealed view of the init executable (the fault
	// build's, with its faults), as the built runtime's does; the shim
	// is that process.
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	before := fileDigest(t, exe)
	if before == fileDigest(t, fb) {
		t.Fatalf("the init runs the runtime's own binary, not its init executable")
	}

	// The init's pre-exec step (the shim) ran at create, paused by the
	// fault, restricted itself and made its canaries; it now waits for
	// start, still the shim. The attacker joins the created container,
	// checks that pid 1 is the shim, and attacks it.
	attack := `
isinit() { tr '\0' ' ' < /proc/1/cmdline | grep -qE '(^| )init( |$)'; }
while ! isinit; do sleep 0.05; done
w() { name=$1; shift; if "$@" 2>/dev/null; then echo "ATTACK $name OK"; else echo "ATTACK $name DENIED"; fi; }
echo "shim is $(tr '\0' ' ' < /proc/1/cmdline)"
w write-exe sh -c 'echo pwned > /proc/1/exe'
w append-exe sh -c 'echo pwned >> /proc/1/exe'
w overwrite-in-place sh -c 'printf pwned | dd of=/proc/1/exe conv=notrunc'
w remount-rw sh -c 'mount -o remount,rw /proc/1/exe'
w bind-over-exe sh -c 'echo evil > /tmp/evil && mount --bind /tmp/evil /proc/1/exe && grep -q evil /proc/1/exe'
# Positive control: this process may mount (CAP_SYS_ADMIN, no filter).
mkdir -p /tmp/m && mount -t tmpfs none /tmp/m && echo "CONTROL can-mount"
for fd in $(ls /proc/1/fd); do
  echo "FD $fd $(readlink /proc/1/fd/$fd) $(grep flags /proc/1/fdinfo/$fd | tr -d ' \t')"
done
isinit && echo "STILL the shim"
echo DONE`
	proc := fmt.Sprintf(`{"args":["sh","-c",%q],"env":["PATH=/bin"],"cwd":"/","user":{"uid":0,"gid":0},"noNewPrivileges":true,"capabilities":{"bounding":%s,"effective":%s,"permitted":%s}}`,
		attack, jsonList(allCaps(t)), jsonList(allCaps(t)), jsonList(allCaps(t)))
	// The attacker's own restrictions: none. Without the shim it must be
	// able to mount (the positive control below) and read the shim's
	// fdinfo.
	pf := filepath.Join(e.tmp, "attack.json")
	if err := os.WriteFile(pf, []byte(proc), 0o644); err != nil {
		t.Fatal(err)
	}
	attackOut := e.tempFile()
	defer attackOut.Close()
	ex := vettoCmdWith(e, fb, "exec", "-d", "--process", pf, id)
	ex.Env = append(os.Environ(), "TESTONLY_VETTO_FAULT=exec-unconfined")
	ex.Stdout, ex.Stderr = attackOut, attackOut
	if err := ex.Run(); err != nil {
		t.Fatalf("exec the attacker: %v: %s", err, readAll(t, attackOut))
	}

	// The init made its canaries at create and now waits for start,
	// restricted: the attack runs in that window, before start.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(readAll(t, attackOut), "DONE"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the attacker did not finish in 20 s; it printed:\n%s", readAll(t, attackOut))
		}
	}
	x := readAll(t, attackOut)
	t.Logf("the attacker saw:\n%s", x)
	if !strings.Contains(x, "CONTROL can-mount") || strings.Contains(x, "Permission denied") {
		t.Fatalf("attacker: %s; want it unconfined, with CAP_SYS_ADMIN", x)
	}
	if !strings.Contains(x, " init \n") || !strings.Contains(x, "STILL the shim") {
		t.Fatalf("the attack did not run while pid 1 was the shim: %s", x)
	}
	for _, a := range []string{"write-exe", "append-exe", "overwrite-in-place", "remount-rw", "bind-over-exe"} {
		if got := parseAttacks(x)[a]; got != "DENIED" {
			t.Errorf("%s on the shim: %q; want DENIED", a, got)
		}
	}
	// The init's fds: stdio, and what libcontainer and the Go runtime
	// opened, which is close-on-exec (flags with 02000000) and never a
	// host path. An fd closed while the attacker listed them (no link, no
	// fdinfo left) is not one it could hold.
	for _, line := range strings.Split(x, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "FD" {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		if n <= 2 || len(f) == 2 {
			continue
		}
		if len(f) < 4 || !cloexec(f[3]) {
			t.Errorf("shim fd %s is not close-on-exec: %s", f[1], line)
		}
		// libcontainer's exec fifo is the one host file an init holds
		// while it waits for start, as runc's does (a read-write view
		// of it when the canaries ran at create): only a process
		// allowed to ptrace the non-dumpable init could reach it.
		if len(f) >= 3 && strings.HasSuffix(f[2], "/exec.fifo") {
			continue
		}
		if len(f) >= 3 && (strings.Contains(f[2], e.tmp) || strings.Contains(f[2], e.root) || strings.Contains(f[2], filepath.Dir(fb))) {
			t.Errorf("shim fd %s points at a host path: %s", f[1], line)
		}
	}
	if after := fileDigest(t, exe); after != before {
		t.Errorf("the shim's executable changed under the attack")
	}
	// And the file on the host every later init starts from.
	installedInit(t, before)
	start := vettoCmdWith(e, fb, "start", id)
	startOut := e.tempFile()
	defer startOut.Close()
	start.Stdout, start.Stderr = startOut, startOut
	if err := start.Run(); err != nil {
		t.Fatalf("start: %v: %s", err, readAll(t, startOut))
	}
	e.waitStatus(id, "stopped")
	if o := readAll(t, out); !strings.Contains(o, "workload=/bin/busybox pid=1") {
		t.Errorf("the workload did not run as itself after the attack: %q", o)
	}
	e.mustVetto("delete", id)
}

// vettoCmd is the binary under test with this test's --root.
func vettoCmd(e *env, args ...string) *exec.Cmd { return vettoCmdWith(e, binary, args...) }

// vettoCmdWith is bin (the fault-injection build, say) with e's --root.
func vettoCmdWith(e *env, bin string, args ...string) *exec.Cmd {
	return exec.Command(bin, append([]string{"--root", e.root}, args...)...)
}

// waitFor polls cond for up to 20 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fileDigest is the sha256 of what path reads.
func fileDigest(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func jsonList(s []string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// cloexec reads "flags:<octal>" from fdinfo: O_CLOEXEC is 02000000.
func cloexec(field string) bool {
	v, ok := strings.CutPrefix(field, "flags:")
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(v, 8, 64)
	return err == nil && n&0o2000000 != 0
}

// The pre-launch verification sees the init will exec the shim with the
// plan's ruleset (landlock/shim) on a host whose ABI covers it
// (landlock/abi); start sees the process got past it (landlock/past-shim).
// A backend that drops the shim (fault injection) is refused with 125 and
// leaves nothing.
func TestLandlockVerification(t *testing.T) {
	fb := buildFaultBinary(t)
	e := newEnv(t)
	rules := landlockRules(map[uint64][]string{llExecute | llReadFile | llReadDir: {"/"}})
	// A process that lives long enough for start to see it past the shim.
	b := e.bundle([]string{"sleep", "1"}, func(s *specs.Spec) {
		s.Process.NoNewPrivileges = true
		s.Annotations = map[string]string{"dev.vetto.landlock": rules}
	})

	id := e.id()
	cmd := vettoCmdWith(e, fb, "run", "-b", b, id)
	cmd.Env = append(os.Environ(), "TESTONLY_VETTO_FAULT=no-landlock-shim")
	r := e.runCmd(cmd)
	if r.code != 125 || !strings.Contains(r.stderr, "landlock/shim: FAIL") {
		t.Fatalf("backend without the shim: %s; want 125 with landlock/shim: FAIL", r)
	}
	e.assertNothingLeft(id)

	audit := filepath.Join(e.tmp, "audit.jsonl")
	e.mustVetto("--audit-log", audit, "run", "-b", b, e.id())
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"landlock/shim", "landlock/abi", "landlock/past-shim"} {
		if !strings.Contains(string(data), `"check":"`+want+`","verdict":"PASS"`) {
			t.Errorf("audit log has no %s PASS:\n%s", want, data)
		}
	}
}
