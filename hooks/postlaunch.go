package hooks

import (
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// PostFacts are the host facts the post-launch and on-demand verification
// read beyond the pre-launch ones. Every method reads the kernel's view
// from outside the container.
type PostFacts interface {
	Facts
	// ProcStat reads pid's /proc/<pid>/stat: its state letter, start
	// time and whether it is exiting.
	ProcStat(pid int) (ProcState, error)
	// Mounts lists the mounts of pid's mount namespace in mountinfo order.
	Mounts(pid int) ([]Mount, error)
	// Exists reports whether path exists as pid sees it (through
	// /proc/<pid>/root, without following a final symlink).
	Exists(pid int, path string) (bool, error)
	// NullDevice reports whether path, as pid sees it, is the null
	// device (a character device 1:3), without opening it.
	NullDevice(pid int, path string) (bool, error)
	// FileDigest hashes the first canary.MaxRead bytes of the regular file
	// path under root, resolved without leaving root, and returns the
	// digest and the number of bytes hashed.
	FileDigest(root, path string) (string, int, error)
	// CgroupProcs lists the pids in the cgroup at dir (not its children).
	CgroupProcs(dir string) ([]int, error)
	// PidsInNamespace lists every host process in pid namespace ns.
	PidsInNamespace(ns NamespaceID) ([]int, error)
	// NestedIn reports whether pid's namespace of type t is nested in the
	// container's: a user or pid namespace that descends from ancestor
	// (the container's of that type), or another namespace owned by a
	// user namespace that descends from ancestor (the container's user
	// namespace) — one only a process inside the container could make.
	NestedIn(pid int, t specs.LinuxNamespaceType, ancestor NamespaceID) (bool, error)
}

// pathLooker is a PostFacts that answers Exists and NullDevice of one path
// in one look (ProcFacts does).
type pathLooker interface {
	LookPath(pid int, path string) (exists, null bool, err error)
}

// lookPath is whether path exists as pid sees it (with Exists' error) and
// whether it is the null device, in one look where f can.
func lookPath(f PostFacts, pid int, path string) (exists, null bool, err error) {
	if l, ok := f.(pathLooker); ok {
		return l.LookPath(pid, path)
	}
	exists, err = f.Exists(pid, path)
	null, _ = f.NullDevice(pid, path)
	return exists, null, err
}

// ProcState is what /proc/<pid>/stat says of a process's life.
type ProcState struct {
	// State is the state letter ('R', 'S', 'Z', …).
	State byte
	// Start is the start time, in clock ticks after boot: with the pid,
	// the process's identity (pids are reused).
	Start uint64
	// Exiting is PF_EXITING: the process is in do_exit, and may have
	// left its cgroups and namespaces before it reads as a zombie.
	Exiting bool
}

// Gone reports whether the process has exited or is exiting.
func (s ProcState) Gone() bool { return s.State == 'Z' || s.State == 'X' || s.Exiting }

// Mount is one line of /proc/<pid>/mountinfo, the fields the checks use.
type Mount struct {
	Root, Point, FSType string
	ReadOnly            bool
}

// Baseline is what the host recorded of the init when pre-launch
// verification passed; post-launch and `verify` compare the live process
// with it (P1, P2).
type Baseline struct {
	Pid        int                    `json:"pid"`
	StartTime  uint64                 `json:"startTime"`
	Namespaces map[string]NamespaceID `json:"namespaces"`
	Cgroups    map[string]string      `json:"cgroups"`
}

// baselineNamespaces are the namespace types recorded for every container,
// new or shared: a process that moved into another one is not the one
// that was verified. The time namespace is left out: a process enters a
// new one only at exec, which the init legitimately does after the
// baseline.
var baselineNamespaces = []specs.LinuxNamespaceType{
	specs.PIDNamespace, specs.NetworkNamespace, specs.MountNamespace,
	specs.IPCNamespace, specs.UTSNamespace, specs.UserNamespace, specs.CgroupNamespace,
}

// TakeBaseline reads pid's identity, namespaces and cgroups from the host.
func TakeBaseline(pid int, cgroups map[string]string, f PostFacts) (*Baseline, error) {
	st, err := f.ProcStat(pid)
	if err != nil {
		return nil, fmt.Errorf("baseline of pid %d: %w", pid, err)
	}
	b := &Baseline{Pid: pid, StartTime: st.Start, Namespaces: map[string]NamespaceID{}, Cgroups: maps.Clone(cgroups)}
	for _, t := range baselineNamespaces {
		id, err := f.Of(pid, t)
		if err != nil {
			// A kernel without this namespace type has no file for it.
			continue
		}
		b.Namespaces[string(t)] = id
	}
	return b, nil
}

// Identity is P1: the container's init is still the process recorded at
// create (same pid, same start time, not a zombie). A pid alone is not an
// identity: pids are reused.
func Identity(pid int, b *Baseline, f PostFacts) Result {
	r := Result{Check: "P1/identity", Evidence: HostFact,
		Expected: fmt.Sprintf("pid %d started at tick %d", b.Pid, b.StartTime)}
	if pid != b.Pid {
		r.Verdict, r.Found = Fail, "init pid "+strconv.Itoa(pid)
		return r
	}
	st, err := f.ProcStat(pid)
	switch {
	case err != nil:
		r.Verdict, r.Found = Unavailable, err.Error()
	case st.Start != b.StartTime:
		r.Verdict, r.Found = Fail, fmt.Sprintf("pid %d started at tick %d (another process)", pid, st.Start)
	case st.Gone():
		r.Verdict, r.Found = Unavailable, fmt.Sprintf("pid %d has exited", pid)
	default:
		r.Verdict, r.Found = Pass, fmt.Sprintf("pid %d started at tick %d", pid, st.Start)
	}
	return r
}

// Membership is P2: the init's namespaces and cgroups are the ones
// recorded before launch. sp is the container's spec: a move out of a
// cgroup is a FAIL where the hierarchy is a boundary of this container
// (boundaryCgroup), PARTIAL where it carries nothing of it.
func Membership(pid int, b *Baseline, cgroups map[string]string, f PostFacts, sp *specs.Spec) []Result {
	var out []Result
	// gone says pid has exited; once it has, it stays so, and its stat is
	// not read again for every hierarchy. A live answer is never kept: the
	// process may exit between two hierarchies, and a later one must not
	// read its leaving as a move.
	exitedOnce := false
	gone := func() bool {
		if !exitedOnce {
			exitedOnce = exited(pid, b, f)
		}
		return exitedOnce
	}
	for _, t := range slices.Sorted(maps.Keys(b.Namespaces)) {
		want := b.Namespaces[t]
		r := Result{Check: "P2/namespace/" + t, Evidence: HostFact, Expected: want.String()}
		got, err := f.Of(pid, specs.LinuxNamespaceType(t))
		nested := false
		if err == nil && got != want {
			// A namespace the process made inside the container (a
			// nested sandbox: unshare -U, then whatever that user
			// namespace may own) is not drift; only one outside is.
			nested, _ = f.NestedIn(pid, specs.LinuxNamespaceType(t), b.Namespaces[string(specs.UserNamespace)])
		}
		switch {
		case err != nil:
			r.Verdict, r.Found = Unavailable, err.Error()
		case got != want && gone():
			r.Verdict, r.Found = Unavailable, "pid "+strconv.Itoa(pid)+" exited during verification"
		case nested:
			r.Verdict, r.Found = Pass, got.String()+", nested in the container's user namespace"
		case got != want:
			r.Verdict, r.Found = Fail, got.String()
		default:
			r.Verdict, r.Found = Pass, got.String()
		}
		out = append(out, r)
	}
	for _, c := range slices.Sorted(maps.Keys(b.Cgroups)) {
		dir := b.Cgroups[c]
		name := "P2/cgroup/" + c
		if c == "" {
			name = "P2/cgroup/unified"
		}
		r := Result{Check: name, Evidence: HostFact, Expected: "pid " + strconv.Itoa(pid) + " in " + dir}
		if now := cgroups[c]; now != dir {
			r.Verdict, r.Found = Fail, "the backend now reports "+strconv.Quote(now)
			out = append(out, r)
			continue
		}
		in, err := f.InCgroup(dir, pid)
		child, left := "", false
		if err == nil && !in {
			// An exited process leaves its cgroups: that is not a move,
			// and no subtree of the container's holds it either. Asked
			// first, so a process that ended before its checks (a short
			// job) costs one read of its stat per hierarchy, not a walk.
			if left = gone(); !left {
				// A nested runtime may move the init into a cgroup of the
				// container's own subtree: still inside its limits and
				// its cgroup.kill.
				child = inSubtree(dir, pid, f)
			}
		}
		switch {
		case child != "":
			r.Verdict, r.Found = Pass, "member of "+child+", inside the container's cgroup"
		case err != nil:
			r.Verdict, r.Found = Unavailable, err.Error()
		case !in && left:
			// An exited process leaves its cgroups: that is not a move.
			r.Verdict, r.Found = Unavailable, "pid "+strconv.Itoa(pid)+" exited during verification"
		case !in && !boundaryCgroup(c, sp):
			// Someone with write access to the host's cgroups moved it;
			// nothing this container asked for depends on the hierarchy
			// (teardown and accounting go through the unified one).
			r.Verdict, r.Found = Partial, "not a member (moved; this controller holds no limit of the container)"
		case !in:
			r.Verdict, r.Found = Fail, "not a member"
		default:
			r.Verdict, r.Found = Pass, "member"
		}
		out = append(out, r)
	}
	return out
}

// inSubtree is the cgroup below dir (not dir itself) that holds pid, "" if
// none does.
func inSubtree(dir string, pid int, f PostFacts) string {
	found := ""
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == dir || found != "" {
			return nil
		}
		if pids, err := f.CgroupProcs(p); err == nil && slices.Contains(pids, pid) {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// boundaryCgroup says whether leaving controller c's cgroup (c is "" for
// the v2 or unified hierarchy) loses something the container relies on:
// the unified hierarchy (cgroup.kill teardown, P4's containment), the
// freezer (pause, v1 teardown), devices (device access), and any
// controller whose limits the spec sets.
func boundaryCgroup(c string, sp *specs.Spec) bool {
	switch c {
	case "", "freezer", "devices":
		return true
	}
	if sp == nil || sp.Linux == nil || sp.Linux.Resources == nil {
		return false
	}
	r := sp.Linux.Resources
	switch c {
	case "memory":
		return r.Memory != nil
	case "pids":
		return r.Pids != nil
	case "cpu", "cpuacct", "cpuset":
		return r.CPU != nil
	case "blkio":
		return r.BlockIO != nil
	case "hugetlb":
		return len(r.HugepageLimits) > 0
	case "net_cls", "net_prio":
		return r.Network != nil
	case "rdma":
		return len(r.Rdma) > 0
	case "misc":
		return len(r.Unified) > 0
	}
	return false
}

// exited reports whether the recorded init is gone, a zombie or exiting
// now (PF_EXITING), which explains a membership that no longer reads as
// the baseline's: exiting is not escaping.
func exited(pid int, b *Baseline, f PostFacts) bool {
	st, err := f.ProcStat(pid)
	return err != nil || st.Start != b.StartTime || st.Gone()
}
