package launch

import (
	"errors"
	"slices"
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/spec"
)

func i64(v int64) *int64 { return &v }

// strictSpec meets every strict rule.
func strictSpec() *specs.Spec {
	caps := []string{"CAP_KILL"}
	return &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: "/b/rootfs", Readonly: true},
		Process: &specs.Process{Cwd: "/", Args: []string{"true"}, NoNewPrivileges: true, Capabilities: &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}},
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts"},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"ro"}},
		},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{{Type: "pid"}, {Type: "mount"}, {Type: "network"}, {Type: "ipc"}, {Type: "uts"}},
			Seccomp:    &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Syscalls: []specs.LinuxSyscall{{Names: []string{"read", "write"}, Action: specs.ActAllow}}},
			Resources: &specs.LinuxResources{
				Memory: &specs.LinuxMemory{Limit: i64(1 << 28)}, Pids: &specs.LinuxPids{Limit: i64(64)},
				Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}},
			},
			MaskedPaths: append([]string{}, runcMasked...), ReadonlyPaths: append([]string{}, runcReadonly...),
		},
		Annotations: map[string]string{},
	}
}

var goodHost = Host{Facts: true, LandlockABI: 7}

func mustFloor(t *testing.T, edit func(*Floor)) *Floor {
	t.Helper()
	f := &Floor{Path: "runtime.toml"}
	edit(f)
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	return f
}

// withCredentials sets the bundle's credential annotation.
func withCredentials(annotation string) func(*specs.Spec) {
	return func(s *specs.Spec) {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[spec.AnnotationCredentials] = annotation
	}
}

func strictReq(s *specs.Spec) Request { return Request{Spec: s, Level: Strict, LevelSet: true} }

// TestEvaluate is the rule table as cases: each names the hole or rule it
// pins, and asserts the rule IDs the decision lists (all of them).
func TestEvaluate(t *testing.T) {
	realistic := func(f *Floor) {
		f.MinLevel = "standard"
		f.Forbid.Privileged, f.Forbid.HostNamespaces, f.Forbid.NoSeccomp = true, true, true
		f.Forbid.Capabilities = []string{"CAP_SYS_ADMIN"}
	}
	tests := []struct {
		name  string
		edit  func(*specs.Spec)
		req   func(*specs.Spec) Request
		host  func(*Host)
		floor func(*Floor)
		rules []RuleID // every rule violated, in order; nil: OK
		level Level    // zero (degraded) is written as levelDegraded below
		check func(*testing.T, *Decision)
	}{
		{name: "strict bundle at strict", req: strictReq, level: Strict},
		{name: "default is standard", level: Standard},
		{name: "annotation raises", edit: func(s *specs.Spec) { s.Annotations[AnnotationLevel] = "strict" }, level: Strict},
		{name: "annotation cannot lower an explicit flag", edit: func(s *specs.Spec) { s.Annotations[AnnotationLevel] = "degraded" }, req: strictReq, level: Strict},
		{name: "annotation cannot lower the default without a floor (21)", edit: func(s *specs.Spec) { s.Annotations[AnnotationLevel] = "degraded" },
			rules: []RuleID{RuleLevelAnnotation}, level: Standard},
		{name: "annotation lowers where the floor allows it", edit: func(s *specs.Spec) { s.Annotations[AnnotationLevel] = "degraded" },
			floor: func(f *Floor) { f.MinLevel = "degraded" }, level: levelDegraded},
		{name: "annotation cannot go below the floor's min_level", edit: func(s *specs.Spec) { s.Annotations[AnnotationLevel] = "degraded" },
			floor: func(f *Floor) { f.MinLevel = "standard" }, rules: []RuleID{RuleLevelAnnotation}, level: Standard},
		{name: "bad level annotation", edit: func(s *specs.Spec) { s.Annotations[AnnotationLevel] = "max" }, rules: []RuleID{RuleLevelUnknown}},
		{name: "floor min level against the flag", req: func(s *specs.Spec) Request { return Request{Spec: s, Level: Degraded, LevelSet: true} },
			floor: func(f *Floor) { f.MinLevel = "standard" }, rules: []RuleID{RuleFloorMinLevel}, level: levelDegraded},
		{name: "VETTO_ variable refused at strict", req: func(s *specs.Spec) Request { r := strictReq(s); r.Environ = []string{"VETTO_X=1"}; return r },
			rules: []RuleID{RuleEnvVetto}, level: Strict},
		{name: "VETTO_ variable warned at standard", req: func(s *specs.Spec) Request { return Request{Spec: s, Environ: []string{"VETTO_X=1"}} },
			check: func(t *testing.T, d *Decision) {
				if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "VETTO_X") {
					t.Errorf("warnings %q", d.Warnings)
				}
			}},

		// 13.1: unset capabilities mean none, to every rule.
		{name: "unset capabilities pass the floor's forbid.capabilities and say so (13.1)", edit: func(s *specs.Spec) { s.Process.Capabilities = nil },
			floor: func(f *Floor) { f.Forbid.Capabilities = []string{"CAP_SYS_ADMIN"}; f.Forbid.Privileged = true },
			check: func(t *testing.T, d *Decision) {
				if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], string(RuleCapsUnset)) {
					t.Errorf("notes %q, want the capabilities.unset note", d.Notes)
				}
			}},
		{name: "forbidden capability", edit: func(s *specs.Spec) { s.Process.Capabilities.Ambient = []string{"cap_sys_admin"} },
			floor: func(f *Floor) { f.Forbid.Capabilities = []string{"CAP_SYS_ADMIN"} }, rules: []RuleID{RuleFloorCapabilities}},
		// 13.2
		{name: "strict refuses an allow-by-default seccomp (13.2)", edit: func(s *specs.Spec) {
			s.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActAllow}
		}, req: strictReq, rules: []RuleID{RuleStrictSeccompDeny}, level: Strict},
		{name: "floor no_seccomp counts a filter that refuses nothing", edit: func(s *specs.Spec) {
			s.Linux.Seccomp = &specs.LinuxSeccomp{DefaultAction: specs.ActAllow}
		}, floor: func(f *Floor) { f.Forbid.NoSeccomp = true }, rules: []RuleID{RuleFloorNoSeccomp}},
		{name: "strict refuses dangerous unconditional allows", edit: func(s *specs.Spec) {
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"ptrace", "bpf"}, Action: specs.ActAllow})
		}, req: strictReq, rules: []RuleID{RuleStrictSeccompBlocks}, level: Strict},
		// 13.3
		{name: "no-verify at standard needs acceptance (13.3)", req: func(s *specs.Spec) Request { return Request{Spec: s, NoVerify: true} },
			rules: []RuleID{RuleDegradeStandard}},
		{name: "no-verify accepted at standard", req: func(s *specs.Spec) Request {
			return Request{Spec: s, NoVerify: true, Allow: map[Feature]bool{FeatureVerify: true}}
		}, check: func(t *testing.T, d *Decision) {
			if !d.Unverified || len(d.Degraded) != 1 || d.Degraded[0].Feature != FeatureVerify {
				t.Errorf("unverified %v, degraded %v", d.Unverified, d.Degraded)
			}
		}},
		{name: "floor min_level=standard does not stop an accepted no-verify, forbid.no_verify does", req: func(s *specs.Spec) Request {
			return Request{Spec: s, NoVerify: true, Allow: map[Feature]bool{FeatureVerify: true}}
		}, floor: func(f *Floor) { f.MinLevel = "standard"; f.Forbid.NoVerify = true }, rules: []RuleID{RuleFloorNoVerify}},
		{name: "no-verify at strict", req: func(s *specs.Spec) Request { r := strictReq(s); r.NoVerify = true; return r },
			rules: []RuleID{RuleStrictVerify}, level: Strict},
		// 13.6
		{name: "no host facts is a verify degradation (13.6)", host: func(h *Host) { h.Facts = false }, rules: []RuleID{RuleDegradeStandard}},
		{name: "no host facts at strict", req: strictReq, host: func(h *Host) { h.Facts = false }, rules: []RuleID{RuleStrictVerify}, level: Strict},
		{name: "no host facts at degraded runs unverified", req: func(s *specs.Spec) Request { return Request{Spec: s, Level: Degraded, LevelSet: true} },
			host: func(h *Host) { h.Facts = false }, level: levelDegraded, check: func(t *testing.T, d *Decision) {
				if !d.Unverified {
					t.Error("not marked unverified")
				}
			}},
		// 13.9
		{name: "cgroupsPath in use (13.9)", host: func(h *Host) { h.CgroupInUse = "/sys/fs/cgroup/x holds pid 1" }, rules: []RuleID{RuleCgroupInUse}},

		// 16: rootless without a delegated cgroup.
		{name: "rootless, no cgroup: refused at standard", host: func(h *Host) {
			h.Cgroups = Cgroups{Rootless: true, Unusable: "no cgroup delegated to uid 1000"}
		}, rules: []RuleID{RuleDegradeStandard, RuleDegradeStandard}},
		{name: "rootless, no cgroup: refused at strict", req: strictReq, host: func(h *Host) {
			h.Cgroups = Cgroups{Rootless: true, Unusable: "no cgroup delegated to uid 1000"}
		}, rules: []RuleID{RuleStrictNoDegradation, RuleStrictNoDegradation}, level: Strict},
		{name: "rootless, no cgroup: accepted, both named", req: func(s *specs.Spec) Request {
			return Request{Spec: s, Allow: map[Feature]bool{FeatureCgroupKill: true, FeatureLimits: true}}
		}, host: func(h *Host) { h.Cgroups = Cgroups{Rootless: true, Unusable: "no cgroup delegated to uid 1000"} },
			check: func(t *testing.T, d *Decision) {
				if !d.NoCgroup || !d.Rootless {
					t.Errorf("NoCgroup %v Rootless %v, want both", d.NoCgroup, d.Rootless)
				}
				got := strings.Join(d.DegradedStrings(), "\n")
				if !strings.Contains(got, "cgroup-kill: no cgroup delegated") || !strings.Contains(got, "limits: no cgroup delegated to uid 1000: linux.resources (memory, pids) not applied") {
					t.Errorf("degraded %q", got)
				}
			}},
		{name: "rootless, no cgroup, no limits: only cgroup-kill", edit: func(s *specs.Spec) { s.Linux.Resources.Memory, s.Linux.Resources.Pids = nil, nil },
			req:  func(s *specs.Spec) Request { return Request{Spec: s, Allow: map[Feature]bool{FeatureCgroupKill: true}} },
			host: func(h *Host) { h.Cgroups = Cgroups{Rootless: true, Unusable: "x"} }},
		{name: "rootless, no cgroup, shared pid namespace", edit: func(s *specs.Spec) { s.Linux.Namespaces = s.Linux.Namespaces[1:] },
			req:  func(s *specs.Spec) Request { return Request{Spec: s, Level: Degraded, LevelSet: true} },
			host: func(h *Host) { h.Cgroups = Cgroups{Rootless: true, Unusable: "x"} }, rules: []RuleID{RuleRootlessPidNS}, level: levelDegraded},
		{name: "rootless, no cgroup: a bundle cannot accept cgroup-kill", edit: func(s *specs.Spec) { s.Annotations[AnnotationAllowDegraded] = "cgroup-kill,limits" },
			host: func(h *Host) { h.Cgroups = Cgroups{Rootless: true, Unusable: "x"} }, rules: []RuleID{RuleBundleFeature, RuleDegradeStandard}},
		{name: "rootless, user namespace refused (AppArmor)", host: func(h *Host) {
			h.Cgroups = Cgroups{Rootless: true}
			h.Userns = "cannot write its uid and gid maps: operation not permitted"
		}, rules: []RuleID{RuleRootlessUserns}},
		{name: "rootless: an allowlist without the relay is the network degradation", edit: func(s *specs.Spec) {
			s.Annotations[AnnotationNet] = "allowlist"
			s.Annotations["dev.vetto.net.allow"] = `["example.com"]`
		}, host: func(h *Host) {
			h.Cgroups = Cgroups{Rootless: true}
			h.RelayMissing = "which a rootless runtime does not start"
		}, rules: []RuleID{RuleDegradeStandard}},
		{name: "rootless with delegation: nothing degraded", host: func(h *Host) { h.Cgroups = Cgroups{Rootless: true} },
			check: func(t *testing.T, d *Decision) {
				if d.NoCgroup || !d.Rootless || len(d.Degraded) > 0 {
					t.Errorf("NoCgroup %v Rootless %v degraded %v", d.NoCgroup, d.Rootless, d.Degraded)
				}
			}},

		// Degradations.
		{name: "kernel memory refused at standard", edit: func(s *specs.Spec) { s.Linux.Resources.Memory.KernelTCP = i64(1 << 20) },
			rules: []RuleID{RuleDegradeStandard}},
		{name: "kernel memory accepted", edit: func(s *specs.Spec) { s.Linux.Resources.Memory.KernelTCP = i64(1 << 20) },
			req: func(s *specs.Spec) Request { return Request{Spec: s, Allow: map[Feature]bool{FeatureLimits: true}} }},
		{name: "strict ignores --allow-degraded", edit: func(s *specs.Spec) { s.Annotations[AnnotationNet] = "allowlist" },
			req: func(s *specs.Spec) Request {
				r := strictReq(s)
				r.Allow = map[Feature]bool{FeatureNetwork: true}
				return r
			},
			rules: []RuleID{RuleStrictNoDegradation}, level: Strict},
		{name: "bundle accepts what it asks for", edit: func(s *specs.Spec) {
			s.Annotations[AnnotationNet] = "allowlist"
			s.Annotations[AnnotationAllowDegraded] = "network"
		}},
		{name: "bundle cannot accept verify", edit: func(s *specs.Spec) { s.Annotations[AnnotationAllowDegraded] = "verify" },
			req: func(s *specs.Spec) Request { return Request{Spec: s, NoVerify: true} }, rules: []RuleID{RuleBundleFeature, RuleDegradeStandard}},
		{name: "floor forbids a degradation at degraded", edit: func(s *specs.Spec) { s.Annotations[AnnotationNet] = "allowlist" },
			req:   func(s *specs.Spec) Request { return Request{Spec: s, Level: Degraded, LevelSet: true} },
			floor: func(f *Floor) { f.Forbid.Degradations = []string{"all"} }, rules: []RuleID{RuleFloorDegradations}, level: levelDegraded},
		{name: "relay available: allowlist is no degradation", edit: func(s *specs.Spec) {
			s.Annotations[AnnotationNet] = "allowlist"
			s.Annotations["dev.vetto.net.allow"] = `["example.com"]`
		}, host: func(h *Host) { h.Relay = true }},
		{name: "relay available: allowlist without rules", edit: func(s *specs.Spec) { s.Annotations[AnnotationNet] = "allowlist" },
			host: func(h *Host) { h.Relay = true }, rules: []RuleID{RuleNetAnnotation}},
		{name: "relay available: an IP literal rule", edit: func(s *specs.Spec) {
			s.Annotations[AnnotationNet] = "allowlist"
			s.Annotations["dev.vetto.net.allow"] = `["example.com","169.254.169.254"]`
		}, host: func(h *Host) { h.Relay = true }, rules: []RuleID{RuleNetAnnotation}},
		{name: "relay available: unknown mode", edit: func(s *specs.Spec) { s.Annotations[AnnotationNet] = "host" },
			host: func(h *Host) { h.Relay = true }, rules: []RuleID{RuleNetAnnotation}},

		// 21: strict means isolated by itself.
		{name: "strict: second proc mount", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/proc2", Type: "proc", Source: "proc"})
		}, req: strictReq, rules: []RuleID{RuleStrictKernelMounts}, level: Strict},
		{name: "strict: host block device and its cgroup rule", edit: func(s *specs.Spec) {
			s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/vda", Type: "b", Major: 254, Minor: 0}}
			s.Linux.Resources.Devices = append(s.Linux.Resources.Devices, specs.LinuxDeviceCgroup{Allow: true, Type: "b", Major: i64(254), Minor: i64(0), Access: "rw"})
		}, req: strictReq, rules: []RuleID{RuleStrictDevices}, level: Strict},
		{name: "strict: the standard devices and mknod-only rules pass", edit: func(s *specs.Spec) {
			s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/null", Type: "c", Major: 1, Minor: 3}}
			s.Linux.Resources.Devices = append(s.Linux.Resources.Devices,
				specs.LinuxDeviceCgroup{Allow: true, Type: "c", Access: "m"}, specs.LinuxDeviceCgroup{Allow: true, Type: "b", Access: "m"},
				specs.LinuxDeviceCgroup{Allow: true, Type: "c", Major: i64(136), Access: "rwm"}, specs.LinuxDeviceCgroup{Allow: true, Type: "c", Major: i64(10), Minor: i64(200), Access: "rwm"})
		}, req: strictReq, level: Strict},
		{name: "strict: bind of host /etc as host root", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/host-etc", Type: "bind", Source: "/etc", Options: []string{"rbind", "ro"}})
		}, req: strictReq, rules: []RuleID{RuleStrictBindSource}, level: Strict},
		{name: "strict: read-only /etc in a user namespace without host root passes", edit: func(s *specs.Spec) {
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "user"})
			s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 1}}
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/etc", Type: "bind", Source: "/etc", Options: []string{"bind", "ro"}})
		}, req: strictReq, level: Strict},
		{name: "strict: host root writes a bind, and its filter allows chmod whatever the mode", edit: func(s *specs.Spec) {
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"chmod", "fchmodat"}, Action: specs.ActAllow})
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/out", Type: "bind", Source: "/srv/out", Options: []string{"bind", "rw"}})
		}, req: strictReq, rules: []RuleID{RuleStrictSetIDWrites}, level: Strict,
			check: func(t *testing.T, d *Decision) {
				if got := d.Violations[0].Detail; !strings.Contains(got, "/srv/out") || !strings.Contains(got, "chmod, fchmodat") {
					t.Errorf("detail %q", got)
				}
			}},
		{name: "strict: host root in a writable rootfs, openat2 allowed", edit: func(s *specs.Spec) {
			s.Root.Readonly = false
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"openat2"}, Action: specs.ActAllow})
		}, req: strictReq, rules: []RuleID{RuleStrictSetIDWrites}, level: Strict},
		{name: "strict: the same bind with chmod guarded by its mode passes", edit: func(s *specs.Spec) {
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"chmod"}, Action: specs.ActAllow,
				Args: []specs.LinuxSeccompArg{{Index: 1, Value: 0o6000, ValueTwo: 0, Op: specs.OpMaskedEqual}}})
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/out", Type: "bind", Source: "/srv/out", Options: []string{"bind", "rw"}})
		}, req: strictReq, level: Strict},
		{name: "strict: the same bind in a user namespace without host root passes", edit: func(s *specs.Spec) {
			inUserns(s)
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"chmod"}, Action: specs.ActAllow})
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/out", Type: "bind", Source: "/srv/out", Options: []string{"bind", "rw"}})
		}, req: strictReq, level: Strict},
		{name: "strict: a bind id-mapped onto the container's root is host root's again", edit: func(s *specs.Spec) {
			inUserns(s)
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"chmod"}, Action: specs.ActAllow})
			onto := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 1}}
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/out", Type: "bind", Source: "/srv/out", Options: []string{"bind", "rw"}, UIDMappings: onto, GIDMappings: onto})
		}, req: strictReq, rules: []RuleID{RuleStrictSetIDWrites}, level: Strict},
		{name: "strict: a bind id-mapped onto other ids than on-disk root passes", edit: func(s *specs.Spec) {
			inUserns(s)
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"chmod"}, Action: specs.ActAllow})
			onto := []specs.LinuxIDMapping{{ContainerID: 1000, HostID: 100000, Size: 1}}
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/out", Type: "bind", Source: "/srv/out", Options: []string{"bind", "rw"}, UIDMappings: onto, GIDMappings: onto})
		}, req: strictReq, level: Strict},
		{name: "strict: real-time scheduling, a negative nice and real-time I/O", edit: func(s *specs.Spec) {
			s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedFIFO, Priority: 99, Nice: -20}
			s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_RT}
		}, req: strictReq, rules: []RuleID{RuleStrictPriority}, level: Strict,
			check: func(t *testing.T, d *Decision) {
				if got := d.Violations[0].Detail; !strings.Contains(got, "SCHED_FIFO") || !strings.Contains(got, "nice -20") || !strings.Contains(got, "IOPRIO_CLASS_RT") {
					t.Errorf("detail %q", got)
				}
			}},
		{name: "strict: RLIMIT_RTPRIO and RLIMIT_NICE that let the workload take them", edit: func(s *specs.Spec) {
			s.Process.Rlimits = append(s.Process.Rlimits, specs.POSIXRlimit{Type: "RLIMIT_RTPRIO", Hard: 99}, specs.POSIXRlimit{Type: "RLIMIT_NICE", Hard: 40, Soft: 0})
		}, req: strictReq, rules: []RuleID{RuleStrictPriority}, level: Strict},
		{name: "strict: RLIMIT_NICE 20 (nice 0 at best) passes", edit: func(s *specs.Spec) {
			s.Process.Rlimits = append(s.Process.Rlimits, specs.POSIXRlimit{Type: "RLIMIT_NICE", Hard: 20, Soft: 20}, specs.POSIXRlimit{Type: "RLIMIT_RTPRIO"})
		}, req: strictReq, level: Strict},
		{name: "strict: a batch policy, nice 10 and idle I/O pass", edit: func(s *specs.Spec) {
			s.Process.Scheduler = &specs.Scheduler{Policy: specs.SchedBatch, Nice: 10}
			s.Process.IOPriority = &specs.LinuxIOPriority{Class: specs.IOPRIO_CLASS_IDLE}
		}, req: strictReq, level: Strict},
		{name: "strict: sysfs read-write as host root", edit: func(s *specs.Spec) {
			for i := range s.Mounts {
				if s.Mounts[i].Type == "sysfs" {
					s.Mounts[i].Options = []string{"nosuid", "noexec", "nodev"}
				}
			}
		}, req: strictReq, rules: []RuleID{RuleStrictKernelWritable}, level: Strict},
		{name: "strict: a cgroup2 mount read-write as host root", edit: func(s *specs.Spec) {
			s.Mounts = slices.DeleteFunc(s.Mounts, func(m specs.Mount) bool { return m.Destination == "/sys/fs/cgroup" })
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/sys/fs/cgroup", Type: "cgroup2", Source: "cgroup", Options: []string{"rw", "nosuid"}})
		}, req: strictReq, rules: []RuleID{RuleStrictKernelWritable}, level: Strict},
		{name: "strict: a writable cgroup mount in a user namespace without host root passes (a nested runtime's)", edit: func(s *specs.Spec) {
			inUserns(s)
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "cgroup"})
			for i := range s.Mounts {
				if s.Mounts[i].Type == "cgroup" || s.Mounts[i].Type == "sysfs" {
					s.Mounts[i].Options = []string{"nosuid", "noexec", "nodev", "rw"}
				}
			}
		}, req: strictReq, level: Strict},
		{name: "strict: read-only /etc id-mapped onto the container's ids", edit: func(s *specs.Spec) {
			inUserns(s)
			onto := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 1}}
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/etc", Type: "bind", Source: "/etc", Options: []string{"bind", "ro"}, UIDMappings: onto, GIDMappings: onto})
		}, req: strictReq, rules: []RuleID{RuleStrictBindSource}, level: Strict},
		{name: "strict: only the shadow group id-mapped onto the container's", edit: func(s *specs.Spec) {
			inUserns(s)
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/etc", Type: "bind", Source: "/etc", Options: []string{"bind", "ro"},
				UIDMappings: []specs.LinuxIDMapping{{ContainerID: 0, HostID: 300000, Size: 65536}},
				GIDMappings: []specs.LinuxIDMapping{{ContainerID: 42, HostID: 165535, Size: 1}}})
		}, req: strictReq, rules: []RuleID{RuleStrictBindSource}, level: Strict},
		{name: "strict: read-only /etc with the idmap option (the container's own mappings)", edit: func(s *specs.Spec) {
			s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "user"})
			s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 1000, Size: 1}}
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/etc", Type: "bind", Source: "/etc", Options: []string{"rbind", "ro", "ridmap"}})
		}, req: strictReq, rules: []RuleID{RuleStrictBindSource}, level: Strict},
		{name: "strict: read-only /etc id-mapped to ids the container does not hold passes", edit: func(s *specs.Spec) {
			inUserns(s)
			away := []specs.LinuxIDMapping{{ContainerID: 0, HostID: 300000, Size: 65536}}
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/etc", Type: "bind", Source: "/etc", Options: []string{"bind", "ro"}, UIDMappings: away, GIDMappings: away})
		}, req: strictReq, level: Strict},
		{name: "strict: bind of / and of a socket", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/host", Type: "bind", Source: "/", Options: []string{"rbind"}},
				specs.Mount{Destination: "/d.sock", Type: "bind", Source: "/srv/d.sock", Options: []string{"bind"}})
		}, host: func(h *Host) { h.Sources = map[string]Source{"/srv/d.sock": {Real: "/srv/d.sock", Kind: SourceSocket}} },
			req: strictReq, rules: []RuleID{RuleStrictBindSource}, level: Strict,
			check: func(t *testing.T, d *Decision) {
				if got := d.Violations[0].Detail; !strings.Contains(got, "the host's root") || !strings.Contains(got, "unix socket") {
					t.Errorf("detail %q", got)
				}
			}},
		{name: "strict: a symlink to /proc is judged by where it leads", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/x", Type: "bind", Source: "/srv/link", Options: []string{"bind", "ro"}})
		}, host: func(h *Host) { h.Sources = map[string]Source{"/srv/link": {Real: "/proc/sys", Kind: SourceDir}} },
			req: strictReq, rules: []RuleID{RuleStrictBindSource}, level: Strict},
		{name: "strict: bundle hooks", edit: func(s *specs.Spec) {
			s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/bin/evil"}}, Poststart: []specs.Hook{{Path: "/usr/bin/vetto-runtime", Args: []string{"vetto-runtime", "hook", "poststart"}}}}
		}, req: strictReq, rules: []RuleID{RuleStrictHooks}, level: Strict},
		{name: "strict: an allowed hook passes", edit: func(s *specs.Spec) {
			s.Hooks = &specs.Hooks{CreateRuntime: []specs.Hook{{Path: "/usr/libexec/ok"}}}
		}, req: strictReq, floor: func(f *Floor) { f.Allow.Hooks = []string{"/usr/libexec/ok"} }, level: Strict},
		{name: "strict: masks smaller than runc's", edit: func(s *specs.Spec) { s.Linux.MaskedPaths = nil; s.Linux.ReadonlyPaths = nil },
			req: strictReq, rules: []RuleID{RuleStrictMasks, RuleStrictReadonly}, level: Strict},
		{name: "strict: AppArmor unconfined", edit: func(s *specs.Spec) { s.Process.ApparmorProfile = "unconfined" },
			host: func(h *Host) { h.AppArmor = true }, req: strictReq, rules: []RuleID{RuleStrictAppArmor}, level: Strict},
		{name: "strict: host sysctl", edit: func(s *specs.Spec) {
			s.Linux.Sysctl = map[string]string{"kernel.core_pattern": "|/x", "net.ipv4.ip_forward": "1"}
		}, req: strictReq, rules: []RuleID{RuleStrictSysctl}, level: Strict},
		{name: "strict: host sysctl, slash form", edit: func(s *specs.Spec) {
			s.Linux.Sysctl = map[string]string{"kernel/core_pattern": "|/x"}
		}, req: strictReq, rules: []RuleID{RuleStrictSysctl}, level: Strict},
		// sysctl.d(5)'s slash form of the container's own (libcontainer
		// reads it so): no host sysctl.
		{name: "strict: namespaced sysctls, slash form", edit: func(s *specs.Spec) {
			s.Linux.Sysctl = map[string]string{"net/ipv4/conf/eth0.100/rp_filter": "1", "kernel/shmmax": "1"}
		}, req: strictReq, level: Strict},
		// A bundle's credentials: the relay reads a secret of the host and
		// sends it where the bundle says.
		{name: "strict: a credential the bundle names", edit: withCredentials(`[{"host":"collector.attacker.test","header":"Authorization","file":"/etc/vetto/credentials/gh"}]`),
			req: strictReq, rules: []RuleID{RuleStrictCredentials}, level: Strict},
		{name: "strict: an allowed credential passes", edit: withCredentials(`[{"host":"API.example.test","header":"Authorization","file":"/etc/vetto/credentials/gh"}]`),
			req: strictReq, floor: func(f *Floor) { f.Allow.Credentials = []string{"api.example.test file /etc/vetto/credentials/gh"} }, level: Strict},
		{name: "strict: allowed for another host", edit: withCredentials(`[{"host":"collector.attacker.test","header":"Authorization","file":"/etc/vetto/credentials/gh"}]`),
			req: strictReq, floor: func(f *Floor) { f.Allow.Credentials = []string{"api.example.test file /etc/vetto/credentials/gh"} }, rules: []RuleID{RuleStrictCredentials}, level: Strict},
		{name: "strict: allowed from another source", edit: withCredentials(`[{"host":"api.example.test","header":"Authorization","env":"CI_JOB_TOKEN"}]`),
			req: strictReq, floor: func(f *Floor) { f.Allow.Credentials = []string{"api.example.test file /etc/vetto/credentials/gh"} }, rules: []RuleID{RuleStrictCredentials}, level: Strict},
		{name: "strict: an unreadable credential annotation", edit: withCredentials(`{"host":1}`),
			req: strictReq, rules: []RuleID{RuleStrictCredentials}, level: Strict},
		{name: "standard: credentials are the bundle's to name", edit: withCredentials(`[{"host":"api.example.test","header":"Authorization","env":"CI_JOB_TOKEN"}]`)},
		{name: "floor: forbid.credentials", edit: withCredentials(`[{"host":"api.example.test","header":"Authorization","env":"CI_JOB_TOKEN"}]`),
			floor: func(f *Floor) { f.Forbid.Credentials = true }, rules: []RuleID{RuleFloorCredentials}},
		{name: "floor: forbid.credentials, allow.credentials excepted", edit: withCredentials(`[{"host":"api.example.test","header":"Authorization","env":"CI_JOB_TOKEN"}]`),
			floor: func(f *Floor) {
				f.Forbid.Credentials = true
				f.Allow.Credentials = []string{"api.example.test env CI_JOB_TOKEN"}
			}},
		// Any other filesystem the runtime mounts as root reaches the host.
		{name: "strict: mounts of other filesystems", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts,
				specs.Mount{Destination: "/host", Type: "overlay", Source: "overlay", Options: []string{"lowerdir=/etc:/root"}},
				specs.Mount{Destination: "/disk", Type: "ext4", Source: "/dev/sda1"},
				specs.Mount{Destination: "/dev2", Type: "devtmpfs", Source: "devtmpfs"},
				specs.Mount{Destination: "/binfmt", Type: "binfmt_misc", Source: "binfmt_misc"},
				specs.Mount{Destination: "/dbg", Type: "debugfs", Source: "debugfs"})
		}, req: strictReq, rules: []RuleID{RuleStrictMountTypes}, level: Strict},
		{name: "strict: tmpfs, binds and the standard kernel mounts pass", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts,
				specs.Mount{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs"},
				specs.Mount{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue"},
				specs.Mount{Destination: "/data", Type: "none", Source: "/srv/data", Options: []string{"rbind", "ro"}})
		}, req: strictReq, level: Strict},
		{name: "other filesystems weaken the posture", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/t", Type: "tracefs", Source: "tracefs"})
		}, floor: func(f *Floor) { f.Forbid.Weakened = true }, rules: []RuleID{RuleFloorWeakened}},
		{name: "strict: a whole home directory, writable", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/h", Type: "bind", Source: "/home/dev", Options: []string{"rbind"}})
		}, req: strictReq, rules: []RuleID{RuleStrictBindSource}, level: Strict},
		{name: "strict: a project in a home directory, or a home read-only, pass", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts,
				specs.Mount{Destination: "/p", Type: "bind", Source: "/home/dev/src/app", Options: []string{"rbind"}},
				specs.Mount{Destination: "/h", Type: "bind", Source: "/home/dev", Options: []string{"rbind", "ro"}})
		}, req: strictReq, level: Strict},
		// The root filesystem is a mount like the others.
		{name: "strict: root.path the host's /usr, writable", edit: func(s *specs.Spec) { s.Root.Path, s.Root.Readonly = "/usr", false },
			req: strictReq, rules: []RuleID{RuleStrictRootfs}, level: Strict},
		{name: "strict: root.path the host's /etc, read-only as host root", edit: func(s *specs.Spec) { s.Root.Path = "/etc" },
			req: strictReq, rules: []RuleID{RuleStrictRootfs}, level: Strict},
		{name: "strict: root.path /", edit: func(s *specs.Spec) { s.Root.Path = "/" },
			req: strictReq, rules: []RuleID{RuleStrictRootfs}, level: Strict},
		{name: "strict: root.path resolved to the host's /root", edit: func(s *specs.Spec) { s.Root.Path = "/b/rootfs" },
			host: func(h *Host) { h.Rootfs = "/root" }, req: strictReq, rules: []RuleID{RuleStrictRootfs}, level: Strict},
		{name: "strict: a runtime's rootfs under its state passes", edit: func(s *specs.Spec) {
			s.Root.Path = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs"
		}, req: strictReq, level: Strict},
		{name: "a host system root weakens the posture", edit: func(s *specs.Spec) { s.Root.Path, s.Root.Readonly = "/usr", false },
			floor: func(f *Floor) { f.Forbid.Weakened = true }, rules: []RuleID{RuleFloorWeakened}},
		{name: "strict: a host network device moved in", edit: func(s *specs.Spec) {
			s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"eth0": {Name: "eth0"}}
		}, req: strictReq, rules: []RuleID{RuleStrictNetDevices}, level: Strict},
		{name: "a host network device weakens the posture", edit: func(s *specs.Spec) {
			s.Linux.NetDevices = map[string]specs.LinuxNetDevice{"eth1": {}}
		}, floor: func(f *Floor) { f.Forbid.Weakened = true }, rules: []RuleID{RuleFloorWeakened}},
		// A seccomp notify agent decides the calls it is sent, and may let
		// them run: strict's filter rules would not hold.
		{name: "strict: a seccomp agent for dangerous calls", edit: func(s *specs.Spec) {
			s.Linux.Seccomp.ListenerPath = "/run/agent.sock"
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"keyctl", "bpf"}, Action: specs.ActNotify})
		}, req: strictReq, rules: []RuleID{RuleStrictSeccompNotify}, level: Strict},
		{name: "strict: a notify default action", edit: func(s *specs.Spec) {
			s.Linux.Seccomp.DefaultAction = specs.ActNotify
			s.Linux.Seccomp.ListenerPath = "/run/agent.sock"
		}, req: strictReq, rules: []RuleID{RuleStrictSeccompDeny, RuleStrictSeccompNotify}, level: Strict},
		{name: "a seccomp agent weakens the posture", edit: func(s *specs.Spec) {
			s.Linux.Seccomp.ListenerPath = "/run/agent.sock"
			s.Linux.Seccomp.Syscalls = append(s.Linux.Seccomp.Syscalls, specs.LinuxSyscall{Names: []string{"mount"}, Action: specs.ActNotify})
		}, floor: func(f *Floor) { f.Forbid.Weakened = true }, rules: []RuleID{RuleFloorWeakened}},
		// unified writes any file of the container's cgroup directory.
		{name: "unified moves a host process into the container's cgroup", edit: func(s *specs.Spec) {
			s.Linux.Resources.Unified = map[string]string{"cgroup.procs": "1234", "memory.high": "max"}
		}, rules: []RuleID{RuleUnifiedInterface}},
		{name: "unified: every interface file", edit: func(s *specs.Spec) {
			s.Linux.Resources.Unified = map[string]string{"cgroup.threads": "1", "cgroup.kill": "1", "cgroup.freeze": "1", "cgroup.type": "threaded", "cgroup.subtree_control": "+memory"}
		}, rules: []RuleID{RuleUnifiedInterface}},
		{name: "unified resources and cgroup limits pass", edit: func(s *specs.Spec) {
			s.Linux.Resources.Unified = map[string]string{"memory.high": "max", "cgroup.max.descendants": "10", "io.weight": "100"}
		}},
		// cgroup v2's unified files decide over the typed limits.
		{name: "strict: limits removed through unified", edit: func(s *specs.Spec) {
			s.Linux.Resources.Unified = map[string]string{"memory.max": "max", "pids.max": "max"}
		}, req: strictReq, rules: []RuleID{RuleStrictMemory, RuleStrictPids}, level: Strict},
		{name: "strict: limits no machine reaches are none", edit: func(s *specs.Spec) {
			s.Linux.Resources.Memory.Limit = i64(9223372036854775807)
			s.Linux.Resources.Pids.Limit = i64(4194304)
		}, req: strictReq, rules: []RuleID{RuleStrictMemory, RuleStrictPids}, level: Strict},
		{name: "strict: limits just under the bounds are limits", edit: func(s *specs.Spec) {
			s.Linux.Resources.Memory.Limit = i64(1<<62 - 1)
			s.Linux.Resources.Pids.Limit = i64(4194303)
		}, req: strictReq, level: Strict},
		{name: "strict: a pids limit of 0 is pids.max 1", edit: func(s *specs.Spec) {
			s.Linux.Resources.Pids.Limit = i64(0)
		}, req: strictReq, level: Strict},
		{name: "strict: limits set through unified only", edit: func(s *specs.Spec) {
			s.Linux.Resources.Memory, s.Linux.Resources.Pids = nil, nil
			s.Linux.Resources.Unified = map[string]string{"memory.max": "256M", "pids.max": "64"}
		}, req: strictReq, level: Strict},
		{name: "strict lists every requirement", edit: func(s *specs.Spec) {
			s.Linux.Seccomp = nil
			s.Process.NoNewPrivileges = false
			s.Process.Capabilities.Bounding = append(s.Process.Capabilities.Bounding, "CAP_SETFCAP")
			s.Linux.Resources = nil
			s.Linux.Namespaces = s.Linux.Namespaces[:1]
		}, req: strictReq, rules: []RuleID{RuleStrictNamespaces, RuleStrictSeccomp, RuleStrictNoNewPrivs, RuleStrictCapabilities, RuleStrictMemory, RuleStrictPids}, level: Strict},

		// 21: the floor says each by name.
		{name: "realistic floor: unmask=ALL and a bind of /", edit: func(s *specs.Spec) {
			s.Linux.MaskedPaths, s.Linux.ReadonlyPaths = nil, nil
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/host", Type: "bind", Source: "/", Options: []string{"rbind"}})
		}, floor: func(f *Floor) {
			realistic(f)
			f.Require.DefaultMasks = true
			f.Allow.BindSources = []string{"/srv"}
		}, rules: []RuleID{RuleFloorBindSources, RuleFloorDefaultMasks}},
		{name: "floor: hooks, devices, kernel mounts, AppArmor, sysctls", edit: func(s *specs.Spec) {
			s.Hooks = &specs.Hooks{Poststop: []specs.Hook{{Path: "/bin/x"}}}
			s.Linux.Devices = []specs.LinuxDevice{{Path: "/dev/sda", Type: "b", Major: 8}}
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/sys2", Type: "sysfs", Source: "sysfs"})
			s.Process.ApparmorProfile = "unconfined"
			s.Linux.Sysctl = map[string]string{"vm.stat_interval": "1"}
		}, floor: func(f *Floor) {
			f.Forbid.Hooks, f.Forbid.Devices, f.Forbid.ExtraKernelMounts, f.Forbid.UnconfinedAppArmor, f.Forbid.HostSysctls = true, true, true, true, true
		}, rules: []RuleID{RuleFloorHooks, RuleFloorDevices, RuleFloorKernelMounts, RuleFloorAppArmor, RuleFloorSysctls}},
		{name: "realistic floor passes the engines' default capabilities", edit: func(s *specs.Spec) {
			s.Process.Capabilities.Bounding = []string{"CAP_CHOWN", "CAP_SETFCAP", "CAP_FSETID", "CAP_NET_RAW"}
		}, floor: realistic},
		{name: "realistic floor: privileged", edit: func(s *specs.Spec) {
			s.Process.Capabilities.Bounding = []string{"CAP_SYS_ADMIN", "CAP_SYS_PTRACE"}
		}, floor: realistic, rules: []RuleID{RuleFloorPrivileged, RuleFloorCapabilities}},
		{name: "floor forbids a weakened posture", edit: func(s *specs.Spec) { s.Linux.Namespaces = s.Linux.Namespaces[1:] },
			floor: func(f *Floor) { f.Forbid.Weakened = true }, rules: []RuleID{RuleFloorWeakened}},
		{name: "the bundle asks for an isolated posture", edit: func(s *specs.Spec) {
			s.Annotations[AnnotationPosture] = "isolated"
			s.Linux.Seccomp = nil
		}, rules: []RuleID{RulePostureAnnotated}},
		{name: "credentials weaken the posture", edit: withCredentials(`[{"host":"api.example.test","header":"Authorization","env":"CI_JOB_TOKEN"}]`),
			floor: func(f *Floor) { f.Forbid.Weakened = true }, rules: []RuleID{RuleFloorWeakened}},

		// An open file passed in keeps its access past the container's
		// mounts and namespaces.
		{name: "strict: a host directory passed in", edit: func(*specs.Spec) {},
			host: func(h *Host) {
				h.Passed = []hooks.PassedFD{{FD: 3, What: "a pipe", Channel: true}, {FD: 4, What: "the directory /srv"}}
			}, req: strictReq, rules: []RuleID{RuleStrictPassedFDs}, level: Strict},
		{name: "strict: data channels passed in", edit: func(*specs.Spec) {},
			host: func(h *Host) {
				h.Passed = []hooks.PassedFD{{FD: 3, What: "a pipe", Channel: true}, {FD: 4, What: "a listening unix socket", Channel: true}}
			}, req: strictReq, level: Strict},
		{name: "a host handle passed in weakens the posture", edit: func(*specs.Spec) {},
			host:  func(h *Host) { h.Passed = []hooks.PassedFD{{FD: 3, What: "a pidfd"}} },
			floor: func(f *Floor) { f.Forbid.Weakened = true }, rules: []RuleID{RuleFloorWeakened}},

		// A container cannot rewrite the runtime's record of it.
		{name: "a writable bind of the state root", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/mnt", Type: "bind", Source: "/srv/vetto/state", Options: []string{"bind", "rw"}})
		}, host: func(h *Host) { h.StateRoot, h.Evidence = "/srv/vetto/state", "/var/lib/vetto-runtime" },
			rules: []RuleID{RuleRuntimeStateWrite}},
		{name: "a writable bind above the state root, and one inside the evidence directory", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/mnt", Type: "bind", Source: "/srv", Options: []string{"rbind"}},
				specs.Mount{Destination: "/ev", Type: "bind", Source: "/srv/evidence/frozen", Options: []string{"bind", "rw"}})
		}, host: func(h *Host) { h.StateRoot, h.Evidence = "/srv/vetto/state", "/srv/evidence" },
			rules: []RuleID{RuleRuntimeStateWrite, RuleRuntimeStateWrite, RuleRuntimeStateWrite}},
		{name: "a read-only bind of the state root is not a write", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/mnt", Type: "bind", Source: "/srv/vetto", Options: []string{"bind", "ro"}})
		}, host: func(h *Host) { h.StateRoot = "/srv/vetto/state" }},
		{name: "a writable bind of the directory of the runtime's executable", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/t", Type: "bind", Source: "/opt/tools", Options: []string{"bind", "rw"}})
		}, host: func(h *Host) { h.Executable = "/opt/tools/vetto-runtime" },
			rules: []RuleID{RuleRuntimeStateWrite}},
		{name: "a writable bind of the directory of the symlink a client calls the runtime by", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/ci", Type: "bind", Source: "/opt/ci", Options: []string{"bind", "rw"}})
		}, host: func(h *Host) {
			h.Executable = "/usr/local/bin/vetto-runtime"
			h.ExecutableLinks = []HookFile{{What: "executable (through the symlink /opt/ci/bin/runc)", Real: "/opt/ci/bin/runc"}}
		}, rules: []RuleID{RuleRuntimeStateWrite}},
		{name: "a read-only bind of it is not a write", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/t", Type: "bind", Source: "/opt/tools", Options: []string{"bind", "ro"}})
		}, host: func(h *Host) { h.Executable = "/opt/tools/vetto-runtime" }},
		{name: "a writable bind of the operator config's directory (the file not there yet) and of the audit log", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/c", Type: "bind", Source: "/opt/ci/etc", Options: []string{"bind", "rw"}},
				specs.Mount{Destination: "/l", Type: "bind", Source: "/opt/ci/logs/audit.jsonl", Options: []string{"bind", "rw"}})
		}, host: func(h *Host) { h.Floor, h.AuditLog = "/opt/ci/etc/runtime.toml", "/opt/ci/logs/audit.jsonl" },
			rules: []RuleID{RuleRuntimeStateWrite, RuleRuntimeStateWrite}},
		{name: "a writable bind of the pid file's directory (the file not there yet)", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/r", Type: "bind", Source: "/srv/ci/run", Options: []string{"bind", "rw"}})
		}, host: func(h *Host) { h.PidFile = "/srv/ci/run/init.pid" },
			rules: []RuleID{RuleRuntimeStateWrite}},
		{name: "a writable bind of a symlink on the pid file's path", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/r", Type: "bind", Source: "/srv/ci/run", Options: []string{"bind", "rw"}})
		}, host: func(h *Host) {
			h.PidFile = "/srv/shim/init.pid"
			h.ExecutableLinks = []HookFile{{What: "pid file (through the symlink /srv/ci/run/ctr)", Real: "/srv/ci/run/ctr"}}
		}, rules: []RuleID{RuleRuntimeStateWrite}},
		{name: "a pid file beside a read-only bind is no write", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/r", Type: "bind", Source: "/srv/ci/run", Options: []string{"bind", "ro"}})
		}, host: func(h *Host) { h.PidFile = "/srv/ci/run/init.pid" }},
		{name: "a writable rootfs holding the state root", edit: func(s *specs.Spec) { s.Root.Readonly = false },
			host:  func(h *Host) { h.Rootfs, h.StateRoot = "/srv/box", "/srv/box/run/vetto" },
			rules: []RuleID{RuleRuntimeStateWrite}},
		{name: "-v /:/host says so in the posture, and is not refused again at standard", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/host", Type: "bind", Source: "/", Options: []string{"rbind"}})
		}, host: func(h *Host) { h.StateRoot = "/run/vetto-runtime" }},

		// 12: a bundle cannot rewrite itself.
		{name: "config.json under a writable bind (12.1)", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/work", Type: "bind", Source: "/home/u/proj", Options: []string{"bind", "rw"}})
		}, host: func(h *Host) {
			h.Config, h.Rootfs = "/home/u/proj/bundle/config.json", "/home/u/proj/bundle/rootfs"
			h.Sources = map[string]Source{"/home/u/proj": {Real: "/home/u/proj", Kind: SourceDir}}
		}, rules: []RuleID{RuleBundleSelfWrite, RuleBundleSelfWrite}},
		{name: "a read-only bind of the bundle's parent is fine", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/work", Type: "bind", Source: "/home/u/proj", Options: []string{"bind", "ro"}})
		}, host: func(h *Host) { h.Config = "/home/u/proj/bundle/config.json" }},

		// A container cannot rewrite what the runtime runs on the host.
		{name: "a hook's executable under a writable bind", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/hk", Type: "bind", Source: "/srv/hooks", Options: []string{"bind", "rw"}})
		}, host: func(h *Host) {
			h.HookFiles = []HookFile{{What: "poststop hook 0's executable", Real: "/srv/hooks/cleanup"}}
		}, rules: []RuleID{RuleHookWritable}},
		{name: "a hook's interpreter and script under a writable bind", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/data", Type: "bind", Source: "/srv/data", Options: []string{"rbind"}})
		}, host: func(h *Host) {
			h.HookFiles = []HookFile{{What: "a", Real: "/usr/bin/sh"}, {What: "b", Real: "/srv/data/bin/interp"}, {What: "c", Real: "/srv/data/cleanup.sh"}}
		}, rules: []RuleID{RuleHookWritable, RuleHookWritable}},
		{name: "a hook under a read-only bind runs", edit: func(s *specs.Spec) {
			s.Mounts = append(s.Mounts, specs.Mount{Destination: "/hk", Type: "bind", Source: "/srv/hooks", Options: []string{"bind", "ro"}})
		}, host: func(h *Host) {
			h.HookFiles = []HookFile{{What: "poststop hook 0's executable", Real: "/srv/hooks/cleanup"}}
		}},
		{name: "a hook in a writable root filesystem", edit: func(s *specs.Spec) { s.Root.Readonly = false },
			host: func(h *Host) {
				h.Rootfs = "/srv/box"
				h.HookFiles = []HookFile{{What: "poststart hook 0's executable", Real: "/srv/box/usr/bin/notify"}}
			}, rules: []RuleID{RuleHookWritable}},
		{name: "a hook in a read-only root filesystem runs", edit: func(*specs.Spec) {},
			host: func(h *Host) {
				h.Rootfs = "/srv/box"
				h.HookFiles = []HookFile{{What: "poststart hook 0's executable", Real: "/srv/box/usr/bin/notify"}}
			}},

		// 12.5: a mask covered by a later mount.
		{name: "a bind after a mask covers it (12.5)", edit: func(s *specs.Spec) {
			s.Annotations["dev.vetto.masked"] = `["/p/.env","/p/secrets"]`
			s.Mounts = append(s.Mounts,
				specs.Mount{Destination: "/p", Type: "bind", Source: "/home/u/p", Options: []string{"bind", "rw"}},
				specs.Mount{Destination: "/p/.env", Type: "bind", Source: "/dev/null", Options: []string{"bind", "ro"}},
				specs.Mount{Destination: "/p/secrets", Type: "tmpfs", Source: "tmpfs", Options: []string{"ro"}},
				specs.Mount{Destination: "/p", Type: "bind", Source: "/home/u/p", Options: []string{"bind", "rw"}})
		}, rules: []RuleID{RuleMasksCovered}},
		{name: "a bind inside a masked directory", edit: func(s *specs.Spec) {
			s.Annotations["dev.vetto.masked"] = `["/p/secrets"]`
			s.Mounts = append(s.Mounts,
				specs.Mount{Destination: "/p/secrets", Type: "tmpfs", Source: "tmpfs", Options: []string{"ro"}},
				specs.Mount{Destination: "/p/secrets/key", Type: "bind", Source: "/home/u/p/secrets/key", Options: []string{"bind", "ro"}})
		}, rules: []RuleID{RuleMasksCovered}},
		{name: "masks last hold", edit: func(s *specs.Spec) {
			s.Annotations["dev.vetto.masked"] = `["/p/.env","/proc/kcore"]`
			s.Mounts = append(s.Mounts,
				specs.Mount{Destination: "/p", Type: "bind", Source: "/home/u/p", Options: []string{"bind", "rw"}},
				specs.Mount{Destination: "/p/.env", Type: "bind", Source: "/dev/null", Options: []string{"bind", "ro"}})
		}},

		// Landlock.
		{name: "landlock exact", edit: withLandlock, level: Standard, check: func(t *testing.T, d *Decision) {
			if d.Landlock == "" {
				t.Error("no ruleset for the shim")
			}
		}},
		{name: "landlock missing rights refused at standard", edit: withLandlock, host: func(h *Host) { h.LandlockABI = 2 }, rules: []RuleID{RuleDegradeStandard}},
		{name: "landlock missing rights at strict", edit: withLandlock, req: strictReq, host: func(h *Host) { h.LandlockABI = 2 }, rules: []RuleID{RuleStrictNoDegradation}, level: Strict},
		{name: "landlock downgraded at degraded", edit: withLandlock, req: func(s *specs.Spec) Request { return Request{Spec: s, Level: Degraded, LevelSet: true} },
			host: func(h *Host) { h.LandlockABI = 2 }, level: levelDegraded, check: func(t *testing.T, d *Decision) {
				if d.Landlock == "" || !strings.Contains(d.DegradedStrings()[0], "truncate") {
					t.Errorf("landlock %q degraded %v", d.Landlock, d.Degraded)
				}
			}},
		{name: "landlock needs no_new_privs", edit: func(s *specs.Spec) { withLandlock(s); s.Process.NoNewPrivileges = false }, rules: []RuleID{RuleLandlockInput}},
		{name: "landlock probe fails", edit: withLandlock, host: func(h *Host) { h.LandlockErr = errors.New("EIO") }, rules: []RuleID{RuleLandlockProbe}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strictSpec()
			if tt.edit != nil {
				tt.edit(s)
			}
			req := Request{Spec: s}
			if tt.req != nil {
				req = tt.req(s)
			}
			host := goodHost
			if tt.host != nil {
				tt.host(&host)
			}
			var floor *Floor
			if tt.floor != nil {
				floor = mustFloor(t, tt.floor)
			}
			d := Evaluate(req, host, floor)
			var got []RuleID
			for _, v := range d.Violations {
				got = append(got, v.Rule)
			}
			if strings.Join(ids(got), ",") != strings.Join(ids(tt.rules), ",") {
				t.Fatalf("violations %v, want rules %v", d.Violations, tt.rules)
			}
			want := tt.level
			switch want {
			case 0:
				want = Standard
			case levelDegraded:
				want = Degraded
			}
			if d.Level != want {
				t.Errorf("level %s, want %s", d.Level, want)
			}
			for _, v := range d.Violations {
				if _, ok := RuleByID(v.Rule); !ok {
					t.Errorf("violation of rule %q, which the table does not have", v.Rule)
				}
				if !strings.Contains(v.String(), "["+string(v.Rule)+"]") {
					t.Errorf("violation %q does not name its rule", v)
				}
			}
			if tt.check != nil {
				tt.check(t, d)
			}
		})
	}
}

// levelDegraded stands for Degraded in the table, whose zero Level means
// "standard, the default".
const levelDegraded Level = -1

func ids(r []RuleID) []string {
	out := make([]string, len(r))
	for i, x := range r {
		out[i] = string(x)
	}
	return out
}

// What the policy compiler writes: every fs right up to ABI 5.
const compiledLandlock = `{"ruleset":{"handledAccessFS":65535},"rules":{"pathBeneath":[{"allowedAccess":13,"paths":["/"]},{"allowedAccess":65535,"paths":["/tmp"]}]}}`

func withLandlock(s *specs.Spec) { s.Annotations[AnnotationLandlock] = compiledLandlock }

// The worst kind decides the exit code: the floor over bad input over the
// level.
func TestWorst(t *testing.T) {
	vs := Violations{{Kind: KindLevel}, {Kind: KindInput}}
	if vs.Worst() != KindInput {
		t.Errorf("got %s, want input", vs.Worst())
	}
	vs = append(vs, Violation{Kind: KindFloor})
	if vs.Worst() != KindFloor {
		t.Errorf("got %s, want floor", vs.Worst())
	}
}

// Every rule ID is unique and has a demand and a remedy.
func TestRuleTable(t *testing.T) {
	seen := map[RuleID]bool{}
	for _, r := range Rules {
		if seen[r.ID] {
			t.Errorf("rule %s listed twice", r.ID)
		}
		seen[r.ID] = true
		if r.Demands == "" || r.Remedy == "" || r.Scope == "" {
			t.Errorf("rule %s: scope, demands and remedy must be set", r.ID)
		}
	}
}

func TestFloorValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Floor)
		want string
	}{
		{"bad level", func(f *Floor) { f.MinLevel = "max" }, "min_level"},
		{"bad capability", func(f *Floor) { f.Forbid.Capabilities = []string{"SYS_ADMIN"} }, "forbid.capabilities"},
		{"bad feature", func(f *Floor) { f.Forbid.Degradations = []string{"everything"} }, "forbid.degradations"},
		{"relative bind source", func(f *Floor) { f.Allow.BindSources = []string{"srv"} }, "allow.bind_sources"},
		{"credential without a source", func(f *Floor) { f.Allow.Credentials = []string{"api.example.test"} }, `allow.credentials: "api.example.test"`},
		{"credential of another kind", func(f *Floor) { f.Allow.Credentials = []string{"api.example.test url http://x"} }, "allow.credentials"},
		{"credential file relative", func(f *Floor) { f.Allow.Credentials = []string{"api.example.test file token"} }, "absolute, clean path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Floor{Path: "f.toml"}
			tt.edit(f)
			if err := f.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate: %v, want an error naming %s", err, tt.want)
			}
		})
	}
}

// inUserns gives s a user namespace whose root is host uid and gid 100000
// (65536 ids): host root unmapped.
func inUserns(s *specs.Spec) {
	s.Linux.Namespaces = append(s.Linux.Namespaces, specs.LinuxNamespace{Type: "user"})
	s.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: 100000, Size: 65536}}
	s.Linux.GIDMappings = s.Linux.UIDMappings
}
