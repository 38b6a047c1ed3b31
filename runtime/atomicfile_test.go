package runtime

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile replaces a file whole, with the mode asked, leaves no
// temporary file behind (after success or failure), and names the file it
// could not write.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vetto.json")
	for _, tc := range []struct {
		name string
		data []byte
		perm os.FileMode
		sync bool
	}{
		{"new file", []byte(`{"state":"Compiled"}`), 0o600, false},
		{"replaced, longer", bytes.Repeat([]byte("x"), 70000), 0o600, false},
		{"replaced, shorter, synced", []byte("short"), 0o644, true},
		{"empty", nil, 0o600, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write := writeFileAtomic
			if tc.sync {
				write = writeFileSynced
			}
			if err := write(path, tc.data, tc.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(tc.data))
			}
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != tc.perm {
				t.Fatalf("mode %v (%v), want %v", st.Mode().Perm(), err, tc.perm)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("directory holds %d entries after the write, want the file alone", len(entries))
			}
		})
	}
	// A directory where the file should be: the rename fails, the
	// temporary file goes.
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "record", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	err := writeFileAtomic(filepath.Join(sub, "record"), []byte("x"), 0o600)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(sub, "record")) {
		t.Fatalf("write over a non-empty directory: %v", err)
	}
	if entries, _ := os.ReadDir(sub); len(entries) != 1 {
		t.Fatalf("left behind in %s: %d entries", sub, len(entries))
	}
	if err := writeFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
