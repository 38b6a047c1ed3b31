package hostpolicy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// LookupPath is what spec's symlink checks rest on: real paths, also
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
		got := LookupPath(filepath.Join(dir, tt.path))
		want := spec.PathInfo{Kind: tt.want.Kind, Real: filepath.Join(dir, tt.want.Real)}
		if got != want {
			t.Errorf("LookupPath(%s) = %+v, want %+v", tt.path, got, want)
		}
	}
	if got := LookupPath(filepath.Join(dir, "out", "x-not-there")); got.Real != "/etc/x-not-there" {
		t.Errorf("a missing path behind a symlink out: Real %q, want /etc/x-not-there", got.Real)
	}
}
