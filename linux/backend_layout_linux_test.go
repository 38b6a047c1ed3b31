package linux

import (
	"os"
	"path/filepath"
	"testing"
)

// legacyLayout tells a container of the earlier layout (libcontainer's
// state in dir/<id>/state.json) from one of the current layout (in dir
// itself), whatever the id: ids that are the names of libcontainer's own
// files, or of the canary socket, must not read as the earlier layout.
func TestLegacyLayout(t *testing.T) {
	file := func(path string) func(t *testing.T) {
		return func(t *testing.T) {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name   string
		id     string
		layout func(dir string) []func(t *testing.T)
		legacy bool
	}{
		{"current", "c1", func(dir string) []func(*testing.T) {
			return []func(*testing.T){file(filepath.Join(dir, "state.json")), file(filepath.Join(dir, "exec.fifo"))}
		}, false},
		{"earlier", "c1", func(dir string) []func(*testing.T) {
			return []func(*testing.T){file(filepath.Join(dir, "c1", "state.json"))}
		}, true},
		{"current, id state.json", "state.json", func(dir string) []func(*testing.T) {
			return []func(*testing.T){file(filepath.Join(dir, "state.json"))}
		}, false},
		{"earlier, id state.json", "state.json", func(dir string) []func(*testing.T) {
			return []func(*testing.T){file(filepath.Join(dir, "state.json", "state.json"))}
		}, true},
		{"current, id canary.sock", "canary.sock", func(dir string) []func(*testing.T) {
			return []func(*testing.T){file(filepath.Join(dir, "state.json")), file(filepath.Join(dir, "canary.sock"))}
		}, false},
		{"earlier, state.json a directory", "c1", func(dir string) []func(*testing.T) {
			return []func(*testing.T){func(t *testing.T) {
				if err := os.MkdirAll(filepath.Join(dir, "c1", "state.json"), 0o700); err != nil {
					t.Fatal(err)
				}
			}}
		}, false},
		{"nothing there", "c1", func(string) []func(*testing.T) { return nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "backend")
			if err := os.Mkdir(dir, 0o711); err != nil {
				t.Fatal(err)
			}
			for _, mk := range tt.layout(dir) {
				mk(t)
			}
			if got := legacyLayout(dir, tt.id); got != tt.legacy {
				t.Errorf("legacyLayout(%q) = %v, want %v", tt.id, got, tt.legacy)
			}
		})
	}
}
