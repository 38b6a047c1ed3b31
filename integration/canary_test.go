//go:build linux

package integration

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// canaryBundle runs script with Landlock: read and execute everywhere,
// writes only under /tmp. /out is a writable bind of a host directory the
// rules do not grant, so a write there is what a weaker domain would let
// through, and the file the program leaves there says whether it ran.
func canaryBundle(e *env, script string, env ...string) (bundle, out string) {
	out = filepath.Join(e.tmp, "out-"+e.id())
	if err := os.MkdirAll(out, 0o777); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Chmod(out, 0o777); err != nil {
		e.t.Fatal(err)
	}
	rules := landlockRules(map[uint64][]string{
		llExecute | llReadFile | llReadDir:                {"/"},
		llAllFS &^ (llMakeChar | llMakeBlock):             {"/tmp"},
		llReadFile | llWriteFile | llReadDir:              {"/proc"},
		llReadFile | llWriteFile | llReadDir | llIoctlDev: {"/dev"},
	})
	bundle = e.bundle([]string{"sh", "-c", script}, func(s *specs.Spec) {
		s.Process.NoNewPrivileges = true
		s.Process.Env = append(s.Process.Env, env...)
		s.Annotations = map[string]string{"dev.vetto.landlock": rules}
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/out", Type: "bind", Source: out, Options: []string{"rbind", "rw"}})
	})
	return bundle, out
}

// The canaries judge the domain the program itself runs in, before any of
// its code runs (the verification issue, 14.2): an exec shim that
// restricts the process less than the plan says (fault weaker-ruleset:
// write access to /) is caught by its own write outside the allowed roots,
// and the program never runs. A probe that restricted itself apart from
// the program would have passed while the program wrote to /out.
func TestCanariesJudgeTheProgramsOwnDomain(t *testing.T) {
	fb := buildFaultBinary(t)
	e := newEnv(t)
	script := `echo ran > /out/marker 2>/dev/null; echo ran > /tmp/ok`

	// Control: the plan's domain denies /out; the program runs and is
	// verified.
	b, out := canaryBundle(e, script)
	id := e.id()
	if r := e.runCmd(vettoCmdWith(e, fb, "run", "-b", b, id)); r.code != 0 {
		t.Fatalf("control run: %s", r)
	}
	if _, err := os.Stat(filepath.Join(out, "marker")); err == nil {
		t.Fatal("control: the program wrote /out under the plan's ruleset")
	}
	e.assertNothingLeft(id)

	b, out = canaryBundle(e, script, "TESTONLY_VETTO_FAULT=weaker-ruleset")
	id = e.id()
	r := e.runCmd(vettoCmdWith(e, fb, "run", "-b", b, id))
	if r.code != 125 || !strings.Contains(r.stderr, "P3/write-outside") {
		t.Fatalf("shim with a weaker ruleset: %s; want 125 naming a P3/write-outside FAIL", r)
	}
	if data, err := os.ReadFile(filepath.Join(out, "marker")); err == nil {
		t.Fatalf("the program ran in the weaker domain and wrote /out/marker (%q): the canaries did not stop it", data)
	}
	e.assertNothingLeft(id)
}

// Nothing of the verification runs beside the workload, where it could be
// watched, raced or forged (14.1): while verify runs, a workload that
// scans every process it can see for the runtime, or for the canaries'
// files, finds neither. The program runs only once its canaries were
// judged, and verify reads the host's facts without entering the
// container.
func TestVerifyRunsNothingInTheContainer(t *testing.T) {
	e := newEnv(t)
	// The watcher: every process's argv and every canary file it could
	// race; what it finds goes to /out/seen. (The bracketed letters keep
	// the patterns from matching the watcher's own argv.)
	watch := `
i=0
while [ $i -lt 100 ]; do
  for f in /proc/[0-9]*/cmdline; do
    tr '\0' ' ' < $f 2>/dev/null | grep -E 'exec-shi[m]|prob[e] |nonc[e]|vett[o]-runtime' >> /out/seen
  done
  ls -a /tmp / 2>/dev/null | grep 'vett[o]-canary' >> /out/seen
  i=$((i+1))
done
echo done > /out/done
sleep 30`
	out := filepath.Join(e.tmp, "watch")
	if err := os.MkdirAll(out, 0o777); err != nil {
		t.Fatal(err)
	}
	b := e.bundle([]string{"sh", "-c", watch}, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/out", Type: "bind", Source: out, Options: []string{"rbind", "rw"}})
	})
	id := e.id()
	// degraded: a failing verify records and leaves the watcher running,
	// so what it saw is judged first.
	e.mustVetto("run", "--security-level", "degraded", "-d", "-b", b, id)
	defer e.vetto("delete", "-f", id)
	var failed []string
	for i := 0; i < 10; i++ {
		if r := e.vetto("verify", id); r.code != 0 {
			failed = append(failed, r.String())
		}
	}
	waitFor(t, func() bool { _, err := os.Stat(filepath.Join(out, "done")); return err == nil })
	if seen, _ := os.ReadFile(filepath.Join(out, "seen")); len(strings.TrimSpace(string(seen))) > 0 {
		t.Fatalf("the workload saw the verification from inside:\n%s", seen)
	}
	// And a workload that forks and exits all the while is no FAIL.
	if len(failed) > 0 {
		t.Fatalf("%d of 10 verify runs failed on a busy, well-behaved workload; first: %s", len(failed), failed[0])
	}
}

// buildTestProgram builds ./testdata/<name>, static, into dir.
func buildTestProgram(t *testing.T, name, dir string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./testdata/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v: %s", name, err, b)
	}
	return out
}

// A workload that hunts the verification (testdata/probeattack) — stops
// the probe and rewrites the port in its plan through /proc/<pid>/mem, or
// kills it — to pass off a container on the host's network as one with a
// network of its own (14.1: 3 of 3 forgeries turned the FAIL into
// VerifiedRuntime; a killed probe made it INCONCLUSIVE, which runs at
// standard). The canaries now run before the workload does: they fail,
// the launch is refused with 125, and the attacker never starts.
func TestCanaryPlanCannotBeForged(t *testing.T) {
	for _, mode := range []string{"forge", "kill"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			tools, out := filepath.Join(e.tmp, "tools"), filepath.Join(e.tmp, "out")
			for _, d := range []string{tools, out} {
				if err := os.MkdirAll(d, 0o777); err != nil {
					t.Fatal(err)
				}
				_ = os.Chmod(d, 0o777)
			}
			buildTestProgram(t, "probeattack", tools)
			weak := func(s *specs.Spec) {
				withoutNamespace(specs.NetworkNamespace)(s)
				s.Annotations = map[string]string{"dev.vetto.net": "none"}
				s.Mounts = append(s.Mounts, bind(tools, "/tools", true), bind(out, "/out", false))
			}
			id := e.id()
			r := e.vetto("run", "-d", "-b", e.bundle([]string{"/tools/probeattack", mode, "/out", "5"}, weak), id)
			defer e.vetto("delete", "--force", id)
			hits, _ := os.ReadFile(filepath.Join(out, "hits"))
			if r.code != 125 || !strings.Contains(r.stderr, "P3/loopback-connect: FAIL") {
				t.Fatalf("host-network bundle saying network none, its workload attacking the verification (%q): %s; want 125 naming P3/loopback-connect: FAIL", hits, r)
			}
			if _, err := os.Stat(filepath.Join(out, "started")); err == nil {
				t.Fatalf("the attacker ran (hits %q): the verdict came after the workload started", hits)
			}
			e.assertNothingLeft(id)
		})
	}
}

// The verification does not depend on what the workload may exhaust
// (14.1): a container at its pids limit, or under an address-space limit
// a Go process cannot start in, is verified like any other — at start,
// and by verify while every pid is taken.
func TestVerificationAtThePidsLimit(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	limit := int64(8)
	// Seven sleeps and the shell: every pid the limit allows (busybox sh
	// gives up at the first fork that fails, so it stops exactly there).
	fill := `i=0; while [ $i -lt 7 ]; do sleep 100 & i=$((i+1)); done; exec sleep 100`
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sh", "-c", fill}, func(s *specs.Spec) {
		s.Linux.Resources = &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &limit}}
	}), id)
	defer e.vetto("delete", "--force", id)
	if st := e.vettoState(id); st["verification"] != "PASS" || st["state"] != "VerifiedRuntime" {
		t.Fatalf("state %v, want VerifiedRuntime", st)
	}
	current := ""
	for _, dir := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if p := filepath.Join(dir, "vetto-runtime", id, "pids.current"); fileExists(p) {
			current = p
			break
		}
	}
	if current == "" {
		t.Fatal("no pids.current for the container")
	}
	waitFor(t, func() bool { b, _ := os.ReadFile(current); return strings.TrimSpace(string(b)) == "8" })
	v, r := e.verify(id)
	if r.code != 0 || v.Verification != "PASS" {
		t.Fatalf("verify of a container at its pids limit: %s; want PASS", r)
	}
}

// The host never opens what the bundle's rootfs puts at a masked path
// (14.1: the canary open()ed a device node as root before checking its
// type). A character device (the null device, harmless to open, watched
// with inotify for the open) and a FIFO (an open would hold for ever) sit
// where /proc/kcore and /proc/keys are masked; the host reads each path
// O_PATH, sees it is no regular file, and goes on: no open, no hang.
func TestCanaryDoesNotOpenRootfsSpecialFiles(t *testing.T) {
	e := newEnv(t)
	rfs := filepath.Join(e.tmp, "rootfs-special")
	if err := makeRootfs(rfs); err != nil {
		t.Fatal(err)
	}
	dev, fifo := filepath.Join(rfs, "proc", "kcore"), filepath.Join(rfs, "proc", "keys")
	if err := unix.Mknod(dev, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(in)
	for _, p := range []string{dev, fifo} {
		if _, err := unix.InotifyAddWatch(in, p, unix.IN_OPEN); err != nil {
			t.Fatal(err)
		}
	}
	id := e.id()
	cmd := vettoCmd(e, "run", "-d", "-b", e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) { s.Root.Path = rfs }), id)
	done := make(chan result, 1)
	go func() { done <- e.runCmd(cmd) }()
	select {
	case r := <-done:
		if r.code != 0 {
			t.Fatalf("run with special files at masked paths in the rootfs: %s", r)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("run hung with a FIFO at a masked path in the rootfs: the host opened it")
	}
	defer e.vetto("delete", "--force", id)
	if st := e.vettoState(id); st["verification"] != "PASS" {
		t.Fatalf("state %v, want verification PASS", st)
	}
	buf := make([]byte, 4096)
	if n, _ := unix.Read(in, buf); n > 0 {
		t.Fatalf("the host opened a device node or FIFO the bundle's rootfs put at a masked path (%d bytes of inotify IN_OPEN events)", n)
	}
}

// The canary connection outlives the verdict — the init holds it to its
// execve, so that the host reads EOF at the exec instead of polling for
// it — and must still never be the program's: the kernel closes it at the
// exec (close-on-exec), before the program's first instruction. The
// program's fds, read from the host, are its stdio and nothing else: no
// socket, nothing of the init's.
func TestCanaryConnectionIsNotThePrograms(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "100"}, nil), id)
	defer e.vetto("delete", "--force", id)
	st := e.vettoState(id)
	if st["verification"] != "PASS" {
		t.Fatalf("state %v: want the canaries run and PASS", st)
	}
	pid := e.initPid(id)
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		target, _ := os.Readlink(filepath.Join(dir, ent.Name()))
		if n := ent.Name(); (n != "0" && n != "1" && n != "2") || strings.HasPrefix(target, "socket:") {
			t.Errorf("the program (pid %d) has fd %s -> %s, which it was not given", pid, n, target)
		}
	}
}

// A run starts the container from the process that created it, so its
// canary channel is a socket pair between that process and the init:
// nothing in the state directory lets another process reach the init
// before its start, and nothing there is made and removed per run. A
// create, which a separate start follows, keeps its listener there until
// the start; the canaries run either way.
func TestRunMakesNoCanaryListener(t *testing.T) {
	e := newEnv(t)
	sockets := func(id string) []string {
		var found []string
		_ = filepath.WalkDir(filepath.Join(e.root, id), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type()&fs.ModeSocket != 0 {
				found = append(found, p)
			}
			return nil
		})
		return found
	}
	run := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "100"}, nil), run)
	defer e.vetto("delete", "--force", run)
	if st := e.vettoState(run); st["verification"] != "PASS" {
		t.Fatalf("run: state %v, want the canaries run and PASS", st)
	}
	if found := sockets(run); len(found) != 0 {
		t.Errorf("a run left sockets in its state directory: %v", found)
	}

	created := e.id()
	e.mustVetto("create", "-b", e.bundle([]string{"sleep", "100"}, nil), created)
	defer e.vetto("delete", "--force", created)
	if found := sockets(created); len(found) != 1 {
		t.Errorf("create: sockets in the state directory %v, want the one listener start connects to", found)
	}
	e.mustVetto("start", created)
	if st := e.vettoState(created); st["verification"] != "PASS" {
		t.Fatalf("create and start: state %v, want the canaries run and PASS", st)
	}
}

// A startContainer hook runs in the container at start, after create is
// done and before the program execs; with the capabilities the bundle
// grants it can undo a boundary (here: unmount the mask over a secret).
// Canaries judged at create would have judged the boundary before the
// hook removed it, so a bundle with such hooks keeps its canaries at
// start, after the hooks: the unmasked secret is a P3 FAIL, start exits
// 125, and the program, which would read the secret, never runs.
func TestStartContainerHookCannotUndoTheCanaries(t *testing.T) {
	e := newEnv(t)
	secret, _ := hostSecret(t)
	out := filepath.Join(e.tmp, "out-hook")
	if err := os.MkdirAll(out, 0o777); err != nil {
		t.Fatal(err)
	}
	b := e.bundle([]string{"sh", "-c", "cat /secret/token > /out/ran"}, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, bind(secret, "/secret", true), bind(out, "/out", false))
		s.Linux.MaskedPaths = append(s.Linux.MaskedPaths, "/secret/token")
		s.Annotations = map[string]string{"dev.vetto.masked": `["/secret/token"]`}
		// The hook needs CAP_SYS_ADMIN and umount2: the bundle grants
		// both, as a privileged bundle can.
		all := []string{"CAP_SYS_ADMIN", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_SETUID", "CAP_SETGID", "CAP_KILL"}
		s.Process.Capabilities.Bounding = all
		s.Process.Capabilities.Effective = all
		s.Process.Capabilities.Permitted = all
		s.Linux.Seccomp = nil
		s.Hooks = &specs.Hooks{StartContainer: []specs.Hook{{Path: "/bin/umount", Args: []string{"umount", "/secret/token"}}}}
	})
	id := e.id()
	e.mustVetto("create", "--security-level", "standard", "--bundle", b, id)
	defer e.vetto("delete", "--force", id)
	r := e.vetto("start", id)
	if r.code != 125 || !strings.Contains(r.stderr, "P3/masked-read/secret/token: FAIL") {
		t.Errorf("start after a hook unmasked the secret: %s; want 125 naming P3/masked-read/secret/token: FAIL", r)
	}
	time.Sleep(200 * time.Millisecond)
	if data, err := os.ReadFile(filepath.Join(out, "ran")); err == nil {
		t.Fatalf("the program ran after the hook undid the mask, and read %q", data)
	}
}
