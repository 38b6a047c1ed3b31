package launch

import (
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Posture is what the spec itself gives of the host away, whatever
// verification later finds: verification checks the container against
// its spec, the posture says whether that spec isolates at all. A
// weakened posture at standard is not a failure (the user asked for it),
// but it never reads as a clean PASS: the launch line, state, the audit log
// and verify show it.
type Posture struct {
	// Weakened names each way the spec reaches the host; empty: isolated.
	Weakened []string `json:"weakened,omitempty"`
}

// Isolated reports whether the spec gives nothing away.
func (p Posture) Isolated() bool { return len(p.Weakened) == 0 }

func (p Posture) String() string {
	if p.Isolated() {
		return "isolated"
	}
	return "weakened (" + strings.Join(p.Weakened, ", ") + ")"
}

// PostureOf reads the posture of an effective spec; sources are the host
// facts of its bind sources (may be nil: paths are judged as written),
// apparmor says whether AppArmor is enabled on the host.
func PostureOf(s *specs.Spec, sources map[string]Source, apparmor bool) Posture {
	var w []string
	if extra := capsOutside(s, engineDefaultCaps); len(extra) > 0 {
		w = append(w, "privileged capabilities "+strings.Join(extra, " "))
	}
	if hn := hostNamespaces(s); len(hn) > 0 {
		w = append(w, "host namespaces: "+strings.Join(hn, ", "))
	}
	switch sc := readSeccomp(s); {
	case !sc.present:
		w = append(w, "no seccomp filter")
	case !sc.refusesSomething:
		w = append(w, "a seccomp filter that refuses nothing")
	}
	if a := readSeccomp(s).agent(); a != "" {
		w = append(w, a)
	}
	w = append(w, hostBinds(s, sources)...)
	masked, readonly := missingMasks(s)
	if len(masked) > 0 {
		w = append(w, "kernel paths not masked: "+strings.Join(masked, " "))
	}
	if len(readonly) > 0 {
		w = append(w, "kernel paths writable: "+strings.Join(readonly, " "))
	}
	if extra := extraKernelMounts(s); len(extra) > 0 {
		w = append(w, "extra kernel mounts: "+strings.Join(extra, ", "))
	}
	if kw := writableKernelMounts(s); len(kw) > 0 {
		w = append(w, "kernel filesystems writable as host root: "+strings.Join(kw, ", "))
	}
	if other := otherMounts(s); len(other) > 0 {
		w = append(w, "mounts of other filesystems: "+strings.Join(other, ", "))
	}
	if nd := hostNetDevices(s); len(nd) > 0 {
		w = append(w, "host network devices: "+strings.Join(nd, " "))
	}
	if dev := hostDevices(s); len(dev) > 0 {
		w = append(w, strings.Join(dev, ", "))
	}
	if hooks := bundleHooks(s, nil); len(hooks) > 0 {
		w = append(w, "host hooks: "+strings.Join(hooks, ", "))
	}
	// The relay hands the workload the use of a secret of the host.
	if creds := bundleCredentials(s, nil); len(creds) > 0 {
		w = append(w, "host credentials: "+strings.Join(creds, "; "))
	}
	if apparmor && apparmorUnconfined(s) {
		w = append(w, "AppArmor unconfined")
	}
	if sys := hostSysctls(s); len(sys) > 0 {
		w = append(w, "host sysctls "+strings.Join(sys, " "))
	}
	if pr := hostPriorities(s); len(pr) > 0 {
		w = append(w, "a priority above the host's processes: "+strings.Join(pr, ", "))
	}
	return Posture{Weakened: w}
}
