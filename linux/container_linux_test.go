package linux

import (
	"os"
	"path/filepath"
	"testing"
)

// A dead init is called stopped without libcontainer only when its
// cgroup is known thawed or gone: libcontainer calls a frozen one paused,
// and a freezer that cannot be read is its to judge.
func TestMaybeFrozen(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, body := range map[string]string{"freezer.state": content, "cgroup.freeze": content} {
			if err := os.WriteFile(filepath.Join(d, file), []byte(body+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	unreadable := filepath.Join(dir, "unreadable")
	if err := os.MkdirAll(filepath.Join(unreadable, "freezer.state"), 0o755); err != nil { // a directory: read fails, not ENOENT
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		paths map[string]string
		want  bool
	}{
		{"no cgroups", nil, false},
		{"v1 thawed", map[string]string{"freezer": write("v1-thawed", "THAWED"), "": write("v2-frozen", "1")}, false},
		{"v1 frozen", map[string]string{"freezer": write("v1-frozen", "FROZEN")}, true},
		{"v1 freezing", map[string]string{"freezer": write("v1-freezing", "FREEZING")}, true},
		{"v1 gone", map[string]string{"freezer": filepath.Join(dir, "missing")}, false},
		{"v1 unreadable", map[string]string{"freezer": unreadable}, true},
		{"v2 thawed", map[string]string{"": write("v2-thawed", "0")}, false},
		{"v2 frozen", map[string]string{"": write("v2-frozen2", "1")}, true},
		{"v2 gone", map[string]string{"": filepath.Join(dir, "missing")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := maybeFrozen(tc.paths); got != tc.want {
				t.Errorf("maybeFrozen(%v) = %v, want %v", tc.paths, got, tc.want)
			}
		})
	}
}
