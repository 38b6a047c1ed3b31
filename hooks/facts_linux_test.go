package hooks

import (
	"os"
	"path/filepath"
	"testing"
)

// LookPath is Exists and NullDevice in one look: for every kind of path a
// masked path can be, it answers what the two answered apart.
func TestLookPathIsExistsAndNullDevice(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "null-link")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	f := ProcFacts{}
	pid := os.Getpid()
	for _, tc := range []struct {
		name, path   string
		exists, null bool
	}{
		{"the null device", "/dev/null", true, true},
		{"another character device", "/dev/zero", true, false},
		{"a regular file", file, true, false},
		{"a directory", dir, true, false},
		{"a symlink to the null device is not it", link, true, false},
		{"missing", filepath.Join(dir, "missing"), false, false},
		{"under a missing directory", filepath.Join(dir, "no", "such"), false, false},
		{"under a file", filepath.Join(file, "x"), false, false},
		{"the root", "/", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exists, null, err := f.LookPath(pid, tc.path)
			if err != nil || exists != tc.exists || null != tc.null {
				t.Fatalf("LookPath(%s) = %v, %v, %v; want %v, %v", tc.path, exists, null, err, tc.exists, tc.null)
			}
			wantExists, wantErr := f.Exists(pid, tc.path)
			wantNull, _ := f.NullDevice(pid, tc.path)
			if exists != wantExists || null != wantNull || (err == nil) != (wantErr == nil) {
				t.Fatalf("LookPath(%s) = %v, %v, %v; Exists and NullDevice say %v, %v, %v", tc.path, exists, null, err, wantExists, wantNull, wantErr)
			}
		})
	}
}
