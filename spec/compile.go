package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// PathKind is what a host path is.
type PathKind int

const (
	// PathMissing: nothing is there.
	PathMissing PathKind = iota
	// PathDir: a directory.
	PathDir
	// PathFile: anything else (regular file, socket, device).
	PathFile
)

// PathInfo is what the host says about a path.
type PathInfo struct {
	Kind PathKind
	// Real is the path with every symlink resolved. For a missing path it
	// is the longest existing prefix resolved with the rest appended, so
	// that a symlinked parent directory still shows.
	Real string
}

// Inputs is everything Compile needs to know about the host and the
// invocation. spec reads nothing itself: the caller gathers these
// (hostpolicy.Inputs, for the CLI's cli/policy.go), and tests pass fixed
// ones.
type Inputs struct {
	// Project, Home and Tmp are the values of $PROJECT, $HOME and $TMP:
	// absolute, with symlinks resolved.
	Project, Home, Tmp string
	// UID and GID are the invoking user's effective ids. The sandbox
	// always runs in a user namespace whose root is never host root on
	// host files: a caller that is not root maps it to themselves; for a
	// root caller it is the project's owner (ProjectUID, ProjectGID), or
	// SandboxID where that owner is root, with the project bind
	// id-mapped so that it stays writable.
	UID, GID               uint32
	ProjectUID, ProjectGID uint32
	// HomeUID and HomeGID own $HOME, when HomeOwned: a root caller's
	// sandbox is never host root, so a $HOME the policy shows is
	// id-mapped read-only for it to be readable (idMapping).
	HomeUID, HomeGID uint32
	HomeOwned        bool
	// SandboxID is the unprivileged host uid and gid the sandbox's root
	// is for a root caller in a root-owned project (runtime.toml
	// [policy] sandbox_id). 0 means DefaultSandboxID.
	SandboxID uint32
	// Env is the caller's environment (KEY=value), filtered by the
	// policy's pass_through.
	Env []string
	// Args is the command to run; empty means an interactive sh on a
	// terminal, as runc's starter spec has.
	Args []string
	// Rootfs is a root filesystem directory to use; empty means a
	// host-root bundle (the host's system directories, read-only).
	Rootfs string
	// Arch is the GOARCH the seccomp profile is built for.
	Arch string
	// Found is what the caller's scan of the readable roots found
	// (hostpolicy.Scan): secrets and sockets to mask, repositories and
	// tool configuration to make read-only.
	Found []Found
	// GitConfigs are the contents of the config files of the
	// repositories Found lists, by host path: one that carries
	// credentials is served stripped of them (StripGitCredentials).
	GitConfigs map[string]string
	// Lookup says what a host path is. It must not fail: a path that
	// cannot be examined is PathMissing.
	Lookup func(path string) PathInfo
	// RuntimePath is the vetto-runtime binary the bundle's own poststart
	// and poststop hooks run (RuntimeHook); empty writes none.
	RuntimePath string
}

// DefaultSandboxID is the host uid and gid a root caller's sandbox runs as
// in a root-owned project: 2^31-2, above every range useradd, systemd and
// /etc/subuid allocate from, so that no host process or file shares it.
const DefaultSandboxID = 2147483646

// IsEnvFile reports whether a file name is a dotenv file, which by
// convention holds secrets: ".env", ".env.local", ".env.production"; not
// the templates committed beside them (".env.example", ".env.sample",
// ".env.template", ".env.dist").
func IsEnvFile(name string) bool {
	if name == ".env" {
		return true
	}
	rest, ok := strings.CutPrefix(name, ".env.")
	if !ok || rest == "" {
		return false
	}
	switch rest {
	case "example", "sample", "template", "dist", "defaults":
		return false
	}
	return true
}

// hostRootDirs are bound read-only into a host-root bundle when they exist;
// a symlink (merged /usr: /bin → usr/bin) is bound from its target.
var hostRootDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// defaultCaps is the capability set containerd and Docker hand runc by
// default, without CAP_NET_RAW (raw sockets, packet spoofing), CAP_MKNOD
// (device nodes), CAP_AUDIT_WRITE, and without CAP_SETFCAP and CAP_FSETID:
// a file the sandbox writes must never carry file capabilities or keep
// set-id bits that the host honours (the kernel refuses security.capability
// without CAP_SETFCAP; the seccomp profile refuses set-id modes). They are
// capabilities in the sandbox's user namespace, over what it maps.
var defaultCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL",
	"CAP_NET_BIND_SERVICE", "CAP_SETGID", "CAP_SETPCAP", "CAP_SETUID", "CAP_SYS_CHROOT",
}

// runc's masked and read-only paths: kernel information a container must
// not read or change.
var (
	defaultMaskedPaths = []string{
		"/proc/acpi", "/proc/asound", "/proc/interrupts", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/sched_debug", "/proc/scsi", "/proc/timer_list", "/proc/timer_stats",
		"/sys/devices/virtual/powercap", "/sys/firmware",
	}
	defaultReadonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// Annotations the compiler writes. The OCI spec has no fields for these
// (docs/policy.md); other runtimes ignore them, which is why vetto verifies.
const (
	AnnotationLevel         = "dev.vetto.level"
	AnnotationNet           = "dev.vetto.net"
	AnnotationNetAllow      = "dev.vetto.net.allow"
	AnnotationLandlock      = "dev.vetto.landlock"
	AnnotationAllowDegraded = "dev.vetto.allow-degraded"
	AnnotationProfile       = "dev.vetto.profile"
	// AnnotationMasked lists (JSON array) the container paths the policy
	// denies. linux.maskedPaths enforces them; this records the intent,
	// which the post-launch canaries check the live container against.
	AnnotationMasked = "dev.vetto.masked"
	// AnnotationScan lists (JSON array) the host roots the compiler scanned
	// for secrets and sockets; create scans them again (the workload may
	// have moved a secret since), with AnnotationDeny, the host paths the
	// policy denies, and AnnotationStripped, the host files served
	// stripped of credentials with their sha256.
	AnnotationScan     = "dev.vetto.scan"
	AnnotationDeny     = "dev.vetto.deny"
	AnnotationStripped = "dev.vetto.stripped"
	// AnnotationProtect lists (JSON array) the container paths made
	// read-only because they run code on the host (repository metadata,
	// tool configuration).
	AnnotationProtect = "dev.vetto.protect"
	// AnnotationRepos lists (JSON array) the host paths of the
	// repositories (git directories and .git files) that existed at
	// compile time; one that appears later was made by a sandbox, and
	// teardown quarantines it (hostpolicy.Quarantine).
	AnnotationRepos = "dev.vetto.repos"
)

// HostEntry is an empty file or directory a bundle needs on the host.
type HostEntry struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
}

// Stripped is one host file the sandbox sees a copy of without its
// credentials (AnnotationStripped).
type Stripped struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// BundleFile is a file the caller writes into the bundle with the spec
// (a stripped git config), at a bundle-relative path.
type BundleFile struct {
	Path    string
	Content string
}

// Sandbox hostname (own UTS namespace).
const sandboxHostname = "sandbox"

// PathRule is one decision about a path, as `policy explain` shows it.
type PathRule struct {
	// Path is where it is in the sandbox; Source where it comes from on
	// the host ("" for a tmpfs).
	Path   string `json:"path"`
	Source string `json:"source,omitempty"`
	// Access is "read-only", "read-write", "masked" or "not mounted".
	Access string `json:"access"`
	// Origin says why: "host system", "$PROJECT", "profile default",
	// or the policy's file:line: key.
	Origin string `json:"origin"`
	// Note explains anything unusual ("does not exist", …).
	Note string `json:"note,omitempty"`
	// Unseen says, of a masked path, why the sandbox has nothing there
	// to mask: what `policy explain` groups denied paths by, so that it
	// never reads the words of Note. Not in the JSON, whose note says it.
	Unseen Unseen `json:"-"`
}

// Unseen is why a denied path has no mask in the sandbox.
type Unseen int

const (
	// Seen: the path is in the sandbox, and masked there.
	Seen Unseen = iota
	// UnseenAbsent: it does not exist on this host.
	UnseenAbsent
	// UnseenCreatable: it does not exist, inside a directory the sandbox can
	// write, so the sandbox could create it.
	UnseenCreatable
	// UnseenHidden: no mount of the sandbox shows it.
	UnseenHidden
)

// Access values of a PathRule.
const (
	AccessRead   = "read-only"
	AccessWrite  = "read-write"
	AccessMasked = "masked"
	AccessNone   = "not mounted"
)

// Plan is a compiled policy: the spec, and what went into it.
type Plan struct {
	Spec          *specs.Spec `json:"-"`
	Profile       string      `json:"profile"`
	Level         string      `json:"level"`
	Network       string      `json:"network"`
	NetworkAllow  []string    `json:"networkAllow,omitempty"`
	Rootfs        string      `json:"rootfs,omitempty"` // "" for a host-root bundle
	Paths         []PathRule  `json:"paths"`
	Env           []string    `json:"env"`               // names passed
	Dropped       []string    `json:"dropped,omitempty"` // names dropped because they look secret
	Memory        int64       `json:"memory,omitempty"`  // bytes
	Pids          int64       `json:"pids,omitempty"`
	CPU           float64     `json:"cpu,omitempty"`
	Capabilities  []string    `json:"capabilities"`
	AllowDegraded []string    `json:"allowDegraded,omitempty"`
	// Warnings are said on stderr by the CLI: nothing here is an error,
	// but each is something the user may not expect.
	Warnings []string `json:"warnings,omitempty"`
	// UID and GID are the host ids the sandbox's root is.
	UID, GID uint32
	// Files are written into the bundle beside config.json.
	Files []BundleFile `json:"-"`
	// Make are the host entries the bundle's read-only binds show that
	// do not exist yet (repository metadata a git directory lacks): the
	// bundle's writer makes them empty before it writes config.json.
	Make []HostEntry `json:"make,omitempty"`
	// Stripped are the host files served without their credentials.
	Stripped []Stripped `json:"stripped,omitempty"`
	// Credentials are the references the relay's credentials are read
	// from at create (AnnotationCredentials), never their values.
	Credentials []CredentialRef `json:"credentials,omitempty"`
}

// Compile turns a policy into an OCI spec for these inputs. It is a pure
// function: the same policy and inputs give the same spec, byte for byte.
// Errors in the policy are PolicyErrors (wrapping ErrPolicy) naming the
// file, line and key; bad Inputs are plain errors.
func Compile(p *Policy, in Inputs) (*specs.Spec, error) {
	pl, err := Explain(p, in)
	if err != nil {
		return nil, err
	}
	return pl.Spec, nil
}

// Explain compiles like Compile and also returns every decision made.
func Explain(p *Policy, in Inputs) (*Plan, error) {
	if err := checkInputs(in); err != nil {
		return nil, fmt.Errorf("compile %s: %w", p.File, err)
	}
	name := "default"
	if p.Extends.Set {
		name = p.Extends.Value
	}
	prof, ok := profiles[name]
	if !ok {
		return nil, PolicyErrors{{p.Extends.At, fmt.Errorf("%w: unknown profile %q", ErrBadValue, name)}}
	}
	c := &compiler{p: p, in: in, prof: prof, plan: &Plan{Profile: name, Rootfs: in.Rootfs}}
	c.sandboxIDs()
	c.plan.UID, c.plan.GID = c.uid, c.gid
	c.settings()
	c.filesystem()
	if len(c.errs) > 0 {
		return nil, c.errs.sorted()
	}
	if err := c.render(); err != nil {
		return nil, fmt.Errorf("compile %s: %w", p.File, err)
	}
	return c.plan, nil
}

func checkInputs(in Inputs) error {
	for _, v := range []struct{ name, path string }{{"$PROJECT", in.Project}, {"$HOME", in.Home}, {"$TMP", in.Tmp}} {
		if !filepath.IsAbs(v.path) || filepath.Clean(v.path) != v.path {
			return fmt.Errorf("%s %q must be an absolute, clean path", v.name, v.path)
		}
	}
	if in.Project == "/" {
		return errors.New("$PROJECT must not be / (it is mounted read-write)")
	}
	if in.Rootfs != "" && !filepath.IsAbs(in.Rootfs) {
		return fmt.Errorf("rootfs %q must be an absolute path", in.Rootfs)
	}
	if in.Lookup == nil {
		return errors.New("no Lookup for host paths")
	}
	if _, ok := seccompArchitectures[in.Arch]; !ok {
		return fmt.Errorf("no seccomp profile for architecture %q", in.Arch)
	}
	return nil
}

type compiler struct {
	p    *Policy
	in   Inputs
	prof *Profile
	plan *Plan
	errs PolicyErrors

	mounts      []*mountPlan // binds and tmpfs, in the order they apply
	masks       []*mountPlan
	maskedPaths []string // container paths masked by runc (see mask)
	denies      []*pathRule
	protected   []string // container paths made read-only (protect)

	// uid, gid are the host ids the sandbox's root is; projectMap and
	// homeMap, when set, id-map a writable project bind and a bind within
	// a root caller's $HOME to them (sandboxIDs).
	uid, gid            uint32
	projectMap, homeMap *idMapping
}

// sandboxIDs decides who the sandbox's root is on the host. Never host
// root: a caller that is not root can only map itself; for a root caller
// it is the project's owner, so that what the sandbox creates in the
// project is the owner's (their `make clean` works) and root-only host
// files stay unreadable by DAC, not only by masks. Where the owner is root
// (CI in a container), it is the unprivileged SandboxID, and the project
// bind is id-mapped so that the sandbox's root writes there as root on
// disk. A group of 0 is never mapped either.
func (c *compiler) sandboxIDs() {
	in := c.in
	if in.UID != 0 {
		c.uid, c.gid = in.UID, in.GID
		return
	}
	sandbox := in.SandboxID
	if sandbox == 0 {
		sandbox = DefaultSandboxID
	}
	c.uid, c.gid = in.ProjectUID, in.ProjectGID
	if c.uid == 0 {
		c.uid = sandbox
	}
	if c.gid == 0 {
		c.gid = sandbox
	}
	if c.uid != in.ProjectUID || c.gid != in.ProjectGID {
		c.projectMap = &idMapping{in.ProjectUID, in.ProjectGID}
	}
	// What the policy shows of a root caller's $HOME (the permissive
	// profile shows all of it) is read-only and owned by root, often
	// 0700: without a mapping the sandbox could read none of it, and
	// runc could not even reach a mask's mount point below it. Mapping
	// the owner to the sandbox's root makes it what a caller who is not
	// root sees: their own files, read-only.
	if in.HomeOwned && in.Home != "/" && !systemRoot(in.Home) && (in.HomeUID != c.uid || in.HomeGID != c.gid) {
		c.homeMap = &idMapping{in.HomeUID, in.HomeGID}
	}
}

func (c *compiler) fail(at Pos, err error) { c.errs = append(c.errs, &PolicyError{at, err}) }

func (c *compiler) warn(format string, args ...any) {
	c.plan.Warnings = append(c.plan.Warnings, fmt.Sprintf(format, args...))
}

// settings merges the scalar parts: level, network, limits.
func (c *compiler) settings() {
	p, pl := c.p, c.plan
	pl.Level = c.prof.Level
	if p.Level.Set {
		if levelRank(p.Level.Value) < levelRank(c.prof.Level) {
			c.fail(p.Level.At, fmt.Errorf("%w: %q is below profile %s's level %q: a policy can raise the level, not lower it (extend \"audit\" or \"default\" instead)", ErrBadValue, p.Level.Value, c.prof.Name, c.prof.Level))
		} else {
			pl.Level = p.Level.Value
		}
	}
	if pl.Level != "strict" {
		pl.AllowDegraded = append(pl.AllowDegraded, c.prof.AllowDegraded...)
	}
	for _, d := range p.AllowDegraded {
		if pl.Level == "strict" {
			c.fail(d.At, fmt.Errorf("%w: %q: level strict allows no degraded feature", ErrBadValue, d.Value))
			continue
		}
		pl.AllowDegraded = append(pl.AllowDegraded, d.Value)
	}
	sort.Strings(pl.AllowDegraded)
	pl.AllowDegraded = slices.Compact(pl.AllowDegraded)

	pl.Network = c.prof.Network
	if p.NetworkMode.Set {
		pl.Network = p.NetworkMode.Value
	}
	for _, a := range p.NetworkAllow {
		if pl.Network == "off" {
			c.fail(a.At, fmt.Errorf("%w: network mode is \"off\" (from profile %s), so nothing can be allowed: set network.mode = \"allowlist\"", ErrBadValue, c.prof.Name))
			break
		}
		pl.NetworkAllow = append(pl.NetworkAllow, a.Value)
	}

	pl.Memory, pl.Pids, pl.CPU = c.prof.Memory, c.prof.Pids, c.prof.CPU
	if p.Memory.Set {
		pl.Memory = p.Memory.Value
	}
	if p.Pids.Set {
		pl.Pids = p.Pids.Value
	}
	if p.CPU.Set {
		pl.CPU = p.CPU.Value
	}
	c.credentials()
	if pl.Level == "strict" {
		pl.Capabilities = []string{}
	} else {
		pl.Capabilities = append([]string{}, defaultCaps...)
	}
}

// pathRule is one path of the policy or its profile, expanded.
type pathRule struct {
	raw    string // as written: "$HOME/.ssh"
	path   string // expanded and clean
	root   string // the variable's value, "" for an absolute path
	info   PathInfo
	origin string
	at     *Pos // where the policy says it; nil for a profile's path
}

func (c *compiler) expand(raw string) (path, root string) {
	for _, v := range []struct{ name, value string }{{"$PROJECT", c.in.Project}, {"$HOME", c.in.Home}, {"$TMP", c.in.Tmp}} {
		if raw == v.name || strings.HasPrefix(raw, v.name+"/") {
			return filepath.Clean(v.value + raw[len(v.name):]), v.value
		}
	}
	return filepath.Clean(raw), ""
}

// rule expands a path and, for a path the policy wrote, checks it does not
// leave its root through a symlink ($PROJECT/x → /etc would turn "the
// project" into the host's /etc). Profile paths are not checked: a profile
// only denies, and a deny that resolves elsewhere masks wherever it leads.
func (c *compiler) rule(raw, origin string, at *Pos) (*pathRule, bool) {
	path, root := c.expand(raw)
	r := &pathRule{raw: raw, path: path, root: root, info: c.lookup(path), origin: origin, at: at}
	if at != nil && root != "" && !within(r.info.Real, root) {
		c.fail(*at, fmt.Errorf("%w: %q resolves through a symlink to %s, outside %s: policy paths must stay inside their root", ErrPathEscapes, raw, r.info.Real, root))
		return r, false
	}
	return r, true
}

func (c *compiler) lookup(path string) PathInfo {
	info := c.in.Lookup(path)
	if info.Real == "" {
		info.Real = path
	}
	return info
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// mountPlan is one mount the spec will have.
type mountPlan struct {
	dest, source string
	kind         mountKind
	write        bool
	origin       string
	// pin: a bind of a path onto itself inside a writable bind, which
	// adds nothing to see but makes it a mount point: the sandbox cannot
	// rename it away (rename(2) of a mount point is EBUSY) and put
	// something else at its name.
	pin bool
	// idmap, when set, id-maps the bind so that the sandbox's root is
	// the owner of its files on disk: it writes the project as its
	// owner, and reads a root caller's $HOME.
	idmap *idMapping
}

// idMapping is the on-disk owner a bind shows as the sandbox's root.
type idMapping struct{ uid, gid uint32 }

type mountKind int

const (
	bindMount  mountKind = iota // source at dest
	freshTmpfs                  // a new writable tmpfs (/tmp, $HOME)
	maskDir                     // an empty read-only tmpfs over a denied directory
	maskFile                    // /dev/null over a denied file
)

// filesystem decides every mount: the system binds, the project, the
// policy's reads and writes, fresh /tmp and $HOME, then the masks.
func (c *compiler) filesystem() {
	p, in := c.p, c.in
	if in.Rootfs == "" {
		for _, d := range hostRootDirs {
			info := c.lookup(d)
			if info.Kind != PathDir {
				continue
			}
			c.addMount(&mountPlan{dest: d, source: info.Real, origin: "host system"})
		}
	}

	// Denies first: an allowed path inside one is an error, whichever
	// order the file lists them in.
	var denies []*pathRule
	for _, d := range c.prof.Deny {
		r, _ := c.rule(d, "profile "+c.prof.Name, nil)
		denies = append(denies, r)
	}
	for i := range p.Deny {
		d := &p.Deny[i]
		if r, ok := c.rule(d.Value, d.At.String(), &d.At); ok {
			denies = append(denies, r)
		}
	}
	for _, f := range in.Found {
		if f.Kind != FoundSecret && f.Kind != FoundSocket {
			continue
		}
		origin := "scan: " + f.Kind.String()
		r, _ := c.rule(f.Path, origin, nil)
		if within(f.Path, in.Project) {
			r.raw = "$PROJECT" + strings.TrimPrefix(f.Path, in.Project)
		}
		denies = append(denies, r)
	}
	c.denies = denies

	project := &pathRule{raw: "$PROJECT", path: in.Project, root: in.Project, info: c.lookup(in.Project), origin: "$PROJECT"}
	c.checkNotDenied(project, denies)
	c.addMount(&mountPlan{dest: in.Project, source: project.info.Real, write: c.prof.ProjectWritable, origin: "$PROJECT",
		idmap: c.mapIf(c.prof.ProjectWritable, c.projectMap)})

	binds := func(list []Setting[string], profileList []string, write bool) {
		var rules []*pathRule
		for _, raw := range profileList {
			r, _ := c.rule(raw, "profile "+c.prof.Name, nil)
			rules = append(rules, r)
		}
		for i := range list {
			s := &list[i]
			if r, ok := c.rule(s.Value, s.At.String(), &s.At); ok {
				rules = append(rules, r)
			}
		}
		for _, r := range rules {
			if !c.checkNotDenied(r, denies) {
				continue
			}
			if r.info.Kind == PathMissing {
				access := AccessRead
				if write {
					access = AccessWrite
				}
				c.plan.Paths = append(c.plan.Paths, PathRule{Path: r.path, Access: AccessNone, Origin: r.origin, Note: "does not exist (would be " + access + ")"})
				if r.at != nil {
					c.warn("%s: %s does not exist: not mounted", r.origin, r.path)
				}
				continue
			}
			c.addMount(&mountPlan{dest: r.path, source: r.info.Real, write: write, idmap: c.bindMapping(r.info.Real, write), origin: r.origin})
		}
	}
	binds(p.AllowRead, c.prof.AllowRead, false)
	binds(p.AllowWrite, nil, true)
	c.checkWritable()
	c.protect()
	c.network()
	// A credential's file is masked wherever the sandbox could see it,
	// like any secret; it is a deny, so create checks it again.
	denies = append(denies, c.credentialFiles()...)
	c.denies = denies

	if c.mountAt("/tmp") == nil {
		c.addMount(&mountPlan{dest: "/tmp", kind: freshTmpfs, write: true, origin: "fresh tmpfs"})
	}
	// A throwaway $HOME, so tools that write caches and settings there
	// work, unless the policy binds the real one.
	if in.Home != "/" && !c.boundAt(in.Home) {
		c.addMount(&mountPlan{dest: in.Home, kind: freshTmpfs, write: true, origin: "fresh tmpfs for $HOME"})
	}
	c.sortMounts()
	for _, m := range c.mounts {
		access := AccessRead
		if m.write {
			access = AccessWrite
		}
		c.plan.Paths = append(c.plan.Paths, PathRule{Path: m.dest, Source: m.source, Access: access, Origin: m.origin})
	}

	for _, d := range denies {
		c.mask(d)
	}
	// Masking pinned the parents of what it masks: parents first again.
	c.sortMounts()
	c.sortMasks()
}

// forbiddenWrites are host paths no policy may make writable: the
// sandbox would then own the host (its configuration, binaries,
// libraries, boot files, root's home). A whole $HOME is refused too
// (checkWritable).
var forbiddenWrites = []string{"/", "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/root"}

// systemTrees are host system directories: writing under one is allowed
// but said.
var systemTrees = []string{"/etc", "/usr", "/var", "/opt", "/srv", "/boot", "/sys", "/proc", "/dev", "/run", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/root"}

// checkWritable refuses allow_write entries that would hand the host to
// the sandbox, by the path as written and where it really leads, and
// warns on any other host system directory.
func (c *compiler) checkWritable() {
	for i := range c.p.AllowWrite {
		w := &c.p.AllowWrite[i]
		path, _ := c.expand(w.Value)
		real := c.lookup(path).Real
		for _, p := range []string{path, real} {
			if contains(forbiddenWrites, p) || (p == c.in.Home && c.in.Home != "/") {
				what := p
				if p == c.in.Home {
					what = "your whole $HOME (" + p + ")"
				}
				c.fail(w.At, fmt.Errorf("%w: %q would let the sandbox write %s: name the directories it needs instead", ErrUnsafe, w.Value, what))
				break
			}
		}
		if !contains(forbiddenWrites, real) && real != c.in.Home {
			for _, t := range systemTrees {
				if within(real, t) {
					c.warn("%s: %s is under the host's %s: the sandbox can change what other programs on the host read there", w.At, real, t)
					break
				}
			}
		}
	}
}

// protect makes what runs code on the host read-only wherever the sandbox
// could otherwise write it: each repository's metadata (RepoMetadata),
// with the git directory itself pinned so it cannot be renamed away and
// replaced, .git files, .gitmodules and tool configuration. A repository
// config with credentials is served as a copy without them. A path the
// policy's allow_write names exactly stays writable: the opt-in by name.
func (c *compiler) protect() {
	optIn := map[string]bool{}
	for _, w := range c.p.AllowWrite {
		path, _ := c.expand(w.Value)
		optIn[path] = true
	}
	for _, f := range c.in.Found {
		if optIn[f.Path] {
			// Kept as its own bind (never dropped as redundant), so that
			// create's check sees the opt-in by name.
			for _, v := range c.writableViews(f.Path) {
				if m := c.mountAt(v); m != nil {
					m.pin = true
				}
			}
			continue
		}
		var ro []string
		missing := map[string]bool{} // path: whether it is a directory
		switch f.Kind {
		case FoundRepo:
			for _, v := range c.writableViews(f.Path) {
				c.pinAncestors(v)
				parent := effectiveMount(c.mounts, v)
				c.addMount(&mountPlan{dest: v, source: f.Path, write: true, pin: true, idmap: parent.idmap, origin: "repository (pinned)"})
			}
			for _, m := range f.Meta {
				ro = append(ro, filepath.Join(f.Path, m))
			}
			for _, m := range f.Missing {
				ro = append(ro, filepath.Join(f.Path, m))
				missing[filepath.Join(f.Path, m)] = IsRepoMetadataDir(m)
			}
		case FoundHooksDir:
			ro = append(ro, f.Path)
			if c.lookup(f.Path).Kind == PathMissing {
				missing[f.Path] = true
			}
		case FoundGitFile, FoundToolConfig:
			ro = append(ro, f.Path)
		default:
			continue
		}
		for _, p := range ro {
			if optIn[p] {
				continue
			}
			source := p
			if content, ok := c.in.GitConfigs[p]; ok && filepath.Base(p) == "config" {
				if stripped, changed := StripGitCredentials(content); changed {
					source = fmt.Sprintf("vetto/git-config-%d", len(c.plan.Files))
					c.plan.Files = append(c.plan.Files, BundleFile{Path: source, Content: stripped})
					sum := sha256.Sum256([]byte(content))
					c.plan.Stripped = append(c.plan.Stripped, Stripped{Path: p, SHA256: hex.EncodeToString(sum[:])})
				}
			}
			views := c.writableViews(p)
			if i := slices.IndexFunc(views, c.isWritableRoot); i >= 0 {
				// Read-only there, the whole bind would be: the user
				// is told instead.
				c.warn("%s (%s) is %s, which the sandbox writes as a whole: it cannot be made read-only, and git on the host runs what the sandbox leaves there", p, f.Kind, views[i])
				continue
			}
			origin := "runs code on the host: read-only"
			if dir, ok := missing[p]; ok && len(views) > 0 {
				// Absent, it would be the sandbox's to plant: made
				// empty on the host (as git init makes it) so that a
				// read-only bind can show it.
				c.plan.Make = append(c.plan.Make, HostEntry{Path: p, Dir: dir})
				c.warn("%s does not exist: spec makes it empty, read-only in the sandbox (one the sandbox planted would run on the host)", p)
				origin = "runs code on the host: made empty, read-only"
			}
			for _, v := range views {
				c.pinAncestors(v)
				// Mapped as the bind it covers: a 0600 config stays
				// readable to the owner it belongs to.
				parent := effectiveMount(c.mounts, v)
				c.addMount(&mountPlan{dest: v, source: source, idmap: parent.idmap, origin: origin})
				c.protected = append(c.protected, v)
			}
		}
	}
	sort.Strings(c.protected)
}

// pinAncestors pins every directory between the writable bind that shows
// container path v and v itself: a mask or a read-only bind at v holds
// only while v stays where it is, and a directory that contains mount
// points can still be renamed (only a mount point itself cannot), which
// would carry the secret out from under its mask to a path the next
// compile does not know (the policy-mode issue, 12.4).
func (c *compiler) pinAncestors(v string) {
	m := effectiveMount(c.mounts, v)
	if m == nil || m.kind != bindMount || !m.write {
		return
	}
	for a := filepath.Dir(v); a != m.dest && within(a, m.dest); a = filepath.Dir(a) {
		if old := c.mountAt(a); old != nil {
			continue
		}
		c.mounts = append(c.mounts, &mountPlan{dest: a, source: filepath.Join(m.source, strings.TrimPrefix(a, m.dest)), write: true, pin: true, idmap: m.idmap, origin: "parent of a masked or read-only path (pinned)"})
	}
}

// isWritableRoot reports whether container path v is where a writable
// bind is made (the project itself, an allow_write root, a pin).
func (c *compiler) isWritableRoot(v string) bool {
	m := effectiveMount(c.mounts, v)
	return m != nil && m.write && m.dest == v
}

// writableViews are the container paths where host path real shows through
// a writable bind.
func (c *compiler) writableViews(real string) []string {
	var out []string
	for _, v := range c.views(real) {
		if m := effectiveMount(c.mounts, v); m != nil && m.write {
			out = append(out, v)
		}
	}
	return out
}

// checkNotDenied fails when an allowed path is a denied one or inside it:
// a policy adds to its profile but never removes what it denies, and a
// path both allowed and denied by the policy itself is a contradiction.
func (c *compiler) checkNotDenied(r *pathRule, denies []*pathRule) bool {
	for _, d := range denies {
		if !within(r.path, d.path) && !within(r.info.Real, d.info.Real) {
			continue
		}
		at := Pos{File: c.p.File, Key: r.raw}
		if r.at != nil {
			at = *r.at
		}
		if d.at == nil {
			c.fail(at, fmt.Errorf("%w: %s is inside %s, which %s denies: a policy cannot remove a profile's deny", ErrRemovesDeny, r.path, d.raw, d.origin))
		} else {
			c.fail(at, fmt.Errorf("%w: %s is inside %s, which %s denies", ErrBadValue, r.path, d.raw, d.origin))
		}
		return false
	}
	return true
}

// addMount adds a bind or tmpfs; at a destination already taken the
// writable one wins (a policy that allows writing what its profile only
// lets read has added to it).
func (c *compiler) addMount(m *mountPlan) {
	if old := c.mountAt(m.dest); old != nil {
		if m.write && !old.write {
			*old = *m
		}
		return
	}
	c.mounts = append(c.mounts, m)
}

func (c *compiler) mountAt(dest string) *mountPlan {
	for _, m := range c.mounts {
		if m.dest == dest {
			return m
		}
	}
	return nil
}

func (c *compiler) boundAt(path string) bool {
	for _, m := range c.mounts {
		if m.kind == bindMount && within(path, m.dest) {
			return true
		}
	}
	return false
}

// sortMounts orders mounts parents first (fewer path elements, then by
// name), so that each mount point is created inside the mount it belongs
// to, and drops binds that add nothing: a read-only bind of /usr/share
// inside the read-only bind of /usr shows the same files the same way.
func (c *compiler) sortMounts() {
	sort.SliceStable(c.mounts, func(i, j int) bool { return mountLess(c.mounts[i].dest, c.mounts[j].dest) })
	var kept []*mountPlan
	for _, m := range c.mounts {
		if parent := effectiveMount(kept, m.dest); !m.pin && parent != nil && m.kind == bindMount && parent.kind == bindMount &&
			parent.write == m.write && m.source == filepath.Join(parent.source, strings.TrimPrefix(m.dest, parent.dest)) {
			c.plan.Paths = append(c.plan.Paths, PathRule{Path: m.dest, Access: AccessNone, Origin: m.origin, Note: "already visible the same way through " + parent.dest})
			continue
		}
		kept = append(kept, m)
	}
	c.mounts = kept
}

func mountLess(a, b string) bool {
	da, db := strings.Count(a, "/"), strings.Count(b, "/")
	if a == "/" {
		da = 0
	}
	if b == "/" {
		db = 0
	}
	if da != db {
		return da < db
	}
	return a < b
}

// effectiveMount is the mount that shows path: the deepest one containing
// it (the last, among equals).
func effectiveMount(mounts []*mountPlan, path string) *mountPlan {
	var best *mountPlan
	for _, m := range mounts {
		if within(path, m.dest) && (best == nil || len(m.dest) >= len(best.dest)) {
			best = m
		}
	}
	return best
}

// baseMountUnder reports whether a container path lies in one of the
// kernel filesystems every sandbox mounts (/proc, /sys, /dev).
func baseMountUnder(path string) bool {
	for _, m := range baseMounts(false) {
		if within(path, m.Destination) {
			return true
		}
	}
	return false
}

// mask hides a denied path wherever the sandbox can see it: each place a
// bind shows the path's real location gets an empty read-only tmpfs (a
// directory) or /dev/null (a file). Paths the sandbox cannot see need
// nothing. A path inside the container's own filesystem (--rootfs, or
// /proc, /sys, /dev) goes to linux.maskedPaths, which runc masks the same
// way after pivot_root, deciding directory or file then.
func (c *compiler) mask(d *pathRule) {
	if shown := effectiveMount(c.mounts, d.path); d.root == "" && (shown == nil || shown.kind != bindMount) &&
		(c.in.Rootfs != "" || baseMountUnder(d.path)) {
		// Not a host path at all: what the host has there says
		// nothing about the image or the kernel's filesystems.
		if !contains(c.maskedPaths, d.path) {
			c.maskedPaths = append(c.maskedPaths, d.path)
		}
		c.plan.Paths = append(c.plan.Paths, PathRule{Path: d.path, Access: AccessMasked, Origin: d.origin, Note: "in the container's own filesystem (linux.maskedPaths)"})
		return
	}
	if d.info.Kind == PathMissing {
		note, unseen := "does not exist", UnseenAbsent
		for _, m := range c.mounts {
			if m.write && m.kind == bindMount && within(d.info.Real, m.source) {
				note += "; it is inside the writable " + m.dest + ", so the sandbox could create it"
				unseen = UnseenCreatable
				if d.at != nil {
					c.warn("%s: %s does not exist, so it is not masked, and the sandbox can write %s", d.origin, d.path, m.dest)
				}
				break
			}
		}
		c.plan.Paths = append(c.plan.Paths, PathRule{Path: d.path, Access: AccessMasked, Origin: d.origin, Note: note, Unseen: unseen})
		return
	}
	views := c.views(d.info.Real)
	if len(views) == 0 {
		c.plan.Paths = append(c.plan.Paths, PathRule{Path: d.path, Access: AccessMasked, Origin: d.origin, Note: "not visible in the sandbox", Unseen: UnseenHidden})
		return
	}
	for _, v := range views {
		note := ""
		if v != d.path {
			note = "seen there as " + d.path
		}
		kind := maskFile
		if d.info.Kind == PathDir {
			kind = maskDir
		}
		c.pinAncestors(v)
		c.addMask(&mountPlan{dest: v, kind: kind, origin: d.origin}, note)
	}
}

func (c *compiler) addMask(m *mountPlan, note string) {
	for _, old := range c.masks {
		if old.dest == m.dest {
			return
		}
	}
	c.masks = append(c.masks, m)
	what := "empty read-only tmpfs"
	if m.kind == maskFile {
		what = "/dev/null"
	}
	if note != "" {
		what += "; " + note
	}
	c.plan.Paths = append(c.plan.Paths, PathRule{Path: m.dest, Access: AccessMasked, Origin: m.origin, Note: what})
}

// views lists where a host path shows in the sandbox: for each bind whose
// source contains it, the matching place under its destination, if that
// bind is what shows there (a deeper mount may cover it).
func (c *compiler) views(real string) []string {
	var out []string
	for _, m := range c.mounts {
		if m.kind != bindMount || !within(real, m.source) {
			continue
		}
		v := filepath.Join(m.dest, strings.TrimPrefix(real, m.source))
		if effectiveMount(c.mounts, v) == m && !contains(out, v) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// sortMasks orders masks parents first and drops any inside a masked
// directory: its mount point would have to be created in a read-only
// tmpfs, and it is hidden already.
func (c *compiler) sortMasks() {
	sort.SliceStable(c.masks, func(i, j int) bool { return mountLess(c.masks[i].dest, c.masks[j].dest) })
	var kept []*mountPlan
	for _, m := range c.masks {
		covered := false
		for _, k := range kept {
			if k.kind == maskDir && within(m.dest, k.dest) {
				covered = true
			}
		}
		if !covered {
			kept = append(kept, m)
		}
	}
	c.masks = kept
	sort.Strings(c.maskedPaths)
}

// render writes the spec from the decisions made.
func (c *compiler) render() error {
	in, pl := c.in, c.plan

	args := append([]string{}, in.Args...)
	terminal := false
	if len(args) == 0 {
		args, terminal = []string{"sh"}, true
	}
	var entries []envEntry
	for _, e := range c.p.PassThrough {
		entries = append(entries, envEntry{pattern: e.Value, origin: e.At.String()})
	}
	env, passed, dropped, warnings := buildEnv(in.Env, in.Home, entries)
	pl.Warnings = append(pl.Warnings, warnings...)
	env, passed = c.withRelayEnv(env, passed)
	pl.Env, pl.Dropped = passed, dropped

	seccomp, err := SeccompProfile(in.Arch)
	if err != nil {
		return err
	}
	landlock, err := c.landlock()
	if err != nil {
		return err
	}

	s := &specs.Spec{
		Version:  specs.Version,
		Hostname: sandboxHostname,
		Root:     &specs.Root{Path: "rootfs", Readonly: true},
		Process: &specs.Process{
			Terminal: terminal,
			// Root of its namespaces, which is never host root on
			// host files (sandboxIDs).
			User:            specs.User{UID: 0, GID: 0},
			Args:            args,
			Env:             env,
			Cwd:             in.Project,
			NoNewPrivileges: true,
			Capabilities: &specs.LinuxCapabilities{
				Bounding:  pl.Capabilities,
				Effective: pl.Capabilities,
				Permitted: pl.Capabilities,
			},
		},
		Annotations: map[string]string{
			AnnotationLevel:    pl.Level,
			AnnotationNet:      pl.Network,
			AnnotationLandlock: landlock,
			AnnotationProfile:  pl.Profile,
		},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.PIDNamespace}, {Type: specs.NetworkNamespace}, {Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.MountNamespace}, {Type: specs.CgroupNamespace},
			},
			Resources:     c.resources(),
			MaskedPaths:   append(append([]string{}, defaultMaskedPaths...), c.maskedPaths...),
			ReadonlyPaths: append([]string{}, defaultReadonlyPaths...),
			Seccomp:       seccomp,
		},
	}
	if in.Rootfs != "" {
		s.Root.Path = in.Rootfs
	}
	if len(pl.NetworkAllow) > 0 {
		data, err := json.Marshal(pl.NetworkAllow)
		if err != nil {
			return err
		}
		s.Annotations[AnnotationNetAllow] = string(data)
	}
	if len(pl.Credentials) > 0 {
		data, err := json.Marshal(pl.Credentials)
		if err != nil {
			return err
		}
		s.Annotations[AnnotationCredentials] = string(data)
	}
	if len(pl.AllowDegraded) > 0 {
		s.Annotations[AnnotationAllowDegraded] = strings.Join(pl.AllowDegraded, ",")
	}
	if in.RuntimePath != "" {
		// Run by another runtime, the bundle still verifies itself after
		// launch and checks its teardown (docs/verification.md).
		s.Hooks = WithRuntimeHooks(nil, in.RuntimePath)
	}
	// The denied paths, as intent: the mounts and maskedPaths above
	// enforce them, and post-launch verification checks each is masked in
	// the live container (a bundle edited to drop a mask fails there).
	masked := append([]string{}, c.maskedPaths...)
	for _, m := range c.masks {
		masked = append(masked, m.dest)
	}
	if len(masked) > 0 {
		sort.Strings(masked)
		data, err := json.Marshal(masked)
		if err != nil {
			return err
		}
		s.Annotations[AnnotationMasked] = string(data)
	}
	s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
	s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: c.uid, Size: 1}}
	s.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: c.gid, Size: 1}}
	s.Mounts = baseMounts(true)
	for _, m := range append(append([]*mountPlan{}, c.mounts...), c.masks...) {
		s.Mounts = append(s.Mounts, c.mountSpec(m))
	}
	// What create checks again against the host as it is then: the
	// roots scanned, the paths denied, the files served stripped.
	scan := ScanRoots(s)
	var deny []string
	for _, d := range c.denies {
		if !contains(deny, d.info.Real) {
			deny = append(deny, d.info.Real)
		}
	}
	sort.Strings(scan)
	sort.Strings(deny)
	var repos []string
	for _, f := range in.Found {
		if f.Kind == FoundRepo || f.Kind == FoundGitFile {
			repos = append(repos, f.Path)
		}
	}
	sort.Strings(repos)
	for key, v := range map[string]any{AnnotationScan: scan, AnnotationDeny: deny, AnnotationProtect: c.protected, AnnotationStripped: pl.Stripped, AnnotationRepos: repos} {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if string(data) != "null" && string(data) != "[]" {
			s.Annotations[key] = string(data)
		}
	}
	pl.Spec = s
	return nil
}

// ScanRoots are the host roots a compiled spec lets the sandbox read that
// are the user's (not the host's system directories): the scan for
// secrets, sockets and repository metadata covers them
// (AnnotationScan records them for create).
func ScanRoots(s *specs.Spec) []string {
	var scan []string
	for _, m := range s.Mounts {
		if m.Type != "bind" || m.Source == "/dev/null" || !filepath.IsAbs(m.Source) || systemRoot(m.Source) {
			continue
		}
		inside := false
		for _, r := range scan {
			inside = inside || within(m.Source, r)
		}
		if !inside {
			scan = append(scan, m.Source)
		}
	}
	sort.Strings(scan)
	return scan
}

// systemRoot reports whether a bind source is one of the host's system
// directories a host-root bundle binds (nothing of the user's to scan).
func systemRoot(p string) bool {
	for _, d := range hostRootDirs {
		if within(p, d) {
			return true
		}
	}
	return false
}

// bindMapping is the id-mapping of a policy's bind of host path real: a
// writable bind inside the project is mapped as the project is (the same
// owner's files); a read-only one within a root caller's $HOME as $HOME
// is. A writable bind in $HOME is not: that would let the sandbox write
// there as root on disk.
func (c *compiler) bindMapping(real string, write bool) *idMapping {
	switch {
	case write:
		return c.mapIf(within(real, c.lookup(c.in.Project).Real), c.projectMap)
	case c.homeMap != nil && !within(real, c.lookup(c.in.Project).Real):
		return c.mapIf(within(real, c.lookup(c.in.Home).Real), c.homeMap)
	}
	return nil
}

func (c *compiler) mapIf(cond bool, m *idMapping) *idMapping {
	if cond {
		return m
	}
	return nil
}

// mountSpec is m as the spec says it, id-mapped where m is: the on-disk
// owner shows as the sandbox's root.
func (c *compiler) mountSpec(m *mountPlan) specs.Mount {
	out := m.spec()
	if m.idmap != nil {
		out.UIDMappings = []specs.LinuxIDMapping{{ContainerID: m.idmap.uid, HostID: c.uid, Size: 1}}
		out.GIDMappings = []specs.LinuxIDMapping{{ContainerID: m.idmap.gid, HostID: c.gid, Size: 1}}
	}
	return out
}

func (m *mountPlan) spec() specs.Mount {
	switch m.kind {
	case freshTmpfs:
		mode := "mode=0700" // $HOME: the sandbox's user only
		if m.dest == "/tmp" {
			mode = "mode=1777"
		}
		return specs.Mount{Destination: m.dest, Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", mode}}
	case maskDir:
		// Empty, read-only, nothing to run.
		return specs.Mount{Destination: m.dest, Type: "tmpfs", Source: "tmpfs", Options: []string{"ro", "nosuid", "nodev", "noexec", "mode=0555"}}
	case maskFile:
		// /dev/null on a nodev mount: even a container root gets EACCES
		// instead of an empty read, and cannot write through it.
		return specs.Mount{Destination: m.dest, Type: "bind", Source: "/dev/null", Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}}
	}
	access := "ro"
	if m.write {
		access = "rw"
	}
	// Not rbind: mounts below the source (a host's autofs, a bind over
	// /etc/resolv.conf) stay hidden rather than appear writable.
	return specs.Mount{Destination: m.dest, Type: "bind", Source: m.source, Options: []string{"bind", access, "nosuid", "nodev"}}
}

// baseMounts are the kernel filesystems every sandbox has. /sys is
// read-only; /dev is a small tmpfs with the standard devices runc adds.
func baseMounts(rootless bool) []specs.Mount {
	devpts := []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}
	if !rootless {
		// gid 5 (tty) exists only when the host's groups are mapped.
		devpts = append(devpts, "gid=5")
	}
	return []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: devpts},
		{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
		{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
		{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", "ro"}},
	}
}

// cfsPeriod is the CFS period the CPU limit is expressed in (100ms, the
// kernel's default).
const cfsPeriod = 100000

func (c *compiler) resources() *specs.LinuxResources {
	pl := c.plan
	r := &specs.LinuxResources{
		// Deny every device node; runc allows its default set (null,
		// zero, full, tty, random, urandom, ptmx, pts) on top.
		Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
	}
	if pl.Memory > 0 {
		mem := pl.Memory
		r.Memory = &specs.LinuxMemory{Limit: &mem}
	}
	if pl.Pids > 0 {
		pids := pl.Pids
		r.Pids = &specs.LinuxPids{Limit: &pids}
	}
	if pl.CPU > 0 {
		quota, period := int64(pl.CPU*cfsPeriod+0.5), uint64(cfsPeriod)
		r.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
	}
	return r
}
