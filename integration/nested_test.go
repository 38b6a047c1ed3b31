//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Nested is not escaped (21): a legitimate workload that makes a sandbox
// of its own inside the container is not drift. ac83dfa killed each.

// The init enters a user namespace of its own (unshare -U, as browsers
// and nested sandboxes do; legal without a seccomp filter that forbids
// it): its namespaces descend from the container's, and verify passes.
func TestNestedUserNamespaceIsNotDrift(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"unshare", "-U", "sleep", "100"}, nil), id)
	defer e.vetto("delete", "--force", id)
	v, r := e.verify(id)
	if r.code != 0 || len(v.failing()) != 0 {
		t.Fatalf("verify of a container whose init made a user namespace of its own: %s", r)
	}
	if res := v.result("P2/namespace/user"); res == nil || !strings.Contains(res.Found, "nested") {
		t.Fatalf("P2/namespace/user: %+v; want PASS, nested", res)
	}
}

// A nested runtime moves the init into a child cgroup of the container's
// own (what runc does inside a container with a writable cgroupfs): still
// inside every limit and the teardown's cgroup.kill. verify passes, and
// delete removes the child cgroups too.
func TestNestedRuntimeChildCgroup(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "100"}, nil), id)
	defer e.vetto("delete", "--force", id)
	pid := strconv.Itoa(int(e.state(id)["pid"].(float64)))
	moved := 0
	for _, dir := range containerCgroupDirs(id) {
		child := filepath.Join(dir, "nested-runtime")
		if err := os.Mkdir(child, 0o755); err != nil {
			t.Fatal(err)
		}
		// A v1 cpuset cgroup takes no process until it has cpus and mems.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
				_ = os.WriteFile(filepath.Join(child, f), v, 0o644)
			}
		}
		if err := os.WriteFile(filepath.Join(child, "cgroup.procs"), []byte(pid), 0o644); err != nil {
			t.Fatalf("move the init into %s: %v", child, err)
		}
		moved++
	}
	if moved == 0 {
		t.Fatal("no cgroup of the container found")
	}
	v, r := e.verify(id)
	if r.code != 0 || len(v.failing()) != 0 {
		t.Fatalf("verify after the init moved into child cgroups of its own: %s", r)
	}
	e.mustVetto("delete", "--force", id)
	e.assertNothingLeft(id)
}

// containerCgroupDirs are container id's cgroup directories, one per
// hierarchy it is in.
func containerCgroupDirs(id string) []string {
	var out []string
	entries, _ := os.ReadDir("/sys/fs/cgroup")
	for _, h := range append([]string{""}, names(entries)...) {
		d := filepath.Join("/sys/fs/cgroup", h, "vetto-runtime", id)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

func names(entries []os.DirEntry) []string {
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// A bundle without a /dev tmpfs: libcontainer masks with the rootfs's own
// /dev/null, a real null device (runc runs it). The mask check looks at
// what is mounted — the null device — not at where it came from, so this
// is masked; and a file the image names /dev/null is refused as a mask
// source, never passed off as one (the CVE-2025-31133 class).
func TestMasksWithoutDevTmpfs(t *testing.T) {
	noDev := func(rfs string) func(*specs.Spec) {
		return func(s *specs.Spec) {
			s.Root.Path = rfs
			var keep []specs.Mount
			for _, m := range s.Mounts {
				if m.Destination != "/dev" {
					keep = append(keep, m)
				}
			}
			s.Mounts = keep
		}
	}
	e := newEnv(t)
	devDir := deviceCapableDir(t, e.tmp)
	rfs := filepath.Join(devDir, "rootfs-nodev")
	if err := makeRootfs(rfs); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"dev/pts", "dev/shm", "dev/mqueue"} {
		if err := os.MkdirAll(filepath.Join(rfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []struct {
		name  string
		minor uint32
	}{{"null", 3}, {"zero", 5}, {"full", 7}, {"random", 8}, {"urandom", 9}} {
		if err := unix.Mknod(filepath.Join(rfs, "dev", n.name), unix.S_IFCHR|0o666, int(unix.Mkdev(1, n.minor))); err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.Mknod(filepath.Join(rfs, "dev", "tty"), unix.S_IFCHR|0o666, int(unix.Mkdev(5, 0))); err != nil {
		t.Fatal(err)
	}
	id := e.id()
	r := e.vetto("run", "-b", e.bundle([]string{"sh", "-c", "cat /proc/kcore /proc/keys | wc -c"}, noDev(rfs)), id)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "0" {
		t.Fatalf("run of a bundle without a /dev tmpfs, masks from its rootfs's null device: %s; want exit 0 and nothing read", r)
	}

	// The image's /dev/null is a file with content: not a mask source.
	evil := filepath.Join(devDir, "rootfs-evil")
	if err := makeRootfs(evil); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"dev/pts", "dev/shm", "dev/mqueue"} {
		if err := os.MkdirAll(filepath.Join(evil, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(evil, "dev", "null"), []byte("not the null device"), 0o644); err != nil {
		t.Fatal(err)
	}
	id = e.id()
	r = e.vetto("run", "-b", e.bundle([]string{"cat", "/proc/keys"}, noDev(evil)), id)
	if r.code == 0 {
		t.Fatalf("run with a regular file as /dev/null: %s; want a refusal", r)
	}
	if strings.Contains(r.stdout, "not the null device") {
		t.Fatalf("the image's file was mounted as a mask and read: %s", r)
	}
	e.assertNothingLeft(id)
}

// A seccomp profile that refuses clone3 with EPERM instead of ENOSYS
// (21): glibc then cannot start threads, and a Go probe could not start;
// the canaries run in the init, which needs none, and the container is
// verified.
func TestVerifiedUnderClone3Refused(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	eperm := uint(unix.EPERM)
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
		s.Linux.Seccomp = &specs.LinuxSeccomp{
			DefaultAction: specs.ActAllow,
			Architectures: []specs.Arch{specs.ArchX86_64},
			Syscalls:      []specs.LinuxSyscall{{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &eperm}},
		}
	}), id)
	defer e.vetto("delete", "--force", id)
	if st := e.vettoState(id); st["verification"] != "PASS" || st["state"] != "VerifiedRuntime" {
		t.Fatalf("state %v, want VerifiedRuntime", st)
	}
}

// deviceCapableDir is dir, or a fresh directory under /var/tmp when dir's
// filesystem is mounted nodev (Debian 13's /tmp is a nodev tmpfs): device
// nodes made there cannot be opened, by the container or anyone.
func deviceCapableDir(t *testing.T, dir string) string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Flags&unix.ST_NODEV == 0 {
		return dir
	}
	alt, err := os.MkdirTemp("/var/tmp", "vetto-dev-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(alt) })
	if err := os.Chmod(alt, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := unix.Statfs(alt, &st); err != nil || st.Flags&unix.ST_NODEV != 0 {
		t.Fatalf("%s and %s are both nodev: no place for the rootfs's device nodes", dir, alt)
	}
	return alt
}
