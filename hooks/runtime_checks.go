package hooks

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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
	// ProbeSelf is the probe's argv[0] inside the container.
	ProbeSelf string
	// Landlock is the ruleset the container's processes run under (the
	// plan's, after ABI negotiation); the probe restricts itself with it.
	Landlock string
}

// PostLaunch is the poststart verification (DESIGN.md §6): P1 identity, P2
// membership, then P3 canaries. When the init is not the recorded process
// the canaries are not run: they would probe someone else.
func PostLaunch(in LiveInput, f PostFacts, run ProbeRunner) []Result {
	id := Identity(in.Pid, in.Baseline, f)
	out := []Result{id}
	if id.Verdict != Pass {
		return out
	}
	out = append(out, Membership(in.Pid, in.Baseline, in.CgroupPaths, f, in.Spec)...)
	return append(out, canaries(in, f, run)...)
}

// OnDemand is `verify`: PostLaunch's checks again, plus P4 (every process
// of the container is in its pid namespace and cgroup), P6 (masked paths
// still masked) and P7 (limits read back from the cgroup).
func OnDemand(in LiveInput, f PostFacts, run ProbeRunner) []Result {
	id := Identity(in.Pid, in.Baseline, f)
	out := []Result{id}
	if id.Verdict != Pass {
		return out
	}
	out = append(out, Membership(in.Pid, in.Baseline, in.CgroupPaths, f, in.Spec)...)
	out = append(out, canaries(in, f, run)...)
	out = append(out, Contained(in, f)...)
	out = append(out, StillMasked(in, f)...)
	for _, r := range checkLimits(PreLaunchInput{Pid: in.Pid, Spec: in.Spec, CgroupPaths: in.CgroupPaths}, f) {
		r.Check = "P7/" + r.Check
		r.Evidence = HostFact
		out = append(out, r)
	}
	return out
}

func canaries(in LiveInput, f PostFacts, run ProbeRunner) []Result {
	plan, err := PlanCanaries(in.Spec)
	if err != nil {
		return []Result{{Check: "P3/plan", Verdict: Unavailable, Expected: "canaries derived from the spec", Found: err.Error()}}
	}
	return RunCanaries(CanaryInput{Pid: in.Pid, Rootfs: in.Rootfs, Spec: in.Spec, Plan: plan, Self: in.ProbeSelf, Landlock: in.Landlock}, f, run)
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
	var bad []string
	for _, pid := range inCgroup {
		if !slices.Contains(inNS, pid) {
			// It may have exited since the listing: only a live process
			// in another namespace is an intruder.
			if got, err := f.Of(pid, specs.PIDNamespace); err == nil && got != pidns {
				bad = append(bad, fmt.Sprintf("pid %d in the cgroup but in pid namespace %s", pid, got))
			}
		}
	}
	for _, pid := range inNS {
		if !slices.Contains(inCgroup, pid) {
			if member, err := f.InCgroup(dir, pid); err == nil && !member {
				bad = append(bad, fmt.Sprintf("pid %d in the namespace but outside the cgroup", pid))
			}
		}
	}
	if len(bad) > 0 {
		r.Verdict, r.Found = Fail, strings.Join(bad, "; ")
	} else {
		r.Verdict, r.Found = Pass, strconv.Itoa(len(inNS))+" process(es), all contained"
	}
	return []Result{r}
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
	var out []Result
	for _, p := range plan.MaskedRead {
		r := Result{Check: "P6/masked" + p, Evidence: HostFact, Expected: "masked or absent"}
		present, err := f.Exists(in.Pid, p)
		switch {
		case mErr != nil:
			r.Verdict, r.Found = Unavailable, mErr.Error()
		case isMaskMount(mounts, p):
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
