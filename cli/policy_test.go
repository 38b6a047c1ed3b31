package cli

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

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "unlimited", 512: "512B", 4 << 30: "4GiB", 1536 << 20: "1.5GiB", 2e9: "1.86GiB", 1 << 40: "1TiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
