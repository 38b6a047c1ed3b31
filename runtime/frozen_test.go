package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Within the process that froze a spec, readSpec takes the bytes create
// verified; another process (a Store without the memo) reads the file, and
// a rewrite of it is a mismatch there. Each read is a spec of its own.
func TestFrozenSpecReadOncePerProcess(t *testing.T) {
	root := t.TempDir()
	writer := Store{Root: root, frozen: &frozenMemo{}}
	l, err := writer.createDirLocked("c1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.unlock()
	f, err := freeze(&specs.Spec{Version: "1.0.2", Process: &specs.Process{Args: []string{"/bin/true"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.freezeSpecLocked("c1", f); err != nil {
		t.Fatal(err)
	}
	rec := &Record{ID: "c1", SpecHash: f.hash}

	// The file on disk is rewritten: the memo'd bytes are what was verified.
	path := filepath.Join(writer.dir("c1"), specFileName)
	if err := os.WriteFile(path, []byte(`{"ociVersion":"1.0.2","process":{"args":["/payload"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := writer.readSpec(rec)
	if err != nil {
		t.Fatalf("readSpec in the freezing process: %v", err)
	}
	if got := a.Process.Args[0]; got != "/bin/true" {
		t.Fatalf("readSpec in the freezing process gave args[0] %q, want the frozen /bin/true", got)
	}
	a.Process.Args[0] = "/changed"
	b, err := writer.readSpec(rec)
	if err != nil || b.Process.Args[0] != "/bin/true" {
		t.Fatalf("a second readSpec shares the first's spec: %v %v", b, err)
	}

	other := Store{Root: root}
	if _, err := other.readSpec(rec); !errors.Is(err, ErrSpecMismatch) {
		t.Fatalf("readSpec in another process after a rewrite: %v, want ErrSpecMismatch", err)
	}

	// A record naming another hash is never answered from the memo.
	if _, err := writer.readSpec(&Record{ID: "c1", SpecHash: "00"}); !errors.Is(err, ErrSpecMismatch) {
		t.Fatalf("readSpec with another hash: %v, want ErrSpecMismatch", err)
	}
	if err := writer.removeLocked("c1"); err != nil {
		t.Fatal(err)
	}
	if writer.frozen.bytes("c1", f.hash) != nil {
		t.Fatal("the memo still holds a removed container's spec")
	}
}

// Containers of two state roots may share an id: each has its own frozen
// hash, and deleting one leaves the other's; nothing of either is left
// once both are deleted.
func TestFrozenHashPerRootAndID(t *testing.T) {
	ev := Evidence{Dir: filepath.Join(t.TempDir(), "evidence")}
	roots := []string{"/run/one-root", "/run/other-root"}
	for _, root := range roots {
		if err := ev.recordFrozen(root, "a", "h-"+root); err != nil {
			t.Fatal(err)
		}
	}
	ev.forgetFrozen(roots[0], "a")
	if err := ev.checkFrozen(roots[1], "a", "h-"+roots[1]); err != nil {
		t.Fatalf("the other root's hash went with the first: %v", err)
	}
	if err := ev.checkFrozen(roots[0], "a", "h-"+roots[0]); !errors.Is(err, ErrSpecMismatch) {
		t.Fatalf("a forgotten hash still checks: %v", err)
	}
	ev.forgetFrozen(roots[1], "a")
	left, err := os.ReadDir(filepath.Join(ev.Dir, "frozen"))
	if err != nil || len(left) != 0 {
		t.Fatalf("frozen/ after both deletes: %v (err %v), want empty", left, err)
	}
}

// A container created by a runtime that kept its hash in a directory per
// root (frozen/<root>/<id>) is checked against that copy and delete
// removes it, with the root's directory once it is empty.
func TestFrozenHashOfTheEarlierLayout(t *testing.T) {
	ev := Evidence{Dir: filepath.Join(t.TempDir(), "evidence")}
	root := "/run/some-root"
	for _, id := range []string{"a", "b"} {
		p := ev.legacyFrozenPath(root, id)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("h-"+id+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := ev.checkFrozen(root, "a", "h-a"); err != nil {
		t.Fatalf("the earlier layout's hash does not check: %v", err)
	}
	if err := ev.checkFrozen(root, "a", "h-other"); !errors.Is(err, ErrSpecMismatch) {
		t.Fatalf("another hash against the earlier layout's: %v, want ErrSpecMismatch", err)
	}
	dir := filepath.Dir(ev.legacyFrozenPath(root, "a"))
	ev.forgetFrozen(root, "a")
	if err := ev.checkFrozen(root, "b", "h-b"); err != nil {
		t.Fatalf("the other container's hash went with the first: %v", err)
	}
	ev.forgetFrozen(root, "b")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the root's hash directory %s is left after its last container: %v", dir, err)
	}
}
