//go:build linux

package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// receipt is the teardown receipt in the audit log.
type receipt struct {
	Method           string `json:"method"`
	Killed           int    `json:"killed"`
	Remaining        []int  `json:"remaining"`
	CgroupRemoved    bool   `json:"cgroup_removed"`
	PidNamespaceGone bool   `json:"pid_namespace_gone"`
	RelayStopped     bool   `json:"relay_stopped"`
	// PidNamespaceProof: "init-exited" or "scan".
	PidNamespaceProof string `json:"pid_namespace_proof"`
	Monitor           *struct {
		Pid     int  `json:"pid"`
		Rounds  int  `json:"rounds"`
		Kills   int  `json:"kills"`
		Stopped bool `json:"stopped"`
	} `json:"monitor"`
}

// A process that joins the container's pid namespace from the host, in
// none of the container's cgroups, is out of cgroup.kill's reach. The
// receipt does not scan for it once the init has exited: the kernel kills
// it as the namespace's init dies and lets the init exit only after it is
// gone. If that did not hold, the receipt would say clean while the
// joiner lives; the test checks the joiner on the host.
func TestTeardownKillsProcessJoinedOutsideCgroup(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	audit := filepath.Join(e.tmp, "audit.jsonl")
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "1000"}, nil), id)
	pid, _ := e.state(id)["pid"].(float64)
	init := int(pid)
	if init <= 0 {
		t.Fatalf("state of %s gives no pid", id)
	}
	// nsenter forks its command into the target's pid namespace; it stays
	// in this test's cgroup.
	joiner := exec.Command("nsenter", "--target", strconv.Itoa(init), "--pid", "--", "sleep", "1000")
	if err := joiner.Start(); err != nil {
		t.Fatalf("nsenter: %v", err)
	}
	defer func() { _ = joiner.Process.Kill(); _, _ = joiner.Process.Wait() }()
	// The sleep nsenter forked, in the container's pid namespace.
	var child int
	deadline := time.Now().Add(5 * time.Second)
	for child == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nsenter's child did not appear")
		}
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", joiner.Process.Pid, joiner.Process.Pid))
		if f := strings.Fields(string(data)); len(f) > 0 {
			child, _ = strconv.Atoi(f[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	if slices.Contains(cgroupPids(id), child) {
		t.Fatalf("the joiner %d is in the container's cgroup; the test needs it outside", child)
	}
	e.mustVetto("--audit-log", audit, "delete", "--force", id)
	rc := lastReceipt(t, audit, id)
	if rc == nil {
		t.Fatal("no receipt in the audit log")
	}
	if len(rc.Remaining) != 0 || !rc.PidNamespaceGone || rc.PidNamespaceProof != "init-exited" {
		t.Fatalf("receipt %+v, want nothing left, proven by the init's exit", rc)
	}
	if !waitDead(child, 2*time.Second) {
		t.Fatalf("pid %d, joined from the host into the container's pid namespace, survived delete", child)
	}
}

// lastReceipt reads the last receipt of id from an audit log.
func lastReceipt(t *testing.T, audit, id string) *receipt {
	t.Helper()
	f, err := os.Open(audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last *receipt
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			ID      string   `json:"id"`
			Event   string   `json:"event"`
			Receipt *receipt `json:"receipt"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if ev.ID == id && ev.Event == "receipt" {
			last = ev.Receipt
		}
	}
	return last
}

// cgroupPids lists the pids in container id's v2 (or v1 pids) cgroup.
func cgroupPids(id string) []int {
	for _, dir := range []string{"/sys/fs/cgroup/unified", "/sys/fs/cgroup", "/sys/fs/cgroup/pids"} {
		data, err := os.ReadFile(filepath.Join(dir, "vetto-runtime", id, "cgroup.procs"))
		if err != nil {
			continue
		}
		var out []int
		for _, f := range strings.Fields(string(data)) {
			p, _ := strconv.Atoi(f)
			out = append(out, p)
		}
		return out
	}
	return nil
}

// Escapers — a setsid'd double fork, a daemon whose parent exited, a
// process that ignores SIGTERM, a fork storm against its pids limit — are
// all dead after delete, and the receipt counts them: what the cgroup
// held when it was killed, nothing remaining, cgroups removed, the pid
// namespace empty. Run with and without a pid namespace of its own (then
// only the cgroup holds them together).
func TestTeardownKillsEscapers(t *testing.T) {
	pids := int64(24)
	for _, tc := range []struct {
		name    string
		script  string
		atLeast int
		edit    func(*specs.Spec)
		// term: SIGTERM everyone first, as a polite caller would; only
		// processes that ignore it are left for the teardown.
		term bool
	}{
		{"setsid double fork", `setsid sh -c 'sh -c "sleep 1000 & sleep 1000" &' ; exec sleep 1000`, 3, nil, false},
		{"daemonized", `(sleep 1000 &) ; (sh -c 'sleep 1000 &' &) ; exec sleep 1000`, 3, nil, false},
		{"ignores SIGTERM", `trap "" TERM; sleep 1000 & sleep 1000 & exec sleep 1000`, 3, nil, true},
		// Forks until the pids limit refuses (busybox sh then exits,
		// leaving its children): the cgroup is full when it is killed.
		{"fork storm under a pids limit", `sh -c 'for i in $(seq 100); do sleep 1000 & done' 2>/dev/null & exec sleep 1000`, 15, func(s *specs.Spec) {
			s.Linux.Resources.Pids = &specs.LinuxPids{Limit: &pids}
		}, false},
		{"shared pid namespace", `setsid sh -c 'sleep 1000 &' ; (sleep 1000 &) ; exec sleep 1000`, 3, withoutNamespace(specs.PIDNamespace), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			audit := filepath.Join(e.tmp, "audit.jsonl")
			e.mustVetto("run", "-d", "-b", e.bundle([]string{"sh", "-c", tc.script}, tc.edit), id)
			var before []int
			deadline := time.Now().Add(10 * time.Second)
			for len(before) < tc.atLeast {
				if time.Now().After(deadline) {
					t.Fatalf("container has %v, want at least %d processes", before, tc.atLeast)
				}
				time.Sleep(20 * time.Millisecond)
				before = cgroupPids(id)
			}
			if tc.term {
				e.mustVetto("kill", "--all", id, "TERM")
				time.Sleep(100 * time.Millisecond)
				if n := len(cgroupPids(id)); n < tc.atLeast {
					t.Fatalf("SIGTERM killed processes that ignore it: %d left", n)
				}
			}
			e.mustVetto("--audit-log", audit, "delete", "--force", id)
			rc := lastReceipt(t, audit, id)
			if rc == nil {
				t.Fatal("no receipt in the audit log")
			}
			if rc.Killed < tc.atLeast || len(rc.Remaining) != 0 || !rc.CgroupRemoved || !rc.PidNamespaceGone || !rc.RelayStopped {
				t.Fatalf("receipt %+v, want killed >= %d and nothing left", rc, tc.atLeast)
			}
			if rc.Method != "cgroup.kill" && rc.Method != "sigkill-frozen" {
				t.Fatalf("receipt method %q", rc.Method)
			}
			for _, p := range before {
				if !waitDead(p, 2*time.Second) {
					t.Errorf("pid %d of the container survived delete", p)
				}
			}
		})
	}
}

// A teardown that cannot finish is never reported clean: a process the
// kill cannot reach in time (here one frozen in the v1 freezer, so
// SIGKILL stays pending) keeps the state, delete exits 125 naming
// TeardownIncomplete, state shows the receipt; once thawed, delete
// --force completes.
func TestTeardownIncompleteIsNotClean(t *testing.T) {
	freezer := "/sys/fs/cgroup/freezer"
	if _, err := os.Stat(filepath.Join(freezer, "cgroup.procs")); err != nil {
		t.Skip("no v1 freezer hierarchy on this host to hold a process")
	}
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sh", "-c", "sleep 1000 & exec sleep 1000"}, nil), id)
	// A sibling freezer cgroup the runtime does not manage: the process
	// moved there stays in the container's other cgroups and its pid
	// namespace, frozen.
	hold := filepath.Join(freezer, "vetto-test-hold-"+id)
	if err := os.Mkdir(hold, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(hold, "freezer.state"), []byte("THAWED"), 0o644)
		time.Sleep(100 * time.Millisecond)
		_ = os.Remove(hold)
	})
	// run -d returns once the init has exec'd sh; sh forks the child a
	// moment later.
	var victim int
	init := int(e.state(id)["pid"].(float64))
	for deadline := time.Now().Add(10 * time.Second); victim == 0; time.Sleep(20 * time.Millisecond) {
		for _, p := range cgroupPids(id) {
			if p != init {
				victim = p
			}
		}
		if victim == 0 && time.Now().After(deadline) {
			t.Fatal("no child to hold after 10 s")
		}
	}
	if err := os.WriteFile(filepath.Join(hold, "cgroup.procs"), []byte(strconv.Itoa(victim)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hold, "freezer.state"), []byte("FROZEN"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.vetto("delete", "--force", id)
	if r.code != 125 || !strings.Contains(r.stderr, "incomplete, state kept for delete --force") {
		t.Fatalf("delete with a frozen survivor: %s", r)
	}
	v := e.vettoState(id)
	rc, _ := v["receipt"].(map[string]any)
	if rc == nil || len(rc["remaining"].([]any)) == 0 {
		t.Fatalf("state after an incomplete teardown: %v", v)
	}
	if err := os.WriteFile(filepath.Join(hold, "freezer.state"), []byte("THAWED"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustVetto("delete", "--force", id)
	if !waitDead(victim, 5*time.Second) {
		t.Fatalf("pid %d survived", victim)
	}
}
