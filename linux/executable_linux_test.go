package linux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

func TestResolveExecutable(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(p, content string, mode os.FileMode) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("bin/tool", "\x7fELF...", 0o755)
	write("bin/data", "not executable", 0o644)
	write("usr/bin/data", "\x7fELF", 0o755)
	write("work/run.sh", "#!/bin/tool -x\n", 0o755)
	write("work/loop.sh", "#!/work/loop.sh\n", 0o755)
	if err := os.WriteFile(filepath.Join(outside, "evil"), []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An absolute symlink inside the root must resolve inside it.
	if err := os.Symlink("/bin/tool", filepath.Join(root, "bin", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "evil"), filepath.Join(root, "bin", "escape")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(root, "bin", "fifo"), 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)

	cases := []struct {
		name   string
		args   []string
		env    []string
		cwd    string
		path   string // want; "" wants an error containing errSub
		interp string
		errSub string
	}{
		{"absolute", []string{"/bin/tool"}, nil, "/", "/bin/tool", "", ""},
		{"bare name in PATH", []string{"tool"}, []string{"PATH=/usr/bin:/bin"}, "/", "/bin/tool", "", ""},
		{"first executable match wins", []string{"data"}, []string{"PATH=/bin:/usr/bin"}, "/", "/usr/bin/data", "", ""},
		{"last PATH wins", []string{"tool"}, []string{"PATH=/nowhere", "PATH=/bin"}, "/", "/bin/tool", "", ""},
		{"no PATH", []string{"tool"}, nil, "/", "", "", "not found"},
		{"relative to cwd", []string{"./run.sh"}, nil, "/work", "/work/run.sh", "/bin/tool", ""},
		{"symlink stays in root", []string{"/bin/link"}, nil, "/", "/bin/link", "", ""},
		{"symlink out of root", []string{"/bin/escape"}, nil, "/", "", "", "open /bin/escape"},
		{"dot-dot out of root", []string{"/../../bin/tool"}, nil, "/", "/bin/tool", "", ""},
		{"not executable", []string{"/bin/data"}, nil, "/", "", "", "not executable"},
		{"fifo does not block", []string{"/bin/fifo"}, nil, "/", "", "", "not a regular file"},
		{"interpreter loop", []string{"/work/loop.sh"}, nil, "/", "", "", "interpreters deep"},
		{"empty args", []string{""}, nil, "/", "", "", "no args[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := resolveExecutable(fd, &specs.Process{Args: c.args, Env: c.env, Cwd: c.cwd}, true)
			if c.path == "" {
				if err == nil || !strings.Contains(err.Error(), c.errSub) {
					t.Fatalf("got %v, %v; want an error with %q", e, err, c.errSub)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Path != c.path || len(e.SHA256) != 64 || e.Ino == 0 {
				t.Errorf("got %+v, want path %s with identity and digest", e, c.path)
			}
			if got := ""; e.Interpreter != nil {
				got = e.Interpreter.Path
				if got != c.interp {
					t.Errorf("interpreter %q, want %q", got, c.interp)
				}
			} else if c.interp != "" {
				t.Errorf("no interpreter, want %q", c.interp)
			}
		})
	}
	// Without the digest: the same identity, by stat alone.
	e, err := resolveExecutable(fd, &specs.Process{Args: []string{"/bin/tool"}, Cwd: "/"}, false)
	if err != nil || e.SHA256 != "" || e.Ino == 0 {
		t.Errorf("stat only: %+v, %v", e, err)
	}
}
