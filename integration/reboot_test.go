//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fault is a host power loss under a state root on persistent storage
// (--root on disk, not tmpfs): after the reboot the record is still there,
// written in the last boot. The test makes that record by rewriting the
// boot id a real container's record holds, so its processes still exist —
// which is the point: a pid recorded in another boot names whatever
// process has it now. state must say unknown-after-reboot (OCI stopped, no
// pid), start must refuse (125, one line), and delete must remove it
// without signalling anything: the "old" processes must still be alive
// afterwards. The receipt in the audit log says unknown-after-reboot.
func TestStateAfterReboot(t *testing.T) {
	for _, tc := range []struct {
		name, last string
		launch     func(e *env, b, id string)
	}{
		{"created", "Launchable", func(e *env, b, id string) { e.mustVetto("create", "-b", b, id) }},
		{"running", "VerifiedRuntime", func(e *env, b, id string) { e.mustVetto("run", "-d", "-b", b, id) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			audit := filepath.Join(e.tmp, "audit.jsonl")
			tc.launch(e, e.bundle([]string{"sleep", "100"}, nil), id)
			defer killLeftBehind(t, id)
			pid := int(e.state(id)["pid"].(float64))
			// The reboot ended the container's monitor too (and it would
			// write its own copy of the record back over the edit).
			stopMonitor(t, filepath.Join(e.root, id, "vetto.json"))
			rewriteBootID(t, filepath.Join(e.root, id, "vetto.json"))

			st := e.state(id)
			v, _ := st["vetto"].(map[string]any)
			if st["status"] != "stopped" || st["pid"] != float64(0) || v["state"] != "UnknownAfterReboot" || v["lastState"] != tc.last || !strings.Contains(v["reason"].(string), "unknown-after-reboot") {
				t.Fatalf("state after the reboot: %v; want status stopped, pid 0, vetto.state UnknownAfterReboot (last %s)", st, tc.last)
			}
			for _, args := range [][]string{{"start", id}, {"kill", id, "KILL"}} {
				r := e.vetto(args...)
				if r.code != 125 || !strings.Contains(r.stderr, "unknown-after-reboot") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
					t.Fatalf("%s after the reboot: %s; want exit 125, one line naming unknown-after-reboot", args[0], r)
				}
			}
			if err := syscall.Kill(pid, 0); err != nil {
				t.Fatalf("start or kill signalled pid %d of the record: %v", pid, err)
			}
			if r := e.vetto("--audit-log", audit, "delete", id); r.code != 0 {
				t.Fatalf("delete after the reboot: %s", r)
			}
			if r := e.vetto("state", id); !strings.Contains(r.stderr, "container does not exist") {
				t.Fatalf("state after delete: %s", r)
			}
			// A pid of another boot is not that process: delete must not
			// have killed it.
			if err := syscall.Kill(pid, 0); err != nil {
				t.Fatalf("delete signalled pid %d, which the record held from another boot: %v", pid, err)
			}
			if len(processesInCgroup(id)) == 0 {
				t.Fatal("delete tore down the cgroup named by another boot's record")
			}
			data, err := os.ReadFile(audit)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"method":"unknown-after-reboot"`) || strings.Contains(string(data), `"to":"Terminated"`) {
				t.Fatalf("audit log of the delete: %s; want a receipt unknown-after-reboot and no Terminated", data)
			}
		})
	}
}

// stopMonitor kills the monitor a container's record names, if any, and
// waits until it is gone.
func stopMonitor(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Monitor *struct {
			Pid int `json:"pid"`
		} `json:"monitor"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Monitor == nil || rec.Monitor.Pid <= 0 {
		return
	}
	_ = syscall.Kill(rec.Monitor.Pid, syscall.SIGKILL)
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(rec.Monitor.Pid, 0) == nil {
		// A zombie until its parent (none: it is detached, so init)
		// reaps it; /proc/<pid>/stat says which.
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(rec.Monitor.Pid) + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("monitor %d survives SIGKILL", rec.Monitor.Pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rewriteBootID puts another boot's id in a container's record, as a
// record written before the last reboot holds.
func rewriteBootID(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec["bootId"] == nil {
		t.Fatalf("the record of %s holds no boot id (create records it)", path)
	}
	rec["bootId"] = "00000000-0000-4000-8000-000000000000"
	if data, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// killLeftBehind kills what a test deliberately left of container id (a
// real reboot would have) and removes its cgroups, so the leak check sees
// nothing.
func killLeftBehind(t *testing.T, id string) {
	deadline := time.Now().Add(10 * time.Second)
	for pids := processesInCgroup(id); len(pids) > 0; pids = processesInCgroup(id) {
		for _, p := range pids {
			if n, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(n, syscall.SIGKILL)
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("processes of %s survive SIGKILL: %v", id, pids)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, d := range cgroupDirs(id) {
		for time.Now().Before(deadline) && os.Remove(d) != nil {
			time.Sleep(20 * time.Millisecond)
		}
	}
}
