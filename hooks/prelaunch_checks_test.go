package hooks

import (
	"errors"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

type fakeFacts struct {
	fakeNS
	status   ProcStatus
	maps     map[string][]IDMapping
	members  map[string]bool
	files    map[string]string
	hasKill  bool
	statusEr error
}

func (f fakeFacts) Status(int) (ProcStatus, error) { return f.status, f.statusEr }
func (f fakeFacts) IDMap(_ int, which string) ([]IDMapping, error) {
	return f.maps[which], nil
}
func (f fakeFacts) InCgroup(dir string, _ int) (bool, error) { return f.members[dir], nil }
func (f fakeFacts) CgroupFile(dir, name string) (string, error) {
	v, ok := f.files[dir+"/"+name]
	if !ok {
		return "", errors.New("no such file")
	}
	return v, nil
}
func (f fakeFacts) CgroupHas(string, string) (bool, error) { return f.hasKill, nil }

func mustMask(t *testing.T, names ...string) uint64 {
	m, err := CapMask(names)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPreLaunch(t *testing.T) {
	caps := []string{"CAP_CHOWN", "CAP_KILL"}
	// The kernel rounds a memory limit down to a page: 1 MiB + 100 reads
	// back as 1 MiB, which must pass.
	mem, pids := int64(1<<20+100), int64(10)
	base := func() *specs.Spec {
		return &specs.Spec{
			Process: &specs.Process{NoNewPrivileges: true, Capabilities: &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}},
			Linux: &specs.Linux{
				Namespaces:  []specs.LinuxNamespace{{Type: "network"}, {Type: "user"}},
				UIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 1}},
				GIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 1}},
				Seccomp:     &specs.LinuxSeccomp{DefaultAction: specs.ActErrno},
				Resources:   &specs.LinuxResources{Memory: &specs.LinuxMemory{Limit: &mem}, Pids: &specs.LinuxPids{Limit: &pids}},
			},
		}
	}
	good := func() fakeFacts {
		m := mustMask(t, caps...)
		return fakeFacts{
			fakeNS: fakeNS{
				of:   map[specs.LinuxNamespaceType]NamespaceID{"network": {4, 10}, "user": {4, 11}},
				host: map[specs.LinuxNamespaceType]NamespaceID{"network": {4, 1}, "user": {4, 2}},
			},
			status:  ProcStatus{Seccomp: 2, NoNewPrivs: 1, CapEff: m, CapPrm: m, CapBnd: m},
			maps:    map[string][]IDMapping{"uid_map": {{0, 1000, 1}}, "gid_map": {{0, 1000, 1}}},
			members: map[string]bool{"/cg/memory": true, "/cg/pids": true, "/cg/v2": true},
			files:   map[string]string{"/cg/memory/memory.limit_in_bytes": "1048576", "/cg/pids/pids.max": "10"},
			hasKill: true,
		}
	}
	paths := map[string]string{"memory": "/cg/memory", "pids": "/cg/pids", "": "/cg/v2"}
	tests := []struct {
		name     string
		facts    func(f *fakeFacts)
		kill     bool
		failing  []string // checks that must not PASS
		features []string // their features, in order
	}{
		{"all good", func(*fakeFacts) {}, true, nil, nil},
		{"seccomp off", func(f *fakeFacts) { f.status.Seccomp = 0 }, false, []string{"seccomp"}, []string{""}},
		{"no_new_privs off", func(f *fakeFacts) { f.status.NoNewPrivs = 0 }, false, []string{"no_new_privs"}, []string{""}},
		{"extra effective cap", func(f *fakeFacts) { f.status.CapEff |= mustMask(t, "CAP_SYS_ADMIN") }, false, []string{"capabilities/CapEff"}, []string{""}},
		{"ambient cap", func(f *fakeFacts) { f.status.CapAmb = mustMask(t, "CAP_KILL") }, false, []string{"capabilities/CapAmb"}, []string{""}},
		{"uid map differs", func(f *fakeFacts) { f.maps["uid_map"] = []IDMapping{{0, 0, 1}} }, false, []string{"userns/uid_map"}, []string{""}},
		{"not in the memory cgroup", func(f *fakeFacts) { f.members["/cg/memory"] = false }, false, []string{"cgroup/memory"}, []string{""}},
		{"memory limit missing", func(f *fakeFacts) { f.files["/cg/memory/memory.limit_in_bytes"] = "9223372036854771712" }, false, []string{"limits/memory"}, []string{FeatureLimits}},
		{"memory limit above the request", func(f *fakeFacts) { f.files["/cg/memory/memory.limit_in_bytes"] = "1052672" }, false, []string{"limits/memory"}, []string{FeatureLimits}},
		{"memory limit a page below", func(f *fakeFacts) { f.files["/cg/memory/memory.limit_in_bytes"] = "1044480" }, false, []string{"limits/memory"}, []string{FeatureLimits}},
		{"pids unlimited", func(f *fakeFacts) { f.files["/cg/pids/pids.max"] = "max" }, false, []string{"limits/pids"}, []string{FeatureLimits}},
		{"no cgroup.kill at strict", func(f *fakeFacts) { f.hasKill = false }, true, []string{"cgroup/kill"}, []string{FeatureCgroupKill}},
		{"network namespace is the host's", func(f *fakeFacts) { f.of["network"] = NamespaceID{4, 1} }, false, []string{"namespace/network"}, []string{""}},
		{"status unreadable", func(f *fakeFacts) { f.statusEr = errors.New("gone") }, false, []string{"status"}, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := good()
			tt.facts(&f)
			res := PreLaunch(PreLaunchInput{Pid: 7, Spec: base(), CgroupPaths: paths, RequireCgroupKill: tt.kill}, f)
			var failing, features []string
			for _, r := range res {
				if r.Verdict != Pass {
					failing = append(failing, r.Check)
					features = append(features, r.Feature)
				}
			}
			if strings.Join(failing, ",") != strings.Join(tt.failing, ",") || strings.Join(features, ",") != strings.Join(tt.features, ",") {
				t.Fatalf("failing %v (features %v), want %v (%v); results: %v", failing, features, tt.failing, tt.features, res)
			}
		})
	}
}

func TestParseStatusAndIDMap(t *testing.T) {
	st, err := parseStatus("Name:\tsh\nSeccomp:\t2\nNoNewPrivs:\t1\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000420\nCapEff:\t0000000000000420\nCapBnd:\t00000000a80425fb\nCapAmb:\t0000000000000000\n")
	if err != nil || st.Seccomp != 2 || st.NoNewPrivs != 1 || st.CapEff != 0x420 || st.CapBnd != 0xa80425fb {
		t.Fatalf("parseStatus = %+v, %v", st, err)
	}
	if _, err := parseStatus("Seccomp:\t2\n"); err == nil {
		t.Fatal("status without capability lines parsed")
	}
	m, err := parseIDMap("         0       1000          1\n         1     100000      65536\n")
	if err != nil || len(m) != 2 || m[1] != (IDMapping{1, 100000, 65536}) {
		t.Fatalf("parseIDMap = %v, %v", m, err)
	}
	if _, err := parseIDMap("0 1000\n"); err == nil {
		t.Fatal("short id map line parsed")
	}
	if got := CapNames(mustMask(t, "CAP_KILL", "CAP_CHOWN")); strings.Join(got, ",") != "CAP_CHOWN,CAP_KILL" {
		t.Fatalf("CapNames = %v", got)
	}
	if _, err := CapMask([]string{"CAP_BOGUS"}); err == nil {
		t.Fatal("unknown capability accepted")
	}
}
