package hooks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vetto-dev/vetto-runtime/hooks/canary"
)

// LookPath is Exists and NullDevice in one look: for every kind of path a
// masked path can be, it answers what the two answered apart.
func TestLookPathIsExistsAndNullDevice(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "null-link")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	f := ProcFacts{}
	pid := os.Getpid()
	for _, tc := range []struct {
		name, path   string
		exists, null bool
	}{
		{"the null device", "/dev/null", true, true},
		{"another character device", "/dev/zero", true, false},
		{"a regular file", file, true, false},
		{"a directory", dir, true, false},
		{"a symlink to the null device is not it", link, true, false},
		{"missing", filepath.Join(dir, "missing"), false, false},
		{"under a missing directory", filepath.Join(dir, "no", "such"), false, false},
		{"under a file", filepath.Join(file, "x"), false, false},
		{"the root", "/", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exists, null, err := f.LookPath(pid, tc.path)
			if err != nil || exists != tc.exists || null != tc.null {
				t.Fatalf("LookPath(%s) = %v, %v, %v; want %v, %v", tc.path, exists, null, err, tc.exists, tc.null)
			}
			wantExists, wantErr := f.Exists(pid, tc.path)
			wantNull, _ := f.NullDevice(pid, tc.path)
			if exists != wantExists || null != wantNull || (err == nil) != (wantErr == nil) {
				t.Fatalf("LookPath(%s) = %v, %v, %v; Exists and NullDevice say %v, %v, %v", tc.path, exists, null, err, wantExists, wantNull, wantErr)
			}
		})
	}
}

// holdRoots answers every look as ProcFacts does without held roots, and
// a held rootfs is no way out of it: a symlink planted in the rootfs is
// resolved inside it, never to the host's file of that name.
func TestHeldRootsLookAsProcFacts(t *testing.T) {
	rootfs := t.TempDir()
	for _, d := range []string{"etc", "proc"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(rootfs, "etc", "secret"), []byte("the rootfs's bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Attacks: a directory link to the host's root, and a final link to a
	// host file.
	if err := os.Symlink("/", filepath.Join(rootfs, "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(rootfs, "etc", "passwd-link")); err != nil {
		t.Fatal(err)
	}
	pid := os.Getpid()
	var plain PostFacts = ProcFacts{}
	held, release := holdRoots(plain, pid, rootfs)
	defer release()
	if _, ok := held.(*heldRoots); !ok {
		t.Fatalf("holdRoots(ProcFacts) = %T, want the held roots", held)
	}
	for _, p := range []string{"/dev/null", "/etc/passwd", "/proc/self/status", "/no/such", "/", "/etc/passwd/x"} {
		e1, n1, err1 := lookPath(plain, pid, p)
		e2, n2, err2 := lookPath(held, pid, p)
		if e1 != e2 || n1 != n2 || (err1 == nil) != (err2 == nil) {
			t.Errorf("look %s: held %v %v %v, ProcFacts %v %v %v", p, e2, n2, err2, e1, n1, err1)
		}
		x1, err1 := plain.Exists(pid, p)
		x2, err2 := held.Exists(pid, p)
		if x1 != x2 || (err1 == nil) != (err2 == nil) {
			t.Errorf("exists %s: held %v %v, ProcFacts %v %v", p, x2, err2, x1, err1)
		}
	}
	hostPasswd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	host := canary.Digest(hostPasswd[:min(len(hostPasswd), canary.MaxRead)])
	for _, p := range []string{"/etc/secret", "/up/etc/passwd", "/etc/passwd-link", "/proc/kcore", "/missing"} {
		d1, n1, err1 := plain.FileDigest(rootfs, p)
		d2, n2, err2 := held.FileDigest(rootfs, p)
		if d1 != d2 || n1 != n2 || (err1 == nil) != (err2 == nil) {
			t.Errorf("digest %s: held %q %d %v, ProcFacts %q %d %v", p, d2, n2, err2, d1, n1, err1)
		}
		if err2 == nil && d2 == host {
			t.Errorf("digest %s under the held rootfs is the host's /etc/passwd", p)
		}
	}
	if d, _, err := held.FileDigest(rootfs, "/etc/secret"); err != nil || d != canary.Digest([]byte("the rootfs's bytes")) {
		t.Errorf("digest of the rootfs's own file = %q, %v", d, err)
	}
	// Another process's looks and another root's digests are not served
	// from the held descriptors.
	if e, _, err := lookPath(held, 1, "/"); err != nil && e {
		t.Errorf("look in pid 1: %v %v", e, err)
	}
	if _, _, err := held.FileDigest(t.TempDir(), "/etc/secret"); err == nil {
		t.Error("a digest under another root was read from the held rootfs")
	}
	release()
	if e, _, err := lookPath(held, pid, "/dev/null"); err != nil || !e {
		t.Errorf("look after release: %v %v", e, err)
	}
}

// A fake's looks are its own: holdRoots leaves it as it is.
func TestHoldRootsLeavesFakes(t *testing.T) {
	var f PostFacts = &fakePost{}
	if got, _ := holdRoots(f, 1, "/"); got != f {
		t.Fatalf("holdRoots(fake) = %T", got)
	}
}
