package launch

import (
	"fmt"
	"path"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/landlock"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// Annotations the evaluator reads (the policy compiler writes them).
const (
	AnnotationLevel         = spec.AnnotationLevel
	AnnotationNet           = spec.AnnotationNet
	AnnotationLandlock      = spec.AnnotationLandlock
	AnnotationAllowDegraded = spec.AnnotationAllowDegraded
	// AnnotationPosture = "isolated" makes a weakened posture a refusal.
	AnnotationPosture = "dev.vetto.posture"
)

// Request is what the caller asked of a launch (create or run).
type Request struct {
	// Spec is the effective spec: validated, paths resolved, the
	// runtime's own changes made. An unset process.capabilities means no
	// capabilities.
	Spec *specs.Spec
	// Level from --security-level; LevelSet says the flag was given.
	Level    Level
	LevelSet bool
	// Allow names the features the caller accepts as degraded.
	Allow map[Feature]bool
	// NoVerify: skip post-launch verification.
	NoVerify bool
	// Environ is the runtime's environment, scanned for VETTO_*.
	Environ []string
}

// Host is what the runtime read of the host for this launch.
type Host struct {
	// Facts: this platform reads host facts of live processes, so the
	// container can be verified before and after launch.
	Facts bool
	// LandlockABI is the host's Landlock ABI (0: none); LandlockErr when
	// it could not be read.
	LandlockABI int
	LandlockErr error
	// AppArmor is enabled on the host.
	AppArmor bool
	// Relay: this build can run the egress relay for network allowlists.
	// RelayMissing says why not when it is false ("" for a build without
	// it).
	Relay        bool
	RelayMissing string
	// CgroupInUse describes the spec's cgroupsPath when it already exists
	// and holds processes ("" when it does not).
	CgroupInUse string
	// Cgroups is what this caller may do with cgroups.
	Cgroups Cgroups
	// Userns says why a rootless caller cannot make the user namespace
	// the spec asks for ("" when it can, or when that was not asked).
	Userns string
	// Sources are the host facts of each bind mount's source, by the
	// source as the spec names it.
	Sources map[string]Source
	// Config and Rootfs are the bundle's config.json and root filesystem,
	// symlinks resolved.
	Config, Rootfs string
	// StateRoot and Evidence are the runtime's own state root (--root)
	// and host-wide evidence directory, symlinks resolved ("" if none):
	// what every later command of the runtime believes.
	StateRoot, Evidence string
	// Executable is the runtime's own executable, symlinks resolved (""
	// if unknown): what its later commands, and the processes it starts
	// of itself, run as root.
	Executable string
	// ExecutableLinks are the symlinks on the path the runtime was called
	// by (a client's /usr/local/bin/runc pointing at it), each as the
	// entry of its directory: repointed, the client's next call runs
	// something else, as root. The symlinks on the way to the pid file
	// and the log are here too: repointed, the file is written elsewhere.
	ExecutableLinks []HookFile
	// PidFile is the file create writes the init's pid to (--pid-file),
	// there or not, its symlinks resolved as far as it exists, "" for
	// none: the pid a client (containerd's shim, conmon) then signals,
	// waits for and kills.
	PidFile string
	// Floor is the operator's config file (--config), there or not, its
	// symlinks resolved as far as it exists: what sets the next
	// launch's floor.
	Floor string
	// AuditLog is the extra audit log (--audit-log), "" for none.
	AuditLog string
	// Log is the runtime's log file (--log), there or not, "" for none:
	// the error line a client reads back, which the container would
	// write for it.
	Log string
	// HookFiles are the host files the spec's hooks run or read, symlinks
	// resolved: what the runtime will run, as root, on the host.
	HookFiles []HookFile
	// Passed is what each file passed in besides stdio is (create's and
	// run's --preserve-fds, socket activation's LISTEN_FDS).
	Passed []hooks.PassedFD
	// Platform is what the backend's own translator found its platform
	// cannot honour (darwin, windows); nil on Linux, whose gaps the
	// evaluator reads from the spec and the host above.
	Platform *Platform
}

// Cgroups is what the caller of the runtime may do with cgroups here.
type Cgroups struct {
	// Rootless: the runtime runs without root on the host (an euid other
	// than 0, or uid 0 of a user namespace other than the initial one).
	Rootless bool
	// Unusable says why a rootless caller has no cgroup the container may
	// be created in ("" when it has one: root, a delegated subtree, the
	// systemd user manager).
	Unusable string
}

// Degradation is one accepted missing part of the sandbox.
type Degradation struct {
	Feature Feature `json:"feature"`
	Reason  string  `json:"reason"`
}

func (d Degradation) String() string { return string(d.Feature) + ": " + d.Reason }

// Decision is the evaluator's answer for a launch.
type Decision struct {
	Level Level
	// Violations is every rule the request breaks; none means it may go
	// ahead.
	Violations Violations
	// Degraded are the accepted degradations, each named.
	Degraded []Degradation
	// Warnings are said once on stderr and in the audit log.
	Warnings []string
	// Notes are recorded facts that are no failure (less privilege than
	// asked, capabilities unset).
	Notes []string
	// Landlock is the ruleset the exec shim enforces (the bundle's, or at
	// degraded what of it the host's ABI enforces); "" for none.
	Landlock string
	// Posture is what the spec gives of the host away.
	Posture Posture
	// Tier says how complete the Linux sandbox is; Net the network mode.
	Tier, Net string
	// Allow is what may be degraded later (pre-launch checks tagged with a
	// feature): the caller's --allow-degraded and what the bundle accepts
	// for itself.
	Allow map[Feature]bool
	// Unverified: post-launch verification will not run (an accepted
	// verify degradation).
	Unverified bool
	// NoCgroup: the container is created without a cgroup (rootless, no
	// delegated cgroup, both degradations accepted): no limits, and
	// teardown kills its pid namespace instead of its cgroup.
	NoCgroup bool
	// Rootless: the runtime runs without root on the host.
	Rootless bool
	// Relay: the egress relay is started for the spec's allowlist (false
	// when the host has none and the network was degraded instead).
	Relay bool

	floor *Floor
}

// OK reports whether the launch may go ahead.
func (d *Decision) OK() bool { return len(d.Violations) == 0 }

// DegradedStrings is Degraded as "feature: reason" lines.
func (d *Decision) DegradedStrings() []string {
	out := make([]string, len(d.Degraded))
	for i, g := range d.Degraded {
		out[i] = g.String()
	}
	return out
}

// documentedEnv are the VETTO_* variables vetto-runtime reads. There are
// none: nothing about enforcement is configured through the environment.
var documentedEnv = map[string]bool{}

// Evaluate decides a launch. floor may be nil (no floor file).
func Evaluate(req Request, host Host, floor *Floor) *Decision {
	s := req.Spec
	d := &Decision{floor: floor, Allow: map[Feature]bool{}, Tier: tier(s), Net: netMode(s)}
	var v violations
	d.Level = decideLevel(req, floor, &v)

	for f, ok := range req.Allow {
		if ok {
			d.Allow[f] = true
		}
	}
	if a, ok := s.Annotations[AnnotationAllowDegraded]; ok {
		fs, err := ParseFeatures([]string{a})
		if err != nil {
			v.add(RuleBundleFeature, "annotation %s: %v", AnnotationAllowDegraded, err)
		}
		for _, f := range sortedFeatures(fs) {
			if !bundleFeatures[f] {
				v.add(RuleBundleFeature, "annotation %s names %q, which only the caller may accept", AnnotationAllowDegraded, f)
				continue
			}
			d.Allow[f] = true
		}
	}

	var poison []string
	for _, kv := range req.Environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "VETTO_") && !documentedEnv[name] {
			poison = append(poison, name)
		}
	}
	sort.Strings(poison)
	if len(poison) > 0 {
		if d.Level == Strict {
			v.add(RuleEnvVetto, "environment variables %s are not inputs of vetto-runtime and are refused at level strict", strings.Join(poison, ", "))
		} else {
			d.Warnings = append(d.Warnings, "ignored environment variables "+strings.Join(poison, ", ")+" (they change nothing)")
		}
	}

	if s.Process != nil && s.Process.Capabilities == nil {
		d.Notes = append(d.Notes, "process.capabilities unset: the process gets no capabilities ["+string(RuleCapsUnset)+"]")
	}
	if host.CgroupInUse != "" {
		v.add(RuleCgroupInUse, "%s", host.CgroupInUse)
	}
	d.Rootless = host.Cgroups.Rootless
	if host.Userns != "" {
		v.add(RuleRootlessUserns, "%s", host.Userns)
	}
	if host.Cgroups.Unusable != "" {
		withoutCgroup(s, d, host.Cgroups.Unusable, &v)
	}
	if s.Linux != nil && s.Linux.Resources != nil {
		unifiedInterface(s.Linux.Resources.Unified, &v)
	}
	selfWritable(s, host, &v)
	if bad := uncoveredMasks(s); len(bad) > 0 && (host.Platform == nil || !host.Platform.MasksLast) {
		v.add(RuleMasksCovered, "masked paths the process would see: %s", strings.Join(bad, "; "))
	}

	d.Posture = PostureOf(s, host.Sources, host.AppArmor)
	rootfs := hostRootfs(s, host.Rootfs)
	if rootfs != "" {
		d.Posture.Weakened = append(d.Posture.Weakened, rootfs)
	}
	handles := hooks.HostHandles(host.Passed)
	if len(handles) > 0 {
		d.Posture.Weakened = append(d.Posture.Weakened, "host objects passed in: "+strings.Join(handles, ", "))
	}
	if s.Annotations[AnnotationPosture] == "isolated" && !d.Posture.Isolated() {
		v.add(RulePostureAnnotated, "the bundle asks for an isolated posture (%s=isolated), but the spec is %s", AnnotationPosture, d.Posture)
	}
	checkFloor(s, d, host, floor, &v)
	if d.Level == Strict {
		checkStrict(s, host, floor, &v)
		if rootfs != "" {
			v.add(RuleStrictRootfs, "%s", rootfs)
		}
		if len(handles) > 0 {
			v.add(RuleStrictPassedFDs, "files passed in that reach the host: %s", strings.Join(handles, ", "))
		}
	}

	// Degradations: what the bundle asks for that cannot be established
	// here, and what the caller asked to skip.
	if s.Linux != nil && s.Linux.Resources != nil && s.Linux.Resources.Memory != nil {
		mem := s.Linux.Resources.Memory
		//lint:ignore SA1019 deprecated in the spec, still refused when set
		if mem.Kernel != nil || mem.KernelTCP != nil {
			// libcontainer drops both with a log line; cgroup v2 has
			// neither, and kernels since 5.16 accept and ignore a kernel
			// memory limit in v1.
			d.degrade(FeatureLimits, "kernel memory limits requested (linux.resources.memory.kernel/kernelTCP) but this build does not apply them", &v)
		}
	}
	switch m := s.Annotations[AnnotationNet]; m {
	case "", "off", "none":
	default:
		if !host.Relay {
			missing := host.RelayMissing
			if missing == "" {
				missing = "which this build lacks"
			}
			d.degrade(FeatureNetwork, fmt.Sprintf("network mode %q needs the egress relay, %s; the container would get no network", m, missing), &v)
		} else if _, _, _, err := spec.NetAnnotations(s.Annotations); err != nil {
			v.add(RuleNetAnnotation, "%v", err)
		} else {
			d.Relay = true
		}
	}
	platformGaps(host.Platform, d, &v)
	if req.NoVerify {
		d.degrade(FeatureVerify, "post-launch verification skipped (--no-verify)", &v)
		d.Unverified = true
	} else if !host.Facts {
		d.degrade(FeatureVerify, "this platform has no host facts: the container cannot be verified before or after launch", &v)
		d.Unverified = true
	}
	d.Landlock = planLandlock(s, host, d, &v)
	d.Violations = v.list
	return d
}

// decideLevel combines the flag, the bundle's annotation and the floor. A
// bundle may raise its own bar but not lower one the caller set; with no
// flag it may go below standard only where the floor's min_level says so;
// nothing goes below the floor's min_level.
func decideLevel(req Request, floor *Floor, v *violations) Level {
	level := Standard
	if req.LevelSet {
		level = req.Level
	}
	if a, ok := req.Spec.Annotations[AnnotationLevel]; ok {
		al, err := ParseLevel(a)
		switch {
		case err != nil:
			v.add(RuleLevelUnknown, "annotation %s: %v", AnnotationLevel, err)
		case al > level:
			level = al
		case al < level && !req.LevelSet:
			if min, set := floor.minimum(); set && al >= min {
				level = al
			} else {
				v.add(RuleLevelAnnotation, "annotation %s=%s would lower the launch below %s, which %s does not allow", AnnotationLevel, al, level, floor.name())
			}
		}
	}
	if min, _ := floor.minimum(); level < min {
		v.add(RuleFloorMinLevel, "%s: min_level = %q, the launch is at level %s", floor.name(), min, level)
	}
	return level
}

// degrade accepts a missing feature where the level and the floor allow it,
// and otherwise records the violation that refuses the launch.
func (d *Decision) degrade(f Feature, why string, v *violations) {
	d.degradeAt(f, why, false, v)
}

// degradeAt is degrade for a feature the standard level accepts without
// an opt-in when standard is true (a platform's own, PlatformGap).
func (d *Decision) degradeAt(f Feature, why string, standard bool, v *violations) {
	switch {
	case d.floor.forbidsDegradation(f):
		rule := RuleFloorDegradations
		if f == FeatureVerify && d.floor.Forbid.NoVerify {
			rule = RuleFloorNoVerify
		}
		v.add(rule, "%s; %s forbids degrading %s", why, d.floor.name(), f)
	case d.Level == Strict && f == FeatureVerify:
		v.add(RuleStrictVerify, "%s; level strict requires verification", why)
	case d.Level == Strict:
		v.add(RuleStrictNoDegradation, "%s; level strict allows no degradation", why)
	case d.Level == Standard && !d.Allow[f] && !standard:
		v.addRemedy(RuleDegradeStandard, fmt.Sprintf("accept it with --allow-degraded=%s, or use --security-level degraded", f), "%s; refused at level standard", why)
	default:
		d.Degraded = append(d.Degraded, Degradation{Feature: f, Reason: why})
	}
}

// withoutCgroup decides a launch with no cgroup to put the container in
// (a rootless caller without delegation): cgroup.kill and any limit the
// spec sets are degradations the level must accept, and teardown must be
// able to prove the container gone without a cgroup — which only its own
// pid namespace gives (killing its init kills every process in it, and
// /proc shows who is left).
func withoutCgroup(s *specs.Spec, d *Decision, why string, v *violations) {
	d.NoCgroup = true
	if !HasNewNamespace(s, specs.PIDNamespace) {
		v.add(RuleRootlessPidNS, "%s, and the container shares a pid namespace: nothing could kill all of it or prove it gone", why)
	}
	d.degrade(FeatureCgroupKill, why+": teardown kills the container's pid namespace and proves from /proc that nothing of it is left (a delegated cgroup: a systemd user manager and --systemd-cgroup, or linux.cgroupsPath inside a delegated subtree)", v)
	if set := resourcesSet(s); len(set) > 0 {
		d.degrade(FeatureLimits, fmt.Sprintf("%s: linux.resources (%s) not applied", why, strings.Join(set, ", ")), v)
	}
}

// resourcesSet names the cgroup limits s sets (device rules are no limit:
// without a cgroup a user namespace cannot create device nodes at all).
func resourcesSet(s *specs.Spec) []string {
	if s.Linux == nil || s.Linux.Resources == nil {
		return nil
	}
	r := s.Linux.Resources
	var out []string
	if m := r.Memory; m != nil && (m.Limit != nil || m.Reservation != nil || m.Swap != nil || m.Swappiness != nil || m.DisableOOMKiller != nil) {
		out = append(out, "memory")
	}
	if r.Pids != nil && r.Pids.Limit != nil {
		out = append(out, "pids")
	}
	if c := r.CPU; c != nil && (c.Shares != nil || c.Quota != nil || c.Period != nil || c.Cpus != "" || c.Mems != "" || c.RealtimeRuntime != nil || c.Idle != nil || c.Burst != nil) {
		out = append(out, "cpu")
	}
	if b := r.BlockIO; b != nil && (b.Weight != nil || len(b.WeightDevice) > 0 || len(b.ThrottleReadBpsDevice) > 0 || len(b.ThrottleWriteBpsDevice) > 0 || len(b.ThrottleReadIOPSDevice) > 0 || len(b.ThrottleWriteIOPSDevice) > 0) {
		out = append(out, "blockIO")
	}
	if len(r.HugepageLimits) > 0 {
		out = append(out, "hugepageLimits")
	}
	if r.Network != nil {
		out = append(out, "network")
	}
	if len(r.Rdma) > 0 {
		out = append(out, "rdma")
	}
	if len(r.Unified) > 0 {
		out = append(out, "unified")
	}
	return out
}

// unifiedInterface refuses a unified map that writes the cgroup's own
// interface files (spec.UnifiedInterfaceKeys).
func unifiedInterface(unified map[string]string, v *violations) {
	if keys := spec.UnifiedInterfaceKeys(unified); len(keys) > 0 {
		v.add(RuleUnifiedInterface, "linux.resources.unified writes %s", strings.Join(keys, ", "))
	}
}

// selfWritable refuses a bundle whose config.json or rootfs is under a
// read-write bind of the same bundle: the container could rewrite what its
// next run is. It refuses too a container that could write the runtime's
// own state root, evidence directory, extra audit log, executable or
// operator config (its floor) — through a read-write
// bind of, in or above one, or a writable root filesystem above it: it
// would rewrite its own record (the pid, the cgroups and the frozen spec
// the runtime's later commands act on as root: a delete then kills a host
// cgroup of its choosing), the evidence that judges it, or the runtime
// that a client (containerd, podman) runs next, as root.
//
// It refuses as well a hook whose files the container could rewrite: the
// executable, the interpreter its #! line names, or the script an
// interpreter hook is given, or a symlink on the way to one of them,
// under a read-write bind or a writable root filesystem. The
// runtime runs hooks on the host as root (poststop after the container is
// gone): a container that rewrites one runs its code there.
func selfWritable(s *specs.Spec, host Host, v *violations) {
	runtimeDirs := []struct{ what, p string }{{"state root", host.StateRoot}, {"evidence directory", host.Evidence}, {"executable", host.Executable}, {"operator config", host.Floor}, {"audit log", host.AuditLog}, {"pid file", host.PidFile}, {"log", host.Log}}
	unmapped := hostRootUnmapped(s)
	for _, m := range s.Mounts {
		if !isBind(m) || readOnly(m) {
			continue
		}
		src := path.Clean(m.Source)
		if f, ok := host.Sources[m.Source]; ok && f.Real != "" {
			src = f.Real
		}
		for _, own := range []struct{ what, p string }{{"config.json", host.Config}, {"root filesystem", host.Rootfs}} {
			if own.p != "" && under(own.p, []string{src}) {
				v.add(RuleBundleSelfWrite, "the bundle's %s %s is inside the read-write bind of %s at %s", own.what, own.p, src, m.Destination)
			}
		}
		if hostBind(s, m, host.Sources, unmapped) != "" {
			// The posture already says this bind hands that part of the
			// host over (-v /:/host): the runtime's directories and the
			// hooks in it are part of what the caller gave away, at
			// standard.
			continue
		}
		for _, own := range runtimeDirs {
			if own.p != "" && (under(own.p, []string{src}) || under(src, []string{own.p})) {
				v.add(RuleRuntimeStateWrite, "the read-write bind of %s at %s reaches the runtime's %s %s", src, m.Destination, own.what, own.p)
			}
		}
		for _, l := range host.ExecutableLinks {
			if under(l.Real, []string{src}) {
				v.add(RuleRuntimeStateWrite, "the read-write bind of %s at %s reaches the runtime's %s", src, m.Destination, l.What)
			}
		}
		for _, f := range host.HookFiles {
			if under(f.Real, []string{src}) {
				v.add(RuleHookWritable, "the %s %s is inside the read-write bind of %s at %s", f.What, f.Real, src, m.Destination)
			}
		}
	}
	if s.Root != nil && !s.Root.Readonly && host.Rootfs != "" {
		for _, own := range runtimeDirs {
			if own.p != "" && under(own.p, []string{host.Rootfs}) {
				v.add(RuleRuntimeStateWrite, "the writable root filesystem %s holds the runtime's %s %s", host.Rootfs, own.what, own.p)
			}
		}
		for _, l := range host.ExecutableLinks {
			if under(l.Real, []string{host.Rootfs}) {
				v.add(RuleRuntimeStateWrite, "the writable root filesystem %s holds the runtime's %s", host.Rootfs, l.What)
			}
		}
		for _, f := range host.HookFiles {
			if under(f.Real, []string{host.Rootfs}) {
				v.add(RuleHookWritable, "the %s %s is in the writable root filesystem %s", f.What, f.Real, host.Rootfs)
			}
		}
	}
}

// HookFile is a host file a hook runs or reads.
type HookFile struct {
	// What names it for messages: "poststop hook 0's executable",
	// "… interpreter (#!)", "… script".
	What string
	// Real is its path with every symlink resolved.
	Real string
}

// checkStrict lists every way s falls short of strict.
func checkStrict(s *specs.Spec, host Host, floor *Floor, v *violations) {
	if s.Linux == nil {
		v.add(RuleStrictLinux, "no linux section: no namespaces, cgroup or seccomp")
		return
	}
	if hn := hostNamespaces(s); len(hn) > 0 {
		v.add(RuleStrictNamespaces, "namespaces not new: %s", strings.Join(hn, ", "))
	}
	sc := readSeccomp(s)
	switch {
	case !sc.present:
		v.add(RuleStrictSeccomp, "no seccomp filter")
	case !sc.denyDefault:
		v.add(RuleStrictSeccompDeny, "the seccomp filter's defaultAction is %s, which allows every call it does not list", s.Linux.Seccomp.DefaultAction)
	}
	if a := sc.agent(); a != "" {
		v.add(RuleStrictSeccompNotify, "%s", a)
	}
	if len(sc.dangerous) > 0 {
		v.add(RuleStrictSeccompBlocks, "the seccomp filter allows %s", strings.Join(sc.dangerous, ", "))
	}
	if s.Process == nil || !s.Process.NoNewPrivileges {
		v.add(RuleStrictNoNewPrivs, "process.noNewPrivileges is not true")
	}
	if extra := capsOutside(s, minimalCaps); len(extra) > 0 {
		v.add(RuleStrictCapabilities, "capabilities outside the minimal set: %s", strings.Join(extra, ", "))
	}
	if m := memoryLimit(s); !spec.MemoryBounded(m) {
		if m != nil && *m >= spec.NoMemoryBound {
			v.add(RuleStrictMemory, "memory limit %d is no limit (4 EiB or more)", *m)
		} else {
			v.add(RuleStrictMemory, "no memory limit")
		}
	}
	if p := pidsLimit(s); !spec.PidsBounded(p) {
		if p != nil && *p >= spec.NoPidsBound {
			v.add(RuleStrictPids, "pids limit %d is no limit (%d or more: the kernel's most tasks)", *p, spec.NoPidsBound)
		} else {
			v.add(RuleStrictPids, "no pids limit")
		}
	}
	masked, readonly := missingMasks(s)
	if len(masked) > 0 {
		v.add(RuleStrictMasks, "not masked: %s", strings.Join(masked, ", "))
	}
	if len(readonly) > 0 {
		v.add(RuleStrictReadonly, "not read-only: %s", strings.Join(readonly, ", "))
	}
	if extra := extraKernelMounts(s); len(extra) > 0 {
		v.add(RuleStrictKernelMounts, "extra kernel mounts: %s", strings.Join(extra, ", "))
	}
	if w := writableKernelMounts(s); len(w) > 0 {
		v.add(RuleStrictKernelWritable, "kernel filesystems writable as host root: %s", strings.Join(w, ", "))
	}
	if w := hostRootWrites(s); len(w) > 0 {
		if calls := setIDUnguarded(s.Linux.Seccomp); len(calls) > 0 {
			v.add(RuleStrictSetIDWrites, "host root writes %s, and the seccomp filter lets %s set a set-id mode", strings.Join(w, ", "), strings.Join(calls, ", "))
		}
	}
	if other := otherMounts(s); len(other) > 0 {
		v.add(RuleStrictMountTypes, "mounts of other filesystems: %s", strings.Join(other, ", "))
	}
	if nd := hostNetDevices(s); len(nd) > 0 {
		v.add(RuleStrictNetDevices, "linux.netDevices moves the host's %s into the container", strings.Join(nd, ", "))
	}
	if binds := hostBinds(s, host.Sources); len(binds) > 0 {
		v.add(RuleStrictBindSource, "%s", strings.Join(binds, "; "))
	}
	if dev := hostDevices(s); len(dev) > 0 {
		v.add(RuleStrictDevices, "%s", strings.Join(dev, "; "))
	}
	if hooks := bundleHooks(s, floor); len(hooks) > 0 {
		v.add(RuleStrictHooks, "%s", strings.Join(hooks, ", "))
	}
	if creds := bundleCredentials(s, floor); len(creds) > 0 {
		v.add(RuleStrictCredentials, "credentials the bundle names: %s", strings.Join(creds, "; "))
	}
	if host.AppArmor && apparmorUnconfined(s) {
		v.add(RuleStrictAppArmor, "process.apparmorProfile is \"unconfined\"")
	}
	if sys := hostSysctls(s); len(sys) > 0 {
		v.add(RuleStrictSysctl, "sysctls the container's namespaces do not own: %s", strings.Join(sys, ", "))
	}
	if pr := hostPriorities(s); len(pr) > 0 {
		v.add(RuleStrictPriority, "a priority above the host's processes: %s", strings.Join(pr, ", "))
	}
}

// checkFloor lists every rule of the floor that s breaks.
func checkFloor(s *specs.Spec, d *Decision, host Host, f *Floor, v *violations) {
	if f == nil {
		return
	}
	name := f.name()
	if f.Forbid.HostNamespaces {
		if hn := hostNamespaces(s); len(hn) > 0 {
			v.add(RuleFloorHostNamespaces, "%s: forbid.host_namespaces: %s", name, strings.Join(hn, ", "))
		}
	}
	if f.Forbid.NoSeccomp {
		switch sc := readSeccomp(s); {
		case !sc.present:
			v.add(RuleFloorNoSeccomp, "%s: forbid.no_seccomp: the bundle has no seccomp filter", name)
		case !sc.refusesSomething:
			v.add(RuleFloorNoSeccomp, "%s: forbid.no_seccomp: the bundle's seccomp filter refuses nothing (defaultAction %s)", name, s.Linux.Seccomp.DefaultAction)
		}
	}
	if f.Forbid.WritableRootfs && (s.Root == nil || !s.Root.Readonly) {
		v.add(RuleFloorWritableRootfs, "%s: forbid.writable_rootfs: root.readonly is not true", name)
	}
	if f.Forbid.Privileged {
		if extra := capsOutside(s, engineDefaultCaps); len(extra) > 0 {
			v.add(RuleFloorPrivileged, "%s: forbid.privileged: capabilities %s", name, strings.Join(extra, ", "))
		}
	}
	if len(f.Forbid.Capabilities) > 0 {
		forbidden := map[string]bool{}
		for _, c := range f.Forbid.Capabilities {
			forbidden[strings.ToUpper(c)] = true
		}
		allowed := map[string]bool{}
		for _, set := range capSets(s.Process) {
			for _, c := range set {
				if !forbidden[strings.ToUpper(c)] {
					allowed[strings.ToUpper(c)] = true
				}
			}
		}
		if bad := capsOutside(s, allowed); len(bad) > 0 {
			v.add(RuleFloorCapabilities, "%s: forbid.capabilities: %s", name, strings.Join(bad, ", "))
		}
	}
	if f.Forbid.Hooks {
		if hooks := bundleHooks(s, f); len(hooks) > 0 {
			v.add(RuleFloorHooks, "%s: forbid.hooks: %s", name, strings.Join(hooks, ", "))
		}
	}
	if f.Forbid.Credentials {
		if creds := bundleCredentials(s, f); len(creds) > 0 {
			v.add(RuleFloorCredentials, "%s: forbid.credentials: %s", name, strings.Join(creds, "; "))
		}
	}
	if f.Forbid.Devices {
		if dev := hostDevices(s); len(dev) > 0 {
			v.add(RuleFloorDevices, "%s: forbid.devices: %s", name, strings.Join(dev, "; "))
		}
	}
	if f.Forbid.ExtraKernelMounts {
		if extra := extraKernelMounts(s); len(extra) > 0 {
			v.add(RuleFloorKernelMounts, "%s: forbid.extra_kernel_mounts: %s", name, strings.Join(extra, ", "))
		}
	}
	if len(f.Allow.BindSources) > 0 {
		if out := bindSourcesOutside(s, host.Sources, f.Allow.BindSources); len(out) > 0 {
			v.add(RuleFloorBindSources, "%s: allow.bind_sources: binds from outside %s: %s", name, strings.Join(f.Allow.BindSources, ", "), strings.Join(out, ", "))
		}
	}
	if f.Require.DefaultMasks {
		masked, readonly := missingMasks(s)
		if len(masked)+len(readonly) > 0 {
			v.add(RuleFloorDefaultMasks, "%s: require.default_masks: not masked: %s; not read-only: %s", name, orNone(masked), orNone(readonly))
		}
	}
	if f.Forbid.UnconfinedAppArmor && apparmorUnconfined(s) {
		v.add(RuleFloorAppArmor, "%s: forbid.unconfined_apparmor: process.apparmorProfile is \"unconfined\"", name)
	}
	if f.Forbid.HostSysctls {
		if sys := hostSysctls(s); len(sys) > 0 {
			v.add(RuleFloorSysctls, "%s: forbid.host_sysctls: %s", name, strings.Join(sys, ", "))
		}
	}
	if f.Forbid.Weakened && !d.Posture.Isolated() {
		v.add(RuleFloorWeakened, "%s: forbid.weakened: the spec's posture is %s", name, d.Posture)
	}
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// planLandlock decides what the Landlock exec shim enforces for a bundle
// with a dev.vetto.landlock annotation: the ruleset as given when the
// host's ABI enforces every right it handles; otherwise a violation
// naming the missing rights, unless the level accepts the degradation —
// then the rights the host enforces, the rest named. "" means no shim.
func planLandlock(s *specs.Spec, host Host, d *Decision, v *violations) string {
	annotation, ok := s.Annotations[AnnotationLandlock]
	if !ok {
		return ""
	}
	rs, err := landlock.Parse(annotation)
	if err != nil {
		v.add(RuleLandlockInput, "annotation %s: %v", AnnotationLandlock, err)
		return ""
	}
	// Landlock needs no_new_privs (or CAP_SYS_ADMIN). The init's pre-exec
	// step does not set it behind the bundle's back: a bundle that leaves
	// it off wants setuid programs to gain privilege, which a Landlock
	// domain forbids.
	if s.Process == nil || !s.Process.NoNewPrivileges {
		v.add(RuleLandlockInput, "annotation %s asks for Landlock, which needs process.noNewPrivileges: true; set it (policy-compiled bundles do)", AnnotationLandlock)
		return ""
	}
	if host.LandlockErr != nil {
		v.add(RuleLandlockProbe, "annotation %s: %v", AnnotationLandlock, host.LandlockErr)
		return ""
	}
	abi := host.LandlockABI
	missing := rs.Unsupported(abi)
	if len(missing) == 0 {
		return rs.Encode()
	}
	why := fmt.Sprintf("the host's Landlock ABI %d does not enforce %s, which %s handles", abi, landlock.Describe(missing), AnnotationLandlock)
	if abi == 0 {
		why = "the host has no Landlock (kernel without it, or disabled at boot); " + AnnotationLandlock + " is not enforced at all"
	}
	before := len(v.list)
	d.degrade(FeatureLandlock, why, v)
	if len(v.list) > before {
		return ""
	}
	if down := rs.Downgrade(abi); down != nil {
		return down.Encode()
	}
	return ""
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
	if len(hostNamespaces(s)) == 0 && readSeccomp(s).present {
		return "full"
	}
	return "partial"
}

// Normalize makes the runtime's changes the decision implies to the spec
// before it is frozen: an unset process.capabilities becomes an explicit
// empty set, so the backend applies "none" (libcontainer applies nothing
// for an unset one, which leaves the runtime's own) and every later check
// reads what the process really has.
func Normalize(s *specs.Spec) {
	if s.Process != nil && s.Process.Capabilities == nil {
		s.Process.Capabilities = &specs.LinuxCapabilities{
			Bounding: []string{}, Effective: []string{}, Permitted: []string{}, Inheritable: []string{}, Ambient: []string{},
		}
	}
}
