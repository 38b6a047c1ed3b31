package launch

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// Exec decides whether proc may run in a container whose own process is
// base: an exec'd process never gets more than the container's process —
// no capability outside each of its sets, not root when it is not, not
// without its no_new_privs, AppArmor profile or SELinux label, no higher
// rlimits, no cwd into /proc. runc lets `exec --cap` or a --process file
// grant any of these, which turns exec into an escalation.
//
// A proc with no capabilities gets base's (libcontainer would leave it the
// runtime's own): Exec sets them. base is the frozen spec's process, whose
// unset capabilities mean none.
func Exec(base, proc *specs.Process) Violations {
	var v violations
	if base == nil {
		base = &specs.Process{}
	}
	if proc.Capabilities == nil {
		c := specs.LinuxCapabilities{}
		if base.Capabilities != nil {
			c = *base.Capabilities
		}
		proc.Capabilities = &c
	}
	var bc specs.LinuxCapabilities
	if base.Capabilities != nil {
		bc = *base.Capabilities
	}
	pc := proc.Capabilities
	var extra []string
	for _, set := range []struct {
		name      string
		have, got []string
	}{
		{"bounding", bc.Bounding, pc.Bounding}, {"effective", bc.Effective, pc.Effective},
		{"permitted", bc.Permitted, pc.Permitted}, {"inheritable", bc.Inheritable, pc.Inheritable},
		{"ambient", bc.Ambient, pc.Ambient},
	} {
		have := map[string]bool{}
		for _, c := range set.have {
			have[strings.ToUpper(c)] = true
		}
		for _, c := range set.got {
			if !have[strings.ToUpper(c)] {
				extra = append(extra, strings.ToUpper(c)+" ("+set.name+")")
			}
		}
	}
	if len(extra) > 0 {
		v.add(RuleExecCapabilities, "capabilities the container's process does not have: %s", strings.Join(extra, ", "))
	}
	if base.NoNewPrivileges && !proc.NoNewPrivileges {
		v.add(RuleExecNoNewPrivs, "the container runs with no_new_privs; an exec'd process cannot drop it")
	}
	if base.User.UID != 0 && proc.User.UID == 0 {
		v.add(RuleExecUser, "uid 0, but the container's process runs as uid %d", base.User.UID)
	}
	baseRootGroup := base.User.GID == 0 || slices.Contains(base.User.AdditionalGids, 0)
	if !baseRootGroup && (proc.User.GID == 0 || slices.Contains(proc.User.AdditionalGids, 0)) {
		v.add(RuleExecUser, "gid 0, but the container's process is not in group 0")
	}
	if base.ApparmorProfile != "" && proc.ApparmorProfile != base.ApparmorProfile {
		v.add(RuleExecAppArmor, "AppArmor profile %q, but the container's process runs under %q", proc.ApparmorProfile, base.ApparmorProfile)
	}
	if base.SelinuxLabel != "" && proc.SelinuxLabel != base.SelinuxLabel {
		v.add(RuleExecSELinux, "SELinux label %q, but the container's process has %q", proc.SelinuxLabel, base.SelinuxLabel)
	}
	for _, rl := range proc.Rlimits {
		i := slices.IndexFunc(base.Rlimits, func(b specs.POSIXRlimit) bool { return b.Type == rl.Type })
		switch {
		case i < 0:
			v.add(RuleExecRlimits, "%s, which the container's process does not set", rl.Type)
		case rl.Hard > base.Rlimits[i].Hard || rl.Soft > base.Rlimits[i].Soft:
			v.add(RuleExecRlimits, "%s %d/%d above the container's %d/%d", rl.Type, rl.Soft, rl.Hard, base.Rlimits[i].Soft, base.Rlimits[i].Hard)
		}
	}
	if proc.OOMScoreAdj != nil && (base.OOMScoreAdj == nil || *proc.OOMScoreAdj < *base.OOMScoreAdj) {
		v.add(RuleExecRlimits, "oomScoreAdj %d below the container's %s", *proc.OOMScoreAdj, optInt(base.OOMScoreAdj))
	}
	if proc.Scheduler != nil && (base.Scheduler == nil || !reflect.DeepEqual(*proc.Scheduler, *base.Scheduler)) {
		v.add(RuleExecRlimits, "a scheduler policy (%s) the container's process does not have", proc.Scheduler.Policy)
	}
	if proc.IOPriority != nil && (base.IOPriority == nil || *proc.IOPriority != *base.IOPriority) {
		v.add(RuleExecRlimits, "an I/O priority (%s %d) the container's process does not have", proc.IOPriority.Class, proc.IOPriority.Priority)
	}
	switch c := proc.Cwd; {
	case !path.IsAbs(c) || path.Clean(c) != c:
		v.add(RuleExecCwd, "cwd %q is not an absolute, clean path", c)
	case under(c, []string{"/proc", "/sys"}):
		v.add(RuleExecCwd, "cwd %q is inside the kernel's filesystems (CVE-2024-21626's class)", c)
	}
	return v.list
}

func optInt(p *int) string {
	if p == nil {
		return "(unset)"
	}
	return fmt.Sprint(*p)
}

// ExecPidFile refuses exec's --pid-file where the container of s could
// write it: the exec'd process runs before the client reads the file, so
// such a container writes the pid the client then signals, waits for and
// kills (bundle.runtime-state-writable, as create's pid file). links are
// the symlinks on the file's path, sources the facts of s's bind sources,
// rootfs the container's root filesystem, symlinks resolved.
func ExecPidFile(s *specs.Spec, pidFile string, links []HookFile, sources map[string]Source, rootfs string) Violations {
	var v violations
	selfWritable(s, Host{PidFile: pidFile, ExecutableLinks: links, Sources: sources, Rootfs: rootfs}, &v)
	return v.list
}

// ExecPassed judges the files an exec passes in besides stdio
// (--preserve-fds) as create judges its own: in a container launched at
// strict one that reaches the host is refused (RuleStrictPassedFDs);
// below strict it is allowed, and the returned note names it for the
// audit log and the caller.
func ExecPassed(level Level, passed []hooks.PassedFD) (Violations, string) {
	handles := hooks.HostHandles(passed)
	if len(handles) == 0 {
		return nil, ""
	}
	what := strings.Join(handles, ", ")
	if level == Strict {
		var v violations
		v.add(RuleStrictPassedFDs, "files passed in that reach the host: %s", what)
		return v.list, ""
	}
	return nil, "host objects passed in: " + what
}
