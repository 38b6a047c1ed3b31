package darwin

import (
	"slices"
	"strings"
	"testing"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

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
	qs := []Query{{Op: "file-read-data", Path: "/p/.env"}, {Op: "file-read-data", Path: "/usr", Allowed: true}}
	good := Facts{Pid: 42, Sandboxed: true, Pgid: 42, Start: 1000, Answers: []Answer{{Allowed: false}, {Allowed: true}}}
	tests := []struct {
		name  string
		facts func(Facts) Facts
		want  int64
		check string
		v     hooks.Verdict
	}{
		{"all good: sandboxed", func(f Facts) Facts { return f }, 0, "seatbelt/sandboxed", hooks.Pass},
		{"all good: mask", func(f Facts) Facts { return f }, 0, "seatbelt/file-read-data /p/.env", hooks.Pass},
		{"all good: positive control", func(f Facts) Facts { return f }, 0, "seatbelt/file-read-data /usr", hooks.Pass},
		{"not sandboxed", func(f Facts) Facts { f.Sandboxed = false; return f }, 0, "seatbelt/sandboxed", hooks.Fail},
		{"sandbox_check unavailable", func(f Facts) Facts { f.SandboxedErr = "EPERM"; return f }, 0, "seatbelt/sandboxed", hooks.Unavailable},
		{"mask readable", func(f Facts) Facts { f.Answers = []Answer{{Allowed: true}, {Allowed: true}}; return f }, 0, "seatbelt/file-read-data /p/.env", hooks.Fail},
		{"deny-all profile", func(f Facts) Facts { f.Answers = []Answer{{}, {}}; return f }, 0, "seatbelt/file-read-data /usr", hooks.Fail},
		{"answer unavailable", func(f Facts) Facts { f.Answers = []Answer{{Err: "EINVAL"}, {Allowed: true}}; return f }, 0, "seatbelt/file-read-data /p/.env", hooks.Unavailable},
		{"not asked", func(f Facts) Facts { f.Answers = nil; return f }, 0, "seatbelt/file-read-data /usr", hooks.Unavailable},
		{"other group", func(f Facts) Facts { f.Pgid = 1; return f }, 0, "process-group", hooks.Fail},
		{"group unreadable", func(f Facts) Facts { f.PgidErr = "gone"; return f }, 0, "process-group", hooks.Unavailable},
		{"same process", func(f Facts) Facts { return f }, 1000, "identity", hooks.Pass},
		{"pid reused", func(f Facts) Facts { f.Start = 2000; return f }, 1000, "identity", hooks.Fail},
		{"exited", func(f Facts) Facts { f.StartErr = "exited"; return f }, 1000, "identity", hooks.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := Judge(qs, tt.facts(good), tt.want)
			r := verdictOf(t, rs, tt.check)
			if r.Verdict != tt.v {
				t.Fatalf("%s = %s (%s), want %s", tt.check, r.Verdict, r.Found, tt.v)
			}
			for _, r := range rs {
				if r.Evidence != hooks.HostFact {
					t.Fatalf("%s has evidence %q: every darwin fact is the host's", r.Check, r.Evidence)
				}
			}
		})
	}
}

// A fact the host could not read is UNAVAILABLE and tagged verify, so
// the core's evaluator treats it as the verify degradation; a FAIL is
// never tagged (never degradable); a PASS needs no tag.
func TestJudgeTagsUnavailable(t *testing.T) {
	qs := []Query{{Op: "file-read-data", Path: "/etc/secret"}, {Op: "network-outbound"}}
	f := Facts{Pid: 7, Sandboxed: true, PgidErr: "EPERM", Pgid: 0, Start: 1, Answers: []Answer{{Allowed: true}, {Err: "sandbox_check: EPERM"}}}
	for _, r := range Judge(qs, f, 0) {
		switch r.Verdict {
		case hooks.Pass, hooks.Fail:
			if r.Feature != "" {
				t.Errorf("%s %s tagged %q", r.Check, r.Verdict, r.Feature)
			}
		default:
			if r.Feature != string(runtime.FeatureVerify) {
				t.Errorf("%s %s tagged %q, want verify", r.Check, r.Verdict, r.Feature)
			}
		}
	}
}

func TestQueries(t *testing.T) {
	p := Translate(testInput(loadSpec(t, "readonly.json")))
	qs := p.Queries(testStateDir)
	want := map[string]bool{
		"file-read-data /Users/dev/proj/node_modules":         false,
		"file-read-data /usr":                                 true,
		"file-write-create /usr/" + checkName:                 false,
		"file-write-create /Users/dev/proj/" + checkName:      true,
		"file-write-create /Users/dev/proj/.git/" + checkName: false,
		"file-read-data " + testStateDir:                      false,
		"file-write-create " + testStateDir + "/" + checkName: false,
		"network-outbound ":                                   false,
		"mach-lookup ":                                        false,
	}
	got := map[string]bool{}
	for _, q := range qs {
		got[q.Op+" "+q.Path] = q.Allowed
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("query %q: present=%v allowed=%v, want allowed=%v", k, ok, g, v)
		}
	}
	// The plan's own evaluation agrees with what the kernel is asked to
	// confirm: a query the profile would answer otherwise is a bug here,
	// not a FAIL on a Mac.
	values := map[string]string{}
	for _, pa := range p.Params {
		values[pa.Name] = pa.Value
	}
	values["P5"] = testStateDir + "/" + fifoName
	for _, q := range qs {
		if q.Path == "" {
			continue
		}
		if got := evaluate(p.rules, values, q.Op, q.Path); got != q.Allowed {
			t.Errorf("profile answers %s %s = %v, query expects %v", q.Op, q.Path, got, q.Allowed)
		}
	}
}

func TestCanaryPlan(t *testing.T) {
	cp := Translate(testInput(loadSpec(t, "default-degraded.json"))).CanaryPlan()
	if !cp.ConnectMustFail {
		t.Error("network none: the loopback connect must fail")
	}
	if !slices.Equal(cp.WriteInside, []string{"/Users/dev/src/app"}) {
		t.Errorf("write inside = %v", cp.WriteInside)
	}
	for _, w := range []string{"/usr", "/etc", "/tmp", "/Users/dev"} {
		if !slices.Contains(cp.WriteOutside, w) {
			t.Errorf("write outside %v lacks %s", cp.WriteOutside, w)
		}
	}
	if !slices.Contains(cp.MaskedRead, "/Users/dev/src/app/.env") {
		t.Errorf("masked read = %v", cp.MaskedRead)
	}
}

func TestJudgeCanaries(t *testing.T) {
	cp := hooks.CanaryPlan{MaskedRead: []string{"/p/.env"}, WriteInside: []string{"/p"}, WriteOutside: []string{"/usr"}, ConnectMustFail: true}
	report := canary.Report{
		Reads:   []canary.Attempt{{Path: "/p/.env", Err: "operation not permitted"}},
		Writes:  []canary.Attempt{{Path: "/p"}, {Path: "/usr", Err: "operation not permitted"}},
		Connect: &canary.Attempt{Path: "127.0.0.1:1", Err: "operation not permitted"},
	}
	good := Observation{
		Common:     hooks.Observation{Nonce: "n", Report: report, Created: map[string]bool{"/p": true, "/usr": false}},
		Denied:     map[string]Answer{"/p/.env": {Allowed: false}},
		HostDigest: map[string]string{"/p/.env": canary.Digest([]byte("SECRET=1"))},
	}
	tests := []struct {
		name  string
		obs   func(Observation) Observation
		check string
		v     hooks.Verdict
	}{
		{"mask denied", func(o Observation) Observation { return o }, "P3/masked-read/p/.env", hooks.Pass},
		{"write outside refused", func(o Observation) Observation { return o }, "P3/write-outside/usr", hooks.Pass},
		{"positive control", func(o Observation) Observation { return o }, "P3/write-inside/p", hooks.Pass},
		{"no connection", func(o Observation) Observation { return o }, "P3/loopback-connect", hooks.Pass},
		{"mask read by the probe", func(o Observation) Observation {
			o.Common.Report.Reads = []canary.Attempt{{Path: "/p/.env", Size: 8, SHA256: canary.Digest([]byte("SECRET=1"))}}
			return o
		}, "P3/masked-read/p/.env", hooks.Fail},
		{"kernel allows the mask", func(o Observation) Observation { o.Denied["/p/.env"] = Answer{Allowed: true}; return o }, "P3/masked-read/p/.env", hooks.Fail},
		{"kernel not asked: probe's word", func(o Observation) Observation { o.Denied = map[string]Answer{"/p/.env": {Err: "EPERM"}}; return o }, "P3/masked-read/p/.env", hooks.Partial},
		{"probe failed, no answer", func(o Observation) Observation {
			o.Denied = nil
			o.Common.ProbeErr = "killed"
			return o
		}, "P3/masked-read/p/.env", hooks.Unavailable},
		{"write outside succeeded", func(o Observation) Observation { o.Common.Created["/usr"] = true; return o }, "P3/write-outside/usr", hooks.Fail},
		{"listener reached", func(o Observation) Observation { o.Common.Accepted = 1; return o }, "P3/loopback-connect", hooks.Fail},
		{"control failed: negatives partial", func(o Observation) Observation { o.Common.Created["/p"] = false; return o }, "P3/write-outside/usr", hooks.Partial},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.obs(cloneObs(good))
			r := verdictOf(t, JudgeCanaries(cp, o), tt.check)
			if r.Verdict != tt.v {
				t.Fatalf("%s = %s (%s), want %s", tt.check, r.Verdict, r.Found, tt.v)
			}
		})
	}
}

func cloneObs(o Observation) Observation {
	c := o
	c.Common.Created = map[string]bool{}
	for k, v := range o.Common.Created {
		c.Common.Created[k] = v
	}
	c.Denied = map[string]Answer{}
	for k, v := range o.Denied {
		c.Denied[k] = v
	}
	c.Common.Report.Reads = slices.Clone(o.Common.Report.Reads)
	return c
}

func TestMembers(t *testing.T) {
	table := []proc{
		{pid: 1, ppid: 0, pgid: 1, start: 1},
		{pid: 100, ppid: 1, pgid: 100, start: 500},     // the init
		{pid: 101, ppid: 100, pgid: 100, start: 501},   // child in the group
		{pid: 102, ppid: 100, pgid: 102, start: 502},   // child that left the group
		{pid: 103, ppid: 102, pgid: 102, start: 503},   // its child
		{pid: 104, ppid: 1, pgid: 100, start: 504},     // orphan still in the group
		{pid: 105, ppid: 104, pgid: 105, start: 505},   // orphan's child in its own group
		{pid: 106, ppid: 1, pgid: 106, start: 506},     // escaped: own group, parent launchd
		{pid: 107, ppid: 101, pgid: 100, zombie: true}, // dead
		{pid: 200, ppid: 1, pgid: 200, start: 9},       // stranger
	}
	if got, want := members(table, 100, 500), []int{100, 101, 102, 103, 104, 105}; !slices.Equal(got, want) {
		t.Fatalf("members = %v, want %v (the escaped 106 is the documented degradation)", got, want)
	}
	// The init exited; its group lives on.
	noInit := slices.DeleteFunc(slices.Clone(table), func(p proc) bool { return p.pid == 100 })
	if got, want := members(noInit, 100, 500), []int{101, 104, 105}; !slices.Equal(got, want) {
		t.Fatalf("members without init = %v, want %v", got, want)
	}
	// The pid was reused: the group is gone, the new owner is a stranger.
	reused := append(slices.Clone(noInit), proc{pid: 100, ppid: 1, pgid: 100, start: 9999})
	if got := members(reused, 100, 500); len(got) != 0 {
		t.Fatalf("members after pid reuse = %v, want none", got)
	}
}

func TestParseSignal(t *testing.T) {
	b := &Backend{}
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"KILL", 9, true}, {"SIGTERM", 15, true}, {"usr1", 30, true}, {"SIGCHLD", 20, true}, {"INFO", 29, true},
		{"9", 9, true}, {"0", 0, false}, {"32", 0, false}, {"SIGRTMIN", 0, false}, {"PWR", 0, false},
	}
	for _, tt := range tests {
		got, err := b.ParseSignal(tt.in)
		if (err == nil) != tt.ok || tt.ok && int(got) != tt.want {
			t.Errorf("ParseSignal(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// The example spec is one this backend accepts at standard.
func TestExampleSpecAccepted(t *testing.T) {
	b := testBackend()
	s, err := b.ExampleSpec(false)
	if err != nil {
		t.Fatal(err)
	}
	p := Translate(testInput(s))
	if len(p.Refusals) > 0 {
		t.Fatalf("example spec refused: %v", p.Refusals)
	}
	if _, err := decide(p, s, runtime.LevelStandard); err != nil {
		t.Fatal(err)
	}
	if f, err := b.Features(); err != nil || !slices.Contains(f.MountOptions, "ro") || f.Linux != nil {
		t.Fatalf("Features = %+v, %v", f, err)
	}
}

func TestDiagnose(t *testing.T) {
	ok := []runtime.Probe{
		{Name: probeSandboxExec, Status: runtime.Supported},
		{Name: probeProfile, Status: runtime.Supported},
		{Name: probeCheck, Status: runtime.Supported},
	}
	d := diagnose(append(ok, fixedProbes()...))
	levels := map[runtime.Level]bool{}
	for _, l := range d.Levels {
		levels[l.Level] = l.OK
	}
	if levels[runtime.LevelStrict] || !levels[runtime.LevelStandard] || !levels[runtime.LevelDegraded] {
		t.Fatalf("levels = %+v: strict never on darwin, standard with the probes", d.Levels)
	}
	ok[1].Status = runtime.Unknown
	d = diagnose(append(ok, fixedProbes()...))
	for _, l := range d.Levels {
		if l.Level == runtime.LevelStandard && (l.OK || !strings.Contains(strings.Join(l.Missing, ","), probeProfile)) {
			t.Fatalf("standard with an unknown profile probe: %+v", l)
		}
	}
}
