package launch

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/spec"
)

// This file reads a spec for what it gives away. Each function is used by
// the strict rules, the floor and the posture alike, so the three can
// never disagree about what a field means.

// isolatingNamespaces must each be new (no path) for a container to be
// isolated from the host.
var isolatingNamespaces = []specs.LinuxNamespaceType{
	specs.PIDNamespace, specs.MountNamespace, specs.NetworkNamespace, specs.IPCNamespace, specs.UTSNamespace,
}

// hostNamespaces lists the isolating namespaces s shares with the host or
// joins, as "pid (shared with the host)".
func hostNamespaces(s *specs.Spec) []string {
	var out []string
	for _, t := range isolatingNamespaces {
		switch p, ok := namespacePath(s, t); {
		case !ok:
			out = append(out, string(t)+" (shared with the host)")
		case p != "":
			out = append(out, string(t)+" (joins "+p+")")
		}
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

// HasNewNamespace reports whether s gives the container a namespace of
// type t of its own (listed, without a path to join).
func HasNewNamespace(s *specs.Spec, t specs.LinuxNamespaceType) bool {
	p, ok := namespacePath(s, t)
	return ok && p == ""
}

// minimalCaps is the most a strict container may hold: runc's default set
// without CAP_NET_RAW (raw sockets, packet spoofing), CAP_MKNOD (device
// nodes), CAP_AUDIT_WRITE, CAP_SETFCAP (file capabilities the host
// honours) and CAP_FSETID (set-id bits kept on files it writes).
var minimalCaps = map[string]bool{
	"CAP_CHOWN": true, "CAP_DAC_OVERRIDE": true, "CAP_FOWNER": true,
	"CAP_SETGID": true, "CAP_SETUID": true, "CAP_SETPCAP": true,
	"CAP_NET_BIND_SERVICE": true, "CAP_SYS_CHROOT": true, "CAP_KILL": true,
}

// engineDefaultCaps is the set Docker, containerd and podman give a
// container by default; a capability outside it is what --privileged and
// --cap-add hand out, and what "privileged" means to the floor and the
// posture.
var engineDefaultCaps = map[string]bool{
	"CAP_CHOWN": true, "CAP_DAC_OVERRIDE": true, "CAP_FSETID": true, "CAP_FOWNER": true,
	"CAP_MKNOD": true, "CAP_NET_RAW": true, "CAP_SETGID": true, "CAP_SETUID": true,
	"CAP_SETFCAP": true, "CAP_SETPCAP": true, "CAP_NET_BIND_SERVICE": true, "CAP_SYS_CHROOT": true,
	"CAP_KILL": true, "CAP_AUDIT_WRITE": true,
}

// capSets are the five sets of a process, unset meaning none.
func capSets(p *specs.Process) [][]string {
	if p == nil || p.Capabilities == nil {
		return nil
	}
	c := p.Capabilities
	return [][]string{c.Bounding, c.Effective, c.Permitted, c.Inheritable, c.Ambient}
}

// capsOutside lists the capabilities of any set of s's process that are
// not in allowed, sorted and upper-cased.
func capsOutside(s *specs.Spec, allowed map[string]bool) []string {
	seen := map[string]bool{}
	for _, set := range capSets(s.Process) {
		for _, name := range set {
			if n := strings.ToUpper(name); !allowed[n] {
				seen[n] = true
			}
		}
	}
	return sortedKeys(seen)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Seccomp actions that refuse a call.
var denyActions = map[specs.LinuxSeccompAction]bool{
	specs.ActErrno: true, specs.ActKill: true, specs.ActKillProcess: true, specs.ActKillThread: true, specs.ActTrap: true,
}

// dangerousSyscalls are never allowed unconditionally at strict: no
// container workload needs them, and kernel exploits and escapes do.
var dangerousSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "bpf", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module", "mount", "umount2", "pivot_root",
	"open_by_handle_at", "keyctl", "add_key", "request_key",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd", "perf_event_open",
}

// seccompFacts says what s's filter does: whether there is one, whether it
// refuses by default, whether it refuses anything at all, and which
// dangerous calls it allows without a condition.
type seccompFacts struct {
	present, denyDefault, refusesSomething bool
	dangerous                              []string
	// agent is a seccomp notify agent: the calls a process outside the
	// runtime decides (SCMP_ACT_NOTIFY; it may let them run) and the host
	// socket libcontainer sends it the filter's fd through.
	notified []string
	listener string
}

// agent says what a seccomp notify agent decides, for messages; "" when
// none.
func (f seccompFacts) agent() string {
	if len(f.notified) == 0 && f.listener == "" {
		return ""
	}
	who := "an agent"
	if f.listener != "" {
		who = "the agent at " + f.listener
	}
	what := "no call yet"
	if len(f.notified) > 0 {
		what = strings.Join(f.notified, " ")
	}
	return "seccomp calls decided by " + who + ": " + what
}

func readSeccomp(s *specs.Spec) seccompFacts {
	if s.Linux == nil || s.Linux.Seccomp == nil {
		return seccompFacts{}
	}
	sc := s.Linux.Seccomp
	f := seccompFacts{present: true, denyDefault: denyActions[sc.DefaultAction], listener: sc.ListenerPath}
	f.refusesSomething = f.denyDefault
	allowed := map[string]bool{}
	notified := map[string]bool{}
	if sc.DefaultAction == specs.ActNotify {
		notified["(the default action)"] = true
	}
	for _, r := range sc.Syscalls {
		if denyActions[r.Action] {
			f.refusesSomething = true
		}
		if r.Action == specs.ActNotify {
			for _, n := range r.Names {
				notified[n] = true
			}
		}
		if (r.Action == specs.ActAllow || r.Action == specs.ActLog) && len(r.Args) == 0 {
			for _, n := range r.Names {
				allowed[n] = true
			}
		}
	}
	for _, n := range dangerousSyscalls {
		if allowed[n] {
			f.dangerous = append(f.dangerous, n)
		}
	}
	f.notified = sortedKeys(notified)
	return f
}

// runcMasked and runcReadonly are the masked and read-only paths runc,
// containerd and podman give every container (the list every one of them
// has had since runc 1.0).
var (
	runcMasked = []string{
		"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
	}
	runcReadonly = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

func missingPaths(want, have []string) []string {
	set := map[string]bool{}
	for _, h := range have {
		set[path.Clean(h)] = true
	}
	var out []string
	for _, w := range want {
		if !set[w] {
			out = append(out, w)
		}
	}
	return out
}

func missingMasks(s *specs.Spec) (masked, readonly []string) {
	if s.Linux == nil {
		return runcMasked, runcReadonly
	}
	return missingPaths(runcMasked, s.Linux.MaskedPaths), missingPaths(runcReadonly, s.Linux.ReadonlyPaths)
}

// standardKernelMounts is where a container has each kernel filesystem.
var standardKernelMounts = map[string][]string{
	"proc": {"/proc"}, "sysfs": {"/sys"}, "cgroup": {"/sys/fs/cgroup"}, "cgroup2": {"/sys/fs/cgroup"},
	"devpts": {"/dev/pts"}, "mqueue": {"/dev/mqueue"},
}

// extraKernelMounts lists kernel filesystem mounts beyond the standard
// ones: a second proc is a second, writable /proc/sys.
func extraKernelMounts(s *specs.Spec) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range s.Mounts {
		places, ok := standardKernelMounts[m.Type]
		if !ok {
			continue
		}
		dest := path.Clean(m.Destination)
		key := m.Type + " " + dest
		if !slices.Contains(places, dest) || seen[key] {
			out = append(out, m.Type+" at "+dest)
		}
		seen[key] = true
	}
	return out
}

// writableKernelMounts lists the sysfs and cgroup mounts a container whose
// root is host root (no user namespace keeps it unmapped) can write. Their
// files belong to root and most of their attributes check nothing but the
// file's mode: through /sys the container sets the host's kernel (power
// state, memory management, devices), through /sys/fs/cgroup its own
// limits, and, without a cgroup namespace on cgroup v2, every host
// cgroup's. A new sysfs instance (a network namespace) is still the
// host's kernel.
func writableKernelMounts(s *specs.Spec) []string {
	if hostRootUnmapped(s) {
		return nil
	}
	var out []string
	for _, m := range s.Mounts {
		switch m.Type {
		case "sysfs", "cgroup", "cgroup2":
			if !readOnly(m) {
				out = append(out, m.Type+" at "+path.Clean(m.Destination))
			}
		}
	}
	return out
}

// otherMounts lists the mounts that are neither a bind, a tmpfs nor one of
// the standard kernel filesystems (extraKernelMounts judges where those
// go). The runtime makes every mount as root before the container starts,
// so any other filesystem type reaches the host: a disk by its block
// device, an overlay of host directories, devtmpfs (every device node),
// the host-wide kernel interfaces (binfmt_misc — a handler the host's
// kernel runs for everyone — debugfs, tracefs, bpf, securityfs,
// efivarfs, configfs, pstore).
func otherMounts(s *specs.Spec) []string {
	var out []string
	for _, m := range s.Mounts {
		if isBind(m) || m.Type == "tmpfs" {
			continue
		}
		if _, ok := standardKernelMounts[m.Type]; ok {
			continue
		}
		typ := m.Type
		if typ == "" {
			typ = "(no type)"
		}
		out = append(out, fmt.Sprintf("%s %s at %s", typ, m.Source, path.Clean(m.Destination)))
	}
	return out
}

// hostNetDevices lists the host's network interfaces linux.netDevices
// moves into the container's network namespace: the host loses them (a
// virtual one for good, when the namespace goes), and the container gets
// the host's network beside any network mode.
func hostNetDevices(s *specs.Spec) []string {
	if s.Linux == nil || len(s.Linux.NetDevices) == 0 {
		return nil
	}
	names := make(map[string]bool, len(s.Linux.NetDevices))
	for n := range s.Linux.NetDevices {
		names[n] = true
	}
	return sortedKeys(names)
}

// SourceKind is what a bind mount's source is on the host.
type SourceKind int

const (
	SourceUnknown SourceKind = iota
	SourceDir
	SourceFile
	SourceSocket
	SourceDevice
	SourceMissing
)

// Source is what the host says of one bind source.
type Source struct {
	// Real is the source with every symlink resolved.
	Real string
	Kind SourceKind
}

// kernelTrees are host paths whose contents are the kernel's or its
// devices'; a bind from there reaches the host itself.
var kernelTrees = []string{"/proc", "/sys", "/dev"}

// secretTrees are host paths no container should see even read-only.
var secretTrees = []string{"/boot", "/root"}

// runtimeTrees hold container runtimes' own state and sockets: a bind of
// one hands over the host.
var runtimeTrees = []string{
	"/run/containerd", "/run/docker", "/run/docker.sock", "/run/podman", "/run/crio", "/run/k3s",
	"/run/vetto-runtime", "/var/lib/docker", "/var/lib/containerd", "/var/lib/containers",
	"/var/lib/kubelet", "/var/lib/vetto-runtime", "/etc/vetto",
}

// systemTrees may be bound read-only into a container that cannot be host
// root on them (a user namespace that does not map host uid 0): a
// host-root policy bundle's system directories. Anything else of them is
// the host's configuration or binaries, writable or readable as root.
var systemTrees = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

func under(p string, trees []string) bool {
	for _, t := range trees {
		if p == t || strings.HasPrefix(p, t+"/") {
			return true
		}
	}
	return false
}

func isBind(m specs.Mount) bool {
	if m.Type == "bind" {
		return true
	}
	return slices.Contains(m.Options, "bind") || slices.Contains(m.Options, "rbind")
}

func readOnly(m specs.Mount) bool { return slices.Contains(m.Options, "ro") }

// hostRootUnmapped: s runs in a new user namespace whose uid map does not
// include host uid 0, so the container's root is not host root on host
// files.
func hostRootUnmapped(s *specs.Spec) bool {
	if s.Linux == nil || !HasNewNamespace(s, specs.UserNamespace) || len(s.Linux.UIDMappings) == 0 {
		return false
	}
	for _, m := range s.Linux.UIDMappings {
		if m.HostID == 0 || (m.HostID < 1 && m.HostID+m.Size > 0) {
			return false
		}
	}
	return true
}

// idMappedOnto reports whether bind m is id-mapped (MOUNT_ATTR_IDMAP) so
// that some of its files' on-disk owners become ids s's container holds:
// in that mount the container acts as them, whatever its user namespace
// keeps unmapped. The idmap and ridmap options without mappings of their
// own reuse the container's, which map on-disk root to its root.
func idMappedOnto(m specs.Mount, s *specs.Spec) bool { return idMappedBy(m, s, rangesMeet) }

// idMappedBy reports whether bind m is id-mapped and meets holds of its
// uid or gid mappings against the container's. The idmap and ridmap
// options without mappings of their own reuse the container's, which map
// on-disk root to its root: every such question is yes.
func idMappedBy(m specs.Mount, s *specs.Spec, meets func(mount, container []specs.LinuxIDMapping) bool) bool {
	if len(m.UIDMappings)+len(m.GIDMappings) == 0 {
		return slices.Contains(m.Options, "idmap") || slices.Contains(m.Options, "ridmap")
	}
	if s.Linux == nil {
		return true
	}
	return meets(m.UIDMappings, s.Linux.UIDMappings) || meets(m.GIDMappings, s.Linux.GIDMappings)
}

// rangesMeet reports whether a mount's mappings send an on-disk id to a
// host id that the container's mappings hold (both sides' HostID ranges).
func rangesMeet(mount, container []specs.LinuxIDMapping) bool {
	for _, a := range mount {
		for _, b := range container {
			aEnd, bEnd := uint64(a.HostID)+uint64(a.Size), uint64(b.HostID)+uint64(b.Size)
			if uint64(a.HostID) < bEnd && uint64(b.HostID) < aEnd {
				return true
			}
		}
	}
	return false
}

// masksSource reports whether m is a mask: a read-only bind of /dev/null.
func masksSource(m specs.Mount, real string) bool {
	return real == "/dev/null" && readOnly(m)
}

// hostBinds lists binds that reach the host: their source is the host's
// root, its kernel or device trees, its secrets, a container runtime's
// state, a unix socket or a device node, or a system tree (writable, or
// readable as host root).
func hostBinds(s *specs.Spec, sources map[string]Source) []string {
	unmapped := hostRootUnmapped(s)
	var out []string
	for _, m := range s.Mounts {
		if why := hostBind(s, m, sources, unmapped); why != "" {
			out = append(out, why)
		}
	}
	return out
}

// hostBind says how bind m reaches the host ("" when it does not, or is
// not a bind); unmapped is hostRootUnmapped(s).
func hostBind(s *specs.Spec, m specs.Mount, sources map[string]Source, unmapped bool) string {
	if !isBind(m) {
		return ""
	}
	src := path.Clean(m.Source)
	real, kind := src, SourceUnknown
	if f, ok := sources[m.Source]; ok {
		if f.Real != "" {
			real = f.Real
		}
		kind = f.Kind
	}
	access := "rw"
	if readOnly(m) {
		access = "ro"
	}
	what := fmt.Sprintf("bind of %s at %s (%s)", real, m.Destination, access)
	switch {
	case masksSource(m, real):
	case real == "/":
		return what + ": the host's root"
	case kind == SourceSocket:
		return what + ": a host unix socket"
	case kind == SourceDevice:
		return what + ": a host device node"
	case under(real, kernelTrees):
		return what + ": the host kernel's or devices' tree"
	case under(real, secretTrees):
		return what + ": host secrets"
	case under(real, runtimeTrees) || real == "/run" || real == "/var/run":
		return what + ": a container runtime's state or the host's run directory"
	case (real == "/home" || path.Dir(real) == "/home") && !readOnly(m):
		return what + ": a whole home directory, writable (its shell's startup files and ~/.ssh act as its user)"
	case under(real, systemTrees) && !readOnly(m):
		return what + ": the host's system files, writable"
	case under(real, systemTrees) && !unmapped:
		return what + ": the host's system files, readable as host root (no user namespace keeps root unmapped)"
	case under(real, systemTrees) && idMappedOnto(m, s):
		return what + ": the host's system files, id-mapped onto the container's own ids (readable as their owners, host root and the shadow group included)"
	}
	return ""
}

// hostRootfs says how the container's root filesystem reaches the host
// ("" when it does not): root.path is the host's root, one of its kernel,
// secret or system trees (writable, or readable as host root), the whole
// /home, or the run directory or a runtime's state directory itself. real
// is root.path with symlinks resolved (the host fact), or as written.
// pivot_root refuses "/" itself, but a system tree is a root like any
// other: root.path /usr, writable, and the container rewrites the host's
// programs.
func hostRootfs(s *specs.Spec, real string) string {
	if s.Root == nil {
		return ""
	}
	if real == "" {
		real = path.Clean(s.Root.Path)
	}
	access := "rw"
	if s.Root.Readonly {
		access = "ro"
	}
	what := fmt.Sprintf("root filesystem %s (%s)", real, access)
	switch {
	case real == "/":
		return what + ": the host's root"
	case under(real, kernelTrees):
		return what + ": the host kernel's or devices' tree"
	case under(real, secretTrees):
		return what + ": host secrets"
	case real == "/home":
		return what + ": every home directory on the host"
	case real == "/run" || real == "/var/run" || slices.Contains(runtimeTrees, real):
		return what + ": a container runtime's state or the host's run directory"
	case under(real, systemTrees) && !s.Root.Readonly:
		return what + ": the host's system files, writable"
	case under(real, systemTrees) && !hostRootUnmapped(s):
		return what + ": the host's system files, readable as host root (no user namespace keeps root unmapped)"
	}
	return ""
}

// bindSourcesOutside lists the binds whose source is under none of the
// allowed directories (masks excepted).
func bindSourcesOutside(s *specs.Spec, sources map[string]Source, allowed []string) []string {
	var out []string
	for _, m := range s.Mounts {
		if !isBind(m) {
			continue
		}
		real := path.Clean(m.Source)
		if f, ok := sources[m.Source]; ok && f.Real != "" {
			real = f.Real
		}
		if masksSource(m, real) || under(real, allowed) {
			continue
		}
		out = append(out, real+" at "+m.Destination)
	}
	return out
}

type devID struct {
	typ          string
	major, minor int64 // -1: any
}

// standardDevices are the device nodes every container has (runc's
// default set, and /dev/net/tun, which containerd's default rules allow
// and which reaches only the container's own network).
var standardDevices = []devID{
	{"c", 1, 3}, {"c", 1, 5}, {"c", 1, 7}, {"c", 1, 8}, {"c", 1, 9}, // null zero full random urandom
	{"c", 5, 0}, {"c", 5, 1}, {"c", 5, 2}, {"c", 136, -1}, // tty console ptmx pts
	{"c", 10, 200}, // net/tun
}

func standardDevice(typ string, major, minor int64) bool {
	if typ == "u" {
		typ = "c"
	}
	for _, d := range standardDevices {
		if d.typ == typ && d.major == major && (d.minor == -1 || d.minor == minor) {
			return true
		}
	}
	return false
}

// hostDevices lists device nodes beyond the standard set and device
// cgroup rules that grant read or write beyond it (mknod alone creates a
// node nobody may open).
func hostDevices(s *specs.Spec) []string {
	if s.Linux == nil {
		return nil
	}
	var out []string
	for _, d := range s.Linux.Devices {
		if !standardDevice(d.Type, d.Major, d.Minor) {
			out = append(out, fmt.Sprintf("device %s (%s %d:%d)", d.Path, d.Type, d.Major, d.Minor))
		}
	}
	if r := s.Linux.Resources; r != nil {
		for _, d := range r.Devices {
			if !d.Allow || !strings.ContainsAny(d.Access, "rw") {
				continue
			}
			major, minor := int64(-1), int64(-1)
			if d.Major != nil {
				major = *d.Major
			}
			if d.Minor != nil {
				minor = *d.Minor
			}
			typ := d.Type
			if typ == "" {
				typ = "a"
			}
			if typ == "a" || major == -1 || (minor == -1 && !standardDevice(typ, major, 1<<40)) || !standardDevice(typ, major, minor) {
				out = append(out, fmt.Sprintf("device cgroup rule allowing %s %s:%s %s", typ, wildcard(major), wildcard(minor), d.Access))
			}
		}
	}
	return out
}

func wildcard(n int64) string {
	if n < 0 {
		return "*"
	}
	return fmt.Sprint(n)
}

// bundleHooks lists the spec's OCI hooks that are neither vetto-runtime's
// own (spec.IsRuntimeHook, which vetto-runtime never executes: it does
// their work in-process) nor allowed by the floor.
func bundleHooks(s *specs.Spec, f *Floor) []string {
	if s.Hooks == nil {
		return nil
	}
	var out []string
	for _, bh := range spec.BundleHooks(s.Hooks) {
		if !f.hookAllowed(bh.Hook.Path) {
			out = append(out, bh.Phase+" hook "+bh.Hook.Path)
		}
	}
	return out
}

// bundleCredentials lists the credentials s names (spec.AnnotationCredentials)
// that the operator does not allow for their host: the relay would read a
// secret of the host — a file in a credential directory, a variable of
// the runtime's environment — and send it to a host the bundle chose.
func bundleCredentials(s *specs.Spec, f *Floor) []string {
	refs, err := spec.ParseCredentialAnnotation(s.Annotations)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, r := range refs {
		if !f.credentialAllowed(r.Host, r.Source()) {
			out = append(out, fmt.Sprintf("%s for %s from %s", r.Header, r.Host, r.Source()))
		}
	}
	return out
}

// namespacedSysctls are the sysctl prefixes a container's own namespaces
// own (runc's validator list).
var namespacedSysctls = []string{"kernel.shm", "kernel.msg", "kernel.sem", "fs.mqueue.", "net.", "kernel.hostname", "kernel.domainname"}

// sysctlDotted is a sysctl key in its dotted form, as libcontainer reads
// one: "net/ipv4/ip_forward" (sysctl.d(5)'s slash form, where a dot is
// part of a name) is "net.ipv4.ip_forward".
func sysctlDotted(key string) string {
	i := strings.IndexAny(key, "./")
	if i < 0 || key[i] == '.' {
		return key
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '.':
			return '/'
		case '/':
			return '.'
		}
		return r
	}, key)
}

func hostSysctls(s *specs.Spec) []string {
	if s.Linux == nil {
		return nil
	}
	var out []string
	for k := range s.Linux.Sysctl {
		ok := false
		for _, p := range namespacedSysctls {
			if strings.HasPrefix(sysctlDotted(k), p) {
				ok = true
			}
		}
		if !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// hostPriorities lists what of process.scheduler, process.ioPriority and
// the priority rlimits puts the container above the host's own processes: the runtime sets them
// while it still holds every capability, so the workload gets what it
// could not ask for itself. A real-time policy is host-wide (cgroup v2 has
// no real-time group budget: a busy loop holds a CPU but for the kernel's
// 5 % throttle), a negative nice outranks every process its cgroup's CPU
// weight does not fence off, and the real-time I/O class goes before every
// other request on the host's disks.
func hostPriorities(s *specs.Spec) []string {
	if s.Process == nil {
		return nil
	}
	var out []string
	if sc := s.Process.Scheduler; sc != nil {
		switch sc.Policy {
		case specs.SchedFIFO, specs.SchedRR, specs.SchedDeadline:
			out = append(out, "real-time scheduling ("+string(sc.Policy)+")")
		}
		if sc.Nice < 0 {
			out = append(out, fmt.Sprintf("nice %d", sc.Nice))
		}
	}
	if io := s.Process.IOPriority; io != nil && io.Class == specs.IOPRIO_CLASS_RT {
		out = append(out, "real-time I/O priority ("+string(io.Class)+")")
	}
	// The same, taken by the workload itself: a process may raise its soft
	// limit to the hard one, and with these needs no capability.
	for _, rl := range s.Process.Rlimits {
		switch {
		case rl.Type == "RLIMIT_RTPRIO" && max(rl.Hard, rl.Soft) > 0:
			out = append(out, fmt.Sprintf("RLIMIT_RTPRIO %d (real-time scheduling without CAP_SYS_NICE)", max(rl.Hard, rl.Soft)))
		case rl.Type == "RLIMIT_NICE" && max(rl.Hard, rl.Soft) > 20:
			out = append(out, fmt.Sprintf("RLIMIT_NICE %d (a nice down to %d without CAP_SYS_NICE)", max(rl.Hard, rl.Soft), 20-int64(min(max(rl.Hard, rl.Soft), 40))))
		}
	}
	return out
}

func apparmorUnconfined(s *specs.Spec) bool {
	return s.Process != nil && s.Process.ApparmorProfile == "unconfined"
}

// memoryLimit is the memory limit s gives the container, unified's
// memory.max included (spec.MemoryLimit); a unified value that is no limit
// is none here (libcontainer's write of it fails the create).
func memoryLimit(s *specs.Spec) *int64 {
	if s.Linux == nil {
		return nil
	}
	m, _ := spec.MemoryLimit(s.Linux.Resources)
	return m
}

// pidsLimit is memoryLimit for the pids limit.
func pidsLimit(s *specs.Spec) *int64 {
	if s.Linux == nil {
		return nil
	}
	p, _ := spec.PidsLimit(s.Linux.Resources)
	return p
}

// uncoveredMasks lists the paths the bundle says it masks
// (spec.AnnotationMasked) that the process would see anyway: no mask is
// the last mount at the path (a later bind of a parent covers it, or the
// mask is gone), or a later mount shows something inside a masked
// directory. linux.maskedPaths are masked by the runtime after every
// mount, so they always hold.
func uncoveredMasks(s *specs.Spec) []string {
	a, ok := s.Annotations[spec.AnnotationMasked]
	if !ok {
		return nil
	}
	var masked []string
	if err := json.Unmarshal([]byte(a), &masked); err != nil {
		return []string{fmt.Sprintf("annotation %s: %v", spec.AnnotationMasked, err)}
	}
	var runtimeMasked []string
	if s.Linux != nil {
		runtimeMasked = s.Linux.MaskedPaths
	}
	isMask := func(m specs.Mount) bool {
		return readOnly(m) && ((isBind(m) && m.Source == "/dev/null") || m.Type == "tmpfs")
	}
	var out []string
	for _, p := range masked {
		p = path.Clean(p)
		if under(p, cleanAll(runtimeMasked)) {
			continue
		}
		last := -1
		for i, m := range s.Mounts {
			if under(p, []string{path.Clean(m.Destination)}) {
				last = i
			}
		}
		switch {
		case last < 0 || !isMask(s.Mounts[last]):
			what := "no mask"
			if last >= 0 {
				what = "the " + s.Mounts[last].Type + " mount at " + s.Mounts[last].Destination + " after its mask"
			}
			out = append(out, p+" (covered by "+what+")")
			continue
		}
		for _, m := range s.Mounts[last+1:] {
			if d := path.Clean(m.Destination); d != p && under(d, []string{p}) && !isMask(m) {
				out = append(out, p+" (the mount at "+d+" shows something inside it)")
			}
		}
	}
	return out
}

func cleanAll(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = path.Clean(p)
	}
	return out
}

// setIDModeCalls are the calls whose mode can make a set-id file, with the
// index of the mode and, for the opens, of the flags (-1 when the call
// always takes its mode).
var setIDModeCalls = []struct {
	name        string
	mode, flags uint
	opens       bool
}{
	{name: "chmod", mode: 1}, {name: "fchmod", mode: 1}, {name: "fchmodat", mode: 2}, {name: "fchmodat2", mode: 2},
	{name: "creat", mode: 1}, {name: "mknod", mode: 1}, {name: "mknodat", mode: 2},
	{name: "open", mode: 2, flags: 1, opens: true}, {name: "openat", mode: 3, flags: 2, opens: true},
}

const (
	setIDBits   = 0o6000             // S_ISUID | S_ISGID
	openCreates = 0o100 | 0o20000000 // O_CREAT | __O_TMPFILE
)

// setIDUnguarded lists the calls sc lets set a set-id mode: a permissive
// default, or a permissive rule (allow, log, trace, notify) naming the
// call without a condition that holds only for a mode with no set-id bit
// (or, for the opens, only when nothing is created); openat2 permitted at
// all. Several conditions on one argument are alternatives (runc makes a
// rule of each), so a guard counts only as its argument's sole condition.
func setIDUnguarded(sc *specs.LinuxSeccomp) []string {
	if sc == nil {
		return []string{"every call (no seccomp filter)"}
	}
	var out []string
	permits := func(a specs.LinuxSeccompAction) bool { return !denyActions[a] }
	named := func(name string) []specs.LinuxSyscall {
		var rules []specs.LinuxSyscall
		for _, r := range sc.Syscalls {
			if slices.Contains(r.Names, name) {
				rules = append(rules, r)
			}
		}
		return rules
	}
	// refused: a rule refuses the call whatever its arguments.
	refused := func(rules []specs.LinuxSyscall) bool {
		return slices.ContainsFunc(rules, func(r specs.LinuxSyscall) bool { return !permits(r.Action) && len(r.Args) == 0 })
	}
	for _, c := range setIDModeCalls {
		rules := named(c.name)
		open := false
		switch {
		case refused(rules):
		case permits(sc.DefaultAction):
			// A call no rule matches falls to the default: a guard on
			// an allow rule then only says which calls are allowed
			// twice.
			open = true
		default:
			for _, r := range rules {
				if permits(r.Action) && !soleGuard(r.Args, c.mode, setIDBits) && !(c.opens && soleGuard(r.Args, c.flags, openCreates)) {
					open = true
				}
			}
		}
		if open {
			out = append(out, c.name)
		}
	}
	rules := named("openat2")
	if !refused(rules) && (permits(sc.DefaultAction) || slices.ContainsFunc(rules, func(r specs.LinuxSyscall) bool { return permits(r.Action) })) {
		out = append(out, "openat2")
	}
	return out
}

// soleGuard says whether args hold exactly one condition on argument
// index, and it lets through only values without any of bits.
func soleGuard(args []specs.LinuxSeccompArg, index uint, bits uint64) bool {
	var on []specs.LinuxSeccompArg
	for _, a := range args {
		if a.Index == index {
			on = append(on, a)
		}
	}
	return len(on) == 1 && lacks(on[0], bits)
}

// lacks says whether every value condition a lets through has none of
// bits: equal to a value without them, masked to exactly them and
// compared with none, or below their lowest bit.
func lacks(a specs.LinuxSeccompArg, bits uint64) bool {
	low := bits & -bits
	switch a.Op {
	case specs.OpEqualTo:
		return a.Value&bits == 0
	case specs.OpMaskedEqual:
		return a.Value&bits == bits && a.ValueTwo&bits == 0
	case specs.OpLessThan:
		return a.Value <= low
	case specs.OpLessEqual:
		return a.Value < low
	}
	return false
}

// writesAsDiskRoot reports whether bind m is id-mapped so that an id s's
// container holds is on-disk root there (uid or gid 0): what it makes in
// the bind is root's on the host.
func writesAsDiskRoot(m specs.Mount, s *specs.Spec) bool { return idMappedBy(m, s, diskRootHeld) }

// diskRootHeld: the mount's mappings send on-disk id 0 to a host id the
// container's mappings hold.
func diskRootHeld(mount, container []specs.LinuxIDMapping) bool {
	for _, a := range mount {
		if a.ContainerID != 0 || a.Size == 0 {
			continue
		}
		for _, b := range container {
			if uint64(a.HostID) >= uint64(b.HostID) && uint64(a.HostID) < uint64(b.HostID)+uint64(b.Size) {
				return true
			}
		}
	}
	return false
}

// hostRootWrites lists the host paths s's container writes as host root:
// each read-write bind (one id-mapped so that on-disk root is an id it
// holds, or any, when no user namespace keeps host root unmapped) and a
// writable root filesystem.
func hostRootWrites(s *specs.Spec) []string {
	unmapped := hostRootUnmapped(s)
	var out []string
	for _, m := range s.Mounts {
		if !isBind(m) || readOnly(m) {
			continue
		}
		if !unmapped || writesAsDiskRoot(m, s) {
			out = append(out, fmt.Sprintf("the read-write bind of %s at %s", m.Source, m.Destination))
		}
	}
	if !unmapped && s.Root != nil && !s.Root.Readonly {
		out = append(out, "the writable root filesystem "+s.Root.Path)
	}
	return out
}
