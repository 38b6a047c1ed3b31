//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// verdicts is `verify --format json`.
type verdicts struct {
	ID           string          `json:"id"`
	Verification string          `json:"verification"`
	Results      []verdictResult `json:"results"`
}

type verdictResult struct {
	Check    string `json:"check"`
	Verdict  string `json:"verdict"`
	Evidence string `json:"evidence"`
	Found    string `json:"found"`
}

func (e *env) verify(id string) (verdicts, result) {
	e.t.Helper()
	r := e.vetto("verify", "--format", "json", id)
	var v verdicts
	if r.stdout != "" {
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			e.t.Fatalf("verify %s: %v: %s", id, err, r)
		}
	}
	return v, r
}

// verifyJSON runs verify and returns its verdicts, whatever its exit.
func (e *env) verifyJSON(id string) verdicts {
	e.t.Helper()
	v, r := e.verify(id)
	if r.stdout == "" {
		e.t.Fatalf("verify %s printed no verdicts: %s", id, r)
	}
	return v
}

func (v verdicts) has(check string) bool { return v.verdict(check) != "" }

// verdict is the verdict of check, "" when verify did not run it.
func (v verdicts) verdict(check string) string {
	for _, r := range v.Results {
		if r.Check == check {
			return r.Verdict
		}
	}
	return ""
}

// found is what check found.
func (v verdicts) found(check string) string {
	for _, r := range v.Results {
		if r.Check == check {
			return r.Found
		}
	}
	return ""
}

// failing lists the checks whose verdict is FAIL.
func (v verdicts) failing() []string {
	var out []string
	for _, r := range v.Results {
		if r.Verdict == "FAIL" {
			out = append(out, r.Check)
		}
	}
	return out
}

// vettoState is the "vetto" part of `state`.
// poststart is the verdicts start recorded (vetto.json in the state
// directory): the canaries run once, there, before the program.
func (e *env) poststart(id string) verdicts {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, id, "vetto.json"))
	if err != nil {
		e.t.Fatalf("read the record of %s: %v", id, err)
	}
	var rec struct {
		Poststart         []verdictResult `json:"poststart"`
		Verdicts          []verdictResult `json:"verdicts"`
		VerdictsAreLaunch bool            `json:"verdictsAreLaunch"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		e.t.Fatalf("record of %s: %v", id, err)
	}
	if rec.VerdictsAreLaunch { // no verify since: not stored twice
		return verdicts{ID: id, Results: rec.Verdicts}
	}
	return verdicts{ID: id, Results: rec.Poststart}
}

// result is the verdict of check among v, or nil.
func (v verdicts) result(check string) *verdictResult {
	for i := range v.Results {
		if v.Results[i].Check == check {
			return &v.Results[i]
		}
	}
	return nil
}

func (e *env) vettoState(id string) map[string]any {
	e.t.Helper()
	v, _ := e.state(id)["vetto"].(map[string]any)
	return v
}

// hostSecret makes a host directory holding a file with an unguessable
// token, to bind into a container at /secret.
func hostSecret(t *testing.T) (dir, token string) {
	t.Helper()
	dir = t.TempDir()
	token = "vetto-test-secret-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, token
}

func bind(src, dst string, ro bool) specs.Mount {
	opts := []string{"rbind", "nosuid", "nodev"}
	if ro {
		opts = append(opts, "ro")
	}
	return specs.Mount{Destination: dst, Type: "bind", Source: src, Options: opts}
}

// landlockIntent is a dev.vetto.landlock annotation that lets the process
// write only under /tmp and read and execute everywhere: the policy's
// intent, which the write canaries check the container against. It
// handles every fs right the host enforces (llAllFS).
var landlockIntent = fmt.Sprintf(`{"ruleset":{"handledAccessFS":%d},"rules":{"pathBeneath":[{"allowedAccess":258,"paths":["/tmp"]},{"allowedAccess":13,"paths":["/"]}]}}`, llAllFS)

// weakened are bundles each of which breaks exactly one boundary its own
// annotations ask for, with the check that must catch it; the protected
// edit is the same bundle with the boundary in place, which must pass.
func weakened(t *testing.T) []struct {
	// check is the poststart check the weakness breaks; verifyCheck the
	// one verify judges it by later, from the host (the canaries run
	// once, before the program).
	name, check, verifyCheck string
	weak, protected          func(*specs.Spec)
	allowDegradedAtStd       string
	// fault is the fault injection that weakens the launch, where the
	// bundle alone cannot (a mask the spec has but the backend drops:
	// the evaluator refuses a bundle that plainly lacks it).
	fault string
} {
	secret, _ := hostSecret(t)
	annotate := func(s *specs.Spec, k, v string) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[k] = v
	}
	return []struct {
		name, check, verifyCheck string
		weak, protected          func(*specs.Spec)
		allowDegradedAtStd       string
		fault                    string
	}{
		{
			name:        "no mask on the canary path",
			check:       "P3/masked-read/secret/token",
			verifyCheck: "P6/masked/secret/token",
			fault:       "no-mask:/secret/token",
			weak: func(s *specs.Spec) {
				s.Mounts = append(s.Mounts, bind(secret, "/secret", true))
				annotate(s, "dev.vetto.masked", `["/secret/token"]`)
				s.Linux.MaskedPaths = append(s.Linux.MaskedPaths, "/secret/token")
			},
			protected: func(s *specs.Spec) {
				s.Mounts = append(s.Mounts, bind(secret, "/secret", true))
				annotate(s, "dev.vetto.masked", `["/secret/token"]`)
				s.Linux.MaskedPaths = append(s.Linux.MaskedPaths, "/secret/token")
			},
		},
		{
			name:        "host network",
			check:       "P3/loopback-connect",
			verifyCheck: "P3/network-namespace",
			weak: func(s *specs.Spec) {
				withoutNamespace(specs.NetworkNamespace)(s)
				annotate(s, "dev.vetto.net", "none")
			},
			protected: func(s *specs.Spec) { annotate(s, "dev.vetto.net", "none") },
		},
	}
}

// At degraded, each weakened bundle runs, and the verdict names exactly
// the check that its weakness breaks; with the boundary in place the same
// check passes.
func TestVerifyCanaryFailsAtDegraded(t *testing.T) {
	for _, tc := range weakened(t) {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			weak := e.id()
			e.fault = tc.fault
			e.mustVetto("run", "-d", "--security-level", "degraded", "-b", e.bundle([]string{"sleep", "100"}, tc.weak), weak)
			st := e.vettoState(weak)
			if st["verification"] != "FAIL" || st["state"] == "VerifiedRuntime" || !strings.Contains(fmt.Sprint(st["degraded"]), "poststart FAIL: "+tc.check+": FAIL") {
				t.Fatalf("weakened bundle at degraded: state %v, want verification FAIL of %s, recorded, and not VerifiedRuntime", st, tc.check)
			}
			v, r := e.verify(weak)
			if r.code == 0 {
				t.Fatalf("verify of a weakened container exited 0: %s", r)
			}
			// verify's own check of the weakness, and what the canaries
			// found at launch, carried.
			if got, want := strings.Join(v.failing(), ","), tc.verifyCheck+",P3/at-launch"; got != want {
				t.Fatalf("failing checks %v, want exactly %v; %s", got, want, r.stdout)
			}
			// degraded records and leaves it running.
			e.waitStatus(weak, "running")
			e.mustVetto("delete", "--force", weak)
			e.fault = ""

			good := e.id()
			e.mustVetto("run", "-d", "--security-level", "degraded", "-b", e.bundle([]string{"sleep", "100"}, tc.protected), good)
			v, r = e.verify(good)
			if r.code != 0 || len(v.failing()) != 0 {
				t.Fatalf("protected bundle: %s", r)
			}
			for check, got := range map[string]*verdictResult{tc.check: e.poststart(good).result(tc.check), tc.verifyCheck: v.result(tc.verifyCheck)} {
				if got == nil || got.Verdict != "PASS" || got.Evidence != "HOST_FACT" {
					t.Fatalf("protected bundle: %s is %+v, want PASS on HOST_FACT", check, got)
				}
			}
			e.mustVetto("delete", "--force", good)
		})
	}
}

// At standard the same weakened bundles never get to run their process
// for longer than the verification window: run exits 125, the container
// is killed and gone, and the process's own work (a marker it keeps
// writing) stops.
func TestVerifyWeakenedKilledAtStandard(t *testing.T) {
	for _, tc := range weakened(t) {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			e.fault = tc.fault
			args := []string{"run", "-b", e.bundle([]string{"sleep", "100"}, tc.weak)}
			if tc.allowDegradedAtStd != "" {
				args = append(args, "--allow-degraded", tc.allowDegradedAtStd)
			}
			audit := filepath.Join(e.tmp, "audit.jsonl")
			start := time.Now()
			r := e.vetto(append([]string{"--audit-log", audit}, append(args, id)...)...)
			took := time.Since(start)
			if r.code != 125 || !strings.Contains(r.stderr, tc.check+": FAIL") {
				t.Fatalf("run of a weakened bundle at standard: %s", r)
			}
			if took > 20*time.Second {
				t.Fatalf("run took %s: the process ran past verification", took)
			}
			e.assertNothingLeft(id)
			log, err := os.ReadFile(audit)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`"to":"PreLaunchFailed"`, `"event":"receipt"`} {
				if !strings.Contains(string(log), want) {
					t.Fatalf("audit log lacks %s:\n%s", want, log)
				}
			}

			// create alone: the canaries are judged there, so create
			// itself refuses with 125, naming the check, and leaves
			// nothing: the process never ran.
			split := e.id()
			create := []string{"create", "-b", e.bundle([]string{"sleep", "100"}, tc.weak)}
			if tc.allowDegradedAtStd != "" {
				create = append(create, "--allow-degraded", tc.allowDegradedAtStd)
			}
			if r := e.vetto(append(create, split)...); r.code != 125 || !strings.Contains(r.stderr, tc.check+": FAIL") || !strings.Contains(r.stderr, "the process never ran") {
				t.Fatalf("create of a weakened bundle at standard: %s", r)
			}
			e.assertNothingLeft(split)

			// And with the boundary in place the run succeeds, verified.
			ok := e.id()
			e.fault = ""
			args = []string{"run", "-d", "-b", e.bundle([]string{"sleep", "100"}, tc.protected)}
			if tc.allowDegradedAtStd != "" {
				args = append(args, "--allow-degraded", tc.allowDegradedAtStd)
			}
			e.mustVetto(append(args, ok)...)
			if st := e.vettoState(ok); st["state"] != "VerifiedRuntime" || st["verification"] != "PASS" {
				t.Fatalf("protected bundle at standard: %v", st)
			}
			e.mustVetto("delete", "--force", ok)
		})
	}
}

// A default container reaches VerifiedRuntime, and verify passes every
// check on host evidence; with --no-verify it never claims it.
func TestVerifyDefaultPasses(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "100"}, nil), id)
	if st := e.vettoState(id); st["state"] != "VerifiedRuntime" || st["verification"] != "PASS" {
		t.Fatalf("state %v", st)
	}
	v, r := e.verify(id)
	if r.code != 0 || v.Verification != "PASS" {
		t.Fatalf("verify: %s", r)
	}
	seen := map[string]bool{}
	for _, res := range v.Results {
		if res.Verdict != "PASS" || res.Evidence != "HOST_FACT" {
			t.Errorf("%+v", res)
		}
		seen[strings.SplitN(res.Check, "/", 2)[0]] = true
	}
	for _, p := range []string{"P1", "P2", "P3", "P4", "P6"} {
		if !seen[p] {
			t.Errorf("verify ran no %s check: %s", p, r.stdout)
		}
	}
	e.mustVetto("delete", "--force", id)

	nv := e.id()
	e.mustVetto("run", "-d", "--no-verify", "--allow-degraded", "verify", "-b", e.bundle([]string{"sleep", "100"}, nil), nv)
	st := e.vettoState(nv)
	if st["state"] != "Running" || !strings.Contains(st["launchLine"].(string), "--no-verify") {
		t.Fatalf("--no-verify: %v", st)
	}
	// verify confirms a verified launch and never promotes an unverified
	// one: whatever it finds now, the launch recorded no canary verdicts
	// (not on the second verify either, once its own verdicts are stored).
	for i := 1; i <= 2; i++ {
		e.verify(nv) // its own checks may pass; the container is not verified by them
		if st := e.vettoState(nv); st["state"] == "VerifiedRuntime" || st["verification"] == "PASS" {
			t.Fatalf("after verify #%d of a --no-verify launch: %v", i, st)
		}
	}
	e.mustVetto("delete", "--force", nv)
	if r := e.vetto("run", "--no-verify", "--security-level", "strict", "-b", e.bundle([]string{"true"}, strictSpec), e.id()); r.code != 125 {
		t.Fatalf("--no-verify at strict: %s", r)
	}
}

// Drift after launch: the init moved out of its cgroup (P2), or a process
// moved out of the cgroup while it stays in the container's pid namespace
// (P4). verify fails that check, exits 125 and kills the container — the
// escaped process included.
func TestVerifyDriftKills(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check []string
		pick  func(init int, procs []int) int
	}{
		// The init outside its cgroup is also a process of the namespace
		// outside the cgroup: P2 and P4 both see it.
		{"init left its cgroup", []string{"P2/cgroup/unified", "P4/contained"}, func(init int, _ []int) int { return init }},
		{"child left the cgroup", []string{"P4/contained"}, func(init int, procs []int) int {
			for _, p := range procs {
				if p != init {
					return p
				}
			}
			return 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unified := "/sys/fs/cgroup/unified"
			if _, err := os.Stat(filepath.Join(unified, "cgroup.procs")); err != nil {
				unified = "/sys/fs/cgroup"
			}
			e := newEnv(t)
			// verify's own catch: no monitor to catch it first
			// (TestMonitorKillsOnDrift is the monitor's).
			e.fault = "no-monitor"
			id := e.id()
			e.mustVetto("run", "-d", "-b", e.bundle([]string{"sh", "-c", "sleep 100 & exec sleep 101"}, nil), id)
			dir := filepath.Join(unified, "vetto-runtime", id)
			init := int(e.state(id)["pid"].(float64))
			var procs []int
			deadline := time.Now().Add(5 * time.Second)
			for len(procs) < 2 && time.Now().Before(deadline) {
				procs = nil
				data, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
				for _, f := range strings.Fields(string(data)) {
					p, _ := strconv.Atoi(f)
					procs = append(procs, p)
				}
				time.Sleep(20 * time.Millisecond)
			}
			victim := tc.pick(init, procs)
			if victim == 0 {
				t.Fatalf("no process to move in %v", procs)
			}
			if err := os.WriteFile(filepath.Join(unified, "cgroup.procs"), []byte(strconv.Itoa(victim)), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = killPid(victim) })
			v, r := e.verify(id)
			if r.code != 125 {
				t.Fatalf("verify after drift: %s", r)
			}
			if got := v.failing(); strings.Join(got, ",") != strings.Join(tc.check, ",") {
				t.Fatalf("failing %v, want %v: %s", got, tc.check, r.stdout)
			}
			if st := e.vettoState(id); st["state"] != "PostLaunchFailed" && st["state"] != "DriftDetected" {
				t.Fatalf("state after drift: %v", st)
			}
			if !waitDead(victim, 5*time.Second) {
				t.Fatalf("pid %d, moved out of the cgroup, survived the kill", victim)
			}
			e.mustVetto("delete", "--force", id)
		})
	}
}

func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// waitDead reports whether pid is gone (or a zombie) within limit.
func waitDead(pid int, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if i := strings.LastIndexByte(string(data), ')'); i > 0 && len(data) > i+2 && (data[i+2] == 'Z' || data[i+2] == 'X') {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// P7: limits read back from the cgroup. An audited `update` is what
// verify then expects; a limit changed behind the runtime's back (here a
// write to pids.max) fails exactly P7 and kills the container.
func TestVerifyLimitsDrift(t *testing.T) {
	e := newEnv(t)
	e.fault = "no-monitor" // verify's catch, not the monitor's
	id := e.id()
	limit := int64(100)
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
		s.Linux.Resources.Pids = &specs.LinuxPids{Limit: &limit}
	}), id)
	e.mustVetto("update", "--pids-limit", "200", id)
	if v, r := e.verify(id); r.code != 0 || v.Verification != "PASS" {
		t.Fatalf("verify after update: %s", r)
	}
	var pidsMax string
	for _, dir := range []string{"/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if p := filepath.Join(dir, "vetto-runtime", id, "pids.max"); fileExists(p) {
			pidsMax = p
			break
		}
	}
	if pidsMax == "" {
		t.Fatal("no pids.max for the container")
	}
	e.changedBehindTheRuntime(id, pidsMax, "300", "P7/limits/pids")
}

// changedBehindTheRuntime writes value to the cgroup file as no command
// of the runtime would, and wants verify to fail on check alone (125), the
// container stopped for it; it then deletes the container.
func (e *env) changedBehindTheRuntime(id, file, value, check string) {
	e.t.Helper()
	if err := os.WriteFile(file, []byte(value), 0o644); err != nil {
		e.t.Fatal(err)
	}
	v, r := e.verify(id)
	if r.code != 125 || strings.Join(v.failing(), ",") != check {
		e.t.Fatalf("verify after %s was set to %s behind the runtime: %s; want 125, %s FAIL", file, value, r, check)
	}
	e.waitStatus(id, "stopped")
	e.mustVetto("delete", id)
}

// update --memory 0 is runc's "leave the memory limit as it is", and
// --pids-limit 0 writes pids.max 1 (libcontainer's mapping). 60620e7
// recorded both as 0 — no limit — so the next verify of a strict
// container no longer checked either while the cgroup kept them, and a
// write behind the runtime's back that lifted the memory limit went
// unseen. The record now holds what the cgroup was given.
func TestUpdateZeroKeepsLimitsVerified(t *testing.T) {
	e := newEnv(t)
	e.fault = "no-monitor" // verify's catch, not the monitor's
	id := e.id()
	e.mustVetto("run", "-d", "--security-level", "strict", "-b", e.bundle([]string{"sleep", "100"}, strictSpec), id)
	e.mustVetto("update", "--memory", "0", "--pids-limit", "0", id)
	v, r := e.verify(id)
	if r.code != 0 || v.Verification != "PASS" || v.verdict("P7/limits/memory") != "PASS" || v.verdict("P7/limits/pids") != "PASS" ||
		!strings.Contains(r.stdout, "pids.max = 1") {
		t.Fatalf("verify after update --memory 0 --pids-limit 0: %s; want both limits checked, pids.max 1", r)
	}
	var memFile, value string
	for _, f := range []struct{ path, value string }{
		{"/sys/fs/cgroup/memory/vetto-runtime/" + id + "/memory.limit_in_bytes", "-1"},
		{"/sys/fs/cgroup/vetto-runtime/" + id + "/memory.max", "max"},
	} {
		if fileExists(f.path) {
			memFile, value = f.path, f.value
			break
		}
	}
	if memFile == "" {
		t.Fatal("no memory limit file for the container")
	}
	e.changedBehindTheRuntime(id, memFile, value, "P7/limits/memory")
}

// A spec that asks for no memory limit (-1 of its own, as a client may
// write "unlimited") removed nothing. 60620e7 read the -1 as a limit an
// update had removed: verify and the monitor said P7/limits/memory
// UNAVAILABLE "removed by an update" and the container was never
// verified (INCONCLUSIVE) — an ordinary job that could not pass.
func TestSpecWithoutLimitIsNotARemoval(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
		unlimited, pids := int64(-1), int64(64)
		s.Linux.Resources.Memory = &specs.LinuxMemory{Limit: &unlimited}
		s.Linux.Resources.Pids = &specs.LinuxPids{Limit: &pids}
	}), id)
	v, r := e.verify(id)
	if r.code != 0 || v.Verification != "PASS" || v.verdict("P7/limits/pids") != "PASS" || strings.Contains(r.stdout, "removed by an update") {
		t.Fatalf("verify of a container whose spec set no memory limit: %s; want PASS, no removal", r)
	}
	e.mustVetto("delete", "-f", id)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// A mount left writable where the policy says read-only is still not
// writable: Landlock, applied by the shim, is the second wall, and the
// write canary — made by the shim in the domain the program inherits —
// finds it holding (PASS, from the host's view of the mount) rather than
// trusting the mount table. Without the shim the workload could write.
func TestVerifyLandlockHoldsBehindWritableMount(t *testing.T) {
	e := newEnv(t)
	data := t.TempDir()
	id := e.id()
	e.mustVetto("run", "-d", "-b", e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
		s.Process.NoNewPrivileges = true
		s.Mounts = append(s.Mounts, bind(data, "/data", false))
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations["dev.vetto.landlock"] = landlockIntent
	}), id)
	defer e.mustVetto("delete", "--force", id)
	if st := e.vettoState(id); st["verification"] != "PASS" || st["state"] != "VerifiedRuntime" {
		t.Fatalf("state %v, want VerifiedRuntime", st)
	}
	if _, r := e.verify(id); r.code != 0 {
		t.Fatalf("verify: %s", r)
	}
	if res := e.poststart(id).result("P3/write-outside/data"); res == nil || res.Verdict != "PASS" || res.Evidence != "HOST_FACT" {
		t.Fatalf("P3/write-outside/data at poststart: %+v, want PASS on HOST_FACT", res)
	}
	if r := e.vetto("exec", id, "sh", "-c", "echo x > /data/f"); r.code == 0 {
		t.Fatalf("the workload wrote through the writable mount: %s", r)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Fatalf("the host directory behind /data got %v", entries)
	}
}

// A host actor moving the init out of a v1 controller's cgroup between
// create and start (what the OCI suite's delete_only_create_resources
// does with pids): where that controller holds none of the container's
// limits nothing it asked for is lost, so P2 says PARTIAL and the
// container runs; where it holds one (a pids limit), P2 fails and start
// kills it (125).
func TestVerifyMoveOutOfUnlimitedController(t *testing.T) {
	if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err != nil {
		t.Skip("no cgroup v1 pids hierarchy here: on pure v2 every controller is the unified cgroup, a boundary")
	}
	for _, limited := range []bool{false, true} {
		t.Run(map[bool]string{false: "no pids limit", true: "pids limit"}[limited], func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			e.mustVetto("create", "-b", e.bundle([]string{"sleep", "100"}, func(s *specs.Spec) {
				if limited {
					n := int64(50)
					s.Linux.Resources.Pids = &specs.LinuxPids{Limit: &n}
				}
			}), id)
			defer e.vetto("delete", "--force", id)
			elsewhere := filepath.Join("/sys/fs/cgroup/pids", "vetto-test-"+id)
			if err := os.Mkdir(elsewhere, 0o755); err != nil {
				t.Fatal(err)
			}
			defer func() {
				e.vetto("delete", "--force", id)
				_ = os.Remove(elsewhere)
			}()
			init := strconv.Itoa(int(e.state(id)["pid"].(float64)))
			if err := os.WriteFile(filepath.Join(elsewhere, "cgroup.procs"), []byte(init), 0o644); err != nil {
				t.Fatal(err)
			}
			r := e.vetto("start", id)
			if limited {
				if r.code != 125 || !strings.Contains(r.stderr, "P2/cgroup/pids: FAIL") {
					t.Fatalf("start after a move out of the limiting pids cgroup: %s; want 125 naming P2/cgroup/pids", r)
				}
				return
			}
			if r.code != 0 {
				t.Fatalf("start after a move out of an unlimited pids cgroup: %s", r)
			}
			if st := e.vettoState(id); st["verification"] != "INCONCLUSIVE" {
				t.Fatalf("state %v, want verification INCONCLUSIVE (P2 PARTIAL)", st)
			}
		})
	}
}
