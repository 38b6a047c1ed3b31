package windows

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// Job Object limit flags (winnt.h), the ones the plan sets or must never
// set. Checked against golang.org/x/sys/windows in consts_windows.go.
const (
	limitActiveProcess           = 0x00000008
	limitJobMemory               = 0x00000200
	limitDieOnUnhandledException = 0x00000400
	limitBreakawayOK             = 0x00000800
	limitSilentBreakawayOK       = 0x00001000
	limitKillOnJobClose          = 0x00002000
)

// UI restrictions (JOB_OBJECT_UILIMIT_*): the job's processes cannot use
// USER handles of processes outside it (no window messages to Explorer:
// the ShellExecute escape), the clipboard, global atoms (DDE), system
// parameters, display settings, other desktops, or log the user off.
const (
	uiHandles          = 0x00000001
	uiReadClipboard    = 0x00000002
	uiWriteClipboard   = 0x00000004
	uiSystemParameters = 0x00000008
	uiDisplaySettings  = 0x00000010
	uiGlobalAtoms      = 0x00000020
	uiDesktop          = 0x00000040
	uiExitWindows      = 0x00000080
	uiAll              = uiHandles | uiReadClipboard | uiWriteClipboard | uiSystemParameters | uiDisplaySettings | uiGlobalAtoms | uiDesktop | uiExitWindows
)

var limitNames = []struct {
	bit  uint32
	name string
}{
	{limitActiveProcess, "JOB_OBJECT_LIMIT_ACTIVE_PROCESS"},
	{limitJobMemory, "JOB_OBJECT_LIMIT_JOB_MEMORY"},
	{limitDieOnUnhandledException, "JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION"},
	{limitBreakawayOK, "JOB_OBJECT_LIMIT_BREAKAWAY_OK"},
	{limitSilentBreakawayOK, "JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK"},
	{limitKillOnJobClose, "JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE"},
}

var uiNames = []struct {
	bit  uint32
	name string
}{
	{uiHandles, "JOB_OBJECT_UILIMIT_HANDLES"},
	{uiReadClipboard, "JOB_OBJECT_UILIMIT_READCLIPBOARD"},
	{uiWriteClipboard, "JOB_OBJECT_UILIMIT_WRITECLIPBOARD"},
	{uiSystemParameters, "JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS"},
	{uiDisplaySettings, "JOB_OBJECT_UILIMIT_DISPLAYSETTINGS"},
	{uiGlobalAtoms, "JOB_OBJECT_UILIMIT_GLOBALATOMS"},
	{uiDesktop, "JOB_OBJECT_UILIMIT_DESKTOP"},
	{uiExitWindows, "JOB_OBJECT_UILIMIT_EXITWINDOWS"},
}

func flagNames(v uint32, names []struct {
	bit  uint32
	name string
}) []string {
	var out []string
	for _, n := range names {
		if v&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Well-known SIDs and the integrity level of the token.
const (
	sidAdministrators = "S-1-5-32-544"
	sidLowIntegrity   = "S-1-16-4096"
	// integrityLow is SECURITY_MANDATORY_LOW_RID.
	integrityLow = 0x1000
	// privilegeChangeNotify is the one privilege DISABLE_MAX_PRIVILEGE
	// keeps (path traversal; every process has it).
	privilegeChangeNotify = "SeChangeNotifyPrivilege"
)

// Job is the Job Object the process is created in.
type Job struct {
	LimitFlags         uint32   `json:"limitFlags"`
	Limits             []string `json:"limits"`
	ActiveProcessLimit uint32   `json:"activeProcessLimit,omitempty"`
	JobMemoryLimit     uint64   `json:"jobMemoryLimit,omitempty"`
	UIRestrictions     uint32   `json:"uiRestrictions"`
	UI                 []string `json:"ui"`
}

// Token is the restricted token the process runs with: every privilege
// but SeChangeNotifyPrivilege removed (DISABLE_MAX_PRIVILEGE), the
// Administrators group deny-only, low integrity. The AppContainer then
// derives its own token from it.
type Token struct {
	DisableMaxPrivilege bool     `json:"disableMaxPrivilege"`
	DenyOnly            []string `json:"denyOnly"`
	Integrity           string   `json:"integrity"`
}

// AppContainer is the process's AppContainer: a profile made for this
// container alone, with no capability. Without internetClient,
// internetClientServer or privateNetworkClientServer it has no network,
// and AppContainers cannot reach the host's loopback.
type AppContainer struct {
	Name         string   `json:"name"`
	Capabilities []string `json:"capabilities"`
}

// Grant is one access-control entry the launcher adds, for the
// AppContainer's SID only, to a host path (and, inheritable, to what is
// under a directory), and removes at teardown. An AppContainer reaches
// only what grants it (or ALL APPLICATION PACKAGES) access: the mounts
// become these.
type Grant struct {
	Path string `json:"path"`
	// Access is read (read and execute), write (read, write, execute,
	// delete), deny (everything: masks and hidden paths), deny-write
	// (a read-only bind under a writable one) or deny-execute (noexec).
	Access string `json:"access"`
	From   string `json:"from"`
}

// Grant access values.
const (
	accessRead        = "read"
	accessWrite       = "write"
	accessDeny        = "deny"
	accessDenyWrite   = "deny-write"
	accessDenyExecute = "deny-execute"
)

// Input is what the translator judges a spec against besides the spec.
type Input struct {
	Spec *specs.Spec
	// Self is vetto-runtime's executable: the AppContainer must be able
	// to read and run it, for the canary probe.
	Self string
	// Name is the AppContainer profile's name, unique to this container.
	Name string
}

// Plan is a spec translated for Windows.
type Plan struct {
	Job          Job          `json:"job"`
	Token        Token        `json:"token"`
	AppContainer AppContainer `json:"appContainer"`
	Grants       []Grant      `json:"grants,omitempty"`

	// CommandLine is what CreateProcess gets: process.commandLine, or
	// process.args quoted as the C runtime parses them.
	CommandLine string   `json:"commandLine"`
	Args        []string `json:"args,omitempty"`
	Env         []string `json:"env"`
	Cwd         string   `json:"cwd"`

	// The container paths (= host paths) by what the grants make of
	// them, for verification and canaries.
	ReadRoots  []string `json:"readRoots,omitempty"`
	WriteRoots []string `json:"writeRoots,omitempty"`
	Hidden     []string `json:"hidden,omitempty"`
	Masked     []string `json:"masked,omitempty"`

	// Refusals, Degradations, Notes: what the plan cannot give.
	runtime.PlatformShortfalls
}

// Translate turns a spec into a Windows plan. It is pure: the same input
// gives the same plan. Refusals lists every field it cannot honour.
func Translate(in Input) *Plan {
	t := &translator{in: in, s: in.Spec, p: &Plan{}}
	t.translate()
	return t.p
}

type translator struct {
	in Input
	s  *specs.Spec
	p  *Plan
}

func (t *translator) refuse(field, rule, format string, args ...any) {
	t.p.Refusals = append(t.p.Refusals, Refusal{Field: field, Rule: "windows." + rule, Reason: fmt.Sprintf(format, args...)})
}

func (t *translator) degrade(feature, rule, format string, args ...any) {
	t.p.Degradations = append(t.p.Degradations, Degradation{Feature: feature, Rule: "windows." + rule, Reason: fmt.Sprintf(format, args...)})
}

func (t *translator) note(field, rule, format string, args ...any) {
	t.p.Notes = append(t.p.Notes, Note{Field: field, Rule: "windows." + rule, Reason: fmt.Sprintf(format, args...)})
}

func (t *translator) grant(p, access, from string) {
	t.p.Grants = append(t.p.Grants, Grant{Path: p, Access: access, From: from})
}

func (t *translator) translate() {
	if t.s == nil {
		t.refuse("", "spec", "no spec")
		return
	}
	// Always: kill every process when the job's last handle closes (the
	// holder's: if it dies, the container dies), die rather than wait on
	// an error dialog, and no breakaway — neither flag that lets a child
	// leave the job is ever set.
	t.p.Job.LimitFlags = limitKillOnJobClose | limitDieOnUnhandledException
	t.p.Job.UIRestrictions = uiAll
	t.p.Token = Token{DisableMaxPrivilege: true, DenyOnly: []string{sidAdministrators}, Integrity: sidLowIntegrity}
	t.p.AppContainer = AppContainer{Name: t.in.Name, Capabilities: []string{}}
	if t.in.Self != "" {
		if p, ok := cleanPath(t.in.Self); ok {
			t.grant(p, accessRead, "runtime")
		}
	}

	t.root()
	t.mounts()
	t.process()
	t.linux()
	t.windows()
	t.annotations()
	t.other()
	t.network()
	t.readonlyPaths()
	t.masks()
	t.p.Job.Limits = flagNames(t.p.Job.LimitFlags, limitNames)
	t.p.Job.UI = flagNames(t.p.Job.UIRestrictions, uiNames)
}

// path checks that p is a drive-absolute path, refusing it under field
// otherwise.
func (t *translator) path(field, p string) (string, bool) {
	c, ok := cleanPath(p)
	if !ok {
		t.refuse(field, "path", "%s is not a drive-absolute Windows path (X:\\…); UNC and device paths are not supported", strconv.Quote(p))
	}
	return c, ok
}

func (t *translator) root() {
	r := t.s.Root
	if r == nil || r.Path == "" {
		t.refuse("root.path", "root", "must be set")
		return
	}
	if p, ok := cleanPath(r.Path); !ok || !isRoot(p) {
		t.refuse("root.path", "root", "%s: a Windows bundle is host-root, root.path must be a drive root (C:\\): the process sees the host's files, through the grants only", strconv.Quote(r.Path))
	}
}

var mountOptions = map[string]bool{
	"bind": true, "rbind": true, "ro": true, "rw": true, "noexec": true, "exec": true,
}

func isBind(m specs.Mount) bool {
	return m.Type == "bind" || slices.Contains(m.Options, "bind") || slices.Contains(m.Options, "rbind")
}

// isNull says whether a bind source is the policy compiler's mask.
func isNull(src string) bool { return src == "/dev/null" || strings.EqualFold(src, "NUL") }

// bindMount is one bind the first pass of mounts found.
type bindMount struct {
	field, dest string
	ro, noexec  bool
}

// mounts turns the binds into grants, in two passes: the first reads
// every mount, the second grants, so that a read-only bind anywhere under
// a writable one (before or after it) gets the deny of writes it needs.
func (t *translator) mounts() {
	var binds []bindMount
	var hidden []struct{ field, dest string }
	for i, m := range t.s.Mounts {
		field := fmt.Sprintf("mounts[%d]", i)
		dest, ok := t.path(field+".destination", m.Destination)
		if !ok {
			continue
		}
		switch {
		case isBind(m) && isNull(m.Source):
			t.p.Masked = append(t.p.Masked, dest)
		case isBind(m):
			src, ok := t.path(field+".source", m.Source)
			if !ok {
				continue
			}
			if !samePath(src, dest) {
				t.refuse(field, "mount-remap", "bind of %s at %s: a grant cannot remap a path; a Windows bundle binds each host path at itself", strconv.Quote(src), strconv.Quote(dest))
				continue
			}
			if isRoot(dest) {
				t.refuse(field, "mount-root", "bind of the whole drive %s: grant the directories the process needs", strconv.Quote(dest))
				continue
			}
			b := bindMount{field: field, dest: dest}
			for _, o := range m.Options {
				if !mountOptions[o] {
					t.refuse(field+".options", "mount-option", "%s cannot be honoured with access-control entries", strconv.Quote(o))
				}
				switch o {
				case "ro":
					b.ro = true
				case "rw":
					b.ro = false
				case "noexec":
					b.noexec = true
				case "exec":
					b.noexec = false
				}
			}
			binds = append(binds, b)
			if b.ro {
				t.p.ReadRoots = append(t.p.ReadRoots, dest)
			} else {
				t.p.WriteRoots = append(t.p.WriteRoots, dest)
			}
		case m.Type == "tmpfs":
			t.note(field, "tmpfs", "tmpfs at %s is not mounted: the path is neither readable nor writable", strconv.Quote(dest))
			hidden = append(hidden, struct{ field, dest string }{field, dest})
			t.p.Hidden = append(t.p.Hidden, dest)
		default:
			t.refuse(field, "mount-type", "a %s mount at %s cannot be expressed: a Windows bundle has bind mounts of host paths and tmpfs only", strconv.Quote(m.Type), strconv.Quote(dest))
		}
	}
	underWrite := func(p string) bool {
		for _, w := range t.p.WriteRoots {
			if under(p, w) && !samePath(p, w) {
				return true
			}
		}
		return false
	}
	for _, b := range binds {
		if b.ro {
			t.grant(b.dest, accessRead, b.field)
			if underWrite(b.dest) {
				// Access-control entries add up: inside a writable grant
				// the inherited write must be denied explicitly.
				t.grant(b.dest, accessDenyWrite, b.field)
			}
		} else {
			t.grant(b.dest, accessWrite, b.field)
		}
		if b.noexec {
			t.grant(b.dest, accessDenyExecute, b.field)
		}
	}
	// A hidden path needs a deny only where a grant would reach it: an
	// AppContainer has no access to what nothing grants, and a deny
	// elsewhere would rewrite a whole tree of the user's for nothing.
	for _, h := range hidden {
		for _, r := range slices.Concat(t.p.WriteRoots, t.p.ReadRoots) {
			if under(h.dest, r) {
				t.grant(h.dest, accessDeny, h.field)
				break
			}
		}
	}
}

func (t *translator) process() {
	p := t.s.Process
	if p == nil {
		return
	}
	t.p.Args, t.p.Env = p.Args, p.Env
	switch {
	case p.CommandLine != "":
		t.p.CommandLine = p.CommandLine
	case len(p.Args) > 0 && strings.ContainsAny(p.Args[0], "\"\t\n"):
		t.refuse("process.args[0]", "args", "%s: a program name with a quote, tab or newline cannot be passed to CreateProcess unchanged", strconv.Quote(p.Args[0]))
	default:
		t.p.CommandLine = composeCommandLine(p.Args)
	}
	if cwd, ok := t.path("process.cwd", p.Cwd); ok {
		t.p.Cwd = cwd
	}
	if p.Terminal {
		t.refuse("process.terminal", "terminal", "a pseudo console is not implemented on Windows")
	}
	u := p.User
	if u.UID != 0 || u.GID != 0 || len(u.AdditionalGids) > 0 || u.Umask != nil {
		t.refuse("process.user", "user", "POSIX ids and umask have no meaning on Windows: the process runs as the caller, restricted")
	}
	if u.Username != "" {
		t.refuse("process.user.username", "user", "%s: the process runs as the caller, restricted; no other user", strconv.Quote(u.Username))
	}
	if c := p.Capabilities; c != nil && len(c.Bounding)+len(c.Effective)+len(c.Permitted)+len(c.Inheritable)+len(c.Ambient) > 0 {
		t.refuse("process.capabilities", "capabilities", "Linux capabilities have no meaning on Windows: the token keeps no privilege but SeChangeNotifyPrivilege")
	}
	for i, rl := range p.Rlimits {
		t.refuse(fmt.Sprintf("process.rlimits[%d]", i), "rlimits", "%s: Windows has no rlimits; a job's per-process limits do not mean the same", rl.Type)
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"process.apparmorProfile", p.ApparmorProfile != ""},
		{"process.selinuxLabel", p.SelinuxLabel != ""},
		{"process.oomScoreAdj", p.OOMScoreAdj != nil},
		{"process.scheduler", p.Scheduler != nil},
		{"process.ioPriority", p.IOPriority != nil},
		{"process.execCPUAffinity", p.ExecCPUAffinity != nil},
	} {
		if f.set {
			t.refuse(f.name, "process", "is a Linux feature Windows does not have")
		}
	}
	// noNewPrivileges is honoured as a matter of course: Windows has no
	// set-id programs, and a restricted token cannot gain privileges.
}

func (t *translator) linux() {
	l := t.s.Linux
	if l == nil {
		return
	}
	for i, ns := range l.Namespaces {
		t.refuse(fmt.Sprintf("linux.namespaces[%d]", i), "namespaces", "%s namespace: isolation Windows does not have; a Windows bundle lists none", ns.Type)
	}
	if len(l.UIDMappings)+len(l.GIDMappings) > 0 {
		t.refuse("linux.uidMappings", "user", "user namespace id mappings have no meaning on Windows")
	}
	if len(l.Sysctl) > 0 {
		t.refuse("linux.sysctl", "sysctl", "Windows has no kernel parameters per container")
	}
	if l.Seccomp != nil {
		t.refuse("linux.seccomp", "seccomp", "Windows has no system-call filter for a process")
	}
	if len(l.Devices) > 0 {
		t.refuse("linux.devices", "devices", "device nodes are Linux's")
	}
	if r := l.Resources; r != nil {
		for i, d := range r.Devices {
			if d.Allow {
				t.refuse(fmt.Sprintf("linux.resources.devices[%d]", i), "devices", "allows device access, which an AppContainer does not have")
			}
		}
		if m := r.Memory; m != nil {
			t.memory(m.Limit, m.Swap)
			//lint:ignore SA1019 deprecated in the spec, still refused when set
			if m.Reservation != nil || m.Kernel != nil || m.KernelTCP != nil || m.Swappiness != nil ||
				m.DisableOOMKiller != nil || m.UseHierarchy != nil || m.CheckBeforeUpdate != nil {
				t.refuse("linux.resources.memory", "resources", "memory settings other than limit and swap have no Job Object equivalent")
			}
		}
		if r.Pids != nil && r.Pids.Limit != nil && *r.Pids.Limit > 0 {
			lim := *r.Pids.Limit
			if lim > 1<<32-1 {
				lim = 1<<32 - 1
			}
			t.p.Job.LimitFlags |= limitActiveProcess
			t.p.Job.ActiveProcessLimit = uint32(lim)
			t.degrade(FeatureLimits, "pids-threads", "pids.limit %d becomes the job's active-process limit, which counts processes: threads are not limited as Linux's pids.max limits them", *r.Pids.Limit)
		}
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"linux.resources.cpu", r.CPU != nil},
			{"linux.resources.blockIO", r.BlockIO != nil},
			{"linux.resources.hugepageLimits", len(r.HugepageLimits) > 0},
			{"linux.resources.network", r.Network != nil},
			{"linux.resources.rdma", len(r.Rdma) > 0},
			{"linux.resources.unified", len(r.Unified) > 0},
		} {
			if f.set {
				t.refuse(f.name, "resources", "cgroup limits a Job Object does not set the same way")
			}
		}
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"linux.mountLabel", l.MountLabel != ""},
		{"linux.intelRdt", l.IntelRdt != nil},
		{"linux.personality", l.Personality != nil},
		{"linux.timeOffsets", len(l.TimeOffsets) > 0},
		{"linux.memoryPolicy", l.MemoryPolicy != nil},
		{"linux.netDevices", len(l.NetDevices) > 0},
	} {
		if f.set {
			t.refuse(f.name, "linux", "is a Linux feature Windows does not have")
		}
	}
	// linux.cgroupsPath is ignored: the core sets it on every spec with a
	// linux section; there is no cgroup to place.
	for i, mp := range l.MaskedPaths {
		if p, ok := t.path(fmt.Sprintf("linux.maskedPaths[%d]", i), mp); ok {
			t.p.Masked = append(t.p.Masked, p)
		}
	}
}

// memory maps a memory limit (and memory+swap) to the job's memory
// limit. JOB_OBJECT_LIMIT_JOB_MEMORY caps the memory all the job's
// processes commit, which is backed by RAM or the page file: at most
// what both limits allow. It does not count the file cache (system-wide
// on Windows), and an allocation past it fails where Linux would reclaim
// or OOM-kill.
func (t *translator) memory(limits ...*int64) {
	for _, l := range limits {
		if l == nil || *l <= 0 {
			continue
		}
		if v := uint64(*l); t.p.Job.JobMemoryLimit == 0 || v < t.p.Job.JobMemoryLimit {
			t.p.Job.JobMemoryLimit = v
		}
		t.p.Job.LimitFlags |= limitJobMemory
	}
}

func (t *translator) windows() {
	w := t.s.Windows
	if w == nil {
		return
	}
	if len(w.LayerFolders) > 0 {
		t.refuse("windows.layerFolders", "layers", "Windows containers (image layers, a silo) are not this backend's: it runs a host process in a job")
	}
	if r := w.Resources; r != nil {
		if r.Memory != nil && r.Memory.Limit != nil {
			l := int64(*r.Memory.Limit)
			t.memory(&l)
		}
		if r.CPU != nil {
			t.refuse("windows.resources.cpu", "resources", "CPU limits are not implemented")
		}
		if r.Storage != nil {
			t.refuse("windows.resources.storage", "resources", "storage limits need a container's own volume")
		}
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"windows.network", w.Network != nil},
		{"windows.hyperv", w.HyperV != nil},
		{"windows.credentialSpec", w.CredentialSpec != nil},
		{"windows.servicing", w.Servicing},
		{"windows.ignoreFlushesDuringBoot", w.IgnoreFlushesDuringBoot},
		{"windows.devices", len(w.Devices) > 0},
	} {
		if f.set {
			t.refuse(f.name, "windows-container", "is a Windows container (HCS) setting; this backend runs a host process in a job")
		}
	}
}

func (t *translator) annotations() {
	a := t.s.Annotations
	if a[spec.AnnotationLandlock] != "" {
		t.refuse("annotations."+spec.AnnotationLandlock, "landlock", "Landlock is Linux's; the grants enforce the mounts' paths instead")
	}
	if a[spec.AnnotationLevel] == "strict" {
		t.refuse("annotations."+spec.AnnotationLevel, "level-strict", "strict needs namespaces, cgroups and seccomp; a job and an AppContainer are not those")
	}
	if v, ok := a[spec.AnnotationMasked]; ok {
		var list []string
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			t.refuse("annotations."+spec.AnnotationMasked, "masked", "not a JSON array of paths: %v", err)
		}
		for i, m := range list {
			if p, ok := t.path(fmt.Sprintf("annotations.%s[%d]", spec.AnnotationMasked, i), m); ok {
				t.p.Masked = append(t.p.Masked, p)
			}
		}
	}
}

func (t *translator) other() {
	s := t.s
	if s.Hostname != "" || s.Domainname != "" {
		t.refuse("hostname", "hostname", "needs a UTS namespace; a job has none")
	}
	if s.Solaris != nil || s.VM != nil || s.ZOS != nil || s.FreeBSD != nil {
		t.refuse("solaris/vm/zos/freebsd", "platform", "is for another platform")
	}
	for _, bh := range spec.BundleHooks(s.Hooks) {
		t.refuse(bh.Field(), "hooks", "%s: only vetto-runtime's own hooks run on Windows: a bundle's hook would run on the host, outside the job", strconv.Quote(bh.Hook.Path))
	}
}

// network: only none, which the zero-capability AppContainer is. As on
// darwin, a linux section without a network namespace asks for the host's
// network and is refused unless dev.vetto.net says none.
func (t *translator) network() {
	mode, set := t.s.Annotations[spec.AnnotationNet]
	switch {
	case set && (mode == "none" || mode == "off"):
	case set:
		t.refuse("annotations."+spec.AnnotationNet, "network", "%s: only none is supported on Windows (an AppContainer with no network capability); there is no relay", strconv.Quote(mode))
	case t.s.Linux != nil && !slices.ContainsFunc(t.s.Linux.Namespaces, func(ns specs.LinuxNamespace) bool { return ns.Type == specs.NetworkNamespace }):
		t.refuse("linux.namespaces", "network-host", "no network namespace: the spec shares the host's network, which an AppContainer cannot be given safely; set annotation %s=none", spec.AnnotationNet)
	}
	if _, ok := t.s.Annotations[spec.AnnotationNetAllow]; ok {
		t.refuse("annotations."+spec.AnnotationNetAllow, "network", "an allowlist needs the egress relay, which Windows does not have")
	}
}

func (t *translator) readonlyPaths() {
	if t.s.Linux == nil {
		return
	}
	for i, rp := range t.s.Linux.ReadonlyPaths {
		field := fmt.Sprintf("linux.readonlyPaths[%d]", i)
		if p, ok := t.path(field, rp); ok {
			t.grant(p, accessDenyWrite, field)
		}
	}
}

// masks deny the AppContainer everything at each masked path. On Windows
// a deny entry is on the file or directory object, not on a name: a
// rename or a hard link takes it along (unlike a path rule).
func (t *translator) masks() {
	list := slices.Clone(t.p.Masked)
	slices.SortFunc(list, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	list = slices.CompactFunc(list, samePath)
	for _, m := range list {
		t.grant(m, accessDeny, "masks")
	}
	t.p.Masked = list
}
