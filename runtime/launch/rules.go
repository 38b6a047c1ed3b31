package launch

import (
	"fmt"
	"strings"
)

// RuleID names a rule; IDs are stable: scripts, floors and docs use them.
type RuleID string

// Kind is what breaking a rule means, which the runtime maps to an exit
// code (README.md, exit codes).
type Kind int

const (
	// KindLevel: the level's demand is not met — the sandbox cannot be
	// established as asked (125).
	KindLevel Kind = iota
	// KindFloor: the operator's floor forbids it (126).
	KindFloor
	// KindInput: the request itself is malformed (1).
	KindInput
	// KindHost: the host cannot tell or give what is needed (125).
	KindHost
)

func (k Kind) String() string {
	switch k {
	case KindLevel:
		return "level"
	case KindFloor:
		return "floor"
	case KindInput:
		return "input"
	case KindHost:
		return "host"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Rule is one row of the rule table.
type Rule struct {
	ID RuleID `json:"id"`
	// Scope says where the rule applies: "strict", "standard", "every
	// level", "floor", "exec", "update", "verification".
	Scope   string `json:"scope"`
	Kind    Kind   `json:"-"`
	Demands string `json:"demands"`
	Remedy  string `json:"remedy"`
}

// Rule IDs. Keep them in Rules below, in the same order.
const (
	RuleLevelAnnotation   RuleID = "level.annotation"
	RuleLevelUnknown      RuleID = "level.unknown"
	RuleEnvVetto          RuleID = "env.vetto-variable"
	RuleBundleFeature     RuleID = "bundle.allow-degraded"
	RuleBundleSelfWrite   RuleID = "bundle.self-writable"
	RuleRuntimeStateWrite RuleID = "bundle.runtime-state-writable"
	RuleHookWritable      RuleID = "bundle.hook-writable"
	RuleCgroupInUse       RuleID = "cgroup.in-use"
	RuleCapsUnset         RuleID = "capabilities.unset"
	RuleRootlessPidNS     RuleID = "rootless.pid-namespace"
	RuleRootlessUserns    RuleID = "rootless.user-namespace"
	RuleLandlockInput     RuleID = "landlock.input"
	RuleLandlockProbe     RuleID = "landlock.probe"
	RulePostureAnnotated  RuleID = "posture.annotation"
	RuleMasksCovered      RuleID = "masks.covered"
	RuleNetAnnotation     RuleID = "network.annotation"
	RuleUnifiedInterface  RuleID = "resources.unified.interface"
	RulePlatformRefused   RuleID = "platform.refused"

	RuleStrictLinux          RuleID = "strict.linux"
	RuleStrictNamespaces     RuleID = "strict.namespaces"
	RuleStrictSeccomp        RuleID = "strict.seccomp.present"
	RuleStrictSeccompDeny    RuleID = "strict.seccomp.default-deny"
	RuleStrictSeccompBlocks  RuleID = "strict.seccomp.blocks-dangerous"
	RuleStrictSeccompNotify  RuleID = "strict.seccomp.notify"
	RuleStrictNoNewPrivs     RuleID = "strict.no-new-privileges"
	RuleStrictCapabilities   RuleID = "strict.capabilities.minimal"
	RuleStrictMemory         RuleID = "strict.limits.memory"
	RuleStrictPids           RuleID = "strict.limits.pids"
	RuleStrictMasks          RuleID = "strict.masks.default"
	RuleStrictReadonly       RuleID = "strict.readonly.default"
	RuleStrictKernelMounts   RuleID = "strict.mounts.kernel"
	RuleStrictKernelWritable RuleID = "strict.mounts.kernel-writable"
	RuleStrictSetIDWrites    RuleID = "strict.host-writes.setid"
	RuleStrictMountTypes     RuleID = "strict.mounts.type"
	RuleStrictNetDevices     RuleID = "strict.netdevices"
	RuleStrictRootfs         RuleID = "strict.rootfs.host"
	RuleStrictBindSource     RuleID = "strict.mounts.bind-source"
	RuleStrictDevices        RuleID = "strict.devices"
	RuleStrictHooks          RuleID = "strict.hooks"
	RuleStrictCredentials    RuleID = "strict.credentials"
	RuleStrictAppArmor       RuleID = "strict.apparmor.unconfined"
	RuleStrictSysctl         RuleID = "strict.sysctl.host"
	RuleStrictPriority       RuleID = "strict.priority.host"
	RuleStrictPassedFDs      RuleID = "strict.passed-fds"
	RuleStrictVerify         RuleID = "strict.verify"
	RuleStrictNoDegradation  RuleID = "strict.no-degradation"
	RuleDegradeStandard      RuleID = "standard.degradation"
	RuleFloorMinLevel        RuleID = "floor.min-level"
	RuleFloorPrivileged      RuleID = "floor.forbid.privileged"
	RuleFloorHostNamespaces  RuleID = "floor.forbid.host-namespaces"
	RuleFloorNoSeccomp       RuleID = "floor.forbid.no-seccomp"
	RuleFloorWritableRootfs  RuleID = "floor.forbid.writable-rootfs"
	RuleFloorCapabilities    RuleID = "floor.forbid.capabilities"
	RuleFloorHooks           RuleID = "floor.forbid.hooks"
	RuleFloorCredentials     RuleID = "floor.forbid.credentials"
	RuleFloorDevices         RuleID = "floor.forbid.devices"
	RuleFloorKernelMounts    RuleID = "floor.forbid.extra-kernel-mounts"
	RuleFloorBindSources     RuleID = "floor.allow.bind-sources"
	RuleFloorDefaultMasks    RuleID = "floor.require.default-masks"
	RuleFloorAppArmor        RuleID = "floor.forbid.unconfined-apparmor"
	RuleFloorSysctls         RuleID = "floor.forbid.host-sysctls"
	RuleFloorNoVerify        RuleID = "floor.forbid.no-verify"
	RuleFloorDegradations    RuleID = "floor.forbid.degradations"
	RuleFloorWeakened        RuleID = "floor.forbid.weakened"
	RuleExecCapabilities     RuleID = "exec.capabilities"
	RuleExecNoNewPrivs       RuleID = "exec.no-new-privileges"
	RuleExecUser             RuleID = "exec.user"
	RuleExecAppArmor         RuleID = "exec.apparmor"
	RuleExecSELinux          RuleID = "exec.selinux-label"
	RuleExecRlimits          RuleID = "exec.rlimits"
	RuleExecCwd              RuleID = "exec.cwd"
	RuleUpdateRemovesLimit   RuleID = "update.removes-limit"
	RulePreLaunchFail        RuleID = "verify.prelaunch"
	RulePostLaunchFail       RuleID = "verify.fail"
	RulePostLaunchIncomplete RuleID = "verify.inconclusive"
	RulePostLaunchExited     RuleID = "verify.exited-first"
	RulePrivilegeShortfall   RuleID = "verify.privilege-shortfall"
)

// Rules is the rule table: everything the evaluator decides, in one place.
var Rules = []Rule{
	{RuleLevelAnnotation, "every level", KindFloor, "the bundle's dev.vetto.level may raise the level; lowering it below standard (or below the caller's --security-level) needs an operator floor whose min_level allows that level", "remove the annotation, pass --security-level, or set min_level in the operator floor"},
	{RuleLevelUnknown, "every level", KindInput, "a level is strict, standard or degraded", "fix the --security-level value or the dev.vetto.level annotation"},
	{RuleEnvVetto, "strict", KindLevel, "no VETTO_* variable in the runtime's environment: the environment never changes what is enforced (elsewhere: reported as ignored)", "unset the variables"},
	{RuleBundleFeature, "every level", KindInput, "a bundle's dev.vetto.allow-degraded may accept only degradations of what the bundle itself asks for (landlock, network, limits, no-new-privs); verification, cgroup.kill and cleanup are the runtime's guarantees", "remove them from the annotation; a caller can pass --allow-degraded"},
	{RuleRuntimeStateWrite, "every level", KindLevel, "no read-write bind reaches the runtime's state root (--root), evidence directory, extra audit log (--audit-log), own executable (or a symlink the caller runs it by), operator config (--config), pid file (--pid-file) or log (--log) — the last three there or not, with the symlinks on their way — nor does a writable root filesystem hold them (a container that rewrites its own record turns the runtime's later commands, run as root, against the host: a delete kills the cgroup it names; one that replaces the runtime's executable runs as root when a client next calls it; one that writes the config sets the next launch's floor; one that writes the pid file chooses the process a client then kills, and one that writes the log the error a client reads back)", "bind a directory made for the container, outside the runtime's directories, its executable's and its config's"},
	{RuleHookWritable, "every level", KindLevel, "no file a hook runs on the host (its executable, the interpreter its #! line names, the script an interpreter hook such as sh or python is given, made yet or not, the commands an sh -c string or a wrapper such as env, timeout or busybox runs, every place in the hook's PATH a command it names could be found, what its environment has it load (LD_PRELOAD, BASH_ENV, library and module search paths), and a symlink on the way to any of them) is under a read-write bind or a writable root filesystem of the container (the container would rewrite what the runtime then runs as root on the host)", "keep hooks and what they run outside every writable mount, or bind that directory read-only"},
	{RuleBundleSelfWrite, "every level", KindLevel, "the bundle's config.json and root filesystem are not under a read-write mount of the same bundle (a container that can rewrite its own bundle decides its next run)", "keep the bundle outside every writable mount: compile it with --bundle outside the project"},
	{RuleCgroupInUse, "every level", KindLevel, "the container's cgroupsPath does not name a cgroup that exists and holds processes before create (teardown would kill them)", "use a fresh cgroupsPath, or leave it unset"},
	{RuleRootlessUserns, "every level", KindHost, "a rootless caller can make the user namespace the spec asks for: user namespaces on, and (where AppArmor restricts them) its uid map written, as doctor's userns-probe makes it", "on an AppArmor-restricted host install packaging/apparmor/vetto-runtime (docs/rootless.md), never turn the restriction off; elsewhere the sysctl the message names"},
	{RuleRootlessPidNS, "every level", KindHost, "a container created without a cgroup (rootless, no delegated cgroup) has its own pid namespace: teardown kills it through that namespace's init and proves it empty from /proc", "give the container a new pid namespace, or run where the user has a delegated cgroup (systemd user manager, --systemd-cgroup)"},
	{RuleCapsUnset, "every level", KindLevel, "an unset process.capabilities means no capabilities (libcontainer would leave the runtime's own)", "list the capabilities the process needs in process.capabilities"},
	{RuleLandlockInput, "every level", KindInput, "dev.vetto.landlock is a valid ruleset, with process.noNewPrivileges true (Landlock needs it)", "fix the annotation or the spec as the message says"},
	{RuleLandlockProbe, "every level", KindHost, "the host's Landlock ABI can be read when the bundle asks for Landlock", "check the kernel (vetto-runtime doctor)"},
	{RuleMasksCovered, "every level", KindLevel, "every path the bundle says it masks (dev.vetto.masked) is masked where the process sees it: no later mount covers the mask or shows something inside it", "put the masks after every mount (vetto-runtime spec does)"},
	{RuleUnifiedInterface, "every level", KindInput, "linux.resources.unified sets resources, not the cgroup's own interface: cgroup.procs and cgroup.threads (they would move any process of the host into the container's cgroup, under its limits and its teardown's kill), cgroup.kill, cgroup.freeze, cgroup.type, cgroup.subtree_control", "remove the key; the runtime puts the container's processes in its cgroup and freezes, kills and removes it itself"},
	{RuleNetAnnotation, "every level", KindInput, "a network allowlist names its mode (dev.vetto.net: allowlist or strict) and at least one rule (dev.vetto.net.allow, a JSON array) the egress relay accepts: a host, *.domain or host:port (only host:port at strict), never an IP literal", "fix the annotations, or compile the bundle from a policy (policy check names the line)"},
	{RulePlatformRefused, "every level", KindLevel, "the backend's platform can honour every field of the spec and option of the request (darwin's Seatbelt; Windows' job, restricted token and AppContainer): its translator names each one it cannot, with the platform's rule (darwin.seccomp, windows.user, …: docs/platforms.md), all at once", "remove what the message names from the bundle, or run the bundle on Linux"},
	{RulePostureAnnotated, "every level", KindLevel, "a bundle annotated dev.vetto.posture=isolated gives nothing of the host away (see the posture)", "remove what weakens the posture, or the annotation"},

	{RuleStrictLinux, "strict", KindLevel, "the spec has a linux section: namespaces, cgroups, seccomp", "add one (vetto-runtime spec writes a starter)"},
	{RuleStrictNamespaces, "strict", KindLevel, "new pid, mount, network, ipc and uts namespaces, none shared with the host or joined", "add the namespaces without a path"},
	{RuleStrictSeccomp, "strict", KindLevel, "a seccomp filter", "add linux.seccomp (policy-compiled bundles carry vetto's profile)"},
	{RuleStrictSeccompDeny, "strict", KindLevel, "the seccomp filter denies by default (defaultAction SCMP_ACT_ERRNO, SCMP_ACT_KILL*, or SCMP_ACT_TRAP)", "use a deny-by-default profile"},
	{RuleStrictSeccompNotify, "strict", KindLevel, "no seccomp notify agent (SCMP_ACT_NOTIFY, linux.seccomp.listenerPath): the runtime would hand the filter to a process outside it, at a host socket the bundle names, and that process may let the calls run", "replace SCMP_ACT_NOTIFY with SCMP_ACT_ERRNO, and remove listenerPath"},
	{RuleStrictSeccompBlocks, "strict", KindLevel, "the seccomp filter does not allow, unconditionally, the calls no container needs and exploits use (ptrace, process_vm_*, bpf, kexec_*, *_module, mount, umount2, pivot_root, open_by_handle_at, keyctl, add_key, request_key, io_uring_*, userfaultfd, perf_event_open)", "remove those allow rules"},
	{RuleStrictNoNewPrivs, "strict", KindLevel, "process.noNewPrivileges is true", "set it"},
	{RuleStrictCapabilities, "strict", KindLevel, "capabilities only from the minimal set: runc's default set without NET_RAW, MKNOD, AUDIT_WRITE, SETFCAP and FSETID", "drop the others from every capability set"},
	{RuleStrictMemory, "strict", KindLevel, "a memory limit (linux.resources.memory.limit above 0 and below 4 EiB, which no machine reaches; on cgroup v2 unified memory.max, written last, decides)", "set one"},
	{RuleStrictPids, "strict", KindLevel, "a pids limit (linux.resources.pids.limit 0 or more — libcontainer writes 0 as pids.max 1 — and below 4194304, the kernel's most tasks; on cgroup v2 unified pids.max, written last, decides)", "set one"},
	{RuleStrictMasks, "strict", KindLevel, "linux.maskedPaths has at least runc's defaults (/proc/acpi, /proc/asound, /proc/kcore, /proc/keys, /proc/latency_stats, /proc/timer_list, /proc/timer_stats, /proc/sched_debug, /proc/scsi, /sys/firmware)", "add the missing paths"},
	{RuleStrictReadonly, "strict", KindLevel, "linux.readonlyPaths has at least /proc/bus, /proc/fs, /proc/irq, /proc/sys, /proc/sysrq-trigger", "add the missing paths"},
	{RuleStrictKernelMounts, "strict", KindLevel, "no proc, sysfs, cgroup, cgroup2, devpts or mqueue mount beyond the standard ones (/proc, /sys, /sys/fs/cgroup, /dev/pts, /dev/mqueue)", "remove the extra mounts"},
	{RuleStrictKernelWritable, "strict", KindLevel, "sysfs and cgroup mounts read-only, unless a user namespace keeps host root unmapped: their files are root's, so host root writes the host's kernel settings through /sys and its own limits through /sys/fs/cgroup", "mount them with ro, or give the container a user namespace that does not map host root"},
	{RuleStrictSetIDWrites, "strict", KindLevel, "a container that writes host paths as host root (a read-write bind or a writable root filesystem, with no user namespace that keeps host root unmapped, or a bind id-mapped onto ids it holds) has a seccomp filter that refuses set-id modes: chmod, fchmod, fchmodat, fchmodat2, creat, open, openat, mknod and mknodat permitted only when the mode has neither S_ISUID nor S_ISGID (open and openat also when they create nothing), and openat2 (its mode sits in a struct a filter cannot read) not at all; the files it leaves there are host root's, and a set-uid one runs as root for whoever on the host runs it", "use vetto's seccomp profile (vetto-runtime spec --profile writes it; its set-id rules are the guard), give the container a user namespace that does not map host root, or make the binds and the root filesystem read-only"},
	{RuleStrictMountTypes, "strict", KindLevel, "no mount but binds, tmpfs and the standard kernel filesystems: the runtime mounts as root before the container starts, so a disk by its device, an overlay of host directories, devtmpfs, binfmt_misc (a handler the host runs for everyone), debugfs, tracefs, bpf, securityfs, efivarfs reach the host", "remove the mount, or bind a directory made for the container"},
	{RuleStrictNetDevices, "strict", KindLevel, "no host network interface moved into the container (linux.netDevices): the host loses it, a virtual one for good, and the container gets the host's network whatever its network mode", "remove linux.netDevices"},
	{RuleStrictRootfs, "strict", KindLevel, "root.path is not the host's root, its kernel, device or secret trees, the whole /home, the run directory or a runtime's state directory, nor a system tree (/etc, /usr, …) writable or readable as host root", "use a root filesystem made for the container"},
	{RuleStrictBindSource, "strict", KindLevel, "no bind whose source is a host system path (/, /proc, /sys, /dev, /boot, /root, /run, /var/run, a unix socket, a device node); /etc, /usr, /bin, /sbin, /lib* only read-only, in a user namespace that does not map host root, and not id-mapped onto ids the container holds", "bind a directory made for the container instead"},
	{RuleStrictDevices, "strict", KindLevel, "no device node beyond null, zero, full, random, urandom, tty, and no cgroup rule granting read or write to other devices", "remove them from linux.devices and linux.resources.devices"},
	{RuleStrictHooks, "strict", KindLevel, "no OCI hook but vetto-runtime's own and those the operator allows (allow.hooks): bundle hooks run as root on the host", "remove the hooks, or have the operator allow their paths"},
	{RuleStrictCredentials, "strict", KindLevel, "no credential (dev.vetto.credentials) but those the operator allows for their host (allow.credentials): the relay would send a secret of the host to a host the bundle chose", "remove the credentials, or have the operator allow each as \"HOST file /path\" or \"HOST env NAME\""},
	{RuleStrictAppArmor, "strict", KindLevel, "process.apparmorProfile is not \"unconfined\" where AppArmor is enabled", "leave it empty or name a profile"},
	{RuleStrictPriority, "strict", KindLevel, "process.scheduler, process.ioPriority and the priority rlimits put the process above no host process: no real-time policy (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE), no negative nice, no real-time I/O class (the runtime sets them with every capability it holds), no RLIMIT_RTPRIO above 0 and no RLIMIT_NICE above 20 (with which the workload takes them itself)", "remove them, or use SCHED_OTHER/SCHED_BATCH/SCHED_IDLE, a nice of 0 or more, the best-effort or idle I/O class and RLIMIT_RTPRIO 0, RLIMIT_NICE 20 or less"},
	{RuleStrictPassedFDs, "strict", KindLevel, "every file passed in besides stdio (--preserve-fds, socket activation's LISTEN_FDS; exec's --preserve-fds too) only carries data: a pipe, a connected or listening unix stream socket, a file of an ordinary file system, /dev/null, zero, full, random or urandom. An open file keeps its access in the container, past its mounts, namespaces, devices cgroup and Landlock: a directory or O_PATH descriptor opens the host's tree through \"..\", a terminal takes TIOCSTI, a device, a proc, sysfs or cgroup file, a pidfd or namespace acts on the host, an inet socket connects anywhere from the host's network", "pass data channels only: open the file itself rather than its directory, a unix socket rather than an inet one, and leave the rest to the spec (mounts, devices)"},
	{RuleStrictSysctl, "strict", KindLevel, "linux.sysctl sets only namespaced sysctls (kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*, net.*, kernel.hostname, kernel.domainname)", "remove the others"},
	{RuleStrictVerify, "strict", KindLevel, "pre- and post-launch verification from host facts (no --no-verify; a platform with host facts)", "drop --no-verify, or use --security-level standard with --allow-degraded=verify"},
	{RuleStrictNoDegradation, "strict", KindLevel, "no degradation at all, whatever --allow-degraded or the bundle says", "give the host what is missing, or use --security-level standard with --allow-degraded"},
	{RuleDegradeStandard, "standard", KindLevel, "every part of the sandbox the bundle asks for; a missing part only when the caller names it with --allow-degraded (or the bundle, for what it asks for itself)", "accept it with --allow-degraded=<feature>, or use --security-level degraded"},

	{RuleFloorMinLevel, "floor", KindFloor, "min_level: no launch below this level (no floor file: a bundle annotation cannot go below standard)", "raise the level"},
	{RuleFloorPrivileged, "floor", KindFloor, "forbid.privileged: no capability outside the minimal set", "drop the capabilities"},
	{RuleFloorHostNamespaces, "floor", KindFloor, "forbid.host_namespaces: new pid, mount, network, ipc and uts namespaces", "add them without a path"},
	{RuleFloorNoSeccomp, "floor", KindFloor, "forbid.no_seccomp: an effective seccomp filter (not absent, not allow-by-default with nothing refused)", "add a seccomp profile"},
	{RuleFloorWritableRootfs, "floor", KindFloor, "forbid.writable_rootfs: root.readonly is true", "set root.readonly"},
	{RuleFloorCapabilities, "floor", KindFloor, "forbid.capabilities: none of the listed capabilities in any set", "drop them"},
	{RuleFloorHooks, "floor", KindFloor, "forbid.hooks: no OCI hook but vetto-runtime's own and allow.hooks", "remove the hooks"},
	{RuleFloorCredentials, "floor", KindFloor, "forbid.credentials: no credential a bundle names but allow.credentials", "remove the credentials"},
	{RuleFloorDevices, "floor", KindFloor, "forbid.devices: no device node or device cgroup rule beyond the standard set", "remove them"},
	{RuleFloorKernelMounts, "floor", KindFloor, "forbid.extra_kernel_mounts: no proc, sysfs, cgroup or devpts mount beyond the standard ones", "remove them"},
	{RuleFloorBindSources, "floor", KindFloor, "allow.bind_sources: every bind source is under one of the listed directories", "bind from an allowed directory"},
	{RuleFloorDefaultMasks, "floor", KindFloor, "require.default_masks: runc's default masked and read-only paths", "add them"},
	{RuleFloorAppArmor, "floor", KindFloor, "forbid.unconfined_apparmor: process.apparmorProfile is not \"unconfined\"", "remove it"},
	{RuleFloorSysctls, "floor", KindFloor, "forbid.host_sysctls: only namespaced sysctls", "remove the others"},
	{RuleFloorNoVerify, "floor", KindFloor, "forbid.no_verify: post-launch verification is never skipped", "drop --no-verify"},
	{RuleFloorDegradations, "floor", KindFloor, "forbid.degradations: none of the listed features may be degraded (\"all\": none)", "give the host what is missing"},
	{RuleFloorWeakened, "floor", KindFloor, "forbid.weakened: the spec gives nothing of the host away (posture isolated)", "remove what the posture names"},

	{RuleExecCapabilities, "exec", KindInput, "an exec'd process gets no capability outside the container process's own set, set by set (effective, permitted, inheritable, ambient, bounding)", "drop --cap, or the capabilities from --process"},
	{RuleExecNoNewPrivs, "exec", KindInput, "an exec'd process keeps the container's no_new_privs", "do not clear noNewPrivileges"},
	{RuleExecUser, "exec", KindInput, "an exec'd process is not uid or gid 0 when the container's process is not", "exec as the container's user"},
	{RuleExecAppArmor, "exec", KindInput, "an exec'd process keeps the container's AppArmor profile", "do not pass --apparmor"},
	{RuleExecSELinux, "exec", KindInput, "an exec'd process keeps the container's SELinux label", "do not pass --process-label"},
	{RuleExecRlimits, "exec", KindInput, "an exec'd process sets only rlimits the container's process has, no higher, and no lower oomScoreAdj, other scheduler or other I/O priority than it", "drop them from --process"},
	{RuleExecCwd, "exec", KindInput, "an exec'd process's cwd is an absolute, clean path outside /proc and /sys", "pass another --cwd"},
	{RuleUpdateRemovesLimit, "update", KindLevel, "an update does not remove a memory or pids limit the container had (-1, \"max\" in unified memory.max/pids.max, or a value no machine reaches: 4 EiB of memory, 4194304 pids): never at strict, at standard only with --allow-degraded=limits", "set a limit instead of -1, max or a value no machine reaches"},

	{RulePreLaunchFail, "verification", KindLevel, "every pre-launch check of the live init passes on host facts; a failure tagged with a degradable feature is accepted as the level allows", "see the failing check"},
	{RulePostLaunchFail, "verification", KindLevel, "post-launch verification finds no FAIL: at standard and strict the container is killed (125), at degraded it is recorded and runs on", "see the failing check"},
	{RulePostLaunchIncomplete, "verification", KindLevel, "post-launch verification is conclusive: at strict an inconclusive one kills the container (125); elsewhere it is said once and the container is not VerifiedRuntime", "see the check that could not conclude"},
	{RulePostLaunchExited, "verification", KindLevel, "a process that exited before post-launch verification is recorded as such at every level (its exit status passes through); pre-launch verification already judged its sandbox", "nothing to do"},
	{RulePrivilegeShortfall, "verification", KindLevel, "less privilege than asked (an ambient capability the kernel cannot raise, a capability the host lacks) is a recorded note, not a failure; more privilege than asked is a FAIL", "nothing to do"},
}

// RuleByID returns the rule with id.
func RuleByID(id RuleID) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// Violation is one rule a request breaks, with what exactly broke it.
type Violation struct {
	Rule   RuleID `json:"rule"`
	Kind   Kind   `json:"-"`
	Detail string `json:"detail"`
	// Remedy is what to do, specific to this violation; empty: the
	// rule's.
	Remedy string `json:"remedy,omitempty"`
}

func (v Violation) String() string {
	s := v.Detail + " [" + string(v.Rule) + "]"
	remedy := v.Remedy
	if r, ok := RuleByID(v.Rule); ok && remedy == "" {
		remedy = r.Remedy
	}
	if remedy != "" && remedy != "nothing to do" {
		s += ": " + remedy
	}
	return s
}

// Violations is every rule a request breaks.
type Violations []Violation

// Worst is the kind that decides the exit code: the floor first (the
// operator said no), then bad input, then the level and the host.
func (vs Violations) Worst() Kind {
	worst := KindLevel
	for _, v := range vs {
		switch {
		case v.Kind == KindFloor:
			return KindFloor
		case v.Kind == KindInput:
			worst = KindInput
		case v.Kind == KindHost && worst == KindLevel:
			worst = KindHost
		}
	}
	return worst
}

func (vs Violations) String() string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// violations collects what a request breaks.
type violations struct{ list Violations }

func (c *violations) add(id RuleID, format string, args ...any) {
	c.addRemedy(id, "", format, args...)
}

// addRemedy is add with a remedy specific to this violation.
func (c *violations) addRemedy(id RuleID, remedy, format string, args ...any) {
	r, ok := RuleByID(id)
	kind := KindLevel
	if ok {
		kind = r.Kind
	}
	c.list = append(c.list, Violation{Rule: id, Kind: kind, Detail: fmt.Sprintf(format, args...), Remedy: remedy})
}
