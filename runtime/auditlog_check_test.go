//go:build unix

package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCheckAuditLog(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(existing, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(existing, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string // want "": accepted
	}{
		{"an existing log of ours", existing, ""},
		{"a new log in a directory that exists", filepath.Join(dir, "new.jsonl"), ""},
		{"a missing directory", filepath.Join(dir, "no", "audit.jsonl"), "no such file or directory"},
		{"a fifo", fifo, "(a fifo)"},
		{"a directory", dir, "(a directory)"},
		{"a symlink", link, "(a symlink)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckAuditLog(tc.path)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidInput)):
				t.Fatalf("got %v, want an invalid-input error with %q", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "new.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the check created the log: %v", err)
	}
}
