package linux

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func testInit(data string) embeddedExe {
	sum := sha256.Sum256([]byte(data))
	return embeddedExe{prefix: initExePrefix, data: data, sum: hex.EncodeToString(sum[:])}
}

func testRelay(data string) embeddedExe {
	exe := testInit(data)
	exe.prefix = relayExePrefix
	return exe
}

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// A file under a helper executable's name is run only if it is the one a
// runtime of this build wrote: each planted or damaged file below is
// replaced by the embedded bytes, never started from. The init runs it
// inside the container, the relay on the host.
func TestInitExecutableInstall(t *testing.T) {
	t.Run("init", func(t *testing.T) { testInstall(t, testInit("#!the init executable, as make build embeds it\n")) })
	t.Run("relay", func(t *testing.T) { testInstall(t, testRelay("#!the relay executable, as make build embeds it\n")) })
}

func testInstall(t *testing.T, exe embeddedExe) {
	name := exe.name()
	other := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(other, []byte(exe.data), 0o500); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// plant puts something at path before install; nil plants nothing.
		plant func(t *testing.T, path string)
		// kept: the planted file is the right one and must be used as is.
		kept bool
	}{
		{"nothing there yet", nil, false},
		{"the file a runtime of this build wrote", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(exe.data), 0o500); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"writable by its owner", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(exe.data), 0o700); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"another size: cut short", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(exe.data[:10]), 0o500); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a symlink to a file of the same bytes", func(t *testing.T, p string) {
			if err := os.Symlink(other, p); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a hard link of another file", func(t *testing.T, p string) {
			if err := os.Link(other, p); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"another user's file", func(t *testing.T, p string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			if err := os.WriteFile(p, []byte(exe.data), 0o500); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"set-uid", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(exe.data), 0o500); err != nil {
				t.Fatal(err)
			}
			if err := unix.Chmod(p, 0o4500); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a directory", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o500); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			want := filepath.Join(dir, name)
			var before uint64
			if tc.plant != nil {
				tc.plant(t, want)
				before = inodeOf(t, want)
			}
			got, err := exe.install(dir)
			if tc.name == "a directory" {
				// Not a file, and rename cannot replace a directory with
				// one: no init executable, so inits start from the
				// runtime's binary.
				if err == nil {
					t.Fatalf("install over a directory: %q, want an error", got)
				}
				return
			}
			if err != nil || got != want {
				t.Fatalf("install: %q, %v; want %q", got, err, want)
			}
			if err := exe.usable(got); err != nil {
				t.Errorf("what install left is not usable: %v", err)
			}
			data, err := os.ReadFile(got)
			if err != nil || string(data) != exe.data {
				t.Errorf("contents %q, %v; want the embedded bytes", data, err)
			}
			if tc.plant != nil {
				if kept := inodeOf(t, got) == before; kept != tc.kept {
					t.Errorf("the planted file kept: %v, want %v", kept, tc.kept)
				}
			}
			if b, err := os.ReadFile(other); err != nil || string(b) != exe.data {
				t.Errorf("the file a link pointed at changed: %q, %v", b, err)
			}
		})
	}
}

// An embedded executable whose bytes are not what the build's digest says
// is never written (a build that mixed two init executables).
func TestInitExecutableDigestMismatch(t *testing.T) {
	exe := testInit("one build's init")
	exe.data = "another build's init"
	dir := t.TempDir()
	if p, err := exe.install(dir); err == nil {
		t.Fatalf("installed %q", p)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %d files", len(ents))
	}
	if p, err := (&helperExes{exe: exe}).resolve(dir); p != "" || err == nil {
		t.Errorf("resolve: %q, %v; want \"\" and the error", p, err)
	}
	if p, err := (&helperExes{}).resolve(dir); p != "" || err != nil {
		t.Errorf("resolve without an embedded executable: %q, %v", p, err)
	}
	if p, err := (&helperExes{exe: testInit("x")}).resolve(""); p != "" || err != nil {
		t.Errorf("resolve without a directory: %q, %v", p, err)
	}
}

// Other builds' executables are pruned to the most recent keepHelperExes
// of each helper, and a write that died long ago is cleaned up; one in
// progress is not. The other helper's files are not this one's to prune.
func TestInitExecutablePrune(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	var olds []string
	for i := range 5 {
		p := filepath.Join(dir, initExePrefix+string(rune('a'+i)))
		if err := os.WriteFile(p, []byte("old"), 0o500); err != nil {
			t.Fatal(err)
		}
		at := now.Add(-time.Duration(i+1) * time.Hour)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		olds = append(olds, filepath.Base(p))
	}
	stale, fresh := filepath.Join(dir, ".init-stale"), filepath.Join(dir, ".init-writing")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(stale, now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"something-else", relayExePrefix + "a", ".relay-stale"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(dir, n), now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	exe := testInit("this build's init")
	p, err := exe.install(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	want := append([]string{".init-writing", ".relay-stale", filepath.Base(p), "something-else", relayExePrefix + "a"}, olds[:keepHelperExes]...)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}
