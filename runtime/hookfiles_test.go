//go:build unix

package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

func TestHookFiles(t *testing.T) {
	// Resolved: only the symlinks made here are on these paths.
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exe := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script := exe("notify.sh", "#!/srv/data/interp -x\necho\n")
	sh, py, bash := exe("sh", ""), exe("python3.11", ""), exe("bash", "")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(script, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	dataLink := filepath.Join(dir, "data-link")
	if err := os.Symlink(data, dataLink); err != nil {
		t.Fatal(err)
	}
	s := &specs.Spec{Hooks: spec.WithRuntimeHooks(&specs.Hooks{
		Prestart:  []specs.Hook{{Path: "relative-name"}, {Path: fifo}},
		Poststart: []specs.Hook{{Path: link}},
		Poststop: []specs.Hook{
			{Path: sh, Args: []string{"sh", "-e", "/srv/data/cleanup.sh", "arg"}},
			{Path: sh, Args: []string{"sh", "-c", "/srv/data/inline.sh"}},
			{Path: py, Args: []string{"python3", "/srv/data/hook.py"}},
			{Path: bash, Args: []string{"bash", filepath.Join(dataLink, "later", "made.sh")}},
		},
	}, "/usr/local/bin/vetto-runtime")}
	var got []string
	for _, f := range hookFiles(s) {
		got = append(got, f.What+" "+f.Real)
	}
	want := []string{
		// A FIFO is named, not opened for its #! line (that would hang).
		"prestart hook 1's executable " + fifo,
		// A symlink: its target, and the symlink itself, an entry of its
		// directory that whoever writes that directory can repoint.
		"poststart hook 0's executable " + script,
		"poststart hook 0's executable (through the symlink " + link + ") " + link,
		"poststart hook 0's interpreter (#!) /srv/data/interp",
		"poststop hook 0's executable " + sh,
		// sh -e takes the script next: -e is an option there, not a
		// script string.
		"poststop hook 0's script /srv/data/cleanup.sh",
		// sh -c's string names no file of its own.
		"poststop hook 1's executable " + sh,
		// python3.11 is python.
		"poststop hook 2's executable " + py,
		"poststop hook 2's script /srv/data/hook.py",
		"poststop hook 3's executable " + bash,
		// Not there yet, behind a symlink: named where it will be, and
		// through the symlink.
		"poststop hook 3's script " + filepath.Join(data, "later", "made.sh"),
		"poststop hook 3's script (through the symlink " + dataLink + ") " + dataLink,
	}
	if !slices.Equal(got, want) {
		t.Errorf("hookFiles:\n got %q\nwant %q", got, want)
	}
}
