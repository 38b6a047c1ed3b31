//go:build linux

package integration

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// A runtime killed with SIGKILL in the middle of create (here while a
// createRuntime hook runs) leaves a half-built container. delete must
// clean up everything, including cgroups, and never report a clean
// container it did not clean. The leak check after the test enforces it.
func TestCreateKilledMidway(t *testing.T) {
	for _, force := range []bool{false, true} {
		name := "delete"
		if force {
			name = "delete --force"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			b := e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
				s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/sleep", Args: []string{"sleep", "30"}}}}
			})
			cmd := exec.Command(binary, "--root", e.root, "create", "-b", b, id)
			out := e.tempFile()
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the container's cgroup exists: the init is there.
			deadline := time.Now().Add(10 * time.Second)
			for len(cgroupDirs(id)) == 0 {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("create never got to its hook; output %q", readAll(t, out))
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			// The hook (a child of the dead runtime) is not the container's.
			_ = exec.Command("pkill", "-f", "^sleep 30$").Run()

			if st := e.state(id); st["status"] == "running" {
				t.Fatalf("a half-created container claims to be running: %v", st)
			}
			args := []string{"delete", id}
			if force {
				args = []string{"delete", "--force", id}
			}
			if r := e.vetto(args...); r.code != 0 {
				t.Fatalf("%s: %s", strings.Join(args, " "), r)
			}
			if d := cgroupDirs(id); len(d) > 0 {
				t.Fatalf("cgroups left after delete: %v", d)
			}
			if r := e.vetto("state", id); !strings.Contains(r.stderr, "container does not exist") {
				t.Fatalf("state after delete: %s", r)
			}
		})
	}
}
