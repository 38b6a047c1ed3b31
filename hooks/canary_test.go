package hooks

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks/canary"
)

func TestPlanCanaries(t *testing.T) {
	base := func() *specs.Spec {
		return &specs.Spec{
			Root: &specs.Root{Path: "rootfs", Readonly: true},
			Mounts: []specs.Mount{
				{Destination: "/proc", Type: "proc"},
				{Destination: "/dev", Type: "tmpfs"},
				{Destination: "/tmp", Type: "tmpfs"},
				{Destination: "/data", Type: "bind", Options: []string{"rbind", "ro"}},
			},
			Linux: &specs.Linux{
				Namespaces:  []specs.LinuxNamespace{{Type: specs.NetworkNamespace}},
				MaskedPaths: []string{"/proc/kcore", "/proc/kcore/"},
			},
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*specs.Spec)
		want CanaryPlan
	}{
		{"from the spec's own fields", nil, CanaryPlan{
			MaskedRead: []string{"/proc/kcore"}, WriteInside: []string{"/tmp"},
			WriteOutside: []string{"/", "/data"}, ConnectMustFail: true,
		}},
		{"writable rootfs is an allowed root", func(s *specs.Spec) { s.Root.Readonly = false }, CanaryPlan{
			MaskedRead: []string{"/proc/kcore"}, WriteInside: []string{"/tmp"}, ConnectMustFail: true,
		}},
		{"writable rootfs and no tmpfs: the rootfs is the positive control", func(s *specs.Spec) {
			s.Root.Readonly = false
			s.Mounts = s.Mounts[:2]
		}, CanaryPlan{
			MaskedRead: []string{"/proc/kcore"}, WriteInside: []string{"/"}, ConnectMustFail: true,
		}},
		{"read-only root, nothing writable but /dev/shm: it is the positive control", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts[:2], specs.Mount{Destination: "/dev/shm", Type: "tmpfs"})
		}, CanaryPlan{
			MaskedRead: []string{"/proc/kcore"}, WriteInside: []string{"/dev/shm"}, WriteOutside: []string{"/"}, ConnectMustFail: true,
		}},
		{"read-only root, nothing writable at all", func(s *specs.Spec) { s.Mounts = s.Mounts[:1] }, CanaryPlan{
			MaskedRead: []string{"/proc/kcore"}, WriteOutside: []string{"/"}, ConnectMustFail: true,
		}},
		{"host network", func(s *specs.Spec) { s.Linux.Namespaces = nil }, CanaryPlan{
			MaskedRead: []string{"/proc/kcore"}, WriteInside: []string{"/tmp"}, WriteOutside: []string{"/", "/data"},
		}},
		{"net annotation is the intent, not the namespaces", func(s *specs.Spec) {
			s.Linux.Namespaces = nil
			s.Annotations = map[string]string{"dev.vetto.net": "none"}
		}, CanaryPlan{
			MaskedRead: []string{"/proc/kcore"}, WriteInside: []string{"/tmp"}, WriteOutside: []string{"/", "/data"}, ConnectMustFail: true,
		}},
		{"masked annotation adds paths", func(s *specs.Spec) {
			s.Annotations = map[string]string{"dev.vetto.masked": `["/secret/token"]`}
		}, CanaryPlan{
			MaskedRead: []string{"/proc/kcore", "/secret/token"}, WriteInside: []string{"/tmp"}, WriteOutside: []string{"/", "/data"}, ConnectMustFail: true,
		}},
		{"a tmpfs root is the positive control, not a bind of the project", func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/a-project", Type: "bind", Options: []string{"rbind"}})
		}, CanaryPlan{
			MaskedRead: []string{"/proc/kcore"}, WriteInside: []string{"/tmp"}, WriteOutside: []string{"/", "/data"}, ConnectMustFail: true,
		}},
		{"landlock write rules are the allowed roots", func(s *specs.Spec) {
			s.Mounts[3].Options = []string{"rbind"} // writable, but the policy says read-only
			s.Annotations = map[string]string{"dev.vetto.landlock": `{"ruleset":{"handledAccessFS":65535},"rules":{"pathBeneath":[{"allowedAccess":258,"paths":["/tmp"]},{"allowedAccess":1,"paths":["/"]}]}}`}
		}, CanaryPlan{
			MaskedRead: []string{"/proc/kcore"}, WriteInside: []string{"/tmp"}, WriteOutside: []string{"/", "/data"}, ConnectMustFail: true,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			if tc.edit != nil {
				tc.edit(s)
			}
			got, err := PlanCanaries(s)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("plan\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	s := base()
	s.Annotations = map[string]string{"dev.vetto.masked": "not json"}
	if _, err := PlanCanaries(s); err == nil {
		t.Fatal("a malformed dev.vetto.masked was accepted")
	}
}

// Each verdict is decided by a host fact; the probe's word alone never
// passes, and a positive control that did not hold demotes the negatives.
func TestJudgeCanaries(t *testing.T) {
	plan := CanaryPlan{MaskedRead: []string{"/s"}, WriteInside: []string{"/tmp"}, WriteOutside: []string{"/"}, ConnectMustFail: true}
	good := func() Observation {
		return Observation{
			Report: canary.Report{
				Reads:   []canary.Attempt{{Path: "/s"}},
				Writes:  []canary.Attempt{{Path: "/tmp"}, {Path: "/", Err: "read-only file system"}},
				Connect: &canary.Attempt{Path: "127.0.0.1:1", Err: "refused"},
			},
			Created:    map[string]bool{"/tmp": true, "/": false},
			Masked:     map[string]bool{"/s": true},
			Present:    map[string]bool{"/s": true},
			HostDigest: map[string]string{"/s": canary.Digest([]byte("secret"))},
		}
	}
	verdicts := func(rs []Result) map[string]Verdict {
		m := map[string]Verdict{}
		for _, r := range rs {
			m[r.Check] = r.Verdict
		}
		return m
	}
	all := func(v Verdict) map[string]Verdict {
		return map[string]Verdict{"P3/write-inside/tmp": v, "P3/write-outside/": v, "P3/masked-read/s": v, "P3/loopback-connect": v}
	}
	with := func(m map[string]Verdict, k string, v Verdict) map[string]Verdict {
		m[k] = v
		return m
	}
	// Nowhere to write: no positive control, so no write canary passes.
	noRoot := CanaryPlan{WriteOutside: []string{"/"}}
	o := Observation{Report: canary.Report{Writes: []canary.Attempt{{Path: "/", Err: "read-only file system"}}}, Created: map[string]bool{"/": false}}
	if g := verdicts(JudgeCanaries(noRoot, o)); !reflect.DeepEqual(g, map[string]Verdict{"P3/write-inside": Partial, "P3/write-outside/": Partial}) {
		t.Fatalf("no writable root: %v, want both PARTIAL", g)
	}
	for _, tc := range []struct {
		name string
		edit func(*Observation)
		want map[string]Verdict
	}{
		{"everything holds", nil, all(Pass)},
		{"write outside succeeded", func(o *Observation) { o.Created["/"] = true }, with(all(Pass), "P3/write-outside/", Fail)},
		{"host listener accepted", func(o *Observation) { o.Accepted = 1 }, with(all(Pass), "P3/loopback-connect", Fail)},
		{"mask missing", func(o *Observation) { o.Masked["/s"] = false }, with(all(Pass), "P3/masked-read/s", Fail)},
		{"secret bytes came back", func(o *Observation) {
			o.Report.Reads[0] = canary.Attempt{Path: "/s", Size: 6, SHA256: canary.Digest([]byte("secret"))}
		}, with(all(Pass), "P3/masked-read/s", Fail)},
		{"masked path absent", func(o *Observation) { o.Masked["/s"], o.Present["/s"] = false, false }, all(Pass)},
		{"positive control failed", func(o *Observation) { o.Created["/tmp"] = false }, with(with(all(Partial), "P3/masked-read/s", Pass), "P3/write-outside/", Partial)},
		{"positive control failed, breach still proven", func(o *Observation) { o.Created["/tmp"], o.Accepted = false, 2 }, with(with(all(Partial), "P3/masked-read/s", Pass), "P3/loopback-connect", Fail)},
		{"probe did not run", func(o *Observation) {
			o.ProbeErr, o.Report = "exec failed", canary.Report{}
			o.Created["/tmp"] = false
		}, with(with(all(Unavailable), "P3/masked-read/s", Pass), "P3/masked-read/s", Pass)},
		{"probe did not report an attempt", func(o *Observation) { o.Report.Connect = nil }, with(all(Pass), "P3/loopback-connect", Partial)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good()
			if tc.edit != nil {
				tc.edit(&o)
			}
			got := JudgeCanaries(plan, o)
			if g := verdicts(got); !reflect.DeepEqual(g, tc.want) {
				t.Fatalf("verdicts\n got %v\nwant %v\n%v", g, tc.want, got)
			}
			for _, r := range got {
				if r.Verdict == Pass && r.Evidence != HostFact {
					t.Errorf("%s passed on %s evidence", r.Check, r.Evidence)
				}
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		in   []Verdict
		want Summary
	}{
		{nil, Inconclusive},
		{[]Verdict{Pass, Pass}, AllPass},
		{[]Verdict{Pass, Partial}, Inconclusive},
		{[]Verdict{Unavailable, Pass}, Inconclusive},
		{[]Verdict{Partial, Fail, Pass}, AnyFail},
	} {
		var rs []Result
		for _, v := range tc.in {
			rs = append(rs, Result{Verdict: v})
		}
		if got := Summarize(rs); got != tc.want {
			t.Errorf("Summarize(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestReceiptClean(t *testing.T) {
	clean := Receipt{Method: "cgroup.kill", Killed: 3, CgroupRemoved: true, PidNamespaceGone: true, RelayStopped: true}
	if !clean.Clean() {
		t.Fatal("a clean receipt is not clean")
	}
	for name, edit := range map[string]func(*Receipt){
		"remaining":       func(r *Receipt) { r.Remaining = []int{7} },
		"cgroup left":     func(r *Receipt) { r.CgroupRemoved = false },
		"pidns populated": func(r *Receipt) { r.PidNamespaceGone = false },
		"relay running":   func(r *Receipt) { r.RelayStopped = false },
		"problem":         func(r *Receipt) { r.Problems = []string{"x"} },
	} {
		r := clean
		edit(&r)
		if r.Clean() {
			t.Errorf("%s: receipt %+v reported clean", name, r)
		}
		if !strings.Contains(r.String(), "but") {
			t.Errorf("%s: %q does not say what is left", name, r.String())
		}
	}
}

// The probe, run on the host against a temporary tree, reaches the host's
// listener, and the host's own count of its connections (what
// CanarySession.Judge checks a connect against) sees it.
func TestProbeSeenByTheHost(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var in, out bytes.Buffer
	if err := canary.WriteMessage(&in, canary.Config{Nonce: "n1", MaskedRead: []string{secret}, WriteInside: []string{dir}, WriteOutside: []string{filepath.Join(dir, "missing")}, Connect: l.Addr()}); err != nil {
		t.Fatal(err)
	}
	if err := canary.Probe(&in, &out); err != nil {
		t.Fatal(err)
	}
	var rep canary.Report
	if err := canary.ReadMessage(&out, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Reads) != 1 || rep.Reads[0].SHA256 != canary.Digest([]byte("token")) || rep.Reads[0].Size != 5 {
		t.Errorf("reads %+v", rep.Reads)
	}
	if data, err := os.ReadFile(filepath.Join(dir, ".vetto-canary-n1")); err != nil || string(data) != "n1" {
		t.Errorf("canary file: %q, %v", data, err)
	}
	if len(rep.Writes) != 2 || rep.Writes[0].Err != "" || rep.Writes[1].Err == "" {
		t.Errorf("writes %+v", rep.Writes)
	}
	if rep.Connect == nil || rep.Connect.Err != "" {
		t.Errorf("connect %+v", rep.Connect)
	}
	if n, err := l.accepted(); err != nil || n != 1 {
		t.Errorf("host listener saw %d connections (%v), want 1", n, err)
	}
}

// A mask counts only while nothing made after it covers it: a later bind
// of a parent leaves the mask in mountinfo and the file in view (12.5).
func TestIsMaskMountTopmost(t *testing.T) {
	mask := Mount{Root: "/null", Point: "/p/.env", FSType: "devtmpfs"}
	proj := Mount{Root: "/home/u/p", Point: "/p", FSType: "ext4"}
	// null: what the host reads at the path is the null device.
	tests := []struct {
		name       string
		mounts     []Mount
		null, want bool
	}{
		{"mask last", []Mount{proj, mask}, true, true},
		{"parent bound again after the mask", []Mount{proj, mask, proj}, false, false},
		{"/ mounted over everything", []Mount{proj, mask, {Root: "/", Point: "/", FSType: "ext4"}}, false, false},
		{"an unrelated later mount", []Mount{proj, mask, {Root: "/", Point: "/p2", FSType: "tmpfs"}}, true, true},
		{"a sibling with the same prefix", []Mount{proj, mask, {Root: "/", Point: "/p/.envx", FSType: "tmpfs"}}, true, true},
		{"no mask", []Mount{proj}, false, false},
		{"a writable tmpfs is no mask", []Mount{proj, {Root: "/", Point: "/p/.env", FSType: "tmpfs"}}, false, false},
		// A bind from a file the image named "null": its source path
		// says null, the host reads a regular file there.
		{"a file called null is no mask", []Mount{proj, {Root: "/null", Point: "/p/.env", FSType: "ext4"}}, false, false},
		// The rootfs's own /dev/null (no /dev tmpfs): a null device bound
		// from the image's filesystem is a mask.
		{"the null device from the rootfs", []Mount{proj, {Root: "/rootfs/dev/null", Point: "/p/.env", FSType: "ext4"}}, true, true},
	}
	for _, tt := range tests {
		if got := isMaskMount(tt.mounts, "/p/.env", tt.null); got != tt.want {
			t.Errorf("%s: isMaskMount = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Brief is one line however many checks failed and however long what
// they found: three checks at most, the rest counted.
func TestBrief(t *testing.T) {
	long := strings.Repeat("x", 500) + "\nsecond line"
	var rs []Result
	for _, c := range []string{"a", "b", "c", "d", "e"} {
		rs = append(rs, Result{Check: c, Verdict: Unavailable, Found: long})
	}
	rs = append(rs, Result{Check: "ok", Verdict: Pass})
	got := Brief(rs)
	if strings.Contains(got, "\n") || len(got) > 3*(briefFound+40)+20 || !strings.HasSuffix(got, "; and 2 more") || strings.Contains(got, "ok:") {
		t.Fatalf("Brief = %q", got)
	}
	if got := Brief([]Result{{Check: "P1", Verdict: Fail, Found: "pid 3"}}); got != "P1: FAIL (pid 3)" {
		t.Fatalf("Brief = %q", got)
	}
}
