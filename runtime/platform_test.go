package runtime

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// fakePlatform is a backend that translates for a sandbox of its own (as
// darwin and windows do): its translation's account is gaps, and its
// containers report the verdicts pre, post and onDemand.
type fakePlatform struct {
	*fakeBackend
	gaps               launch.Platform
	pre, post, demand  []hooks.Result
	demandErr          error
	translatedRequests int
}

// fakeVerifying is a fakePlatform container.
type fakeVerifying struct {
	*fakeContainer
	p *fakePlatform
}

func (p *fakePlatform) Platform(req *CreateRequest) (*launch.Platform, error) {
	p.translatedRequests++
	g := p.gaps
	return &g, nil
}

func (p *fakePlatform) Create(req *CreateRequest) (Container, Foreground, error) {
	c, fg, err := p.fakeBackend.Create(req)
	if err != nil {
		return nil, nil, err
	}
	return &fakeVerifying{fakeContainer: c.(*fakeContainer), p: p}, fg, nil
}

func (p *fakePlatform) Load(dir, id string) (Container, error) {
	c, err := p.fakeBackend.Load(dir, id)
	if err != nil {
		return nil, err
	}
	return &fakeVerifying{fakeContainer: c.(*fakeContainer), p: p}, nil
}

func (c *fakeVerifying) PreLaunch() []hooks.Result  { return c.p.pre }
func (c *fakeVerifying) PostLaunch() []hooks.Result { return c.p.post }
func (c *fakeVerifying) OnDemand() ([]hooks.Result, error) {
	return c.p.demand, c.p.demandErr
}

var (
	_ PlatformBackend    = (*fakePlatform)(nil)
	_ VerifyingContainer = (*fakeVerifying)(nil)
)

func unavailable(check string) hooks.Result {
	return hooks.Result{Check: check, Verdict: hooks.Unavailable, Evidence: hooks.HostFact, Feature: string(FeatureVerify), Expected: "x", Found: "EPERM"}
}

// newPlatformRuntime is a core without Linux host facts over a fake
// platform backend, with an audit log.
func newPlatformRuntime(t *testing.T, p *fakePlatform) *Runtime {
	t.Helper()
	r, err := New(filepath.Join(t.TempDir(), "root"), p, nil, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	r.Store.AuditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	return r
}

// strictBundle edits writeBundle's spec into one that meets every strict
// rule, so that only the platform's facts can refuse it.
func strictBundle(s *specs.Spec) {
	limit := func(v int64) *int64 { return &v }
	caps := []string{"CAP_KILL"}
	s.Root.Readonly = true
	s.Process.NoNewPrivileges = true
	s.Process.Capabilities = &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}
	s.Mounts = []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts"},
		{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"ro"}},
	}
	s.Linux = &specs.Linux{
		Namespaces: []specs.LinuxNamespace{{Type: "pid"}, {Type: "mount"}, {Type: "network"}, {Type: "ipc"}, {Type: "uts"}},
		Seccomp:    &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{{Names: []string{"read", "write"}, Action: specs.ActAllow}}},
		Resources: &specs.LinuxResources{
			Memory: &specs.LinuxMemory{Limit: limit(1 << 28)}, Pids: &specs.LinuxPids{Limit: limit(64)},
			Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
		},
		MaskedPaths:   []string{"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware"},
		ReadonlyPaths: []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"},
	}
}

// A platform container's pre-launch verdicts are judged by the core with
// the evaluator's rules, as Linux's are: a FAIL refuses at every level, an
// UNAVAILABLE tagged verify is the verify degradation (refused at strict
// and, unless accepted, at standard), all PASS launches. The verdicts are
// in the audit log, refused or not. Without the wiring (the core passing a
// platform without Linux facts unjudged) the refusing rows fail.
func TestPlatformPreLaunchVerdicts(t *testing.T) {
	allowVerify := map[launch.Feature]bool{FeatureVerify: true}
	for _, tc := range []struct {
		name     string
		sec      Security
		strict   bool
		pre      []hooks.Result
		wantErr  error
		wantText string
		degraded string
	}{
		{"pass", Security{}, false, []hooks.Result{pass("seatbelt/sandboxed"), pass("identity")}, nil, "", ""},
		{"pass at strict", Security{Level: LevelStrict, LevelSet: true}, true, []hooks.Result{pass("seatbelt/sandboxed")}, nil, "", ""},
		{"fail at standard", Security{}, false, []hooks.Result{pass("identity"), fail("seatbelt/sandboxed")}, ErrPreLaunchFailed, "seatbelt/sandboxed", ""},
		{"fail at degraded", Security{Level: LevelDegraded, LevelSet: true}, false, []hooks.Result{fail("seatbelt/file-read-data /etc/secret")}, ErrPreLaunchFailed, "seatbelt/file-read-data /etc/secret", ""},
		{"unavailable at strict", Security{Level: LevelStrict, LevelSet: true}, true, []hooks.Result{pass("identity"), unavailable("seatbelt/sandboxed")}, ErrPreLaunchFailed, "strict.verify", ""},
		{"unavailable at standard", Security{}, false, []hooks.Result{unavailable("seatbelt/sandboxed")}, ErrPreLaunchFailed, "standard.degradation", ""},
		{"unavailable accepted", Security{AllowDegraded: allowVerify}, false, []hooks.Result{unavailable("seatbelt/sandboxed")}, nil, "", "verify: seatbelt/sandboxed"},
		{"unavailable at degraded", Security{Level: LevelDegraded, LevelSet: true}, false, []hooks.Result{unavailable("seatbelt/sandboxed")}, nil, "", "verify: seatbelt/sandboxed"},
		{"none reported", Security{}, false, nil, ErrPreLaunchFailed, "platform/pre-launch", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &fakePlatform{fakeBackend: &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}},
				gaps: launch.Platform{Name: "fake", Verifies: true}, pre: tc.pre}
			r := newPlatformRuntime(t, p)
			var edit func(*specs.Spec)
			if tc.strict {
				edit = strictBundle
			}
			err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, edit), Security: tc.sec})
			events := auditEvents(t, r.Store.AuditLog)
			i := slices.IndexFunc(events, func(ev AuditEvent) bool { return ev.Event == "verdicts" })
			if i < 0 || len(events[i].Results) != len(tc.pre) && len(tc.pre) > 0 {
				t.Fatalf("no verdicts event with the backend's %d results in the audit log: %+v", len(tc.pre), events)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || ExitCode(err) != ExitSandbox || !strings.Contains(err.Error(), tc.wantText) {
					t.Fatalf("Create = %v (exit %d), want %v (125) naming %q", err, ExitCode(err), tc.wantErr, tc.wantText)
				}
				if len(p.containers) != 0 {
					t.Errorf("a refused container was left: %v", p.containers)
				}
				if ids, _ := r.Store.ids(); len(ids) != 0 {
					t.Errorf("state left after a refused create: %v", ids)
				}
				return
			}
			if err != nil {
				t.Fatalf("Create = %v", err)
			}
			rec, err := r.Store.readRecord("c1")
			if err != nil || rec.State != StateLaunchable {
				t.Fatalf("record %+v, %v: want Launchable", rec, err)
			}
			if tc.degraded != "" && !slices.ContainsFunc(rec.Degraded, func(d string) bool { return strings.HasPrefix(d, tc.degraded) }) {
				t.Errorf("degraded %q, want one starting %q", rec.Degraded, tc.degraded)
			}
			if tc.degraded != "" && !strings.Contains(rec.LaunchLine, tc.degraded) {
				t.Errorf("launch line %q does not name %q", rec.LaunchLine, tc.degraded)
			}
		})
	}
}

// The degradations and refusals a platform's translator reports are facts
// for the launch evaluator: a refusal refuses (125, the platform's rule
// named), a degradation is refused at standard unless accepted, refused at
// strict whatever is accepted, and once accepted is in Record.Degraded and
// on the launch line. Without the wiring (the backend's list never reaching
// launch.Evaluate) every row fails.
func TestPlatformDegradationsOnLaunchLine(t *testing.T) {
	limits := launch.PlatformGap{Rule: "fake.limits", Feature: FeatureLimits, Reason: "no cgroups here"}
	cleanup := launch.PlatformGap{Rule: "fake.degraded-cleanup", Feature: launch.FeatureCleanup, Reason: "no pid namespace", Standard: true}
	seccomp := launch.PlatformGap{Field: "linux.seccomp", Rule: "fake.seccomp", Reason: "no system-call filter"}
	allowLimits := map[launch.Feature]bool{FeatureLimits: true}
	for _, tc := range []struct {
		name     string
		gaps     launch.Platform
		sec      Security
		strict   bool
		wantErr  error
		wantText []string
		degraded []string
	}{
		{"limits at standard", launch.Platform{Degradations: []launch.PlatformGap{limits}}, Security{}, false, ErrDegradedRefused, []string{"fake.limits", "standard.degradation", "--allow-degraded=limits"}, nil},
		{"limits accepted", launch.Platform{Degradations: []launch.PlatformGap{limits}}, Security{AllowDegraded: allowLimits}, false, nil, nil, []string{"limits: no cgroups here (fake.limits)"}},
		{"limits at degraded", launch.Platform{Degradations: []launch.PlatformGap{limits}}, Security{Level: LevelDegraded, LevelSet: true}, false, nil, nil, []string{"limits: no cgroups here (fake.limits)"}},
		{"limits at strict, accepted", launch.Platform{Degradations: []launch.PlatformGap{limits}}, Security{Level: LevelStrict, LevelSet: true, AllowDegraded: allowLimits}, true, ErrDegradedRefused, []string{"fake.limits", "strict.no-degradation"}, nil},
		{"standard-accepted at standard", launch.Platform{Degradations: []launch.PlatformGap{cleanup}}, Security{}, false, nil, nil, []string{"cleanup: no pid namespace (fake.degraded-cleanup)"}},
		{"standard-accepted at strict", launch.Platform{Degradations: []launch.PlatformGap{cleanup}}, Security{Level: LevelStrict, LevelSet: true}, true, ErrDegradedRefused, []string{"fake.degraded-cleanup", "strict.no-degradation"}, nil},
		{"refusal", launch.Platform{Refusals: []launch.PlatformGap{seccomp}, Degradations: []launch.PlatformGap{cleanup}}, Security{Level: LevelDegraded, LevelSet: true}, false, ErrDegradedRefused, []string{"linux.seccomp (fake.seccomp): no system-call filter", "platform.refused"}, nil},
		{"no verdicts at all", launch.Platform{}, Security{}, false, ErrDegradedRefused, []string{"no host facts", "--allow-degraded=verify"}, nil},
		{"no verdicts, accepted", launch.Platform{}, Security{AllowDegraded: map[launch.Feature]bool{FeatureVerify: true}}, false, nil, nil, []string{"verify: this platform has no host facts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gaps := tc.gaps
			gaps.Name = "fake"
			if tc.name != "no verdicts at all" && tc.name != "no verdicts, accepted" {
				gaps.Verifies = true
			}
			p := &fakePlatform{fakeBackend: &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}},
				gaps: gaps, pre: []hooks.Result{pass("seatbelt/sandboxed")}}
			r := newPlatformRuntime(t, p)
			var edit func(*specs.Spec)
			if tc.strict {
				edit = strictBundle
			}
			err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, edit), Security: tc.sec})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || ExitCode(err) != ExitSandbox {
					t.Fatalf("Create = %v (exit %d), want %v (125)", err, ExitCode(err), tc.wantErr)
				}
				for _, w := range tc.wantText {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %q", err, w)
					}
				}
				if len(p.containers) != 0 {
					t.Errorf("the backend was asked to create a refused container")
				}
				return
			}
			if err != nil {
				t.Fatalf("Create = %v", err)
			}
			st, err := r.State("c1")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.degraded {
				if !slices.ContainsFunc(st.Vetto.Degraded, func(d string) bool { return strings.HasPrefix(d, w) }) {
					t.Errorf("state's degraded %q lacks %q", st.Vetto.Degraded, w)
				}
				if !strings.Contains(st.Vetto.LaunchLine, "degraded: ") || !strings.Contains(st.Vetto.LaunchLine, w) {
					t.Errorf("launch line %q does not name %q", st.Vetto.LaunchLine, w)
				}
			}
		})
	}
}

// A platform container's post-launch verdicts (read by its backend in
// Start) are judged by the core as Linux's: all PASS is VerifiedRuntime, a
// FAIL kills at standard (125, the check named) and is recorded at
// degraded, an inconclusive one kills at strict; the verdicts are in the
// record (Poststart, Verdicts) and the audit log. verify asks the backend
// again and judges the same way. Without the wiring Start reports the
// P1/identity UNAVAILABLE of a platform without facts, never PASS, and
// nothing is ever killed.
func TestPlatformPostLaunchVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sec        Security
		strict     bool
		post       []hooks.Result
		wantErr    error
		wantState  State
		wantKilled bool
	}{
		{"pass", Security{}, false, []hooks.Result{pass("seatbelt/sandboxed"), pass("P3/connect")}, nil, StateVerifiedRuntime, false},
		{"fail at standard", Security{}, false, []hooks.Result{pass("identity"), fail("P3/masked-read/etc/secret")}, ErrPostLaunchFailed, StatePostLaunchFailed, true},
		{"fail at degraded", Security{Level: LevelDegraded, LevelSet: true}, false, []hooks.Result{fail("P3/masked-read/etc/secret")}, nil, StateRunning, false},
		{"unavailable at standard", Security{}, false, []hooks.Result{pass("identity"), unavailable("seatbelt/sandboxed")}, nil, StateRunning, false},
		{"unavailable at strict", Security{Level: LevelStrict, LevelSet: true}, true, []hooks.Result{unavailable("seatbelt/sandboxed")}, ErrPostLaunchFailed, StatePostLaunchFailed, true},
		{"fail under --no-verify", Security{NoVerify: true, AllowDegraded: map[launch.Feature]bool{FeatureVerify: true}}, false, []hooks.Result{fail("seatbelt/sandboxed")}, ErrPostLaunchFailed, StatePostLaunchFailed, true},
		{"unavailable under --no-verify", Security{NoVerify: true, AllowDegraded: map[launch.Feature]bool{FeatureVerify: true}}, false, []hooks.Result{unavailable("seatbelt/sandboxed")}, nil, StateRunning, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &fakePlatform{fakeBackend: &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}},
				gaps: launch.Platform{Name: "fake", Verifies: true}, pre: []hooks.Result{pass("seatbelt/sandboxed")}, post: tc.post}
			r := newPlatformRuntime(t, p)
			var edit func(*specs.Spec)
			if tc.strict {
				edit = strictBundle
			}
			if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, edit), Security: tc.sec}); err != nil {
				t.Fatalf("Create = %v", err)
			}
			err := r.Start("c1")
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && (!errors.Is(err, tc.wantErr) || ExitCode(err) != ExitSandbox) {
				t.Fatalf("Start = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				bad := hooks.Only(tc.post, hooks.Fail)
				if len(bad) == 0 {
					bad = tc.post
				}
				if !strings.Contains(err.Error(), bad[0].Check) {
					t.Errorf("Start error %q does not name %s", err, bad[0].Check)
				}
			}
			rec, err := r.Store.readRecord("c1")
			if err != nil {
				t.Fatal(err)
			}
			if rec.State != tc.wantState {
				t.Errorf("state %s, want %s", rec.State, tc.wantState)
			}
			if killed := p.containers["c1"].status == StatusStopped; killed != tc.wantKilled {
				t.Errorf("killed %v, want %v", killed, tc.wantKilled)
			}
			if tc.sec.NoVerify && tc.wantErr == nil {
				return // nothing judged, nothing recorded: --no-verify
			}
			if lv := rec.LaunchVerdicts(); len(lv) != len(tc.post) || lv[0].Check != tc.post[0].Check {
				t.Errorf("record's launch verdicts %+v, want the backend's %+v", lv, tc.post)
			}
			events := auditEvents(t, r.Store.AuditLog)
			if !slices.ContainsFunc(events, func(ev AuditEvent) bool {
				return ev.Event == "verdicts" && ev.Reason == phasePoststart && len(ev.Results) == len(tc.post)
			}) {
				t.Errorf("no poststart verdicts event with the backend's results: %+v", events)
			}
		})
	}
}

// verify on a platform container asks its backend again and judges the
// answer: a FAIL kills at standard; a backend that cannot answer is
// ErrBackendUnavailable, never a pass. Without the wiring verify refuses
// every platform container with "no host facts".
func TestPlatformVerify(t *testing.T) {
	for _, tc := range []struct {
		name       string
		demand     []hooks.Result
		demandErr  error
		wantErr    error
		wantKilled bool
		wantVerif  string
	}{
		{"pass", []hooks.Result{pass("seatbelt/sandboxed")}, nil, nil, false, "PASS"},
		{"fail", []hooks.Result{fail("seatbelt/sandboxed")}, nil, ErrPostLaunchFailed, true, "FAIL"},
		{"unsupported", nil, errors.ErrUnsupported, ErrBackendUnavailable, false, "PASS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &fakePlatform{fakeBackend: &fakeBackend{initPid: 1, containers: map[string]*fakeContainer{}},
				gaps: launch.Platform{Name: "fake", Verifies: true}, pre: []hooks.Result{pass("a")}, post: []hooks.Result{pass("b")},
				demand: tc.demand, demandErr: tc.demandErr}
			r := newPlatformRuntime(t, p)
			if err := r.Create(CreateOptions{ID: "c1", Bundle: writeBundle(t, nil)}); err != nil {
				t.Fatal(err)
			}
			if err := r.Start("c1"); err != nil {
				t.Fatal(err)
			}
			res, err := r.Verify("c1")
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("Verify = %v, %v; want %v", res, err, tc.wantErr)
			}
			if killed := p.containers["c1"].status == StatusStopped; killed != tc.wantKilled {
				t.Errorf("killed %v, want %v", killed, tc.wantKilled)
			}
			rec, _ := r.Store.readRecord("c1")
			if rec.Verification != tc.wantVerif {
				t.Errorf("verification %q, want %q", rec.Verification, tc.wantVerif)
			}
		})
	}
}
