package runtime

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The audit log is appended to line by line and never through a symlink
// planted at its name: the line does not reach the link's target.
func TestAppendLine(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	for _, line := range []string{"one\n", "two\n"} {
		if err := appendLine(log, []byte(line), line == "two\n"); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(log); string(got) != "one\ntwo\n" {
		t.Fatalf("log %q, want both lines in order", got)
	}
	if runtime.GOOS == "windows" {
		return
	}
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "linked.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := appendLine(link, []byte("planted\n"), false); err == nil || !strings.Contains(err.Error(), link) {
		t.Fatalf("append through a symlink: %v, want a refusal naming it", err)
	}
	if err := syncPath(link); err == nil {
		t.Fatalf("fsync through a symlink succeeded")
	}
	if got, _ := os.ReadFile(target); len(got) != 0 {
		t.Fatalf("the line reached the symlink's target: %q", got)
	}
}

// readNoFollow reads a file whole whatever its size, a kernel file whose
// size says 0 too, and refuses a symlink.
func TestReadNoFollow(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 70000} {
		path := filepath.Join(dir, "f")
		data := bytes.Repeat([]byte("x"), size)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readNoFollow(path)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read %d, %v", size, len(got), err)
		}
	}
	if _, err := readNoFollow(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want not-exist", err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if got, err := readNoFollow("/proc/self/status"); err != nil || !strings.Contains(string(got), "\nPid:") {
		t.Fatalf("/proc/self/status: %q, %v", got, err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "f"), link); err != nil {
		t.Fatal(err)
	}
	if _, err := readNoFollow(link); err == nil {
		t.Fatalf("read through a symlink succeeded")
	}
}
