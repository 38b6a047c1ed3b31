//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// --systemd-cgroup on a host that runs systemd (the VM tier's guests,
// docs/testing.md; TestBadSystemdCgroup covers a host without it): the
// container lives in a transient scope systemd made, with the bundle's
// limits applied there, passes verification, and delete leaves neither
// processes nor the scope behind. Every command gets the flag, as
// containerd's shim passes it.
func TestSystemdCgroup(t *testing.T) {
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		t.Skip("systemd is not running on this host (no /run/systemd/system); the VM tier runs this test")
	}
	if data, _ := os.ReadFile("/proc/self/cgroup"); !strings.HasPrefix(string(data), "0::") {
		t.Skip("not a pure cgroup v2 host: the scope is checked in the unified hierarchy")
	}
	pids, memory := int64(32), int64(64<<20)
	limits := func(s *specs.Spec) {
		s.Linux.Resources.Pids = &specs.LinuxPids{Limit: &pids}
		s.Linux.Resources.Memory = &specs.LinuxMemory{Limit: &memory}
	}
	for _, tc := range []struct {
		name string
		// path is the bundle's cgroupsPath ("slice:prefix:name"); scope
		// is where the container must then be, for id.
		path  func(id string) string
		scope func(id string) string
	}{
		{"default scope", func(string) string { return "" },
			func(id string) string { return "/system.slice/runc-" + id + ".scope" }},
		{"cgroupsPath slice:prefix:name", func(id string) string { return "system.slice:vetto-test:" + id },
			func(id string) string { return "/system.slice/vetto-test-" + id + ".scope" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			sd := func(args ...string) result { return e.vetto(append([]string{"--systemd-cgroup"}, args...)...) }
			audit := filepath.Join(e.tmp, "audit.jsonl")
			b := e.bundle([]string{"sh", "-c", "sleep 1000 & exec sleep 1000"}, func(s *specs.Spec) {
				limits(s)
				s.Linux.CgroupsPath = tc.path(id)
			})
			if r := sd("run", "-d", "-b", b, id); r.code != 0 {
				t.Fatalf("--systemd-cgroup run -d: %s", r)
			}
			t.Cleanup(func() { _ = sd("delete", "--force", id) })
			e.waitStatus(id, "running")
			pid := int(e.state(id)["pid"].(float64))
			scope := tc.scope(id)
			data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(data)); got != "0::"+scope {
				t.Fatalf("init's cgroup %q, want 0::%s", got, scope)
			}
			dir := filepath.Join("/sys/fs/cgroup", scope)
			for file, want := range map[string]string{"pids.max": "32", "memory.max": strconv.FormatInt(memory, 10)} {
				if got, err := os.ReadFile(filepath.Join(dir, file)); err != nil || strings.TrimSpace(string(got)) != want {
					t.Errorf("%s of the scope: %q, %v; want %s", file, got, err, want)
				}
			}
			procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			before := strings.Fields(string(procs))
			if len(before) < 2 {
				t.Fatalf("scope holds %v, want the init and its child", before)
			}
			if r := sd("verify", id); r.code != 0 {
				t.Errorf("verify of a container in a systemd scope: %s", r)
			}
			if r := sd("--audit-log", audit, "delete", "--force", id); r.code != 0 {
				t.Fatalf("--systemd-cgroup delete --force: %s", r)
			}
			rc := lastReceipt(t, audit, id)
			if rc == nil || rc.Killed < 2 || len(rc.Remaining) != 0 || !rc.CgroupRemoved {
				t.Errorf("receipt %+v, want killed >= 2, nothing remaining, cgroup removed", rc)
			}
			for _, p := range before {
				n, _ := strconv.Atoi(p)
				if !waitDead(n, 2*time.Second) {
					t.Errorf("pid %d of the container survived delete", n)
				}
			}
			if !systemdScopeGone(dir) {
				t.Fatalf("scope %s still exists after delete", dir)
			}
		})
	}

	// Foreground: the container's own exit status comes back through run.
	t.Run("foreground exit status", func(t *testing.T) {
		e := newEnv(t)
		id := e.id()
		r := e.vetto("--systemd-cgroup", "run", "-b", e.bundle([]string{"sh", "-c", "exit 3"}, limits), id)
		if r.code != 3 {
			t.Fatalf("--systemd-cgroup run of 'exit 3': %s; want exit 3", r)
		}
		if dir := "/sys/fs/cgroup/system.slice/runc-" + id + ".scope"; !systemdScopeGone(dir) {
			t.Errorf("scope %s left after run", dir)
		}
	})
}

// systemdScopeGone waits for systemd to remove a scope's cgroup, which it
// does asynchronously once the scope is empty.
func systemdScopeGone(dir string) bool {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
