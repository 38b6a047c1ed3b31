package launch

import (
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// bits hands out choices from fuzz input; past its end every choice is 0.
type bits struct {
	b []byte
	i int
}

func (b *bits) n(max int) int {
	if b.i >= len(b.b) || max <= 1 {
		b.i++
		return 0
	}
	v := int(b.b[b.i]) % max
	b.i++
	return v
}

func (b *bits) yes() bool { return b.n(2) == 1 }

func (b *bits) pick(list []string) string { return list[b.n(len(list))] }

var fuzzCaps = []string{"CAP_KILL", "CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_RAW", "CAP_SETFCAP", "CAP_SYS_PTRACE", "cap_dac_override", "CAP_MKNOD"}

// randomSpec is a spec whose every security-relevant field the fuzzer
// chooses: namespaces, seccomp, capabilities, limits, masks, mounts,
// devices, hooks, sysctls, users and annotations.
func randomSpec(b *bits) *specs.Spec {
	s := strictSpec()
	if b.yes() {
		keep := s.Linux.Namespaces[:0]
		for _, ns := range s.Linux.Namespaces {
			switch b.n(3) {
			case 0:
				keep = append(keep, ns)
			case 1:
				keep = append(keep, specs.LinuxNamespace{Type: ns.Type, Path: "/proc/1/ns/" + string(ns.Type)})
			}
		}
		s.Linux.Namespaces = keep
	}
	if b.yes() {
		s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "user"})
		s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(b.n(3)) * 1000, Size: uint32(1 + b.n(2)*65535)}}
	}
	switch b.n(4) {
	case 1:
		s.Linux.Seccomp = nil
	case 2:
		s.Linux.Seccomp.DefaultAction = []specs.LinuxSeccompAction{specs.ActAllow, specs.ActLog, specs.ActNotify, specs.ActKill}[b.n(4)]
	case 3:
		s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{b.pick(dangerousSyscalls)}, Action: specs.ActAllow})
	}
	s.Process.NoNewPrivileges = b.yes()
	if b.n(5) == 0 {
		s.Process.Capabilities = nil
	} else {
		for _, set := range []*[]string{&s.Process.Capabilities.Bounding, &s.Process.Capabilities.Effective, &s.Process.Capabilities.Ambient} {
			for k := b.n(3); k > 0; k-- {
				*set = append(*set, b.pick(fuzzCaps))
			}
		}
	}
	if b.yes() {
		s.Linux.Resources.Memory = nil
	}
	if b.yes() {
		s.Linux.Resources.Pids.Limit = i64(int64(b.n(3)) - 1)
	}
	if b.yes() {
		s.Linux.MaskedPaths = s.Linux.MaskedPaths[:b.n(len(s.Linux.MaskedPaths))]
	}
	if b.yes() {
		s.Linux.ReadonlyPaths = s.Linux.ReadonlyPaths[:b.n(len(s.Linux.ReadonlyPaths))]
	}
	sources := []string{"/", "/etc", "/usr", "/proc/sys", "/dev/sda", "/run", "/var/run/docker.sock", "/srv/data", "/root", "/boot", "/dev/null", "/home/u/proj"}
	for k := b.n(4); k > 0; k-- {
		opts := []string{"rbind"}
		if b.yes() {
			opts = append(opts, "ro")
		}
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/m" + b.pick([]string{"1", "2", "3"}), Type: b.pick([]string{"bind", "none"}), Source: b.pick(sources), Options: opts})
	}
	for k := b.n(3); k > 0; k-- {
		typ := b.pick([]string{"proc", "sysfs", "cgroup", "devpts", "tmpfs", "mqueue"})
		s.Mounts = append(s.Mounts, specs.Mount{Destination: b.pick([]string{"/proc", "/proc2", "/sys", "/dev/pts", "/x"}), Type: typ, Source: typ})
	}
	if b.yes() {
		s.Linux.Devices = append(s.Linux.Devices, specs.LinuxDevice{Path: "/dev/x", Type: b.pick([]string{"c", "b"}), Major: int64(b.n(300)), Minor: int64(b.n(3))})
	}
	if b.yes() {
		var major *int64
		if b.yes() {
			major = i64(int64(b.n(300)))
		}
		s.Linux.Resources.Devices = append(s.Linux.Resources.Devices, specs.LinuxDeviceCgroup{Allow: true, Type: b.pick([]string{"a", "b", "c"}), Major: major, Access: b.pick([]string{"m", "r", "rwm", "w"})})
	}
	if b.yes() {
		s.Hooks = &specs.Hooks{}
		h := specs.Hook{Path: b.pick([]string{"/bin/x", "/usr/bin/vetto-runtime"})}
		if b.yes() {
			h.Args = []string{"vetto-runtime", "hook", b.pick([]string{"poststart", "poststop"})}
		}
		switch b.n(3) {
		case 0:
			s.Hooks.CreateRuntime = []specs.Hook{h}
		case 1:
			s.Hooks.Poststart = []specs.Hook{h}
		default:
			s.Hooks.Poststop = []specs.Hook{h}
		}
	}
	if b.yes() {
		s.Linux.Sysctl = map[string]string{b.pick([]string{"kernel.core_pattern", "net.ipv4.ip_forward", "kernel.shmmax", "vm.swappiness"}): "1"}
	}
	if b.yes() {
		s.Process.ApparmorProfile = b.pick([]string{"unconfined", "x"})
	}
	if b.yes() {
		s.Annotations[AnnotationLevel] = b.pick([]string{"strict", "standard", "degraded", "bogus"})
	}
	if b.yes() {
		s.Annotations[AnnotationAllowDegraded] = b.pick([]string{"network", "verify", "landlock,limits", "cgroup-kill"})
	}
	if b.yes() {
		s.Annotations[AnnotationNet] = b.pick([]string{"none", "allowlist", "strict"})
	}
	if b.yes() {
		s.Linux.Resources.Memory = &specs.LinuxMemory{Limit: i64(1 << 20), KernelTCP: i64(1)}
	}
	return s
}

// FuzzEvaluate is the property of the issue: no request ends with more
// privilege than its level allows. Whatever the spec, request, host and
// floor, a launch the evaluator lets through at strict meets every strict
// demand (checked here independently, the plain way), one at standard is
// degraded only in what someone accepted, and none is below the floor.
func FuzzEvaluate(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte("\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01\x00\x01"))
	f.Add([]byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\xef\xee\xed\xec\xeb\xea\xe9\xe8"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := &bits{b: data}
		s := randomSpec(b)
		req := Request{Spec: s, NoVerify: b.n(4) == 0}
		if b.yes() {
			req.Level, req.LevelSet = Level(b.n(3)), true
		}
		req.Allow = map[Feature]bool{}
		for _, f := range FeatureNames() {
			if b.n(3) == 0 {
				req.Allow[Feature(f)] = true
			}
		}
		host := Host{Facts: b.n(5) != 0, LandlockABI: b.n(8), Relay: b.yes(), AppArmor: b.yes()}
		var floor *Floor
		if b.yes() {
			floor = &Floor{MinLevel: []string{"", "degraded", "standard", "strict"}[b.n(4)]}
			floor.Forbid.NoVerify = b.yes()
			floor.Forbid.Weakened = b.yes()
			floor.Forbid.Degradations = []string{b.pick(FeatureNames())}
			if err := floor.Validate(); err != nil {
				t.Fatal(err)
			}
		}
		d := Evaluate(req, host, floor)
		if !d.OK() {
			for _, v := range d.Violations {
				if _, ok := RuleByID(v.Rule); !ok {
					t.Fatalf("violation of unknown rule %q", v.Rule)
				}
			}
			return
		}
		if min, _ := floor.minimum(); d.Level < min {
			t.Fatalf("launch at %s below the floor's %s", d.Level, min)
		}
		if a, ok := s.Annotations[AnnotationLevel]; ok && !req.LevelSet {
			if al, err := ParseLevel(a); err == nil && al < Standard {
				if min, set := floor.minimum(); !set || al < min {
					t.Fatalf("annotation %s lowered the level with floor %+v", a, floor)
				}
			}
		}
		for _, g := range d.Degraded {
			switch {
			case d.Level == Strict:
				t.Fatalf("degradation %v at strict", g)
			case floor.forbidsDegradation(g.Feature):
				t.Fatalf("degradation %v the floor forbids", g)
			case d.Level == Standard && !req.Allow[g.Feature] && !(bundleFeatures[g.Feature] && strings.Contains(s.Annotations[AnnotationAllowDegraded], string(g.Feature))):
				t.Fatalf("degradation %v at standard that nobody accepted", g)
			}
		}
		if (req.NoVerify || !host.Facts) != d.Unverified {
			t.Fatalf("unverified %v with no-verify %v, facts %v", d.Unverified, req.NoVerify, host.Facts)
		}
		if d.Level == Strict {
			assertStrict(t, s, host)
		}
	})
}

// assertStrict restates the strict demands directly on the spec.
func assertStrict(t *testing.T, s *specs.Spec, host Host) {
	t.Helper()
	for _, typ := range []specs.LinuxNamespaceType{"pid", "mount", "network", "ipc", "uts"} {
		if p, ok := namespacePath(s, typ); !ok || p != "" {
			t.Fatalf("strict with the %s namespace not new", typ)
		}
	}
	sc := s.Linux.Seccomp
	if sc == nil || sc.DefaultAction == specs.ActAllow || sc.DefaultAction == specs.ActLog || sc.DefaultAction == specs.ActNotify {
		t.Fatalf("strict with seccomp %+v", sc)
	}
	for _, r := range sc.Syscalls {
		for _, n := range r.Names {
			if r.Action == specs.ActAllow && len(r.Args) == 0 && slices.Contains(dangerousSyscalls, n) {
				t.Fatalf("strict allows %s", n)
			}
		}
	}
	if !s.Process.NoNewPrivileges {
		t.Fatal("strict without no_new_privs")
	}
	if s.Process.Capabilities != nil {
		c := s.Process.Capabilities
		for _, set := range [][]string{c.Bounding, c.Effective, c.Permitted, c.Inheritable, c.Ambient} {
			for _, n := range set {
				if !minimalCaps[strings.ToUpper(n)] {
					t.Fatalf("strict with %s", n)
				}
			}
		}
	}
	if m := s.Linux.Resources.Memory; m == nil || m.Limit == nil || *m.Limit <= 0 {
		t.Fatal("strict without a memory limit")
	}
	if p := s.Linux.Resources.Pids; p == nil || p.Limit == nil || *p.Limit <= 0 {
		t.Fatal("strict without a pids limit")
	}
	for _, m := range runcMasked {
		if !slices.Contains(s.Linux.MaskedPaths, m) {
			t.Fatalf("strict without %s masked", m)
		}
	}
	for _, m := range runcReadonly {
		if !slices.Contains(s.Linux.ReadonlyPaths, m) {
			t.Fatalf("strict with %s writable", m)
		}
	}
	procs := 0
	for _, m := range s.Mounts {
		if m.Type == "proc" {
			procs++
		}
		if isBind(m) {
			ro := slices.Contains(m.Options, "ro")
			switch src := m.Source; {
			case src == "/dev/null" && ro:
			case src == "/", strings.HasPrefix(src, "/proc"), strings.HasPrefix(src, "/dev"), src == "/run", strings.HasPrefix(src, "/var/run"), src == "/root", src == "/boot":
				t.Fatalf("strict with a bind of %s", src)
			case (src == "/etc" || src == "/usr") && (!ro || !hostRootUnmapped(s)):
				t.Fatalf("strict with a bind of %s (ro %v, root unmapped %v)", src, ro, hostRootUnmapped(s))
			}
		}
	}
	if procs > 1 {
		t.Fatal("strict with a second proc")
	}
	for _, d := range s.Linux.Devices {
		if !standardDevice(d.Type, d.Major, d.Minor) {
			t.Fatalf("strict with device %+v", d)
		}
	}
	for _, d := range s.Linux.Resources.Devices {
		if d.Allow && strings.ContainsAny(d.Access, "rw") && (d.Type == "a" || d.Type == "b") {
			t.Fatalf("strict with device rule %+v", d)
		}
	}
	if s.Hooks != nil && len(s.Hooks.CreateRuntime) > 0 {
		t.Fatal("strict with a createRuntime hook")
	}
	for k := range s.Linux.Sysctl {
		if k == "kernel.core_pattern" || k == "vm.swappiness" {
			t.Fatalf("strict with sysctl %s", k)
		}
	}
	if host.AppArmor && s.Process.ApparmorProfile == "unconfined" {
		t.Fatal("strict AppArmor-unconfined")
	}
}

// FuzzExec: whatever the container's process and the exec request, an
// exec the evaluator lets through has no capability the container lacks
// in the same set, keeps no_new_privs, and is not root when it is not.
func FuzzExec(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Add([]byte{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := &bits{b: data}
		proc := func() *specs.Process {
			p := &specs.Process{Cwd: b.pick([]string{"/", "/proc/self/fd/3", "/work"}), NoNewPrivileges: b.yes(), User: specs.User{UID: uint32(b.n(2)) * 1000, GID: uint32(b.n(2)) * 1000}}
			if b.n(4) != 0 {
				p.Capabilities = &specs.LinuxCapabilities{}
				for _, set := range []*[]string{&p.Capabilities.Bounding, &p.Capabilities.Effective, &p.Capabilities.Permitted, &p.Capabilities.Inheritable, &p.Capabilities.Ambient} {
					for k := b.n(3); k > 0; k-- {
						*set = append(*set, b.pick(fuzzCaps))
					}
				}
			}
			return p
		}
		base, p := proc(), proc()
		if vs := Exec(base, p); len(vs) > 0 {
			return
		}
		var bc specs.LinuxCapabilities
		if base.Capabilities != nil {
			bc = *base.Capabilities
		}
		pc := p.Capabilities
		for _, pair := range [][2][]string{{bc.Bounding, pc.Bounding}, {bc.Effective, pc.Effective}, {bc.Permitted, pc.Permitted}, {bc.Inheritable, pc.Inheritable}, {bc.Ambient, pc.Ambient}} {
			for _, c := range pair[1] {
				if !slices.ContainsFunc(pair[0], func(x string) bool { return strings.EqualFold(x, c) }) {
					t.Fatalf("exec got %s, which the container's set %v lacks", c, pair[0])
				}
			}
		}
		if base.NoNewPrivileges && !p.NoNewPrivileges {
			t.Fatal("exec dropped no_new_privs")
		}
		if base.User.UID != 0 && p.User.UID == 0 {
			t.Fatal("exec as root from a non-root container")
		}
		if strings.HasPrefix(p.Cwd, "/proc") {
			t.Fatalf("exec cwd %s", p.Cwd)
		}
	})
}

// TestPreLaunchVerdicts: a failing check with a feature is a degradation
// the level may accept; without one it is a violation; a note is recorded.
func TestPreLaunchVerdicts(t *testing.T) {
	fail := func(check, feature string) hooks.Result {
		return hooks.Result{Check: check, Verdict: hooks.Fail, Feature: feature, Expected: "x", Found: "y"}
	}
	tests := []struct {
		name     string
		level    Level
		allow    map[Feature]bool
		results  []hooks.Result
		rules    []RuleID
		degraded int
		notes    int
	}{
		{"all pass", Standard, nil, []hooks.Result{{Check: "a", Verdict: hooks.Pass}}, nil, 0, 0},
		{"less privilege is a note (13.10)", Standard, nil, []hooks.Result{{Check: "capabilities/CapAmb", Verdict: hooks.Pass, Note: "less privilege than asked"}}, nil, 0, 1},
		{"namespace fail", Degraded, nil, []hooks.Result{fail("namespace/net", "")}, []RuleID{RulePreLaunchFail}, 0, 0},
		{"limits at standard", Standard, nil, []hooks.Result{fail("limits/memory", "limits")}, []RuleID{RuleDegradeStandard}, 0, 0},
		{"limits accepted", Standard, map[Feature]bool{FeatureLimits: true}, []hooks.Result{fail("limits/memory", "limits")}, nil, 1, 0},
		{"cgroup.kill at strict", Strict, map[Feature]bool{FeatureCgroupKill: true}, []hooks.Result{fail("cgroup/kill", "cgroup-kill")}, []RuleID{RuleStrictNoDegradation}, 0, 0},
		{"unavailable is no pass", Standard, nil, []hooks.Result{{Check: "status", Verdict: hooks.Unavailable}}, []RuleID{RulePreLaunchFail}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Decision{Level: tt.level, Allow: tt.allow}
			vs := d.PreLaunch(tt.results)
			var got []string
			for _, v := range vs {
				got = append(got, string(v.Rule))
			}
			if strings.Join(got, ",") != strings.Join(ids(tt.rules), ",") || len(d.Degraded) != tt.degraded || len(d.Notes) != tt.notes {
				t.Fatalf("violations %v degraded %v notes %v", vs, d.Degraded, d.Notes)
			}
		})
	}
}

// TestPostLaunchAction pins 13.7 and the verification issue's rules.
func TestPostLaunchAction(t *testing.T) {
	tests := []struct {
		level  Level
		s      hooks.Summary
		exited bool
		want   Action
	}{
		{Strict, hooks.AllPass, false, Verified},
		{Strict, hooks.AnyFail, false, Kill},
		{Standard, hooks.AnyFail, false, Kill},
		{Standard, hooks.AnyFail, true, Kill},
		{Degraded, hooks.AnyFail, false, Record},
		{Strict, hooks.Inconclusive, false, Kill},
		{Strict, hooks.Inconclusive, true, Exited},
		{Standard, hooks.Inconclusive, false, Unverified},
		{Standard, hooks.Inconclusive, true, Exited},
	}
	for _, tt := range tests {
		if got, _ := PostLaunch(tt.level, tt.s, tt.exited); got != tt.want {
			t.Errorf("PostLaunch(%s, %d, exited %v) = %s, want %s", tt.level, tt.s, tt.exited, got, tt.want)
		}
	}
}
