package hostpolicy

import (
	"os"
	"path/filepath"
	"testing"
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
