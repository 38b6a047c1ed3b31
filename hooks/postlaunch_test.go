package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// fakePost is a PostFacts whose process table the test writes.
type fakePost struct {
	PostFacts // nil: every method the checks call is defined below
	state     byte
	start     uint64
	gone      bool
	exiting   bool
	ns        map[specs.LinuxNamespaceType]NamespaceID
	members   map[string]bool
	nested    map[specs.LinuxNamespaceType]bool
	procs     map[string][]int
}

func (f fakePost) ProcStat(int) (ProcState, error) {
	if f.gone {
		return ProcState{}, errors.New("no such process")
	}
	return ProcState{State: f.state, Start: f.start, Exiting: f.exiting}, nil
}

func (f fakePost) Of(_ int, t specs.LinuxNamespaceType) (NamespaceID, error) {
	if f.gone {
		return NamespaceID{}, errors.New("no such process")
	}
	return f.ns[t], nil
}

func (f fakePost) InCgroup(dir string, _ int) (bool, error) { return f.members[dir], nil }

func (f fakePost) NestedIn(_ int, t specs.LinuxNamespaceType, _ NamespaceID) (bool, error) {
	return f.nested[t], nil
}

func (f fakePost) CgroupProcs(dir string) ([]int, error) { return f.procs[dir], nil }

func (f fakePost) NullDevice(int, string) (bool, error) { return false, nil }

// P1 and P2 fail for a process that is not the recorded one or moved, and
// do not call an exit a breach.
func TestIdentityAndMembership(t *testing.T) {
	base := &Baseline{Pid: 7, StartTime: 100,
		Namespaces: map[string]NamespaceID{"pid": {Dev: 4, Ino: 1}, "network": {Dev: 4, Ino: 2}},
		Cgroups:    map[string]string{"": "/cg/c1"}}
	live := func() fakePost {
		return fakePost{state: 'S', start: 100,
			ns:      map[specs.LinuxNamespaceType]NamespaceID{"pid": {Dev: 4, Ino: 1}, "network": {Dev: 4, Ino: 2}},
			members: map[string]bool{"/cg/c1": true}}
	}
	cgroups := map[string]string{"": "/cg/c1"}
	for _, tc := range []struct {
		name     string
		pid      int
		edit     func(*fakePost, map[string]string)
		identity Verdict
		fails    []string
	}{
		{"unchanged", 7, nil, Pass, nil},
		{"pid reused", 7, func(f *fakePost, _ map[string]string) { f.start = 101 }, Fail, nil},
		{"another init", 8, nil, Fail, nil},
		{"zombie", 7, func(f *fakePost, _ map[string]string) { f.state = 'Z' }, Unavailable, nil},
		// In do_exit: it may have left its namespaces and cgroups before
		// it reads as a zombie. Exiting is not escaping.
		{"exiting, already out of its namespace", 7, func(f *fakePost, _ map[string]string) {
			f.exiting = true
			f.ns["network"] = NamespaceID{Dev: 4, Ino: 9}
		}, Unavailable, nil},
		{"moved network namespace", 7, func(f *fakePost, _ map[string]string) { f.ns["network"] = NamespaceID{Dev: 4, Ino: 9} }, Pass, []string{"P2/namespace/network"}},
		// unshare -U, then a network namespace of that user namespace: a
		// nested sandbox inside the container, not drift.
		{"nested user and network namespaces", 7, func(f *fakePost, _ map[string]string) {
			f.ns["network"], f.ns["user"] = NamespaceID{Dev: 4, Ino: 9}, NamespaceID{Dev: 4, Ino: 10}
			f.nested = map[specs.LinuxNamespaceType]bool{"network": true, "user": true}
		}, Pass, nil},
		{"left its cgroup", 7, func(f *fakePost, _ map[string]string) { f.members["/cg/c1"] = false }, Pass, []string{"P2/cgroup/unified"}},
		{"backend reports another cgroup", 7, func(_ *fakePost, cg map[string]string) { cg[""] = "/cg/other" }, Pass, []string{"P2/cgroup/unified"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := live()
			cg := map[string]string{"": cgroups[""]}
			if tc.edit != nil {
				tc.edit(&f, cg)
			}
			if got := Identity(tc.pid, base, f); got.Verdict != tc.identity || got.Evidence != HostFact {
				t.Fatalf("P1 = %+v, want %s", got, tc.identity)
			}
			var fails []string
			for _, r := range Membership(tc.pid, base, cg, f, nil) {
				if r.Verdict == Fail {
					fails = append(fails, r.Check)
				}
			}
			if len(fails) != len(tc.fails) || (len(fails) > 0 && fails[0] != tc.fails[0]) {
				t.Fatalf("P2 failures %v, want %v", fails, tc.fails)
			}
		})
	}
	// Leaving a v1 controller's cgroup is a FAIL where the controller holds
	// one of the container's limits (or is a boundary of its own), PARTIAL
	// where it holds nothing of the container.
	ten := int64(10)
	limited := &specs.Spec{Linux: &specs.Linux{Resources: &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &ten}}}}
	for _, tc := range []struct {
		controller string
		sp         *specs.Spec
		want       Verdict
	}{
		{"pids", nil, Partial},
		{"pids", limited, Fail},
		{"memory", limited, Partial},
		{"devices", nil, Fail},
		{"freezer", nil, Fail},
		{"", nil, Fail},
	} {
		b := &Baseline{Pid: 7, StartTime: 100, Cgroups: map[string]string{tc.controller: "/cg/x"}}
		f := live()
		got := Membership(7, b, map[string]string{tc.controller: "/cg/x"}, f, tc.sp)
		if len(got) != 1 || got[0].Verdict != tc.want {
			t.Errorf("moved out of %q (spec %v): %+v, want %s", tc.controller, tc.sp != nil, got, tc.want)
		}
	}

	// A process that exited during the checks left its cgroup: that is
	// UNAVAILABLE, not a FAIL.
	f := live()
	f.members["/cg/c1"], f.state = false, 'Z'
	for _, r := range Membership(7, base, cgroups, f, nil) {
		if r.Verdict == Fail {
			t.Fatalf("an exited init was judged moved: %+v", r)
		}
	}
}

// countingPost counts the looks Membership takes at a process table.
type countingPost struct {
	fakePost
	stats, lists int
	exitAfter    int // ProcStat reads after which the process is a zombie; 0: never
}

func (f *countingPost) ProcStat(pid int) (ProcState, error) {
	f.stats++
	if f.exitAfter > 0 && f.stats > f.exitAfter {
		f.state = 'Z'
	}
	return f.fakePost.ProcStat(pid)
}

func (f *countingPost) CgroupProcs(dir string) ([]int, error) {
	f.lists++
	return f.fakePost.CgroupProcs(dir)
}

// An init that exited before its checks is not looked for in the
// subtrees of its cgroups (a short job's every hierarchy would be walked
// for nothing), and its stat is read once, not once per hierarchy. One
// that is alive is still looked for there, hierarchy after hierarchy.
func TestMembershipOfAnExitedInit(t *testing.T) {
	root := t.TempDir()
	cgroups := map[string]string{}
	for _, c := range []string{"", "memory", "pids"} {
		dir := filepath.Join(root, "h"+c, "c1")
		if err := os.MkdirAll(filepath.Join(dir, "nested"), 0o755); err != nil {
			t.Fatal(err)
		}
		cgroups[c] = dir
	}
	base := &Baseline{Pid: 7, StartTime: 100, Cgroups: cgroups}
	f := &countingPost{fakePost: fakePost{state: 'Z', start: 100, members: map[string]bool{}}}
	for _, r := range Membership(7, base, cgroups, f, nil) {
		if r.Verdict != Unavailable {
			t.Errorf("%s of an exited init: %s (%s), want UNAVAILABLE", r.Check, r.Verdict, r.Found)
		}
	}
	if f.lists != 0 || f.stats != 1 {
		t.Errorf("an exited init: %d subtree lists and %d stat reads, want 0 and 1", f.lists, f.stats)
	}

	// Alive and out of every cgroup: each subtree is searched, and its
	// stat read again each time (it may exit between two hierarchies).
	live := &countingPost{fakePost: fakePost{state: 'S', start: 100, members: map[string]bool{}}}
	Membership(7, base, cgroups, live, nil)
	if live.lists != len(cgroups) || live.stats != len(cgroups) {
		t.Errorf("a live init out of its cgroups: %d subtree lists and %d stat reads, want %d of each", live.lists, live.stats, len(cgroups))
	}

	// Exits after the first hierarchy: the first is judged as a move,
	// the rest as the exit they are.
	late := &countingPost{fakePost: fakePost{state: 'S', start: 100, members: map[string]bool{}}, exitAfter: 1}
	got := Membership(7, base, cgroups, late, nil)
	if got[0].Verdict != Fail || got[1].Verdict != Unavailable || got[2].Verdict != Unavailable {
		t.Errorf("an init that exits after the first hierarchy: %v %v %v, want FAIL UNAVAILABLE UNAVAILABLE", got[0].Verdict, got[1].Verdict, got[2].Verdict)
	}
}

// containFacts is a process table for P4/contained; inCgroupLater are
// pids that reach cgroup.procs only on the second look (caught between
// fork and cgroup_post_fork).
type containFacts struct {
	PostFacts
	cgroup        []int
	ns            []int
	nsOf          map[int]NamespaceID
	exiting       map[int]bool
	inCgroupLater map[int]bool
	looks         map[int]int
	nestedPid     map[int]bool
	// sharer is the cgroup of a container that joined the namespace;
	// inSharer the pids it holds.
	sharer   string
	inSharer map[int]bool
	// sharerLate: the first listing of the joiners does not have it yet.
	sharerLate bool
}

func (f *containFacts) CgroupProcs(string) ([]int, error)          { return f.cgroup, nil }
func (f *containFacts) PidsInNamespace(NamespaceID) ([]int, error) { return f.ns, nil }
func (f *containFacts) Of(pid int, _ specs.LinuxNamespaceType) (NamespaceID, error) {
	return f.nsOf[pid], nil
}
func (f *containFacts) NestedIn(pid int, _ specs.LinuxNamespaceType, _ NamespaceID) (bool, error) {
	return f.nestedPid[pid], nil
}
func (f *containFacts) ProcStat(pid int) (ProcState, error) {
	return ProcState{State: 'S', Exiting: f.exiting[pid]}, nil
}
func (f *containFacts) InCgroup(dir string, pid int) (bool, error) {
	if f.sharer != "" && dir == f.sharer {
		return f.inSharer[pid], nil
	}
	f.looks[pid]++
	return f.inCgroupLater[pid] && f.looks[pid] > 1, nil
}

// A nested runtime's child cgroup of the container's cgroup is inside it;
// a sibling is not.
func TestInSubtree(t *testing.T) {
	dir := t.TempDir()
	child := dir + "/nested/inner"
	if err := os.MkdirAll(child, 0o755); err != nil {
		t.Fatal(err)
	}
	f := fakePost{procs: map[string][]int{child: {7}}}
	if got := inSubtree(dir, 7, f); got != child {
		t.Fatalf("inSubtree = %q, want %q", got, child)
	}
	if got := inSubtree(dir, 8, f); got != "" {
		t.Fatalf("inSubtree of a process elsewhere = %q", got)
	}
}

// P4/contained fails for a live process on one side only, and not for one
// that is forking into the cgroup or exiting out of it.
func TestContained(t *testing.T) {
	own, other := NamespaceID{Dev: 4, Ino: 1}, NamespaceID{Dev: 4, Ino: 2}
	tests := []struct {
		name string
		edit func(*containFacts)
		want Verdict
	}{
		{"all contained", nil, Pass},
		{"escaped the cgroup", func(f *containFacts) { f.ns = append(f.ns, 9) }, Fail},
		{"exiting, already out of cgroup.procs", func(f *containFacts) { f.ns = append(f.ns, 9); f.exiting[9] = true }, Pass},
		{"forked, not yet in cgroup.procs", func(f *containFacts) { f.ns = append(f.ns, 9); f.inCgroupLater[9] = true }, Pass},
		{"joined from another pid namespace", func(f *containFacts) { f.cgroup = append(f.cgroup, 9); f.nsOf[9] = other }, Fail},
		{"joined, exiting", func(f *containFacts) { f.cgroup = append(f.cgroup, 9); f.nsOf[9] = other; f.exiting[9] = true }, Pass},
		{"in a nested pid namespace (a sandbox inside)", func(f *containFacts) {
			f.cgroup = append(f.cgroup, 9)
			f.nsOf[9] = other
			f.nestedPid = map[int]bool{9: true}
		}, Pass},
		// podman --pid container:, a pod sharing its process namespace,
		// kubectl debug --target: the joiner's processes are in its own
		// cgroup.
		{"in the cgroup of a container that joined the namespace", func(f *containFacts) {
			f.ns = append(f.ns, 9)
			f.sharer, f.inSharer = "/sys/fs/cgroup/vetto-runtime/joiner", map[int]bool{9: true}
		}, Pass},
		{"outside the cgroups of the containers that joined it", func(f *containFacts) {
			f.ns = append(f.ns, 9, 10)
			f.sharer, f.inSharer = "/sys/fs/cgroup/vetto-runtime/joiner", map[int]bool{9: true}
		}, Fail},
		// The joiner's init is in the namespace before its launch has
		// recorded it: it is known at a later look.
		{"joined, its record written a moment later", func(f *containFacts) {
			f.ns = append(f.ns, 9)
			f.sharer, f.inSharer, f.sharerLate = "/sys/fs/cgroup/vetto-runtime/joiner", map[int]bool{9: true}, true
		}, Pass},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &containFacts{cgroup: []int{7, 8}, ns: []int{7, 8}, nsOf: map[int]NamespaceID{7: own, 8: own},
				exiting: map[int]bool{}, inCgroupLater: map[int]bool{}, looks: map[int]int{}}
			if tc.edit != nil {
				tc.edit(f)
			}
			in := LiveInput{Pid: 7, Baseline: &Baseline{Namespaces: map[string]NamespaceID{"pid": own}},
				Spec:        &specs.Spec{Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.PIDNamespace}}}},
				CgroupPaths: map[string]string{"": t.TempDir()}}
			asked := 0
			if f.sharer != "" {
				in.Sharers = func() []map[string]string {
					asked++
					if f.sharerLate && asked == 1 {
						return nil
					}
					return []map[string]string{{"": f.sharer}}
				}
			}
			got := Contained(in, f)
			if len(got) != 1 || got[0].Verdict != tc.want {
				t.Fatalf("got %v, want %s", got, tc.want)
			}
			if f.sharer != "" && !f.sharerLate && tc.want == Pass && asked != 1 {
				t.Errorf("the joiners were listed %d times for a namespace with nothing to look at again, want once", asked)
			}
			if f.sharer != "" && tc.want == Pass && !strings.Contains(got[0].Found, f.sharer) {
				t.Errorf("found %q does not name the cgroup of the container that joined", got[0].Found)
			}
		})
	}
}

// A container created in no cgroup (rootless, no delegation): P4/contained
// has no second list to compare and says nothing, the launch named it; a
// container that should have a cgroup and reports none is UNAVAILABLE,
// never a PASS. Pre-launch, no cgroup is the cgroup-kill degradation.
func TestNoCgroup(t *testing.T) {
	own := NamespaceID{Dev: 4, Ino: 1}
	in := LiveInput{Pid: 7, Baseline: &Baseline{Namespaces: map[string]NamespaceID{"pid": own}},
		Spec: &specs.Spec{Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{{Type: specs.PIDNamespace}}}}}
	f := &containFacts{ns: []int{7, 8}, nsOf: map[int]NamespaceID{7: own, 8: own}, exiting: map[int]bool{}, inCgroupLater: map[int]bool{}, looks: map[int]int{}}
	if got := Contained(in, f); len(got) != 1 || got[0].Verdict != Unavailable {
		t.Errorf("no cgroup reported, none planned: %v, want UNAVAILABLE", got)
	}
	in.NoCgroup = true
	if got := Contained(in, f); len(got) != 0 {
		t.Errorf("no cgroup planned: %v, want no P4/contained verdict", got)
	}
	for _, tc := range []struct {
		noCgroup bool
		want     Verdict
		feature  string
	}{{false, Unavailable, ""}, {true, Fail, FeatureCgroupKill}} {
		got := checkCgroups(PreLaunchInput{Pid: 7, NoCgroup: tc.noCgroup}, fakeFacts{})
		if len(got) != 1 || got[0].Verdict != tc.want || got[0].Feature != tc.feature {
			t.Errorf("pre-launch, NoCgroup %v: %v, want %s with feature %q", tc.noCgroup, got, tc.want, tc.feature)
		}
	}
}
