package darwin

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// Input is what the translator judges a spec against besides the spec:
// facts of the caller and the runtime's own files, all read by the
// caller. Nothing here is read from the host.
type Input struct {
	Spec *specs.Spec
	// UID and GID are the caller's: Seatbelt cannot change users, so the
	// process runs as them and a spec asking for others is refused.
	UID, GID uint32
	// Self is the vetto-runtime executable. It runs inside the sandbox as
	// the holder (blocked until start, then it execs the process) and as
	// the canary probe.
	Self string
	// Fifo is the held start's fifo in the backend's state directory.
	Fifo string
}

// Param is one sandbox-exec -D parameter. The profile names it,
// (param "P3"); its value, a path, never appears in the profile text.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Use says what the profile grants or denies under it.
	Use string `json:"use"`
	// From is the spec field the path came from, or "runtime" for what
	// any process needs to start, "holder" for the held start's files.
	From string `json:"from"`
}

// Rlimit is one process.rlimits entry the holder sets before it execs.
type Rlimit struct {
	Type     string `json:"type"`
	Resource int    `json:"resource"` // darwin's RLIMIT_* number
	Soft     uint64 `json:"soft"`
	Hard     uint64 `json:"hard"`
}

// Plan is a spec translated for Seatbelt: the profile and its parameters,
// the process the holder execs, and what could not be honoured.
type Plan struct {
	// Profile is the SBPL text: (version 1), (deny default), then rules
	// whose every path is a (param "Pn"). It depends on the spec's shape
	// only: two specs that differ in the names of their paths have the
	// same profile.
	Profile string  `json:"-"`
	Params  []Param `json:"params"`

	Args    []string `json:"args"`
	Env     []string `json:"env"`
	Cwd     string   `json:"cwd"`
	Rlimits []Rlimit `json:"rlimits,omitempty"`
	Umask   *uint32  `json:"umask,omitempty"`

	// The container paths (= host paths: a darwin bundle is host-root)
	// by what the profile does with them, for verification and canaries.
	ReadRoots  []string `json:"readRoots,omitempty"`
	WriteRoots []string `json:"writeRoots,omitempty"`
	Hidden     []string `json:"hidden,omitempty"`
	Masked     []string `json:"masked,omitempty"`

	// Refusals, Degradations, Notes: what the plan cannot give.
	runtime.PlatformShortfalls

	rules []rule
}

// runtimeFiles are what any process needs to start on macOS, granted
// beyond the spec's mounts because without them nothing runs, not even
// the holder: dyld and the dyld shared cache (where libSystem lives since
// macOS 11; in a cryptex since macOS 13). They are files of the signed
// system volume. "/" gets metadata only, for getcwd and realpath.
var runtimeFiles = []struct {
	path, filter, use string
	ops               []string
}{
	{"/", "literal", "metadata", []string{"file-read-metadata"}},
	{"/usr/lib/dyld", "literal", "read,exec", []string{"file-read*", "file-map-executable"}},
	{"/System/Library/dyld", "subpath", "read,exec", []string{"file-read*", "file-map-executable"}},
	{"/System/Volumes/Preboot/Cryptexes/OS/System/Library/dyld", "subpath", "read,exec", []string{"file-read*", "file-map-executable"}},
}

// defaultDevices are the OCI default devices that darwin has ("the
// runtime MUST supply" /dev/null, zero, full, random, urandom, tty,
// console, ptmx): the host's own, granted by name after the mounts so
// that a tmpfs on /dev (hidden) does not take them away. darwin has no
// /dev/full; /dev/tty, /dev/console and /dev/ptmx are not granted (a
// terminal is refused: its ioctls would let the process type into the
// caller's terminal).
var defaultDevices = []struct {
	path string
	ops  []string
}{
	{"/dev/null", []string{"file-read*", "file-write-data"}},
	{"/dev/zero", []string{"file-read*"}},
	{"/dev/random", []string{"file-read*"}},
	{"/dev/urandom", []string{"file-read*"}},
}

// Seatbelt operations the rules use. file-read* and file-write* are the
// families; exec needs process-exec for the file and file-map-executable
// for the libraries dyld maps.
var (
	opsRead  = []string{"file-read*"}
	opsWrite = []string{"file-write*"}
	opsExec  = []string{"process-exec", "file-map-executable"}
	opsAll   = []string{"file-read*", "file-write*", "process-exec", "file-map-executable"}
)

// maxGuards bounds the ancestors guarded per denied path (see guard): a
// fixed number of slots keeps the profile independent of how deep a path
// lies. A denied path deeper than this below a writable parent is refused.
const maxGuards = 8

// nullDevice is what the policy compiler binds over a masked file.
const nullDevice = "/dev/null"

// Translate turns a spec into a Seatbelt plan. It is pure: the same input
// gives the same plan, byte for byte. It never stops at the first problem:
// Refusals lists every field Seatbelt cannot honour.
func Translate(in Input) *Plan {
	t := &translator{in: in, s: in.Spec, p: &Plan{}}
	t.translate()
	t.p.Profile = render(t.p.rules)
	return t.p
}

type translator struct {
	in Input
	s  *specs.Spec
	p  *Plan
	// denied are the paths a subpath deny covers, in order, to guard.
	denied []string
}

func (t *translator) refuse(field, rule, format string, args ...any) {
	t.p.Refusals = append(t.p.Refusals, Refusal{Field: field, Rule: "darwin." + rule, Reason: fmt.Sprintf(format, args...)})
}

func (t *translator) degrade(feature, rule string, standard bool, format string, args ...any) {
	for _, d := range t.p.Degradations {
		if d.Rule == "darwin."+rule {
			return
		}
	}
	t.p.Degradations = append(t.p.Degradations, Degradation{Feature: feature, Rule: "darwin." + rule, Reason: fmt.Sprintf(format, args...), Standard: standard})
}

func (t *translator) note(field, rule, format string, args ...any) {
	t.p.Notes = append(t.p.Notes, Note{Field: field, Rule: "darwin." + rule, Reason: fmt.Sprintf(format, args...)})
}

// param adds a parameter for value and returns its name.
func (t *translator) param(value, use, from string) string {
	name := "P" + strconv.Itoa(len(t.p.Params))
	t.p.Params = append(t.p.Params, Param{Name: name, Value: value, Use: use, From: from})
	return name
}

func (t *translator) rule(allow bool, ops []string, filter, param, comment string) {
	t.p.rules = append(t.p.rules, rule{allow: allow, ops: ops, filter: filter, param: param, comment: comment})
}

func (t *translator) translate() {
	s := t.s
	if s == nil {
		t.refuse("", "spec", "no spec")
		return
	}
	t.p.rules = append(t.p.rules,
		rule{allow: true, ops: []string{"process-fork"}, comment: "runtime: what any process needs to start"},
		rule{allow: true, ops: []string{"signal"}, target: "same-sandbox"},
		rule{allow: true, ops: []string{"process-info*"}, target: "self"},
		rule{allow: true, ops: []string{"sysctl-read"}},
	)
	for _, f := range runtimeFiles {
		t.rule(true, f.ops, f.filter, t.param(f.path, f.use, "runtime"), "")
	}
	t.rule(true, []string{"file-read*", "process-exec"}, "literal", t.param(t.in.Self, "read,exec", "holder"), "holder: the runtime itself holds the start, then execs the process")
	t.rule(true, []string{"file-write-data"}, "literal", t.param(t.in.Fifo, "write-data", "holder"), "")

	t.root()
	t.mounts()
	for i, d := range defaultDevices {
		c := ""
		if i == 0 {
			c = "devices: the OCI defaults darwin has"
		}
		t.rule(true, d.ops, "literal", t.param(d.path, "device", "runtime"), c)
	}
	t.process()
	t.linux()
	t.annotations()
	t.other()
	t.network()
	// No pid namespace: teardown kills the process group and the
	// descendants it finds; one that left both (setsid, then its parent
	// died) survives it.
	t.degrade(FeatureCleanup, "degraded-cleanup", true, "no pid namespace: teardown is best-effort, by process group and the descendants found; a process that leaves both survives it")

	// Denies after every allow: last match wins in SBPL, so nothing
	// granted above can reopen what these close.
	t.readonlyPaths()
	t.guards()
	t.masks()
	t.rule(false, []string{"file-write-setugid"}, "", "", "no set-id bits on anything the process writes")
}

func (t *translator) root() {
	r := t.s.Root
	switch {
	case r == nil || r.Path == "":
		t.refuse("root.path", "root", "must be set")
	case r.Path != "/":
		t.refuse("root.path", "root", "%s: a darwin bundle is host-root, root.path must be \"/\": without chroot the process sees the host's filesystem, through the mounts only", strconv.Quote(r.Path))
	case !r.Readonly:
		// The root itself is never granted: only mounts are.
		t.note("root.readonly", "root", "false, but the root is not writable: only the mounts grant access")
	}
}

// mountOptions are the options a bind may carry: the ones Seatbelt
// honours (ro, rw, noexec) and the ones that mean nothing without a mount
// (propagation, atime, nodev: an unprivileged process cannot make device
// nodes). nosuid is honoured only in part (see FeatureNoNewPrivs).
var mountOptions = map[string]bool{
	"bind": true, "rbind": true, "ro": true, "rw": true, "noexec": true, "exec": true, "nosuid": true, "suid": true,
	"nodev": true, "dev": true, "private": true, "rprivate": true, "slave": true, "rslave": true, "shared": true,
	"rshared": true, "unbindable": true, "runbindable": true, "relatime": true, "norelatime": true, "noatime": true,
	"atime": true, "strictatime": true, "nodiratime": true, "diratime": true,
}

func isBind(m specs.Mount) bool {
	return m.Type == "bind" || slices.Contains(m.Options, "bind") || slices.Contains(m.Options, "rbind")
}

// mounts turns each mount, in the spec's order (a later mount shadows an
// earlier one, as it would mounted), into rules. A bind grants or denies
// each family explicitly, so it shadows a parent's rules both ways.
func (t *translator) mounts() {
	for i, m := range t.s.Mounts {
		field := fmt.Sprintf("mounts[%d]", i)
		dest, ok := t.absPath(field+".destination", m.Destination)
		if !ok {
			continue
		}
		switch {
		case isBind(m) && m.Source == nullDevice:
			// The policy compiler's mask of a file: denied, last.
			t.p.Masked = append(t.p.Masked, dest)
		case isBind(m):
			src, ok := t.absPath(field+".source", m.Source)
			if !ok {
				continue
			}
			if src != dest {
				t.refuse(field, "mount-remap", "bind of %s at %s: Seatbelt filters paths and cannot remap one; a darwin bundle binds each host path at itself", strconv.Quote(src), strconv.Quote(dest))
				continue
			}
			if src == "/dev" || strings.HasPrefix(src, "/dev/") {
				t.refuse(field, "devices", "bind of %s: host devices are not granted (only the OCI defaults)", strconv.Quote(src))
				continue
			}
			t.bind(field, dest, m.Options)
		case m.Type == "tmpfs":
			// A fresh tmpfs hides what is under its path; Seatbelt cannot
			// make one, so the path is hidden and nothing is granted
			// there: less than the spec asks, never more.
			t.note(field, "tmpfs", "tmpfs at %s is not mounted: the path is neither readable nor writable", strconv.Quote(dest))
			t.rule(false, opsAll, "subpath", t.param(dest, "hide", field), field+" tmpfs: hidden")
			t.p.Hidden = append(t.p.Hidden, dest)
			t.denied = append(t.denied, dest)
		default:
			t.refuse(field, "mount-type", "a %s mount at %s cannot be expressed: a darwin bundle has bind mounts of host paths and tmpfs only", strconv.Quote(m.Type), strconv.Quote(dest))
		}
	}
}

func (t *translator) bind(field, dest string, opts []string) {
	ro, noexec := false, false
	for _, o := range opts {
		if !mountOptions[o] {
			t.refuse(field+".options", "mount-option", "%s cannot be honoured by Seatbelt", strconv.Quote(o))
		}
		switch o {
		case "ro":
			ro = true
		case "rw":
			ro = false
		case "noexec":
			noexec = true
		case "exec":
			noexec = false
		case "nosuid":
			t.degrade(FeatureNoNewPrivs, "no-new-privs", false, "set-id bits are honoured on exec: darwin has no no_new_privs and Seatbelt cannot make a bind nosuid (the set-id program stays inside the sandbox)")
		}
	}
	allow, deny := slices.Clone(opsRead), []string(nil)
	use := "read"
	if ro {
		deny = append(deny, opsWrite...)
		t.p.ReadRoots = append(t.p.ReadRoots, dest)
	} else {
		allow = append(allow, opsWrite...)
		use = "read,write"
		t.p.WriteRoots = append(t.p.WriteRoots, dest)
	}
	if noexec {
		deny = append(deny, opsExec...)
	} else {
		allow = append(allow, opsExec...)
		use += ",exec"
	}
	mode := "rw"
	if ro {
		mode = "ro"
	}
	p := t.param(dest, use, field)
	t.rule(true, allow, "subpath", p, field+" bind "+mode)
	if len(deny) > 0 {
		t.rule(false, deny, "subpath", p, "")
		t.denied = append(t.denied, dest)
	}
}

// absPath checks that p is a clean absolute path that can be a
// parameter, refusing it under field otherwise.
func (t *translator) absPath(field, p string) (string, bool) {
	switch {
	case strings.ContainsRune(p, 0):
		t.refuse(field, "path", "%s contains a NUL byte, which no sandbox-exec parameter can carry", strconv.Quote(p))
		return "", false
	case !strings.HasPrefix(p, "/"):
		t.refuse(field, "path", "%s is not an absolute path", strconv.Quote(p))
		return "", false
	}
	return path.Clean(p), true
}

// darwinRlimits are the rlimits darwin applies as Linux does. Refused:
// RLIMIT_AS and RLIMIT_RSS (one resource on darwin, which refuses to set
// it), RLIMIT_DATA (darwin does not count mmap'd memory, Linux does since
// 4.7), and the ones darwin lacks.
var darwinRlimits = map[string]int{
	"RLIMIT_CPU": 0, "RLIMIT_FSIZE": 1, "RLIMIT_STACK": 3, "RLIMIT_CORE": 4,
	"RLIMIT_MEMLOCK": 6, "RLIMIT_NPROC": 7, "RLIMIT_NOFILE": 8,
}

func (t *translator) process() {
	p := t.s.Process
	if p == nil {
		return
	}
	t.p.Args, t.p.Env, t.p.Cwd = p.Args, p.Env, p.Cwd
	if p.CommandLine != "" {
		t.refuse("process.commandLine", "process", "is Windows-only; set process.args")
	}
	if p.Terminal {
		t.refuse("process.terminal", "terminal", "a pty is not implemented on darwin: its ioctls (TIOCSTI) would let the process type into the caller's terminal, and the profile grants none")
	}
	u := p.User
	if u.UID != t.in.UID || u.GID != t.in.GID {
		t.refuse("process.user", "user", "uid %d gid %d: the process runs as the caller (uid %d gid %d); Seatbelt cannot change users", u.UID, u.GID, t.in.UID, t.in.GID)
	} else if u.UID == 0 {
		t.refuse("process.user", "user", "uid 0: the process would be root on the host's files; run vetto-runtime as an unprivileged user")
	}
	for i, g := range u.AdditionalGids {
		if g != t.in.GID {
			t.refuse(fmt.Sprintf("process.user.additionalGids[%d]", i), "user", "gid %d: the process keeps the caller's groups; Seatbelt cannot change them", g)
		}
	}
	if u.Username != "" {
		t.refuse("process.user.username", "user", "is Windows-only")
	}
	if u.Umask != nil {
		m := *u.Umask
		t.p.Umask = &m
	}
	if c := p.Capabilities; c != nil && len(c.Bounding)+len(c.Effective)+len(c.Permitted)+len(c.Inheritable)+len(c.Ambient) > 0 {
		t.refuse("process.capabilities", "capabilities", "Linux capabilities have no meaning on darwin: the process has the caller's rights, no more; leave them out")
	}
	for i, rl := range p.Rlimits {
		res, ok := darwinRlimits[rl.Type]
		if !ok {
			t.refuse(fmt.Sprintf("process.rlimits[%d]", i), "rlimits", "%s cannot be set on darwin as it means on Linux", rl.Type)
			continue
		}
		t.p.Rlimits = append(t.p.Rlimits, Rlimit{Type: rl.Type, Resource: res, Soft: rl.Soft, Hard: rl.Hard})
	}
	if p.NoNewPrivileges {
		t.degrade(FeatureNoNewPrivs, "no-new-privs", false, "set-id bits are honoured on exec: darwin has no no_new_privs and Seatbelt cannot make a bind nosuid (the set-id program stays inside the sandbox)")
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
			t.refuse(f.name, "process", "is a Linux feature darwin does not have")
		}
	}
}

func (t *translator) linux() {
	l := t.s.Linux
	if l == nil {
		return
	}
	for i, ns := range l.Namespaces {
		t.refuse(fmt.Sprintf("linux.namespaces[%d]", i), "namespaces", "%s namespace: isolation darwin does not have; a darwin bundle lists none", ns.Type)
	}
	if len(l.UIDMappings)+len(l.GIDMappings) > 0 {
		t.refuse("linux.uidMappings", "user", "user namespace id mappings: Seatbelt cannot change users")
	}
	if len(l.Sysctl) > 0 {
		t.refuse("linux.sysctl", "sysctl", "darwin has no per-sandbox kernel parameters")
	}
	if l.Seccomp != nil {
		t.refuse("linux.seccomp", "seccomp", "Seatbelt has no system-call filter")
	}
	if len(l.Devices) > 0 {
		t.refuse("linux.devices", "devices", "device nodes cannot be created; only the OCI default devices are granted")
	}
	t.resources(l.Resources)
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
			t.refuse(f.name, "linux", "is a Linux feature darwin does not have")
		}
	}
	// linux.cgroupsPath is ignored: vetto-runtime's core sets it on every
	// spec with a linux section, and there is no cgroup to place.
	// rootfsPropagation concerns mounts darwin does not make.
	for i, mp := range l.MaskedPaths {
		if p, ok := t.absPath(fmt.Sprintf("linux.maskedPaths[%d]", i), mp); ok {
			t.p.Masked = append(t.p.Masked, p)
		}
	}
}

func (t *translator) resources(r *specs.LinuxResources) {
	if r == nil {
		return
	}
	for i, d := range r.Devices {
		if d.Allow {
			t.refuse(fmt.Sprintf("linux.resources.devices[%d]", i), "devices", "allows device access; only the OCI default devices are granted")
		}
	}
	if m := r.Memory; m != nil {
		if m.Limit != nil && *m.Limit > 0 {
			t.degrade(FeatureLimits, "limits", false, "memory and pids limits cannot be set: darwin has no cgroups, and its rlimits are per process or per user")
		}
		//lint:ignore SA1019 deprecated in the spec, still refused when set
		if m.Reservation != nil || m.Swap != nil || m.Kernel != nil || m.KernelTCP != nil || m.Swappiness != nil ||
			m.DisableOOMKiller != nil || m.UseHierarchy != nil || m.CheckBeforeUpdate != nil {
			t.refuse("linux.resources.memory", "resources", "memory settings other than limit have no darwin equivalent")
		}
	}
	if r.Pids != nil && r.Pids.Limit != nil && *r.Pids.Limit > 0 {
		t.degrade(FeatureLimits, "limits", false, "memory and pids limits cannot be set: darwin has no cgroups, and its rlimits are per process or per user")
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
			t.refuse(f.name, "resources", "cgroup limits darwin cannot set")
		}
	}
}

// readonlyPaths denies writes under linux.readonlyPaths, after every
// allow.
func (t *translator) readonlyPaths() {
	if t.s.Linux == nil {
		return
	}
	for i, rp := range t.s.Linux.ReadonlyPaths {
		field := fmt.Sprintf("linux.readonlyPaths[%d]", i)
		if p, ok := t.absPath(field, rp); ok {
			t.rule(false, opsWrite, "subpath", t.param(p, "readonly", field), field)
			t.denied = append(t.denied, p)
		}
	}
}

// guards closes the one way around a path-based deny: Seatbelt matches
// the path of each access, so renaming a writable ancestor of a denied
// path (mv sub sub2) would move what it covers to a path nothing denies.
// On Linux those are mount points, which move with their parent; here
// every ancestor whose parent is writable gets file-write* denied on
// itself (literal: its entries stay writable, it cannot be renamed or
// removed). A fixed number of slots keeps the profile's text independent
// of the path's depth; unused slots repeat the denied path.
func (t *translator) guards() {
	seen := map[string]bool{}
	for _, d := range slices.Concat(t.denied, t.p.Masked) {
		if seen[d] {
			continue
		}
		seen[d] = true
		var need []string
		for a := path.Dir(d); a != "/" && t.allowed("file-write-unlink", path.Dir(a)); a = path.Dir(a) {
			need = append(need, a)
		}
		if len(need) == 0 {
			continue
		}
		if len(need) > maxGuards {
			t.refuse("mounts", "guard-depth", "%s lies %d directories below a writable parent; at most %d can be kept from being renamed", strconv.Quote(d), len(need), maxGuards)
			continue
		}
		for i := range maxGuards {
			g := d
			if i < len(need) {
				g = need[i]
			}
			c := ""
			if i == 0 {
				c = "guards: a writable ancestor of a denied path cannot be renamed"
			}
			t.rule(false, opsWrite, "literal", t.param(g, "guard", "runtime"), c)
		}
	}
}

func (t *translator) masks() {
	for i, m := range uniqueSorted(t.p.Masked) {
		c := ""
		if i == 0 {
			c = "masks (linux.maskedPaths, dev.vetto.masked, /dev/null binds): denied last"
		}
		t.rule(false, opsAll, "subpath", t.param(m, "mask", "masks"), c)
	}
	t.p.Masked = uniqueSorted(t.p.Masked)
}

// allowed evaluates the rules so far for op on p, with last-match
// semantics, the way the kernel would.
func (t *translator) allowed(op, p string) bool {
	values := map[string]string{}
	for _, pa := range t.p.Params {
		values[pa.Name] = pa.Value
	}
	return evaluate(t.p.rules, values, op, p)
}

func (t *translator) annotations() {
	a := t.s.Annotations
	if v := a[spec.AnnotationLandlock]; v != "" {
		t.refuse("annotations."+spec.AnnotationLandlock, "landlock", "Landlock is Linux's; Seatbelt enforces the mounts' paths instead, so a separate ruleset would not be applied as written")
	}
	if v := a[spec.AnnotationLevel]; v == "strict" {
		t.refuse("annotations."+spec.AnnotationLevel, "level-strict", "strict needs a pid namespace, a cgroup and seccomp; darwin has none of them")
	}
	if v, ok := a[spec.AnnotationMasked]; ok {
		var list []string
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			t.refuse("annotations."+spec.AnnotationMasked, "masked", "not a JSON array of paths: %v", err)
		}
		for i, m := range list {
			if p, ok := t.absPath(fmt.Sprintf("annotations.%s[%d]", spec.AnnotationMasked, i), m); ok {
				t.p.Masked = append(t.p.Masked, p)
			}
		}
	}
}

func (t *translator) other() {
	s := t.s
	if s.Hostname != "" || s.Domainname != "" {
		t.refuse("hostname", "hostname", "needs a UTS namespace, which darwin does not have")
	}
	if s.Windows != nil {
		t.refuse("windows", "platform", "is for Windows")
	}
	if s.Solaris != nil || s.VM != nil || s.ZOS != nil || s.FreeBSD != nil {
		t.refuse("solaris/vm/zos/freebsd", "platform", "is for another platform")
	}
	for _, bh := range spec.BundleHooks(s.Hooks) {
		t.refuse(bh.Field(), "hooks", "%s: only vetto-runtime's own hooks run on darwin: a bundle's hook would run on the host, outside any sandbox", strconv.Quote(bh.Hook.Path))
	}
}

// network: Seatbelt's deny default denies every socket connect, bind and
// listen, unix sockets included: the network is "none". Any other mode is
// refused. A spec with a linux section and no network namespace asks for
// the host's network (OCI: no entry means the runtime's namespace), which
// Seatbelt cannot give safely: it is refused too, unless dev.vetto.net
// says none. (A namespace listed is refused with the other namespaces.)
func (t *translator) network() {
	mode, set := t.s.Annotations[spec.AnnotationNet]
	switch {
	case set && (mode == "none" || mode == "off"):
	case set:
		t.refuse("annotations."+spec.AnnotationNet, "network", "%s: only none is supported on darwin (Seatbelt denies every socket); there is no relay", strconv.Quote(mode))
	case t.s.Linux != nil && !hasNamespace(t.s.Linux, specs.NetworkNamespace):
		t.refuse("linux.namespaces", "network-host", "no network namespace: the spec shares the host's network, which Seatbelt cannot grant safely; set annotation %s=none", spec.AnnotationNet)
	}
	if _, ok := t.s.Annotations[spec.AnnotationNetAllow]; ok {
		t.refuse("annotations."+spec.AnnotationNetAllow, "network", "an allowlist needs the egress relay, which darwin does not have")
	}
}

func hasNamespace(l *specs.Linux, typ specs.LinuxNamespaceType) bool {
	for _, ns := range l.Namespaces {
		if ns.Type == typ {
			return true
		}
	}
	return false
}

func uniqueSorted(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}
