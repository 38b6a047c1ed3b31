package hooks

import (
	"fmt"
	"sort"
	"strconv"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// Degradable features: a failing check tagged with one may be accepted as a
// named, recorded degradation where the security level allows it. Checks
// without a feature are never degradable: they found a broken boundary.
const (
	FeatureLimits     = "limits"
	FeatureCgroupKill = "cgroup-kill"
)

// PreLaunchInput is what the pre-launch verification judges: the live init
// and the spec it must match.
type PreLaunchInput struct {
	Pid  int
	Spec *specs.Spec
	// CgroupPaths are the cgroup directories the backend says it put the
	// container in, by controller ("" for the cgroup v2 hierarchy).
	CgroupPaths map[string]string
	// RequireCgroupKill asks for the cgroup.kill check (strict).
	RequireCgroupKill bool
	// NoCgroup: the plan created the container in no cgroup (rootless,
	// no delegation, cgroup-kill accepted as a degradation).
	NoCgroup bool
	// Landlock is set when the process is to exec through the Landlock
	// shim.
	Landlock *LandlockLaunch
}

// PreLaunch verifies the live init against its spec from host facts
// (docs/verification.md): namespaces, cgroup membership, seccomp, no_new_privs,
// the four capability sets and ambient, uid/gid maps, and the memory and
// pids limits. It runs after the init has applied all of them — libcontainer
// sets no_new_privs, the seccomp filter and capabilities before it blocks
// on the exec fifo — and before it may exec the user process.
func PreLaunch(in PreLaunchInput, f Facts) []Result {
	s := in.Spec
	var out []Result
	if s.Linux != nil {
		out = append(out, CheckNamespaces(in.Pid, s.Linux.Namespaces, f)...)
	}
	out = append(out, checkCgroups(in, f)...)
	st, err := f.Status(in.Pid)
	if err != nil {
		return append(out, Result{Check: "status", Verdict: Unavailable, Expected: "readable /proc/<pid>/status", Found: err.Error()})
	}
	if s.Linux != nil && s.Linux.Seccomp != nil {
		r := Result{Check: "seccomp", Verdict: Pass, Expected: "Seccomp: 2 (filter)", Found: "Seccomp: " + strconv.Itoa(st.Seccomp)}
		if st.Seccomp != 2 {
			r.Verdict = Fail
		}
		out = append(out, r)
	}
	if s.Process != nil && s.Process.NoNewPrivileges {
		r := Result{Check: "no_new_privs", Verdict: Pass, Expected: "NoNewPrivs: 1", Found: "NoNewPrivs: " + strconv.Itoa(st.NoNewPrivs)}
		if st.NoNewPrivs != 1 {
			r.Verdict = Fail
		}
		out = append(out, r)
	}
	if s.Process != nil && s.Process.Capabilities != nil {
		c := s.Process.Capabilities
		for _, set := range []struct {
			name string
			want []string
			got  uint64
		}{
			{"CapEff", c.Effective, st.CapEff}, {"CapPrm", c.Permitted, st.CapPrm},
			{"CapBnd", c.Bounding, st.CapBnd}, {"CapInh", c.Inheritable, st.CapInh},
			{"CapAmb", c.Ambient, st.CapAmb},
		} {
			out = append(out, checkCaps(set.name, set.want, set.got))
		}
	}
	if s.Linux != nil && hasNewNamespace(s.Linux.Namespaces, specs.UserNamespace) {
		out = append(out, checkIDMap(in.Pid, "uid_map", s.Linux.UIDMappings, f))
		out = append(out, checkIDMap(in.Pid, "gid_map", s.Linux.GIDMappings, f))
	}
	out = append(out, checkLimits(in, f)...)
	if in.Landlock != nil && s.Process != nil {
		out = append(out, CheckLandlock(in.Landlock, s.Process.Args)...)
	}
	return out
}

func hasNewNamespace(nss []specs.LinuxNamespace, t specs.LinuxNamespaceType) bool {
	for _, ns := range nss {
		if ns.Type == t && ns.Path == "" {
			return true
		}
	}
	return false
}

func checkCgroups(in PreLaunchInput, f Facts) []Result {
	if len(in.CgroupPaths) == 0 && in.NoCgroup {
		// Named as the degradation it is, never a PASS.
		return []Result{{Check: "cgroup", Feature: FeatureCgroupKill, Verdict: Fail, Expected: "the container's cgroup", Found: "none: created without a cgroup (rootless, no delegated cgroup)"}}
	}
	if len(in.CgroupPaths) == 0 {
		return []Result{{Check: "cgroup", Verdict: Unavailable, Expected: "the container's cgroup", Found: "the backend reports none"}}
	}
	controllers := make([]string, 0, len(in.CgroupPaths))
	for c := range in.CgroupPaths {
		controllers = append(controllers, c)
	}
	sort.Strings(controllers)
	var out []Result
	for _, c := range controllers {
		dir := in.CgroupPaths[c]
		name := "cgroup/" + c
		if c == "" {
			name = "cgroup/unified"
		}
		ok, err := f.InCgroup(dir, in.Pid)
		switch {
		case err != nil:
			out = append(out, Result{Check: name, Verdict: Unavailable, Expected: "pid in " + dir, Found: err.Error()})
		case !ok:
			out = append(out, Result{Check: name, Verdict: Fail, Expected: "pid " + strconv.Itoa(in.Pid) + " in " + dir + "/cgroup.procs", Found: "not a member"})
		default:
			out = append(out, Result{Check: name, Verdict: Pass, Expected: "member of " + dir, Found: "member"})
		}
	}
	if in.RequireCgroupKill {
		r := Result{Check: "cgroup/kill", Feature: FeatureCgroupKill, Verdict: Fail, Expected: "a cgroup v2 directory with cgroup.kill", Found: "no cgroup v2 directory"}
		if dir, ok := in.CgroupPaths[""]; ok {
			has, err := f.CgroupHas(dir, CgroupKillFile)
			switch {
			case err != nil:
				r.Verdict, r.Found = Unavailable, err.Error()
			case has:
				r.Verdict, r.Found = Pass, dir+"/"+CgroupKillFile
			default:
				r.Found = "kernel without cgroup.kill (< 5.14)"
			}
		}
		out = append(out, r)
	}
	return out
}

// checkCaps compares one capability set of the live init with the spec.
// More privilege than asked is a FAIL. Less is a note, not a failure, as
// runc and crun treat it: the kernel raises an ambient capability only if
// it is also permitted and inheritable (runc spec 1.1 and crun spec list
// ambient ones without inheritable), and a host may lack a capability
// altogether. Neither weakens a boundary.
func checkCaps(name string, want []string, got uint64) Result {
	r := Result{Check: "capabilities/" + name}
	mask, err := CapMask(want)
	if err != nil {
		r.Verdict, r.Expected, r.Found = Fail, "known capabilities", err.Error()
		return r
	}
	r.Expected = fmt.Sprintf("%#016x", mask)
	r.Found = fmt.Sprintf("%#016x", got)
	switch {
	case mask == got:
		r.Verdict = Pass
	case got&^mask == 0:
		r.Verdict = Pass
		r.Note = "less privilege than asked: " + capDiff(mask, got)
	default:
		r.Verdict = Fail
		r.Found += " (" + capDiff(mask, got) + ")"
	}
	return r
}

func checkIDMap(pid int, which string, want []specs.LinuxIDMapping, f Facts) Result {
	r := Result{Check: "userns/" + which}
	got, err := f.IDMap(pid, which)
	if err != nil {
		r.Verdict, r.Expected, r.Found = Unavailable, "readable "+which, err.Error()
		return r
	}
	w := make([]IDMapping, len(want))
	for i, m := range want {
		w[i] = IDMapping{ContainerID: m.ContainerID, HostID: m.HostID, Size: m.Size}
	}
	r.Expected, r.Found = formatMaps(w), formatMaps(got)
	if r.Expected == r.Found {
		r.Verdict = Pass
	} else {
		r.Verdict = Fail
	}
	return r
}

func formatMaps(ms []IDMapping) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%d:%d:%d", m.ContainerID, m.HostID, m.Size)
	}
	sort.Strings(parts)
	return fmt.Sprint(parts)
}

// checkLimits reads the memory and pids limits back from the container's
// cgroup: cgroup v1's controller directories where the backend used them,
// else the v2 directory. The limits expected are the ones the spec gives
// the container, unified's memory.max and pids.max included.
func checkLimits(in PreLaunchInput, f Facts) []Result {
	if in.Spec.Linux == nil || in.Spec.Linux.Resources == nil {
		return nil
	}
	res := in.Spec.Linux.Resources
	var out []Result
	// A limit that binds nothing (spec.MemoryBounded) has nothing to
	// check: the kernel shows it rounded, or as "max".
	if mem, _ := spec.MemoryLimit(res); spec.MemoryBounded(mem) {
		want := *mem
		dir, file := in.CgroupPaths["memory"], "memory.limit_in_bytes"
		if dir == "" {
			dir, file = in.CgroupPaths[""], "memory.max"
		}
		out = append(out, checkLimit("limits/memory", dir, file, want, 4095, f))
	}
	if pids, _ := spec.PidsLimit(res); spec.PidsBounded(pids) {
		dir := in.CgroupPaths["pids"]
		if dir == "" {
			dir = in.CgroupPaths[""]
		}
		out = append(out, checkLimit("limits/pids", dir, "pids.max", *pids, 0, f))
	}
	return out
}

// checkLimit compares a cgroup value with want; the kernel may round a
// memory limit down to a page, so slack bytes below want are accepted.
func checkLimit(check, dir, file string, want, slack int64, f Facts) Result {
	r := Result{Check: check, Feature: FeatureLimits, Expected: fmt.Sprintf("%s = %d", file, want)}
	if dir == "" {
		r.Verdict, r.Found = Fail, "no cgroup for this controller"
		return r
	}
	val, err := f.CgroupFile(dir, file)
	if err != nil {
		r.Verdict, r.Found = Fail, err.Error()
		return r
	}
	r.Found = file + " = " + val
	got, err := strconv.ParseInt(val, 10, 64)
	if err != nil || got > want || got < want-slack {
		r.Verdict = Fail
		return r
	}
	r.Verdict = Pass
	return r
}
