package runtime

import (
	"fmt"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// minimalCaps is the most a strict container may hold: runc's default set
// without CAP_NET_RAW (raw sockets, packet spoofing), CAP_MKNOD (device
// nodes) and CAP_AUDIT_WRITE.
var minimalCaps = map[string]bool{
	"CAP_CHOWN": true, "CAP_DAC_OVERRIDE": true, "CAP_FSETID": true, "CAP_FOWNER": true,
	"CAP_SETGID": true, "CAP_SETUID": true, "CAP_SETFCAP": true, "CAP_SETPCAP": true,
	"CAP_NET_BIND_SERVICE": true, "CAP_SYS_CHROOT": true, "CAP_KILL": true,
}

// strictNamespaces must each be new (no path) at strict.
var strictNamespaces = []specs.LinuxNamespaceType{
	specs.PIDNamespace, specs.MountNamespace, specs.NetworkNamespace, specs.IPCNamespace, specs.UTSNamespace,
}

// strictMasked and strictReadonly are the /proc and /sys paths a strict
// container must not see or write (the kernel-information leaks runc's
// default spec already hides).
var (
	strictMasked   = []string{"/proc/kcore", "/proc/keys", "/proc/timer_list", "/sys/firmware"}
	strictReadonly = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// requirement is one unmet demand of a level.
type requirement struct {
	rule, detail string
}

// strictRequirements lists every way s falls short of the strict level,
// all of them at once.
func strictRequirements(s *specs.Spec) []requirement {
	var out []requirement
	add := func(rule, format string, args ...any) {
		out = append(out, requirement{rule, fmt.Sprintf(format, args...)})
	}
	if s.Linux == nil {
		add("linux", "no linux section: no namespaces, cgroup or seccomp")
		return out
	}
	for _, t := range strictNamespaces {
		switch p, ok := namespacePath(s, t); {
		case !ok:
			add("namespace/"+string(t), "the %s namespace is shared with the host", t)
		case p != "":
			add("namespace/"+string(t), "the %s namespace joins %s instead of being new", t, p)
		}
	}
	if s.Linux.Seccomp == nil {
		add("seccomp", "no seccomp filter")
	}
	if s.Process == nil || !s.Process.NoNewPrivileges {
		add("no_new_privs", "process.noNewPrivileges is not true")
	}
	if s.Process == nil || s.Process.Capabilities == nil {
		add("capabilities", "process.capabilities unset: the process would keep the runtime's capabilities")
	} else if extra := capsOutside(s.Process.Capabilities); len(extra) > 0 {
		add("capabilities", "capabilities outside the minimal set: %s", strings.Join(extra, ", "))
	}
	r := s.Linux.Resources
	if r == nil || r.Memory == nil || r.Memory.Limit == nil || *r.Memory.Limit <= 0 {
		add("limits/memory", "no memory limit")
	}
	if r == nil || r.Pids == nil || r.Pids.Limit == nil || *r.Pids.Limit <= 0 {
		add("limits/pids", "no pids limit")
	}
	if missing := missingPaths(strictMasked, s.Linux.MaskedPaths); len(missing) > 0 {
		add("maskedPaths", "not masked: %s", strings.Join(missing, ", "))
	}
	if missing := missingPaths(strictReadonly, s.Linux.ReadonlyPaths); len(missing) > 0 {
		add("readonlyPaths", "not read-only: %s", strings.Join(missing, ", "))
	}
	return out
}

func namespacePath(s *specs.Spec, t specs.LinuxNamespaceType) (string, bool) {
	if s.Linux == nil {
		return "", false
	}
	for _, ns := range s.Linux.Namespaces {
		if ns.Type == t {
			return ns.Path, true
		}
	}
	return "", false
}

func capsOutside(c *specs.LinuxCapabilities) []string {
	seen := map[string]bool{}
	for _, set := range [][]string{c.Bounding, c.Effective, c.Permitted, c.Inheritable, c.Ambient} {
		for _, name := range set {
			if !minimalCaps[strings.ToUpper(name)] {
				seen[name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func missingPaths(want, have []string) []string {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	var out []string
	for _, w := range want {
		if !set[w] {
			out = append(out, w)
		}
	}
	return out
}

// netMode is what the launch line says of the network.
func netMode(s *specs.Spec) string {
	if m, ok := s.Annotations[AnnotationNet]; ok && m != "" {
		return m
	}
	switch p, ok := namespacePath(s, specs.NetworkNamespace); {
	case !ok:
		return "host"
	case p != "":
		return "joined"
	}
	return "none"
}

// tier says how complete the Linux sandbox is: "full" with new pid, mount,
// network, ipc and uts namespaces and a seccomp filter; else "partial".
func tier(s *specs.Spec) string {
	if len(strictRequirementsOf(s, "namespace/", "seccomp")) == 0 {
		return "full"
	}
	return "partial"
}

func strictRequirementsOf(s *specs.Spec, prefixes ...string) []requirement {
	var out []requirement
	for _, r := range strictRequirements(s) {
		for _, p := range prefixes {
			if strings.HasPrefix(r.rule, p) {
				out = append(out, r)
			}
		}
	}
	return out
}

// unenforceable lists what the bundle asks for that this build cannot
// establish at all, by degradable feature.
func unenforceable(s *specs.Spec) map[string]string {
	out := map[string]string{}
	if s.Linux != nil && s.Linux.Resources != nil && s.Linux.Resources.Memory != nil {
		mem := s.Linux.Resources.Memory
		//lint:ignore SA1019 deprecated in the spec, still refused when set
		if mem.Kernel != nil || mem.KernelTCP != nil {
			// libcontainer drops both with a log line; cgroup v2 has
			// neither, and kernels since 5.16 accept and ignore a kernel
			// memory limit in v1.
			out[FeatureLimits] = "kernel memory limits requested (linux.resources.memory.kernel/kernelTCP) but this build does not apply them"
		}
	}
	switch m := s.Annotations[AnnotationNet]; m {
	case "", "off", "none":
	default:
		out[FeatureNetwork] = fmt.Sprintf("network mode %q needs the egress relay, which this build lacks; the container would get no network", m)
	}
	return out
}
