package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

// binDirBackend is a fake backend that keeps executables of its own.
type binDirBackend struct {
	*fakeBackend
	uses bool
}

func (b binDirBackend) UsesBinDir() bool { return b.uses }

// The bin directory is made, private, beside the evidence, for a backend
// that asks for it, and only then; an evidence directory others can write
// gives none (the backend then starts inits from the runtime's binary).
func TestBinDir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend Backend
		mode    os.FileMode // of the evidence directory, made before
		want    bool
	}{
		{"a backend that keeps none", &fakeBackend{}, 0o700, false},
		{"one that could but does not now", binDirBackend{&fakeBackend{}, false}, 0o700, false},
		{"one that does", binDirBackend{&fakeBackend{}, true}, 0o700, true},
		{"evidence writable by others", binDirBackend{&fakeBackend{}, true}, 0o777, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := filepath.Join(t.TempDir(), "evidence")
			if err := os.Mkdir(ev, tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(ev, tc.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			r := &Runtime{Backend: tc.backend, Store: Store{Evidence: Evidence{Dir: ev}}}
			got := r.binDir()
			if !tc.want {
				if got != "" {
					t.Fatalf("binDir = %q, want none", got)
				}
				return
			}
			if got != filepath.Join(ev, "bin") {
				t.Fatalf("binDir = %q, want %s", got, filepath.Join(ev, "bin"))
			}
			fi, err := os.Lstat(got)
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v, %v; want a directory, 0700", got, fi.Mode(), err)
			}
		})
	}
	if got := (&Runtime{Backend: binDirBackend{&fakeBackend{}, true}}).binDir(); got != "" {
		t.Errorf("no evidence directory: binDir = %q, want none", got)
	}
}
