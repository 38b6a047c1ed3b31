package hooks

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// LiveInput is a running container as the post-launch and on-demand
// verification see it.
type LiveInput struct {
	// Pid is the init's host pid now; Baseline what was recorded at create.
	Pid      int
	Baseline *Baseline
	Spec     *specs.Spec
	// Rootfs is the rootfs on the host (for the bytes under masks).
	Rootfs string
	// CgroupPaths are the container's cgroups as the backend reports them
	// now, by controller ("" for cgroup v2).
	CgroupPaths map[string]string
	// NoCgroup: the container was created in no cgroup (rootless, no
	// delegation; cgroup-kill and limits were accepted degradations). Its
	// processes are those of its pid namespace; no limit is read back.
	NoCgroup bool
	// Sharers, when set, returns the cgroups (by controller, as
	// CgroupPaths) of the other containers the runtime knows whose init
	// is in this container's pid namespace: they joined it (podman or
	// docker --pid container:, a Kubernetes pod that shares its process
	// namespace, an ephemeral container of kubectl debug --target). A
	// process of the namespace in one of their cgroups is that
	// container's, held by its limits and its cgroup.kill, not an escape
	// from this one (Contained). Asked only once such a process is found.
	Sharers func() []map[string]string
}

// PostExec is the poststart verification once the program has exec'd
// (docs/verification.md): P1 identity, P2 membership, and every process's
// restrictions. The P3 canaries ran before it, in the same process, in
// the same domain (CanarySession, the exec shim). When the init is not the
// recorded process nothing else is judged: it would be someone else.
func PostExec(in LiveInput, f PostFacts) []Result {
	return PostExecWith(in, f, nil)
}

// PostExecWith is PostExec with P2 read already: membership is what
// execve cannot change (namespaces and cgroups are kept across it), so a
// start reads it while it waits for the exec (EarlyMembership) and gets
// it here; nil reads it now. Identity is still judged first, after the
// exec: a membership read of a process that identity then finds is not
// the recorded one is dropped with the rest.
func PostExecWith(in LiveInput, f PostFacts, membership func() []Result) []Result {
	id := Identity(in.Pid, in.Baseline, f)
	out := []Result{id}
	if id.Verdict != Pass {
		return out
	}
	if membership == nil {
		out = append(out, Membership(in.Pid, in.Baseline, in.CgroupPaths, f, in.Spec)...)
	} else {
		out = append(out, membership()...)
	}
	out = append(out, Restrictions(in, f)...)
	return append(out, rlimits(in, f)...)
}

// EarlyMembership begins reading P2 of in's process in the background
// and returns the wait for it, for PostExecWith.
func EarlyMembership(in LiveInput, f PostFacts) func() []Result {
	done := make(chan []Result, 1)
	go func() { done <- Membership(in.Pid, in.Baseline, in.CgroupPaths, f, in.Spec) }()
	return sync.OnceValue(func() []Result { return <-done })
}

// rlimits is P7/rlimit where the platform reads a process's limits.
func rlimits(in LiveInput, f PostFacts) []Result {
	x, ok := f.(LimitFacts)
	if !ok {
		return nil
	}
	l, err := x.Limits(in.Pid)
	return CheckRlimits(in.Pid, in.Spec, l, err)
}

// OnDemand is `verify` and the monitor: what can change after launch —
// P1, P2 and the network the intent asks for, P4 (every process of the
// container is in its pid namespace and cgroup, and restricted as the
// spec says), P6 (masked paths still masked) and P7 (limits read back from
// the cgroup). The canaries are not run again: the workload's Landlock
// domain and seccomp filter cannot be loosened once applied, and a probe
// beside a running workload is one it can touch.
func OnDemand(in LiveInput, f PostFacts) []Result {
	id := Identity(in.Pid, in.Baseline, f)
	out := []Result{id}
	if id.Verdict != Pass {
		return out
	}
	out = append(out, Membership(in.Pid, in.Baseline, in.CgroupPaths, f, in.Spec)...)
	out = append(out, NetworkIntent(in.Pid, in.Spec, f)...)
	out = append(out, Contained(in, f)...)
	out = append(out, Restrictions(in, f)...)
	out = append(out, StillMasked(in, f)...)
	out = append(out, rlimits(in, f)...)
	if in.NoCgroup {
		// Nothing was applied, and the launch said so (degraded: limits).
		return out
	}
	for _, r := range checkLimits(PreLaunchInput{Pid: in.Pid, Spec: in.Spec, CgroupPaths: in.CgroupPaths}, f) {
		r.Check = "P7/" + r.Check
		r.Evidence = HostFact
		out = append(out, r)
	}
	return out
}

// NetworkIntent judges from the host what the loopback canary checks from
// inside: a container whose intent (dev.vetto.net) or spec says it has a
// network of its own is not in the host's network namespace. A bundle
// that says network none but shares the host's network fails here.
func NetworkIntent(pid int, s *specs.Spec, f PostFacts) []Result {
	plan, err := PlanCanaries(s)
	if err != nil || !plan.ConnectMustFail {
		return nil
	}
	r := Result{Check: "P3/network-namespace", Evidence: HostFact}
	got, gerr := f.Of(pid, specs.NetworkNamespace)
	host, herr := f.Host(specs.NetworkNamespace)
	r.Expected = "not the host's network namespace " + host.String()
	switch {
	case gerr != nil || herr != nil:
		r.Verdict, r.Found = Unavailable, fmt.Sprint(gerr, herr)
	case got == host:
		r.Verdict, r.Found = Fail, "the host's "+got.String()+": the host's loopback is reachable"
	default:
		r.Verdict, r.Found = Pass, got.String()
	}
	return []Result{r}
}

// restrictionsGrace is how often a process caught unrestricted is looked at
// again, and restrictionsPatience how long a process that enters the
// container from outside may take to apply the container's restrictions.
const (
	restrictionsGrace    = 100 * time.Millisecond
	restrictionsPatience = time.Second
)

// Restrictions reads /proc/<pid>/status of every process in the
// container's cgroups, not only the init's, and judges each against the
// spec: a seccomp filter where the spec has one, no_new_privs where it
// asks for it, no capability outside the spec's sets (an exec'd process
// may have fewer). A process that exits meanwhile is skipped: exiting is
// not escaping.
func Restrictions(in LiveInput, f PostFacts) []Result {
	dir := in.CgroupPaths[""]
	if dir == "" {
		dir = in.CgroupPaths["pids"]
	}
	r := Result{Check: "P4/restrictions", Evidence: HostFact, Expected: "every process: the spec's seccomp filter, no_new_privs and no capability outside its sets"}
	var pids []int
	var err error
	switch pidns, ok := in.Baseline.Namespaces[string(specs.PIDNamespace)]; {
	case dir == "" && in.NoCgroup && ok:
		// No cgroup: the pid namespace of its own (which the launch
		// required) is the list.
		pids, err = f.PidsInNamespace(pidns)
	case dir == "":
		r.Verdict, r.Found = Unavailable, "no cgroup to list"
		return []Result{r}
	default:
		pids, err = cgroupTreeProcs(dir, f)
	}
	if err != nil {
		r.Verdict, r.Found = Unavailable, err.Error()
		return []Result{r}
	}
	s := in.Spec
	var masks [5]uint64
	if s.Process != nil && s.Process.Capabilities != nil {
		c := s.Process.Capabilities
		for i, set := range [][]string{c.Effective, c.Permitted, c.Bounding, c.Inheritable, c.Ambient} {
			if masks[i], err = CapMask(set); err != nil {
				r.Verdict, r.Found = Fail, err.Error()
				return []Result{r}
			}
		}
	}
	// judge returns what is wrong with pid's restrictions, and whether
	// it is a live process at all.
	judge := func(pid int) (wrong []string, live bool) {
		st, err := f.Status(pid)
		if err != nil {
			return nil, false // exited since the listing
		}
		if ps, err := f.ProcStat(pid); err != nil || ps.Gone() {
			return nil, false
		}
		if s.Linux != nil && s.Linux.Seccomp != nil && st.Seccomp != 2 {
			wrong = append(wrong, fmt.Sprintf("pid %d: Seccomp %d", pid, st.Seccomp))
		}
		if s.Process != nil && s.Process.NoNewPrivileges && st.NoNewPrivs != 1 {
			wrong = append(wrong, fmt.Sprintf("pid %d: NoNewPrivs %d", pid, st.NoNewPrivs))
		}
		// A process in a user namespace of its own inside the
		// container's (a nested sandbox) holds its capabilities there,
		// over nothing of the container's; seccomp and no_new_privs it
		// inherits all the same.
		if in.Baseline != nil {
			if u, ok := in.Baseline.Namespaces[string(specs.UserNamespace)]; ok {
				if got, err := f.Of(pid, specs.UserNamespace); err == nil && got != u {
					if nested, _ := f.NestedIn(pid, specs.UserNamespace, u); nested {
						return wrong, true
					}
				}
			}
		}
		for i, got := range []uint64{st.CapEff, st.CapPrm, st.CapBnd, st.CapInh, st.CapAmb} {
			if extra := got &^ masks[i]; extra != 0 {
				wrong = append(wrong, fmt.Sprintf("pid %d: %s has %s", pid, [...]string{"CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb"}[i], strings.Join(CapNames(extra), ",")))
			}
		}
		return wrong, true
	}
	var suspects []int
	checked := 0
	for _, pid := range pids {
		wrong, live := judge(pid)
		if live {
			checked++
		}
		if len(wrong) > 0 {
			suspects = append(suspects, pid)
		}
	}
	// A process entering the container from outside (an exec, a hook:
	// libcontainer's setns init) is unrestricted for the moment before it
	// applies the container's restrictions; no process of the workload
	// can ever lose them. So a suspect is judged again after a moment,
	// and only one that stays so fails.
	// Looked at again every restrictionsGrace until they hold or
	// restrictionsPatience ran out: on a loaded host an exec's setns init
	// may take a while to apply the container's restrictions.
	var bad []string
	for waited := time.Duration(0); len(suspects) > 0 && waited < restrictionsPatience; waited += restrictionsGrace {
		time.Sleep(restrictionsGrace)
		var still []int
		bad = nil
		for _, pid := range suspects {
			if wrong, _ := judge(pid); len(wrong) > 0 {
				still = append(still, pid)
				bad = append(bad, wrong...)
			}
		}
		suspects = still
	}
	switch {
	case len(bad) > 0:
		r.Verdict, r.Found = Fail, strings.Join(bad, "; ")
	case checked == 0:
		r.Verdict, r.Found = Unavailable, "no live process to read"
	default:
		r.Verdict, r.Found = Pass, strconv.Itoa(checked)+" process(es) restricted as the spec says"
	}
	return []Result{r}
}

// Contained is P4. In a pid namespace of its own, the container's
// processes are exactly those in that namespace: every process in its
// cgroup must be in it (none joined from outside), and every process in it
// must be in the cgroup (none escaped the cgroup, where limits and
// cgroup.kill would miss it). Without its own pid namespace only the first
// half can be judged, and nothing: the host's namespace is everyone's.
func Contained(in LiveInput, f PostFacts) []Result {
	pidns, ok := in.Baseline.Namespaces[string(specs.PIDNamespace)]
	own := in.Spec.Linux != nil && hasNewNamespace(in.Spec.Linux.Namespaces, specs.PIDNamespace)
	dir := in.CgroupPaths[""]
	if dir == "" {
		dir = in.CgroupPaths["pids"]
	}
	r := Result{Check: "P4/contained", Evidence: HostFact, Expected: "every process of the cgroup in pid namespace " + pidns.String() + " and every process of the namespace in " + dir}
	if !ok || !own {
		r.Verdict, r.Found = Unavailable, "the container has no pid namespace of its own"
		return []Result{r}
	}
	if in.NoCgroup && dir == "" {
		// Without a cgroup the namespace is the container: there is no
		// second list to compare it with, and the launch named that
		// (degraded: cgroup-kill).
		return nil
	}
	if dir == "" {
		r.Verdict, r.Found = Unavailable, "no cgroup to list"
		return []Result{r}
	}
	inCgroup, err := cgroupTreeProcs(dir, f)
	if err != nil {
		r.Verdict, r.Found = Unavailable, err.Error()
		return []Result{r}
	}
	inNS, err := f.PidsInNamespace(pidns)
	if err != nil {
		r.Verdict, r.Found = Unavailable, err.Error()
		return []Result{r}
	}
	sharers := &sharerCgroups{list: in.Sharers}
	// intruder says what is wrong with a pid found on one side only, if it
	// is a live process at all: one on its way out may already have left
	// its cgroup (cgroup.procs) or namespaces, and one being forked is in
	// /proc a moment before it is in cgroup.procs.
	intruder := func(pid int, inCg bool) string {
		if ps, err := f.ProcStat(pid); err != nil || ps.Gone() {
			return ""
		}
		if inCg {
			if got, err := f.Of(pid, specs.PIDNamespace); err == nil && got != pidns {
				// A nested sandbox's pid namespace, inside the container's,
				// is the container's too.
				if nested, _ := f.NestedIn(pid, specs.PIDNamespace, pidns); nested {
					return ""
				}
				return fmt.Sprintf("pid %d in the cgroup but in pid namespace %s", pid, got)
			}
			return ""
		}
		if member, err := f.InCgroup(dir, pid); err == nil && !member {
			if sharers.holding(pid, f) != "" {
				return "" // a process of the container that joined
			}
			if ps, err := f.ProcStat(pid); err == nil && !ps.Gone() {
				return fmt.Sprintf("pid %d in the namespace but outside the cgroup", pid)
			}
		}
		return ""
	}
	type suspect struct {
		pid  int
		inCg bool
	}
	var suspects []suspect
	for _, pid := range inCgroup {
		if !slices.Contains(inNS, pid) && intruder(pid, true) != "" {
			suspects = append(suspects, suspect{pid, true})
		}
	}
	for _, pid := range inNS {
		if !slices.Contains(inCgroup, pid) && intruder(pid, false) != "" {
			suspects = append(suspects, suspect{pid, false})
		}
	}
	// Judged again, as Restrictions does: a process caught between fork
	// (or an exec's join) and its cgroup, or between exit and the zombie,
	// is soon no longer so; one that joined from outside or escaped stays
	// so. The joiners are listed again too: a container whose init is
	// already in the namespace has its record only once its launch has
	// recorded the baseline.
	var bad []string
	for waited := time.Duration(0); len(suspects) > 0 && waited < restrictionsPatience; waited += restrictionsGrace {
		time.Sleep(restrictionsGrace)
		sharers.listed = false
		var still []suspect
		bad = nil
		for _, s := range suspects {
			if why := intruder(s.pid, s.inCg); why != "" {
				still = append(still, s)
				bad = append(bad, why)
			}
		}
		suspects = still
	}
	switch {
	case len(bad) > 0:
		r.Verdict, r.Found = Fail, strings.Join(bad, "; ")
	case sharers.held > 0:
		r.Verdict, r.Found = Pass, strconv.Itoa(len(inNS))+" process(es), all contained ("+strconv.Itoa(sharers.held)+" of them in the cgroups of containers that joined the namespace: "+strings.Join(sharers.dirs, ", ")+")"
	default:
		r.Verdict, r.Found = Pass, strconv.Itoa(len(inNS))+" process(es), all contained"
	}
	return []Result{r}
}

// sharerCgroups are the cgroups of the containers that joined a
// container's pid namespace (LiveInput.Sharers), listed at the first
// process of the namespace found outside the container's cgroup, and
// again at each later look (listed reset).
type sharerCgroups struct {
	list   func() []map[string]string
	listed bool
	cgs    []string
	// held counts the processes found in them; dirs names those cgroups.
	held int
	dirs []string
	seen map[int]bool
}

// holding returns the sharer's cgroup (or one below it) that holds pid,
// "" if none does. The cgroup compared is the one Contained compares the
// container's own with: the unified hierarchy's, else the pids
// controller's.
func (s *sharerCgroups) holding(pid int, f PostFacts) string {
	if s.list == nil {
		return ""
	}
	if !s.listed {
		s.listed, s.cgs = true, nil
		for _, paths := range s.list() {
			dir := paths[""]
			if dir == "" {
				dir = paths["pids"]
			}
			if dir != "" {
				s.cgs = append(s.cgs, dir)
			}
		}
	}
	for _, dir := range s.cgs {
		held := dir
		if member, err := f.InCgroup(dir, pid); err != nil || !member {
			if held = inSubtree(dir, pid, f); held == "" {
				continue
			}
		}
		if !s.seen[pid] {
			if s.seen == nil {
				s.seen = map[int]bool{}
			}
			s.seen[pid] = true
			s.held++
			if !slices.Contains(s.dirs, dir) {
				s.dirs = append(s.dirs, dir)
			}
		}
		return held
	}
	return ""
}

// cgroupTreeProcs lists the pids of the cgroup at dir and of every cgroup
// below it (a container with its own cgroup namespace may make some).
func cgroupTreeProcs(dir string, f PostFacts) ([]int, error) {
	var out []int
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		pids, err := f.CgroupProcs(p)
		if err != nil {
			return err
		}
		out = append(out, pids...)
		return nil
	})
	return out, err
}

// StillMasked is P6: each path the bundle masks (or its policy denies) is
// still covered by a mask in the container's mount namespace, as the host
// reads it, or does not exist there.
func StillMasked(in LiveInput, f PostFacts) []Result {
	plan, err := PlanCanaries(in.Spec)
	if err != nil {
		return []Result{{Check: "P6/masked", Verdict: Unavailable, Found: err.Error()}}
	}
	mounts, mErr := f.Mounts(in.Pid)
	f, release := holdRoots(f, in.Pid, "")
	defer release()
	var out []Result
	for _, p := range plan.MaskedRead {
		r := Result{Check: "P6/masked" + p, Evidence: HostFact, Expected: "masked or absent"}
		present, null, err := lookPath(f, in.Pid, p)
		switch {
		case mErr != nil:
			r.Verdict, r.Found = Unavailable, mErr.Error()
		case isMaskMount(mounts, p, null):
			r.Verdict, r.Found = Pass, "masked"
		case err != nil:
			r.Verdict, r.Found = Unavailable, err.Error()
		case !present:
			r.Verdict, r.Found = Pass, "absent"
		default:
			r.Verdict, r.Found = Fail, "present and not masked"
		}
		out = append(out, r)
	}
	return out
}
