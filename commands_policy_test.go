package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// lookupHostPath is what spec's symlink checks rest on: real paths, also
// for paths that do not exist yet behind a symlinked parent.
func TestLookupHostPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(dir, "real"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "real", "f"), nil, 0o644))
	must(os.Symlink("real", filepath.Join(dir, "link")))
	must(os.Symlink("/etc", filepath.Join(dir, "out")))
	must(os.Symlink("nowhere", filepath.Join(dir, "dangling")))
	tests := []struct {
		path string
		want spec.PathInfo
	}{
		{"real", spec.PathInfo{Kind: spec.PathDir, Real: "real"}},
		{"real/f", spec.PathInfo{Kind: spec.PathFile, Real: "real/f"}},
		{"link/f", spec.PathInfo{Kind: spec.PathFile, Real: "real/f"}},
		{"link/new/deeper", spec.PathInfo{Kind: spec.PathMissing, Real: "real/new/deeper"}},
		{"missing", spec.PathInfo{Kind: spec.PathMissing, Real: "missing"}},
		{"dangling", spec.PathInfo{Kind: spec.PathMissing, Real: "dangling"}},
	}
	for _, tt := range tests {
		got := lookupHostPath(filepath.Join(dir, tt.path))
		want := spec.PathInfo{Kind: tt.want.Kind, Real: filepath.Join(dir, tt.want.Real)}
		if got != want {
			t.Errorf("lookupHostPath(%s) = %+v, want %+v", tt.path, got, want)
		}
	}
	if got := lookupHostPath(filepath.Join(dir, "out", "x-not-there")); got.Real != "/etc/x-not-there" {
		t.Errorf("a missing path behind a symlink out: Real %q, want /etc/x-not-there", got.Real)
	}
}

func TestFindEnvFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{".env", "app/.env.local", "app/.env.example", ".git/.env", "README"} {
		path := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := findEnvFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, ".env"), filepath.Join(dir, "app/.env.local")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("findEnvFiles = %v, want %v", got, want)
	}
}

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
