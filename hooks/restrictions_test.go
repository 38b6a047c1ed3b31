package hooks

import (
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// fakeRestricted adds each process's /proc/<pid>/status to fakePost.
type fakeRestricted struct {
	fakePost
	status map[int]ProcStatus
}

func (f fakeRestricted) Status(pid int) (ProcStatus, error) { return f.status[pid], nil }

// P4/restrictions fails for a process of the container that is less
// restricted than the spec — no filter, no no_new_privs, a capability
// outside its sets — and only once it stays so (a process entering the
// container applies them a moment late).
func TestRestrictionsFail(t *testing.T) {
	dir := t.TempDir() // the container's cgroup: its own, no children
	capMask := func(names ...string) uint64 {
		m, err := CapMask(names)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	sp := &specs.Spec{
		Process: &specs.Process{NoNewPrivileges: true, Capabilities: &specs.LinuxCapabilities{
			Effective: []string{"CAP_CHOWN"}, Permitted: []string{"CAP_CHOWN"}, Bounding: []string{"CAP_CHOWN"},
		}},
		Linux: &specs.Linux{Seccomp: &specs.LinuxSeccomp{DefaultAction: specs.ActErrno}},
	}
	ok := ProcStatus{Seccomp: 2, NoNewPrivs: 1, CapEff: capMask("CAP_CHOWN"), CapPrm: capMask("CAP_CHOWN"), CapBnd: capMask("CAP_CHOWN")}
	cases := []struct {
		name string
		edit func(*ProcStatus)
		want Verdict
	}{
		{"as the spec", nil, Pass},
		{"fewer capabilities", func(s *ProcStatus) { s.CapEff = 0 }, Pass},
		{"no seccomp filter", func(s *ProcStatus) { s.Seccomp = 0 }, Fail},
		{"no no_new_privs", func(s *ProcStatus) { s.NoNewPrivs = 0 }, Fail},
		{"CAP_SYS_ADMIN effective", func(s *ProcStatus) { s.CapEff |= capMask("CAP_SYS_ADMIN") }, Fail},
		{"CAP_SYS_ADMIN in the bounding set", func(s *ProcStatus) { s.CapBnd |= capMask("CAP_SYS_ADMIN") }, Fail},
		{"an ambient capability", func(s *ProcStatus) { s.CapAmb = capMask("CAP_CHOWN") }, Fail},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			child := ok
			if c.edit != nil {
				c.edit(&child)
			}
			f := fakeRestricted{
				fakePost: fakePost{state: 'S', start: 1, procs: map[string][]int{dir: {10, 11}}},
				status:   map[int]ProcStatus{10: ok, 11: child},
			}
			in := LiveInput{Pid: 10, Spec: sp, CgroupPaths: map[string]string{"": dir}, Baseline: &Baseline{Pid: 10, StartTime: 1}}
			got := Restrictions(in, f)
			if len(got) != 1 || got[0].Verdict != c.want {
				t.Fatalf("%v, want %s", got, c.want)
			}
			if c.want == Fail && got[0].Found == "" {
				t.Error("a FAIL that does not say which process")
			}
		})
	}
}
