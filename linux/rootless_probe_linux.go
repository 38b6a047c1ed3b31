package linux

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// UsernsProbeArg is the hidden subcommand the userns probe re-executes the
// runtime as, inside the namespaces it made (main dispatches it).
const UsernsProbeArg = "userns-probe"

// AppArmorUsernsSysctl is Ubuntu's (24.04 on) restriction: unprivileged
// processes may create a user namespace but get no capabilities in it
// unless an AppArmor profile allows it, so writing its uid map fails.
const AppArmorUsernsSysctl = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"

// UsernsProbeMain is the probe's child: in a new user and network
// namespace (made, and mapped, by the parent's clone), it brings the
// loopback up as a container's init would. It prints the step that failed
// and returns 1, or returns 0.
func UsernsProbeMain() int {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bring lo up: socket: %v\n", err)
		return 1
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		fmt.Fprintf(os.Stderr, "bring lo up: %v\n", err)
		return 1
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		fmt.Fprintf(os.Stderr, "bring lo up: SIOCGIFFLAGS: %v\n", err)
		return 1
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		fmt.Fprintf(os.Stderr, "bring lo up: SIOCSIFFLAGS: %v\n", err)
		return 1
	}
	return 0
}

// probeUsernsSteps creates, as this user, what a rootless container needs —
// a user namespace, its uid and gid maps, a network namespace in it, the
// loopback up — one step at a time, and names the first that fails.
func probeUsernsSteps() (runtime.Support, string) {
	self, err := os.Executable()
	if err != nil {
		return runtime.Unknown, "cannot find this binary: " + err.Error()
	}
	uid, gid := os.Geteuid(), os.Getegid()
	maps := func(a *syscall.SysProcAttr) {
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	steps := []struct {
		name string
		attr func() *syscall.SysProcAttr
		arg  string
	}{
		{"create a user namespace", func() *syscall.SysProcAttr {
			return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		}, "noop"},
		{"write its uid and gid maps", func() *syscall.SysProcAttr {
			a := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
			maps(a)
			if faultUsernsMaps() {
				// The fault build's stand-in for AppArmor's restriction:
				// a map the kernel refuses (an id that is not ours) at
				// the step the restriction fails.
				a.UidMappings[0].HostID = uid + 1
			}
			return a
		}, "noop"},
		{"create a network namespace in it", func() *syscall.SysProcAttr {
			a := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET}
			maps(a)
			return a
		}, "noop"},
		{"bring its loopback up", func() *syscall.SysProcAttr {
			a := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET}
			maps(a)
			return a
		}, "lo"},
	}
	for _, s := range steps {
		cmd := exec.Command(self, UsernsProbeArg, s.arg)
		cmd.SysProcAttr = s.attr()
		cmd.Env = []string{}
		out, err := cmd.CombinedOutput()
		if err != nil {
			why := strings.TrimSpace(string(out))
			if why == "" {
				why = err.Error()
			}
			return runtime.Unsupported, fmt.Sprintf("cannot %s: %s%s", s.name, why, appArmorHint())
		}
	}
	return runtime.Supported, "user and network namespace created, mapped, loopback up"
}

// appArmorRestricts reads AppArmor's restriction of unprivileged user
// namespaces (the fault build can pretend it is on).
func appArmorRestricts() bool {
	if faultUsernsMaps() {
		return true
	}
	data, err := os.ReadFile(AppArmorUsernsSysctl)
	return err == nil && strings.TrimSpace(string(data)) == "1"
}

// usernsFacts are the host's facts about user namespaces for a user.
type usernsFacts struct {
	// MaxUserNS is user.max_user_namespaces, Clone Debian's
	// kernel.unprivileged_userns_clone ("" where the kernel has none).
	MaxUserNS, Clone string
	// AppArmor: kernel.apparmor_restrict_unprivileged_userns is 1.
	AppArmor bool
	// Probe makes the namespaces step by step (probeUsernsSteps).
	Probe func() (runtime.Support, string)
}

// usernsRefusal says why a container's user namespace cannot be made for
// this user, "" when it can: the cheap facts first, the probe only where
// one says it may fail (AppArmor's restriction lets the namespace be made
// and refuses its map later).
func usernsRefusal(f usernsFacts) string {
	switch {
	case strings.TrimSpace(f.MaxUserNS) == "0":
		return "user.max_user_namespaces is 0: no user namespace can be created (sysctl user.max_user_namespaces=N)"
	case strings.TrimSpace(f.Clone) == "0":
		return "kernel.unprivileged_userns_clone is 0: unprivileged user namespaces are off (sysctl kernel.unprivileged_userns_clone=1)"
	case f.AppArmor:
		if st, detail := f.Probe(); st != runtime.Supported {
			return detail
		}
	}
	return ""
}

// UsernsRefusal is usernsRefusal of this host, for a rootless launch that
// needs a user namespace of its own.
func (*Backend) UsernsRefusal() string {
	read := func(path string) string {
		data, _ := os.ReadFile(path)
		return string(data)
	}
	return usernsRefusal(usernsFacts{
		MaxUserNS: read("/proc/sys/user/max_user_namespaces"),
		Clone:     read("/proc/sys/kernel/unprivileged_userns_clone"),
		AppArmor:  appArmorRestricts(),
		Probe:     probeUsernsSteps,
	})
}

// appArmorHint is the remedy when AppArmor's restriction is on: the
// profile the package ships for this binary, never the restriction off.
func appArmorHint() string {
	if appArmorRestricts() {
		return "; AppArmor restricts unprivileged user namespaces here (" + AppArmorUsernsSysctl + " = 1): install the profile for this binary, packaging/apparmor/vetto-runtime (docs/rootless.md), rather than turning the restriction off"
	}
	return ""
}

// rootlessProbes are doctor's facts about running without root: who, the
// namespaces a container needs (really made, step by step), the id
// mappers and subordinate ranges, and whether a cgroup is delegated.
func (b *Backend) rootlessProbes() []runtime.Probe {
	var out []runtime.Probe
	add := func(name string, st runtime.Support, detail string) {
		out = append(out, runtime.Probe{Name: name, Status: st, Detail: detail})
	}
	who := "uid " + strconv.Itoa(os.Geteuid())
	if runtime.InUserNamespace() {
		who += " in a user namespace"
	}
	add("rootless", runtime.Supported, who+": containers run in a user namespace of yours")
	if data, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(data)) == "0" {
		add("userns-clone", runtime.Unsupported, "kernel.unprivileged_userns_clone = 0 (Debian): unprivileged user namespaces are off")
	}
	st, detail := probeUsernsSteps()
	add("userns-probe", st, detail)
	for _, name := range []string{"newuidmap", "newgidmap"} {
		if path, err := systemIDMapper(name); err == nil {
			add(name, runtime.Supported, path)
		} else {
			add(name, runtime.Unsupported, err.Error()+": only single-id maps (policy bundles need no more)")
		}
	}
	for _, file := range []string{"/etc/subuid", "/etc/subgid"} {
		if r := subordinateRange(file); r != "" {
			add(file, runtime.Supported, r)
		} else {
			add(file, runtime.Unsupported, "no range for this user: only single-id maps")
		}
	}
	access := b.Cgroups(&specs.Spec{Linux: &specs.Linux{CgroupsPath: runtime.DefaultCgroupParent + "/doctor"}}, "doctor", false)
	switch bus := userBus(); {
	case bus != "":
		add("cgroup-delegation", runtime.Supported, "systemd user manager at "+bus+": run with --systemd-cgroup for a delegated cgroup (limits, cgroup.kill)")
	case access.Unusable == "":
		add("cgroup-delegation", runtime.Supported, "the cgroupfs paths are writable by this user")
	default:
		add("cgroup-delegation", runtime.Unsupported, access.Unusable+": a run needs --allow-degraded=cgroup-kill,limits (no limits; teardown through the pid namespace)")
	}
	return out
}

// systemIDMapper finds newuidmap/newgidmap in the system's directories,
// never through PATH (libcontainer is patched to the same rule).
func systemIDMapper(name string) (string, error) {
	for _, dir := range []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"} {
		path := dir + "/" + name
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			return path, nil
		}
	}
	return "", errors.New(name + " not in /usr/bin, /bin, /usr/sbin or /sbin (the uidmap package)")
}

// subordinateRange is this user's first range in file, "start+count".
func subordinateRange(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	keys := []string{strconv.Itoa(os.Geteuid())}
	if u, err := user.LookupId(keys[0]); err == nil {
		keys = append(keys, u.Username)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ":")
		if len(parts) != 3 {
			continue
		}
		for _, k := range keys {
			if parts[0] == k {
				return parts[1] + "+" + parts[2]
			}
		}
	}
	return ""
}
