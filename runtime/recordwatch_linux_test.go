package runtime

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The monitor a create began sleeps until its container's record changes:
// a record written in place or renamed over wakes it, and so does the
// state directory's removal; the audit log beside it does not.
func TestWatchRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		act  func(dir string) error
		wake bool
	}{
		{"record renamed into place", func(dir string) error {
			return writeFileAtomic(filepath.Join(dir, recordFile), []byte("{}"), 0o600)
		}, true},
		{"state directory removed", func(dir string) error { return os.RemoveAll(dir) }, true},
		{"audit log appended", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, auditFile), []byte("{}\n"), 0o600)
		}, false},
		{"nothing", func(string) error { return nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Store{Root: t.TempDir()}
			if err := os.Mkdir(s.dir("c1"), 0o700); err != nil {
				t.Fatal(err)
			}
			w, err := s.watchRecord("c1")
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if err := tc.act(s.dir("c1")); err != nil {
				t.Fatal(err)
			}
			if got := w.Wait(200 * time.Millisecond); got != tc.wake {
				t.Fatalf("Wait = %v, want %v", got, tc.wake)
			}
		})
	}
}
