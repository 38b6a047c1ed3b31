//go:build unix

package hostpolicy

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRegular is what a sandbox can leave in the project where the
// compiler or create reads a file: each row must return at once, and
// only a regular file is read.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	mk := map[string]func(p string) error{
		"regular": func(p string) error { return os.WriteFile(p, []byte("[core]\n"), 0o644) },
		"fifo":    func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"symlink": func(p string) error {
			if err := os.WriteFile(p+".target", []byte("x"), 0o644); err != nil {
				return err
			}
			return os.Symlink(p+".target", p)
		},
		"directory": func(p string) error { return os.Mkdir(p, 0o755) },
		"too large": func(p string) error { return os.WriteFile(p, make([]byte, 65), 0o644) },
	}
	want := map[string]string{
		"regular":   "",
		"fifo":      "not a regular file",
		"symlink":   "too many levels of symbolic links",
		"directory": "not a regular file",
		"too large": "over the 64 read",
	}
	for name, create := range mk {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := create(p); err != nil {
				t.Fatal(err)
			}
			type out struct {
				data []byte
				err  error
			}
			done := make(chan out, 1)
			go func() {
				data, err := readRegular(p, 64)
				done <- out{data, err}
			}()
			var got out
			select {
			case got = <-done:
			case <-time.After(10 * time.Second):
				if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
					f.Close()
				}
				t.Fatalf("readRegular(%s) did not return in 10 s", p)
			}
			if want[name] == "" {
				if got.err != nil || string(got.data) != "[core]\n" {
					t.Fatalf("got %q, %v", got.data, got.err)
				}
				return
			}
			if got.err == nil || !strings.Contains(got.err.Error(), want[name]) {
				t.Fatalf("got %q, %v; want an error containing %q", got.data, got.err, want[name])
			}
		})
	}
}
