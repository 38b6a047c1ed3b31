package hostpolicy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vetto-dev/vetto-runtime/spec"
)

func TestMakeEmptyDir(t *testing.T) {
	dir := t.TempDir()
	if created, err := makeEmptyDir(filepath.Join(dir, "new")); err != nil || !created {
		t.Fatalf("new dir: %v %v", created, err)
	}
	if created, err := makeEmptyDir(filepath.Join(dir, "new")); err != nil || created {
		t.Fatalf("existing empty dir: %v %v", created, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "new", "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := makeEmptyDir(filepath.Join(dir, "new")); err == nil {
		t.Fatal("a non-empty rootfs was accepted")
	}
}

// MakeHostEntries makes what a repository lacks, empty and owned as its
// git directory; leaves what exists; refuses a type clash; and does not
// follow a symlink in the git directory's place out of it.
func TestMakeHostEntries(t *testing.T) {
	dir := t.TempDir()
	plant(t, dir, "repo/.git/HEAD", "repo/.git/info/", "elsewhere/")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(dir, "repo/.git/hooks-link")); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(filepath.Join(dir, "repo/.git"), 1234, 5678); err != nil {
			t.Fatal(err)
		}
	}
	git := filepath.Join(dir, "repo/.git")
	err := MakeHostEntries([]spec.HostEntry{{Path: git + "/hooks", Dir: true}, {Path: git + "/config"}, {Path: git + "/info", Dir: true}})
	if err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]bool{"hooks": true, "config": false} {
		fi, err := os.Lstat(filepath.Join(git, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi.IsDir() != dir || (!dir && fi.Size() != 0) {
			t.Errorf("%s: %v, size %d", name, fi.Mode(), fi.Size())
		}
		if uid, gid, _ := ownerOf(fi); os.Geteuid() == 0 && (uid != 1234 || gid != 5678) {
			t.Errorf("%s is owned by %d:%d, not the git directory's 1234:5678", name, uid, gid)
		}
	}
	if err := MakeHostEntries([]spec.HostEntry{{Path: git + "/hooks"}}); err == nil {
		t.Error("a file was accepted where a directory is")
	}
	if err := MakeHostEntries([]spec.HostEntry{{Path: git + "/hooks-link/x", Dir: true}}); err == nil {
		t.Error("made an entry through a symlink out of the git directory")
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere/x")); err == nil {
		t.Error("an entry was made outside the git directory")
	}
}
