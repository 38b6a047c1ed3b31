package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

func TestRunOCI(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	state := &specs.State{Version: specs.Version, ID: "c1", Status: specs.StateRunning, Pid: 42, Bundle: "/b"}
	timeout := 1
	tests := []struct {
		name    string
		hooks   []specs.Hook
		wantErr string
		check   func(t *testing.T)
	}{
		{
			name:  "state on stdin, args and env exact",
			hooks: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", "-c", `cat > ` + out + `; echo "$0 $FOO ${HOME:-nohome}" >> ` + out, "argv0"}, Env: []string{"FOO=bar"}}},
			check: func(t *testing.T) {
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				got := string(b)
				if !strings.Contains(got, `"id":"c1"`) || !strings.Contains(got, `"pid":42`) {
					t.Errorf("hook stdin = %q, want the OCI state", got)
				}
				if !strings.HasSuffix(got, "argv0 bar nohome\n") {
					t.Errorf("hook saw %q, want argv0, FOO=bar and no inherited HOME", got)
				}
			},
		},
		{
			name:    "failure names phase, index and output",
			hooks:   []specs.Hook{{Path: "/bin/true"}, {Path: "/bin/sh", Args: []string{"sh", "-c", "echo oops >&2; exit 3"}}},
			wantErr: "error running poststart hook #1 (/bin/sh): exit status 3, output: oops",
		},
		{
			name:    "timeout",
			hooks:   []specs.Hook{{Path: "/bin/sleep", Args: []string{"sleep", "10"}, Timeout: &timeout}},
			wantErr: "timeout after 1 seconds",
		},
		{
			name:    "missing binary",
			hooks:   []specs.Hook{{Path: filepath.Join(dir, "nope")}},
			wantErr: "no such file or directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := RunOCI("poststart", tt.hooks, state)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("RunOCI: %v", err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("RunOCI error = %v, want it to contain %q", err, tt.wantErr)
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
}
