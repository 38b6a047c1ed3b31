//go:build linux

package hooks

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// TestReadBundleConfig is a hostile bundle's config.json, each way it can
// be something other than a file of the bundle: every row must return at
// once — a blocked read fails the test by its deadline — with the error
// naming what it found. Both opens are tried: openat2's and the portable
// one a kernel without openat2 gets.
func TestReadBundleConfig(t *testing.T) {
	const body = `{"ociVersion":"1.0.2"}`
	outside := filepath.Join(t.TempDir(), "victim.json")
	if err := os.WriteFile(outside, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		make func(t *testing.T, bundle, cfg string)
		want string // "" for a read of body
	}{
		{"regular file", func(t *testing.T, _, cfg string) { write(t, cfg, body) }, ""},
		{"symlink in the bundle", func(t *testing.T, bundle, cfg string) {
			write(t, filepath.Join(bundle, "real.json"), body)
			symlink(t, "real.json", cfg)
		}, ""},
		{"absolute symlink into the bundle", func(t *testing.T, bundle, cfg string) {
			write(t, filepath.Join(bundle, "sub", "real.json"), body)
			symlink(t, filepath.Join(bundle, "sub", "real.json"), cfg)
		}, ""},
		{"absolute symlink out of the bundle", func(t *testing.T, _, cfg string) { symlink(t, outside, cfg) },
			"symlink that leads out of the bundle, to " + outside},
		{"relative symlink out of the bundle", func(t *testing.T, bundle, cfg string) {
			rel, err := filepath.Rel(bundle, outside)
			if err != nil {
				t.Fatal(err)
			}
			symlink(t, rel, cfg)
		}, "symlink that leads out of the bundle"},
		{"symlink to a host device", func(t *testing.T, _, cfg string) { symlink(t, "/dev/zero", cfg) },
			"leads out of the bundle, to /dev/zero"},
		{"dangling symlink", func(t *testing.T, _, cfg string) { symlink(t, "nothing", cfg) }, "no such file or directory"},
		{"missing", func(*testing.T, string, string) {}, "no such file or directory"},
		{"fifo", func(t *testing.T, _, cfg string) {
			if err := unix.Mkfifo(cfg, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is a fifo, not a regular file"},
		{"fifo behind a symlink in the bundle", func(t *testing.T, bundle, cfg string) {
			if err := unix.Mkfifo(filepath.Join(bundle, "pipe"), 0o644); err != nil {
				t.Fatal(err)
			}
			symlink(t, "pipe", cfg)
		}, "is a fifo, not a regular file"},
		{"socket", func(t *testing.T, _, cfg string) {
			l, err := net.Listen("unix", cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
		}, "is a socket, not a regular file"},
		{"character device", func(t *testing.T, _, cfg string) {
			if os.Geteuid() != 0 {
				t.Skip("mknod of a device needs root")
			}
			if err := unix.Mknod(cfg, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 5))); err != nil {
				t.Fatal(err)
			}
		}, "is a character device, not a regular file"},
		{"directory", func(t *testing.T, _, cfg string) {
			if err := os.Mkdir(cfg, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory, not a regular file"},
		{"over the size bound", func(t *testing.T, _, cfg string) {
			write(t, cfg, `{"x":"`+strings.Repeat("a", spec.MaxConfigSize)+`"}`)
		}, "over the"},
	}
	opens := map[string]func(string) ([]byte, error){
		"openat2":  ReadBundleConfig,
		"portable": func(abs string) ([]byte, error) { return readWith(abs, openPortable) },
	}
	for oname, read := range opens {
		for _, tt := range tests {
			t.Run(oname+"/"+tt.name, func(t *testing.T) {
				bundle := t.TempDir()
				cfg := filepath.Join(bundle, spec.ConfigFile)
				tt.make(t, bundle, cfg)
				type out struct {
					data []byte
					err  error
				}
				done := make(chan out, 1)
				go func() {
					data, err := read(bundle)
					done <- out{data, err}
				}()
				var got out
				select {
				case got = <-done:
				case <-time.After(10 * time.Second):
					// Let the blocked open go: a writer opens the fifo.
					if f, err := os.OpenFile(cfg, os.O_WRONLY, 0); err == nil {
						f.Close()
					}
					t.Fatalf("the read of %s did not return in 10 s", cfg)
				}
				if tt.want == "" {
					if got.err != nil || string(got.data) != body {
						t.Fatalf("got %q, %v; want %q", got.data, got.err, body)
					}
					return
				}
				if got.err == nil || !strings.Contains(got.err.Error(), tt.want) {
					t.Fatalf("got %q, %v; want an error containing %q", got.data, got.err, tt.want)
				}
			})
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
