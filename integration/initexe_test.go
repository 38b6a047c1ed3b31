//go:build linux

package integration

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// hostBinDir is where a root runtime keeps its init executable: bin/ of
// its evidence directory (/var/lib/vetto-runtime, runtime.toml's
// default; the tests import nothing of the runtime's).
const hostBinDir = "/var/lib/vetto-runtime/bin"

// createdInit creates a container of `true` and returns its init's pid,
// blocked before start, and the sha256 of the file it runs.
func createdInit(t *testing.T, e *env, id string) (int, [32]byte) {
	t.Helper()
	e.mustVetto("create", "--bundle", e.bundle([]string{"true"}, nil), id)
	pid := int(e.state(id)["pid"].(float64))
	return pid, fileDigest(t, fmt.Sprintf("/proc/%d/exe", pid))
}

// installedInit is the init executable with that digest in hostBinDir,
// held to what the runtime writes: a regular file of root's, 0500, one
// link.
func installedInit(t *testing.T, sum [32]byte) string {
	t.Helper()
	return installedHelper(t, "vetto-runtime-init-", sum)
}

// installedHelper is the helper executable named by prefix with that
// digest in hostBinDir, held to what the runtime writes.
func installedHelper(t *testing.T, prefix string, sum [32]byte) string {
	t.Helper()
	p := filepath.Join(hostBinDir, prefix+hex.EncodeToString(sum[:])[:32])
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatalf("the process runs a file that is not the installed %s executable: %v", prefix, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o7777 != 0o500 || st.Uid != 0 || st.Nlink != 1 {
		t.Errorf("%s: mode %o, uid %d, %d links; want a regular file of root's, 0500, one link", p, st.Mode, st.Uid, st.Nlink)
	}
	if fileDigest(t, p) != sum {
		t.Errorf("%s does not hold what its name says", p)
	}
	return p
}

// The built runtime starts a container's init from its init executable
// (cmd/vetto-runtime-init, embedded by make build), not from its own 20 MB
// binary, and from a sealed view of it (CVE-2019-5736): not the installed
// file itself but a read-only overlayfs of its directory (or a sealed
// memfd), so the init's /proc/<pid>/exe cannot be opened for writing, not
// even by root on the host, and nothing written through it could reach
// the file the next container's init starts from. The container then
// starts and runs as ever.
func TestInitIsTheInitExecutable(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	pid, sum := createdInit(t, e, id)
	if sum == fileDigest(t, binary) {
		t.Fatalf("the init (pid %d) runs the runtime's own binary, not the init executable", pid)
	}
	installed := installedInit(t, sum)
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	var run, file unix.Stat_t
	if err := unix.Stat(exe, &run); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(installed, &file); err != nil {
		t.Fatal(err)
	}
	if run.Dev == file.Dev {
		t.Errorf("the init runs %s itself (device %d), not a sealed view of it", installed, file.Dev)
	}
	f, err := os.OpenFile(exe, os.O_WRONLY, 0)
	if err == nil {
		f.Close()
		t.Errorf("the init's executable opened for writing through %s", exe)
	} else if !errors.Is(err, unix.EROFS) && !errors.Is(err, unix.EPERM) {
		// Not ETXTBSY: a running file refuses a writer whatever it is;
		// a sealed view refuses it because it is read-only.
		t.Errorf("open %s for writing: %v; want EROFS (overlayfs) or EPERM (a sealed memfd)", exe, err)
	}
	e.mustVetto("start", id)
	e.waitStatus(id, "stopped")
	if st := e.state(id); st["status"] != "stopped" {
		t.Errorf("after start: %v", st["status"])
	}
	e.mustVetto("delete", id)
}

// An init executable that is not what the runtime wrote — cut short, or
// made writable — is never started: the next create writes it again and
// its init runs the embedded bytes. (An attacker who can write that
// directory is root already; this is about a damaged file.)
func TestInitExecutableWrittenAgain(t *testing.T) {
	e := newEnv(t)
	first := e.id()
	_, sum := createdInit(t, e, first)
	e.mustVetto("delete", "--force", first)
	path := installedInit(t, sum)
	for _, tc := range []struct {
		name   string
		damage func() error
	}{
		{"cut short", func() error { return os.Truncate(path, 4096) }},
		{"made writable", func() error { return os.Chmod(path, 0o755) }},
		{"removed", func() error { return os.Remove(path) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.damage(); err != nil {
				t.Fatal(err)
			}
			id := e.id()
			if _, got := createdInit(t, e, id); got != sum {
				t.Errorf("the init runs a file of sha256 %x, want the embedded %x", got, sum)
			}
			installedInit(t, sum)
			e.mustVetto("delete", "--force", id)
		})
	}
}
