//go:build linux

package integration

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// strictSpec edits the default bundle into one that meets level strict:
// new pid/mount/network/ipc/uts namespaces (the default has them), a
// deny-by-default seccomp filter (vetto's own), no_new_privs, minimal
// capabilities, memory and pids limits, masked and read-only /proc paths
// (the default has them).
func strictSpec(s *specs.Spec) {
	sc := *vettoSeccomp
	s.Linux.Seccomp = &sc
	s.Process.NoNewPrivileges = true
	minimal := []string{"CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"}
	s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: minimal, Effective: minimal, Permitted: minimal}
	mem, pids := int64(256<<20), int64(64)
	if s.Linux.Resources == nil {
		s.Linux.Resources = &specs.LinuxResources{}
	}
	s.Linux.Resources.Memory = &specs.LinuxMemory{Limit: &mem}
	s.Linux.Resources.Pids = &specs.LinuxPids{Limit: &pids}
}

func withoutNamespace(t specs.LinuxNamespaceType) func(*specs.Spec) {
	return func(s *specs.Spec) {
		var keep []specs.LinuxNamespace
		for _, ns := range s.Linux.Namespaces {
			if ns.Type != t {
				keep = append(keep, ns)
			}
		}
		s.Linux.Namespaces = keep
	}
}

func edits(fs ...func(*specs.Spec)) func(*specs.Spec) {
	return func(s *specs.Spec) {
		for _, f := range fs {
			f(s)
		}
	}
}

// assertNothingLeft checks that a refused launch left no container.
func (e *env) assertNothingLeft(id string) {
	e.t.Helper()
	if r := e.vetto("list", "-q"); strings.TrimSpace(r.stdout) != "" {
		e.t.Errorf("containers left after a refused launch: %q", r.stdout)
	}
	if d := cgroupDirs(id); len(d) > 0 {
		e.t.Errorf("cgroups left after a refused launch: %v", d)
	}
}

func TestLevelStrictRefusesDowngrade(t *testing.T) {
	tests := []struct {
		name string
		edit func(*specs.Spec)
		args []string
		want string
	}{
		{"no network namespace", edits(strictSpec, withoutNamespace(specs.NetworkNamespace)), []string{"--security-level", "strict"}, "network (shared with the host) [strict.namespaces]"},
		{"host pid namespace", edits(strictSpec, withoutNamespace(specs.PIDNamespace)), []string{"--security-level", "strict"}, "pid (shared with the host) [strict.namespaces]"},
		{"no seccomp", edits(strictSpec, func(s *specs.Spec) { s.Linux.Seccomp = nil }), []string{"--security-level", "strict"}, "no seccomp filter [strict.seccomp.present]"},
		// 13.2: a filter that allows everything is no filter at strict.
		{"allow-by-default seccomp", edits(strictSpec, func(s *specs.Spec) {
			s.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActAllow}
		}), []string{"--security-level", "strict"}, "[strict.seccomp.default-deny]"},
		{"privileged capability", edits(strictSpec, func(s *specs.Spec) {
			s.Process.Capabilities.Bounding = append(s.Process.Capabilities.Bounding, "CAP_SYS_ADMIN")
		}), []string{"--security-level", "strict"}, "CAP_SYS_ADMIN"},
		{"no memory limit", edits(strictSpec, func(s *specs.Spec) { s.Linux.Resources.Memory = nil }), []string{"--security-level", "strict"}, "no memory limit [strict.limits.memory]"},
		// The bundle's own annotation raises the level; the caller's
		// default cannot lower it.
		{"annotation asks for strict", func(s *specs.Spec) {
			s.Annotations = map[string]string{"dev.vetto.level": "strict"}
		}, nil, "level strict refuses this launch"},
		// A caller's explicit "degraded" does not lower a bundle's strict.
		{"annotation beats a lower flag", func(s *specs.Spec) {
			s.Annotations = map[string]string{"dev.vetto.level": "strict"}
		}, []string{"--security-level", "degraded"}, "level strict refuses this launch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			args := append([]string{"run"}, tt.args...)
			args = append(args, "-b", e.bundle([]string{"true"}, tt.edit), id)
			r := e.vetto(args...)
			if r.code != 125 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("%s; want exit 125 naming %q", r, tt.want)
			}
			e.assertNothingLeft(id)
		})
	}
}

func TestLevelStrictRuns(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	r := e.vetto("run", "--security-level", "strict", "-b", e.bundle([]string{"sh", "-c", "grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status"}, strictSpec), id)
	if r.code != 0 {
		t.Fatalf("strict run: %s", r)
	}
	for _, want := range []string{"sandbox: linux tier=full net=none level=strict spec="} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks the launch line %q", r.stderr, want)
		}
	}
	if !strings.Contains(r.stdout, "Seccomp:\t2") || !strings.Contains(r.stdout, "NoNewPrivs:\t1") {
		t.Errorf("inside the container: %q; want Seccomp 2 and NoNewPrivs 1", r.stdout)
	}
}

// VETTO_* variables are not inputs: strict refuses to launch with one set,
// the other levels run and say they ignored it.
func TestPoisonedEnvironment(t *testing.T) {
	for _, level := range []string{"strict", "standard"} {
		t.Run(level, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			cmd := exec.Command(binary, "--root", e.root, "run", "--security-level", level, "-b", e.bundle([]string{"true"}, strictSpec), id)
			cmd.Env = append(os.Environ(), "VETTO_SEATBELT_MODE=none", "VETTO_NO_VERIFY=1")
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			switch level {
			case "strict":
				if code != 125 || !strings.Contains(string(out), "VETTO_NO_VERIFY, VETTO_SEATBELT_MODE") {
					t.Fatalf("exit %d, output %q; want 125 naming both variables", code, out)
				}
				e.assertNothingLeft(id)
			default:
				if code != 0 || !strings.Contains(string(out), "ignored environment variables") {
					t.Fatalf("exit %d, output %q; want a run that says it ignored them", code, out)
				}
			}
		})
	}
}

func TestOperatorFloor(t *testing.T) {
	tests := []struct {
		name  string
		floor string
		edit  func(*specs.Spec)
		args  []string
		code  int
		want  string
	}{
		{"min level", `min_level = "strict"`, nil, []string{"--security-level", "standard"}, 126, "the launch is at level standard"},
		{"host namespace", "[forbid]\nhost_namespaces = true", withoutNamespace(specs.NetworkNamespace), nil, 126, "forbid.host_namespaces: network (shared with the host) [floor.forbid.host-namespaces]"},
		{"no seccomp", "[forbid]\nno_seccomp = true", nil, nil, 126, "forbid.no_seccomp"},
		{"writable rootfs", "[forbid]\nwritable_rootfs = true", func(s *specs.Spec) { s.Root.Readonly = false }, nil, 126, "forbid.writable_rootfs"},
		{"forbidden capability", "[forbid]\ncapabilities = [\"CAP_KILL\"]", nil, nil, 126, "forbid.capabilities: CAP_KILL"},
		// 13.1: a bundle without process.capabilities is not a way around
		// forbid.capabilities — it gets none, and runs.
		{"unset capabilities are none", "[forbid]\ncapabilities = [\"CAP_SYS_ADMIN\"]\nprivileged = true", func(s *specs.Spec) { s.Process.Capabilities = nil }, nil, 0, "capabilities.unset"},
		// 13.3: --no-verify is a degradation the floor can forbid.
		{"no-verify", "[forbid]\nno_verify = true", nil, []string{"--no-verify", "--allow-degraded", "verify"}, 126, "[floor.forbid.no-verify]"},
		{"a floor the bundle meets", "min_level = \"standard\"\n[forbid]\nhost_namespaces = true", nil, nil, 0, ""},
		{"unknown key", "[forbid]\nhost_namespace = true", nil, nil, 1, "unknown keys: forbid.host_namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			floor := filepath.Join(e.tmp, "runtime.toml")
			if err := os.WriteFile(floor, []byte(tt.floor+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--config", floor, "run"}, tt.args...)
			args = append(args, "-b", e.bundle([]string{"true"}, tt.edit), id)
			r := e.vetto(args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("%s; want exit %d naming %q", r, tt.code, tt.want)
			}
			e.assertNothingLeft(id)
		})
	}
	t.Run("named file missing", func(t *testing.T) {
		e := newEnv(t)
		r := e.vetto("--config", filepath.Join(e.tmp, "nope.toml"), "run", "-b", e.bundle([]string{"true"}, nil), e.id())
		if r.code != 1 || !strings.Contains(r.stderr, "nope.toml") {
			t.Fatalf("%s; want exit 1 naming the missing file", r)
		}
	})
}

func TestDryRun(t *testing.T) {
	e := newEnv(t)
	for _, cmd := range []string{"create", "run"} {
		id := e.id()
		r := e.mustVetto(cmd, "--dry-run", "-b", e.bundle([]string{"true"}, nil), id)
		if !strings.Contains(r.stdout, "NOT ENFORCED") || !strings.Contains(r.stdout, "tier=unknown(dry-run)") {
			t.Errorf("%s --dry-run printed %q; want the plan marked NOT ENFORCED with no tier", cmd, r.stdout)
		}
		e.assertNothingLeft(id)
		if _, err := os.Stat(filepath.Join(e.root, id)); err == nil {
			t.Errorf("%s --dry-run created state", cmd)
		}
	}
	// A dry run refuses what the real launch would refuse.
	r := e.vetto("create", "--dry-run", "--security-level", "strict", "-b", e.bundle([]string{"true"}, nil), e.id())
	if r.code != 125 {
		t.Fatalf("strict dry run of a standard bundle: %s; want 125", r)
	}
}

// A feature this build cannot enforce (kernel memory limits: libcontainer
// drops them) is refused unless the level accepts the degradation, which
// is then named and recorded. (Landlock's own ABI negotiation is in
// landlock_test.go.) A network allowlist was such a feature until the
// egress relay: it now runs at every level, with no degradation, and its
// annotations are checked like any input.
func TestDegradedFeature(t *testing.T) {
	kernelMemory := func(s *specs.Spec) {
		v := int64(64 << 20)
		if s.Linux.Resources == nil {
			s.Linux.Resources = &specs.LinuxResources{}
		}
		s.Linux.Resources.Memory = &specs.LinuxMemory{KernelTCP: &v}
	}
	allowlist := func(rules string) func(*specs.Spec) {
		return func(s *specs.Spec) {
			s.Annotations = map[string]string{"dev.vetto.net": "allowlist"}
			if rules != "" {
				s.Annotations["dev.vetto.net.allow"] = rules
			}
		}
	}
	tests := []struct {
		name     string
		args     []string
		edit     func(*specs.Spec)
		code     int
		want     string
		degraded string // the one degradation state records; "" for none
	}{
		{"standard refuses", nil, kernelMemory, 125, "--allow-degraded=limits", ""},
		{"standard with opt-in", []string{"--allow-degraded", "limits"}, kernelMemory, 0, "degraded: limits", "limits:"},
		{"degraded level", []string{"--security-level", "degraded"}, kernelMemory, 0, "degraded: limits", "limits:"},
		{"strict refuses even with opt-in", []string{"--security-level", "strict", "--allow-degraded", "limits"}, edits(strictSpec, kernelMemory), 125, "", ""},
		{"unknown feature", []string{"--allow-degraded", "everything"}, kernelMemory, 1, "unknown feature", ""},
		{"allowlist runs with the relay", nil, allowlist(`["example.com"]`), 0, "net=allowlist", ""},
		{"allowlist at strict", []string{"--security-level", "strict"}, edits(strictSpec, allowlist(`["example.com:443"]`)), 0, "net=allowlist", ""},
		{"allowlist without rules", nil, allowlist(""), 1, "[network.annotation]", ""},
		{"allowlist with an IP literal", nil, allowlist(`["169.254.169.254"]`), 1, "[network.annotation]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			args := append([]string{"create"}, tt.args...)
			args = append(args, "-b", e.bundle([]string{"true"}, tt.edit), id)
			r := e.vetto(args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("%s; want exit %d with %q", r, tt.code, tt.want)
			}
			if tt.code != 0 {
				e.assertNothingLeft(id)
				return
			}
			st := e.state(id)
			v := st["vetto"].(map[string]any)
			d, _ := v["degraded"].([]any)
			switch {
			case tt.degraded == "" && len(d) != 0:
				t.Errorf("state vetto.degraded = %v, want none", d)
			case tt.degraded != "" && (len(d) != 1 || !strings.HasPrefix(d[0].(string), tt.degraded)):
				t.Errorf("state vetto.degraded = %v, want the %s degradation", d, tt.degraded)
			}
			e.mustVetto("delete", "--force", id)
		})
	}
}

var (
	faultOnce   sync.Once
	faultBinary string
	faultErr    error
)

// buildFaultBinary builds vetto-runtime with the vetto_faultinject tag:
// its backend can be told to build something other than the frozen spec.
func buildFaultBinary(t *testing.T) string {
	t.Helper()
	faultOnce.Do(func() {
		// Under the harness's temporary directory, removed when the
		// test binary exits: several tests share the one build.
		dir, err := os.MkdirTemp(harnessTmp, "vetto-fault-")
		if err != nil {
			faultErr = err
			return
		}
		faultBinary = filepath.Join(dir, "vetto-runtime-fault")
		out, err := buildRuntime(faultBinary, "vetto_faultinject")
		if err != nil {
			faultErr = err
			faultBinary = string(out)
		}
	})
	if faultErr != nil {
		t.Fatalf("build fault-injection binary: %v: %s", faultErr, faultBinary)
	}
	return faultBinary
}

// The pre-launch verification catches a backend that built something other
// than the frozen spec, destroys the container and exits 125.
func TestPreLaunchDetectsFaults(t *testing.T) {
	fb := buildFaultBinary(t)
	tests := []struct {
		fault, want string
	}{
		{"host-netns", "namespace/network: FAIL"},
		// More privilege than the spec asked for; less is a recorded note
		// (TestLessPrivilegeRuns).
		{"add-cap:CAP_SYS_ADMIN", "capabilities/CapEff: FAIL"},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			b := e.bundle([]string{"true"}, nil)
			cmd := exec.Command(fb, "--root", e.root, "run", "-b", b, id)
			cmd.Env = append(os.Environ(), "TESTONLY_VETTO_FAULT="+tt.fault)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			errors.As(err, &ee)
			if ee == nil || ee.ExitCode() != 125 || !strings.Contains(string(out), tt.want) {
				t.Fatalf("fault %s: %v, output %q; want exit 125 with %q", tt.fault, err, out, tt.want)
			}
			e.assertNothingLeft(id)
			// The real binary has no such knob: the same variable is inert.
			cmd = exec.Command(binary, "--root", e.root, "run", "-b", b, e.id())
			cmd.Env = append(os.Environ(), "TESTONLY_VETTO_FAULT="+tt.fault)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("production binary with the fault variable: %v: %s", err, out)
			}
		})
	}
}

// The audit log has every transition in order, each with the spec hash
// that state reports.
func TestAuditLog(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	audit := filepath.Join(e.tmp, "audit.jsonl")
	e.mustVetto("--audit-log", audit, "create", "-b", e.bundle([]string{"sleep", "100"}, nil), id)
	hash := e.state(id)["vetto"].(map[string]any)["specHash"].(string)
	if len(hash) != 64 {
		t.Fatalf("state specHash %q, want 64 hex", hash)
	}
	e.mustVetto("--audit-log", audit, "start", id)
	e.mustVetto("kill", id, "KILL")
	e.waitStatus(id, "stopped")
	e.mustVetto("--audit-log", audit, "delete", id)

	f, err := os.Open(audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev struct {
			ID, Spec, Event, From, To, Reason string
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if ev.ID != id || ev.Spec != hash {
			t.Errorf("audit line %q: want id %s and spec %s", sc.Text(), id, hash)
		}
		if ev.Event == "verdicts" && ev.Reason == "monitor" {
			// The monitor's rounds, from 100 ms after start: how many
			// fall before the kill is the host's timing, not the order.
			continue
		}
		if ev.Event == "transition" {
			got = append(got, ev.From+">"+ev.To)
		} else {
			got = append(got, ev.Event)
		}
	}
	want := []string{"Requested>Validated", "Validated>Compiled", "Compiled>Constructed", "verdicts",
		"Constructed>Verified", "Verified>Launchable", "launch", "Launchable>Running",
		"verdicts", "Running>VerifiedRuntime", "VerifiedRuntime>Terminating", "receipt", "Terminating>Terminated"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("audit events\n got %v\nwant %v", got, want)
	}
}

// A frozen spec changed on disk between create and start is caught by its
// hash: start kills the container and fails with 125, and delete does not
// run the tampered spec's poststop hooks.
func TestSpecTamperedAfterCreate(t *testing.T) {
	e := newEnv(t)
	id := e.id()
	marker := filepath.Join(e.tmp, "poststop-ran")
	e.mustVetto("create", "-b", e.bundle([]string{"sleep", "100"}, nil), id)
	editSpecFile(t, filepath.Join(e.root, id, "config.json"), func(s *specs.Spec) {
		s.Hooks = &specs.Hooks{Poststop: []specs.Hook{{Path: "/bin/sh", Args: []string{"sh", "-c", "touch " + marker}}}}
	})
	r := e.vetto("start", id)
	if r.code != 125 || !strings.Contains(r.stderr, "changed after create") {
		t.Fatalf("start after tampering: %s; want 125 'changed after create'", r)
	}
	e.waitStatus(id, "stopped")
	if v := e.state(id)["vetto"].(map[string]any)["state"]; v != "SpecMismatch" {
		t.Errorf("vetto state %v, want SpecMismatch", v)
	}
	r = e.mustVetto("delete", id)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("delete ran a poststop hook planted in the tampered spec")
	}
	if !strings.Contains(r.stderr, "not running poststop hooks") {
		t.Errorf("delete stderr %q; want it to say the hooks were skipped", r.stderr)
	}
}
