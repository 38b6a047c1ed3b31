//go:build linux

package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// The binary's identity (pre-launch check 10, FC-PRE-004): the file a
// container runs is the one the host recorded at create. Each attack
// replaces or rewrites what args[0] names after create — as another
// container sharing the rootfs, or an earlier run writing the project,
// would — and the payload, if it ever runs, leaves a marker in a host
// directory bound into the container.

// hostRefusal is start's own check, before the exec fifo opens.
const hostRefusal = "the process's executable is not the file verified at create"

const (
	innocentScript = "#!/bin/sh\nsleep 30\n"
	payloadScript  = "#!/bin/sh\necho pwned > /out/pwned\n"
)

// exeBundle is a bundle on a rootfs of its own (the attack writes it from
// the host) with /out bound read-write from the host; prog is written to
// /bin/prog and args run in the container.
func exeBundle(t *testing.T, e *env, args []string, edit func(s *specs.Spec, root string)) (bundle, root, out string) {
	t.Helper()
	root, out = filepath.Join(e.tmp, "rootfs"), filepath.Join(e.tmp, "out")
	if err := makeRootfs(root); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(out, 0o777); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(root, "bin", "prog"), innocentScript, 0o755)
	mustWrite(t, filepath.Join(root, "bin", "payload"), payloadScript, 0o755)
	bundle = e.bundle(args, func(s *specs.Spec) {
		s.Root.Path = root
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/out", Type: "bind", Source: out, Options: []string{"rbind", "rw"}})
		if edit != nil {
			edit(s, root)
		}
	})
	return bundle, root, out
}

func mustWrite(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// replaceByRename puts content at path as a new file (a new inode), the
// way an atomic writer or a package manager would.
func replaceByRename(t *testing.T, path, content string) {
	t.Helper()
	mustWrite(t, path+".new", content, 0o755)
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// rewriteInPlace writes content into path's own inode.
func rewriteInPlace(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// expectRefusedStart starts id and checks the start failed with 125 saying
// want, the payload never ran, and nothing of it is left.
func expectRefusedStart(t *testing.T, e *env, id, out, want string) {
	t.Helper()
	r := e.vetto("start", id)
	if r.code != 125 {
		t.Errorf("start after the executable changed: %s; want exit 125", r)
	}
	if !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 {
		t.Errorf("start: the error should say %q, in a line or two: %q", want, r.stderr)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(out, "pwned")); err == nil {
		t.Errorf("the replaced executable ran: %s exists", filepath.Join(out, "pwned"))
	}
	e.mustVetto("delete", "--force", id)
}

func TestBinaryReplacedBetweenCreateAndStart(t *testing.T) {
	cases := []struct {
		name string
		args []string
		// swap changes the rootfs after create.
		swap func(t *testing.T, root string)
	}{
		{"renamed over", []string{"/bin/prog"}, func(t *testing.T, root string) {
			replaceByRename(t, filepath.Join(root, "bin", "prog"), payloadScript)
		}},
		{"replaced by a symlink", []string{"/bin/prog"}, func(t *testing.T, root string) {
			p := filepath.Join(root, "bin", "prog")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("payload", p); err != nil {
				t.Fatal(err)
			}
		}},
		{"planted earlier in PATH", []string{"prog"}, func(t *testing.T, root string) {
			// PATH of `spec` starts /usr/local/sbin: a new file there is
			// what the bare name now resolves to.
			dir := filepath.Join(root, "usr", "local", "sbin")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(dir, "prog"), payloadScript, 0o755)
		}},
		{"interpreter replaced", []string{"/bin/script"}, func(t *testing.T, root string) {
			replaceByRename(t, filepath.Join(root, "bin", "interp"), payloadScript)
		}},
		{"binary replaced", []string{"/bin/busybox-tool", "sleep", "30"}, func(t *testing.T, root string) {
			// An ELF file (busybox under a name it still answers to),
			// swapped for a copy of itself with one byte changed.
			p := filepath.Join(root, "bin", "busybox-tool")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)-1] ^= 0xff
			replaceByRename(t, p, string(data))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			b, root, out := exeBundle(t, e, tc.args, func(s *specs.Spec, root string) {
				// interp runs sleep; script is run by interp.
				mustWrite(t, filepath.Join(root, "bin", "interp"), "#!/bin/sh\nexec sleep 30\n", 0o755)
				mustWrite(t, filepath.Join(root, "bin", "script"), "#!/bin/interp\n", 0o755)
				data, err := os.ReadFile(filepath.Join(root, "bin", "busybox"))
				if err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(root, "bin", "busybox-tool"), string(data), 0o755)
			})
			id := e.id()
			e.mustVetto("create", "--bundle", b, id)
			tc.swap(t, root)
			expectRefusedStart(t, e, id, out, hostRefusal)
		})
	}
}

func TestBinaryRewrittenInPlaceBeforeStart(t *testing.T) {
	sameSize := strings.Replace(innocentScript, "sleep 30", "reboot!!", 1)
	cases := []struct {
		name, content string
		// settled: the file is older than the runtime's racy window
		// when create reads it, so start compares it by its stat alone.
		settled bool
	}{
		{"other content", payloadScript, false},
		{"same size, other bytes", sameSize, false},
		{"same bytes written again", innocentScript, false},
		{"settled file, same size, other bytes", sameSize, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			b, root, out := exeBundle(t, e, []string{"/bin/prog"}, nil)
			if tc.settled {
				time.Sleep(2100 * time.Millisecond)
			}
			id := e.id()
			e.mustVetto("create", "--bundle", b, id)
			// A moment later, so that the write's ctime cannot be the
			// record's on a coarse clock.
			time.Sleep(20 * time.Millisecond)
			rewriteInPlace(t, filepath.Join(root, "bin", "prog"), tc.content)
			expectRefusedStart(t, e, id, out, hostRefusal)
		})
	}
}

// TestBinaryReplacedAsItExecs swaps the file after the host's check at
// start, from a startContainer hook, which runs in the container between
// that check and the exec: the init's own last look refuses it.
func TestBinaryReplacedAsItExecs(t *testing.T) {
	e := newEnv(t)
	b, _, out := exeBundle(t, e, []string{"/bin/prog"}, func(s *specs.Spec, _ string) {
		s.Root.Readonly = false
		s.Hooks = &specs.Hooks{StartContainer: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", "-c", "cp /bin/payload /bin/prog.new && mv /bin/prog.new /bin/prog"}}}}
	})
	id := e.id()
	e.mustVetto("create", "--bundle", b, id)
	// The init refused it and exited; the host finds the path is another
	// file than recorded.
	expectRefusedStart(t, e, id, out, "P1/executed: FAIL (process gone, and /bin/prog was replaced")
}

// TestBinaryIdentityRecorded is the control: an unchanged file runs, its
// identity is in the state record and the verdicts, and a program that
// execs another file of its own is not taken for an attack.
func TestBinaryIdentityRecorded(t *testing.T) {
	e := newEnv(t)
	b, _, _ := exeBundle(t, e, []string{"/bin/prog"}, nil)
	id := e.id()
	e.mustVetto("create", "--bundle", b, id)
	e.mustVetto("start", id)
	var rec struct {
		Executable struct {
			Path, SHA256 string
			Interpreter  *struct{ Path string }
		}
		Verdicts []struct{ Check, Verdict string }
	}
	data, err := os.ReadFile(filepath.Join(e.root, id, "vetto.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Executable.Path != "/bin/prog" || len(rec.Executable.SHA256) != 64 || rec.Executable.Interpreter == nil || rec.Executable.Interpreter.Path != "/bin/sh" {
		t.Errorf("recorded executable: %+v", rec.Executable)
	}
	got := map[string]string{}
	for _, v := range rec.Verdicts {
		got[v.Check] = v.Verdict
	}
	if got["P1/executable"] != "PASS" || got["P1/executed"] != "PASS" {
		t.Errorf("verdicts: P1/executable %q, P1/executed %q; want PASS, PASS", got["P1/executable"], got["P1/executed"])
	}
	e.mustVetto("delete", "--force", id)

	// exec'ing another file is the program's own business.
	b = e.bundle([]string{"sh", "-c", "exec sleep 30"}, nil)
	id = e.id()
	e.mustVetto("run", "--detach", "--bundle", b, id)
	if st := e.state(id); st["status"] != "running" {
		t.Errorf("a program that exec'd another file: status %v", st["status"])
	}
	e.mustVetto("delete", "--force", id)
}

// recordedExecutable is the executable create recorded for id.
func recordedExecutable(t *testing.T, e *env, id string) (sum string, hashedAt int64) {
	t.Helper()
	var rec struct {
		Executable struct {
			SHA256   string
			HashedAt int64
		}
	}
	data, err := os.ReadFile(filepath.Join(e.root, id, "vetto.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Executable.SHA256, rec.Executable.HashedAt
}

// The digest of a settled executable is taken once and remembered by the
// file's identity; a file rewritten in place since — same size, its mtime
// set back, as a program covering its tracks would — is read again,
// because the write moved its ctime, which no process can set. Without
// the key on ctime the record would name the old bytes while the new ones
// ran.
func TestExecutableDigestCacheSeesRewrite(t *testing.T) {
	e := newEnv(t)
	b, root, out := exeBundle(t, e, []string{"/bin/prog"}, nil)
	prog := filepath.Join(root, "bin", "prog")
	first, second := "#!/bin/sh\necho one >/out/r\n", "#!/bin/sh\necho two >/out/r\n"
	mustWrite(t, prog, first, 0o755)
	fi, err := os.Stat(prog)
	if err != nil {
		t.Fatal(err)
	}
	// Older than the racy window when create reads it: cacheable.
	time.Sleep(2100 * time.Millisecond)
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	launch := func(want string) (string, int64) {
		t.Helper()
		id := e.id()
		e.mustVetto("create", "--bundle", b, id)
		s, at := recordedExecutable(t, e, id)
		e.mustVetto("start", id)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if got, _ := os.ReadFile(filepath.Join(out, "r")); strings.TrimSpace(string(got)) == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the program did not write %q", want)
			}
			time.Sleep(10 * time.Millisecond)
		}
		e.mustVetto("delete", "--force", id)
		_ = os.Remove(filepath.Join(out, "r"))
		return s, at
	}
	s1, at1 := launch("one")
	s2, at2 := launch("one")
	if s1 != sum(first) || s2 != s1 {
		t.Fatalf("recorded %.12s then %.12s, want %.12s", s1, s2, sum(first))
	}
	if at2 != at1 {
		t.Errorf("the second create read the settled file again (hashed at %d, first %d): the cache was not used", at2, at1)
	}
	// Rewritten in place, same size, mtime put back.
	f, err := os.OpenFile(prog, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(second), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(prog, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	s3, _ := launch("two")
	if s3 != sum(second) {
		t.Fatalf("after the rewrite the record names sha256 %.12s; the file is %.12s (the old bytes' %.12s)", s3, sum(second), sum(first))
	}
}
