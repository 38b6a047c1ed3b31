package windows

import (
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

const testSID = "S-1-15-2-1-2-3-4-5-6-7"

func goodFacts(p *Plan) Facts {
	return Facts{
		Pid: 4242, InJob: true,
		LimitFlags: p.Job.LimitFlags, ActiveProcessLimit: p.Job.ActiveProcessLimit, JobMemoryLimit: p.Job.JobMemoryLimit,
		UIRestrictions: p.Job.UIRestrictions,
		Integrity:      integrityLow, AppContainer: true, AppContainerSID: testSID,
		Privileges: []string{privilegeChangeNotify},
	}
}

func verdictOf(t *testing.T, rs []hooks.Result, check string) hooks.Result {
	t.Helper()
	for _, r := range rs {
		if r.Check == check {
			return r
		}
	}
	t.Fatalf("no check %q in %v", check, rs)
	return hooks.Result{}
}

func TestJudge(t *testing.T) {
	p := Translate(testInput(loadSpec(t, "default.json")))
	for _, r := range Judge(p, testSID, goodFacts(p)) {
		if r.Verdict != hooks.Pass || r.Evidence != hooks.HostFact {
			t.Fatalf("good facts: %s", r)
		}
	}
	tests := []struct {
		name  string
		facts func(Facts) Facts
		check string
		v     hooks.Verdict
	}{
		{"outside the job", func(f Facts) Facts { f.InJob = false; return f }, "job/member", hooks.Fail},
		{"IsProcessInJob failed", func(f Facts) Facts { f.InJobErr = "access denied"; return f }, "job/member", hooks.Unavailable},
		{"no kill on close", func(f Facts) Facts { f.LimitFlags &^= limitKillOnJobClose; return f }, "job/limits", hooks.Fail},
		{"breakaway allowed", func(f Facts) Facts { f.LimitFlags |= limitBreakawayOK; return f }, "job/no-breakaway", hooks.Fail},
		{"silent breakaway", func(f Facts) Facts { f.LimitFlags |= limitSilentBreakawayOK; return f }, "job/no-breakaway", hooks.Fail},
		{"limits unreadable", func(f Facts) Facts { f.LimitsErr = "x"; return f }, "job/limits", hooks.Unavailable},
		{"process limit higher", func(f Facts) Facts { f.ActiveProcessLimit = 5000; return f }, "job/active-process-limit", hooks.Fail},
		{"process limit unset", func(f Facts) Facts { f.ActiveProcessLimit = 0; return f }, "job/active-process-limit", hooks.Fail},
		{"memory limit higher", func(f Facts) Facts { f.JobMemoryLimit = 8 << 30; return f }, "job/memory-limit", hooks.Fail},
		{"clipboard open", func(f Facts) Facts { f.UIRestrictions &^= uiReadClipboard; return f }, "job/ui-restrictions", hooks.Fail},
		{"medium integrity", func(f Facts) Facts { f.Integrity = 0x2000; return f }, "token/integrity", hooks.Fail},
		{"integrity unreadable", func(f Facts) Facts { f.IntegrityErr = "x"; return f }, "token/integrity", hooks.Unavailable},
		{"not an AppContainer", func(f Facts) Facts { f.AppContainer = false; return f }, "token/appcontainer", hooks.Fail},
		{"another AppContainer", func(f Facts) Facts { f.AppContainerSID = "S-1-15-2-9"; return f }, "token/appcontainer", hooks.Fail},
		{"network capability", func(f Facts) Facts { f.Capabilities = 1; return f }, "token/capabilities", hooks.Fail},
		{"a privilege kept", func(f Facts) Facts { f.Privileges = append(f.Privileges, "SeDebugPrivilege"); return f }, "token/privileges", hooks.Fail},
		{"administrators enabled", func(f Facts) Facts { f.AdminEnabled = true; return f }, "token/administrators", hooks.Fail},
		{"groups unreadable", func(f Facts) Facts { f.GroupsErr = "x"; return f }, "token/administrators", hooks.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := verdictOf(t, Judge(p, testSID, tt.facts(goodFacts(p))), tt.check)
			if r.Verdict != tt.v {
				t.Fatalf("%s = %s (%s), want %s", tt.check, r.Verdict, r.Found, tt.v)
			}
		})
	}
	// Without limits in the plan there is no limit check to pass vacuously.
	b := Translate(testInput(base()))
	for _, r := range Judge(b, testSID, goodFacts(b)) {
		if r.Check == "job/memory-limit" || r.Check == "job/active-process-limit" {
			t.Fatalf("limit check %s without a limit", r.Check)
		}
	}
}

// A fact the holder could not read is UNAVAILABLE and tagged verify, so
// the core's evaluator treats it as the verify degradation; a FAIL is
// never tagged (never degradable).
func TestJudgeTagsUnavailable(t *testing.T) {
	b := Translate(testInput(base()))
	f := goodFacts(b)
	f.InJobErr, f.Integrity = "ACCESS_DENIED", 0x2000
	for _, r := range Judge(b, testSID, f) {
		switch {
		case r.Verdict == hooks.Unavailable && r.Feature != string(runtime.FeatureVerify):
			t.Errorf("%s UNAVAILABLE tagged %q, want verify", r.Check, r.Feature)
		case r.Verdict != hooks.Unavailable && r.Feature != "":
			t.Errorf("%s %s tagged %q", r.Check, r.Verdict, r.Feature)
		}
	}
	if v := Judge(b, testSID, f); !slices.ContainsFunc(v, func(r hooks.Result) bool { return r.Check == "token/integrity" && r.Verdict == hooks.Fail }) {
		t.Fatalf("medium integrity not a FAIL: %v", v)
	}
}

func TestCanaryPlanAndJudge(t *testing.T) {
	p := Translate(testInput(loadSpec(t, "default.json")))
	cp := p.CanaryPlan()
	if !cp.ConnectMustFail || !slices.Equal(cp.WriteInside, []string{`C:\Users\dev\src\app`}) ||
		!slices.Contains(cp.WriteOutside, `C:\Users\dev\src\app\.git`) || !slices.Contains(cp.MaskedRead, `C:\Users\dev\src\app\.env`) {
		t.Fatalf("canary plan %+v", cp)
	}
	cp = hooks.CanaryPlan{MaskedRead: []string{`C:\p\.env`}, WriteInside: []string{`C:\p`}, WriteOutside: []string{`C:\tools`}, ConnectMustFail: true}
	good := func() Observation {
		return Observation{
			Common: hooks.Observation{Report: canary.Report{
				Reads:   []canary.Attempt{{Path: `C:\p\.env`, Err: "Access is denied."}},
				Writes:  []canary.Attempt{{Path: `C:\p`}, {Path: `C:\tools`, Err: "Access is denied."}},
				Connect: &canary.Attempt{Err: "refused"},
			}, Created: map[string]bool{`C:\p`: true, `C:\tools`: false}},
			DenyACE:    map[string]Answer{`C:\p\.env`: {Denied: true}},
			HostDigest: map[string]string{`C:\p\.env`: canary.Digest([]byte("K=1"))},
		}
	}
	tests := []struct {
		name  string
		obs   func(Observation) Observation
		check string
		v     hooks.Verdict
	}{
		{"deny entry", func(o Observation) Observation { return o }, `P3/masked-readC:\p\.env`, hooks.Pass},
		{"no deny entry", func(o Observation) Observation { o.DenyACE[`C:\p\.env`] = Answer{}; return o }, `P3/masked-readC:\p\.env`, hooks.Fail},
		{"read the secret", func(o Observation) Observation {
			o.Common.Report.Reads = []canary.Attempt{{Path: `c:\P\.env`, Size: 3, SHA256: canary.Digest([]byte("K=1"))}}
			return o
		}, `P3/masked-readC:\p\.env`, hooks.Fail},
		{"entry unreadable", func(o Observation) Observation { o.DenyACE[`C:\p\.env`] = Answer{Err: "x"}; return o }, `P3/masked-readC:\p\.env`, hooks.Partial},
		{"wrote outside", func(o Observation) Observation { o.Common.Created[`C:\tools`] = true; return o }, `P3/write-outsideC:\tools`, hooks.Fail},
		{"reached loopback", func(o Observation) Observation { o.Common.Accepted = 2; return o }, "P3/loopback-connect", hooks.Fail},
		{"probe failed", func(o Observation) Observation {
			o.Common.ProbeErr = "killed"
			o.DenyACE = nil
			return o
		}, `P3/masked-readC:\p\.env`, hooks.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := verdictOf(t, JudgeCanaries(cp, tt.obs(good())), tt.check)
			if r.Verdict != tt.v {
				t.Fatalf("%s = %s (%s), want %s", tt.check, r.Verdict, r.Found, tt.v)
			}
		})
	}
}

func TestHiddenGrants(t *testing.T) {
	s := base()
	s.Mounts = append(s.Mounts,
		specs.Mount{Destination: `C:\work\node_modules`, Type: "tmpfs"},
		specs.Mount{Destination: `C:\Users\dev\AppData`, Type: "tmpfs"})
	p := Translate(testInput(s))
	if !slices.Contains(p.Grants, Grant{Path: `C:\work\node_modules`, Access: accessDeny, From: "mounts[1]"}) {
		t.Errorf("a tmpfs under a grant needs a deny: %v", p.Grants)
	}
	for _, g := range p.Grants {
		if g.Path == `C:\Users\dev\AppData` {
			t.Errorf("a tmpfs nothing grants got %v: it would rewrite the user's tree for nothing", g)
		}
	}
}

func TestParseSignal(t *testing.T) {
	b := &Backend{}
	for _, s := range []string{"KILL", "SIGTERM", "int", "9", "15", "2"} {
		if _, err := b.ParseSignal(s); err != nil {
			t.Errorf("ParseSignal(%q): %v", s, err)
		}
	}
	for _, s := range []string{"HUP", "USR1", "10", "WINCH"} {
		if _, err := b.ParseSignal(s); err == nil {
			t.Errorf("ParseSignal(%q) accepted a signal Windows cannot deliver", s)
		}
	}
}

func TestExampleSpecAccepted(t *testing.T) {
	b := testBackend()
	s, err := b.ExampleSpec(false)
	if err != nil {
		t.Fatal(err)
	}
	p := Translate(testInput(s))
	if len(p.Refusals) > 0 {
		t.Fatalf("example refused: %v", p.Refusals)
	}
	if _, err := decide(p, s, runtime.LevelStandard); err != nil {
		t.Fatal(err)
	}
	if f, err := b.Features(); err != nil || f.Linux != nil || !slices.Contains(f.Hooks, "poststart") {
		t.Fatalf("Features: %+v %v", f, err)
	}
}

func TestAppContainerName(t *testing.T) {
	a, b := appContainerName("c1"), appContainerName("c1")
	if a == b {
		t.Fatalf("two creates of c1 got the same profile name %s", a)
	}
	long := appContainerName(strings.Repeat("x", 200) + "/ü")
	if len(long) > 64 || strings.ContainsAny(long, "/ü") {
		t.Fatalf("name %q: over 64 or with bad characters", long)
	}
}

func TestDiagnose(t *testing.T) {
	probes := []runtime.Probe{
		{Name: probeJobList, Status: runtime.Supported},
		{Name: probeAppContainer, Status: runtime.Supported},
		{Name: probeToken, Status: runtime.Supported},
	}
	d := diagnose(append(probes, fixedProbes()...))
	for _, l := range d.Levels {
		switch l.Level {
		case runtime.LevelStrict:
			if l.OK {
				t.Error("strict on Windows")
			}
		case runtime.LevelStandard:
			if !l.OK {
				t.Errorf("standard with every probe: %+v", l)
			}
		}
	}
	probes[0].Status = runtime.Unsupported
	for _, l := range diagnose(append(probes, fixedProbes()...)).Levels {
		if l.Level == runtime.LevelStandard && l.OK {
			t.Error("standard without the job list attribute")
		}
	}
}
