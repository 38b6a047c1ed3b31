package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"github.com/opencontainers/runc/libcontainer/seccomp"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/landlock"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// Kernel constants x/sys/unix does not name.
const (
	landlockCreateRulesetVersion = 1 << 0
	seccompGetActionAvail        = 2
	seccompRetKillProcess        = 0x80000000
	seccompRetUserNotif          = 0x7fc00000
)

// Doctor probes this host afresh: nothing is cached between calls.
func (b *Backend) Doctor() *runtime.Diagnosis {
	var probes []runtime.Probe
	add := func(name string, st runtime.Support, detail string) {
		probes = append(probes, runtime.Probe{Name: name, Status: st, Detail: detail})
	}
	add(probeLandlock())
	add(probeSeccomp("seccomp-filter", seccompRetKillProcess))
	add(probeSeccomp("seccomp-notify", seccompRetUserNotif))
	if seccomp.Enabled {
		major, minor, patch := seccomp.Version()
		add("libseccomp", runtime.Supported, fmt.Sprintf("built with libseccomp %d.%d.%d", major, minor, patch))
	} else {
		add("libseccomp", runtime.Unsupported, "this binary was built without the seccomp tag")
	}
	for _, ns := range []string{"pid", "mnt", "net", "ipc", "uts", "user", "cgroup", "time"} {
		if _, err := os.Stat("/proc/self/ns/" + ns); err == nil {
			add("namespace/"+ns, runtime.Supported, "")
		} else if errors.Is(err, os.ErrNotExist) {
			add("namespace/"+ns, runtime.Unsupported, "kernel has no "+ns+" namespace")
		} else {
			add("namespace/"+ns, runtime.Unknown, err.Error())
		}
	}
	add(probeUserns())
	mode, v2dir := cgroupMode()
	add("cgroup-mode", runtime.Supported, mode)
	add(probeCgroupKill(v2dir))
	add(probeController("cgroup/memory", "memory", mode, v2dir))
	add(probeController("cgroup/pids", "pids", mode, v2dir))
	add(probePidfd())

	strict := []string{"namespace/pid", "namespace/mnt", "namespace/net", "namespace/ipc", "namespace/uts",
		"seccomp-filter", "libseccomp", "cgroup.kill", "cgroup/memory", "cgroup/pids"}
	standard := []string{"namespace/pid", "namespace/mnt", "namespace/net", "namespace/ipc", "namespace/uts"}
	if rootlessCgroups() {
		// Without root: the namespaces must really be this user's to make,
		// and a cgroup delegated for limits and cgroup.kill (otherwise a
		// run is refused unless it accepts both as degradations).
		probes = append(probes, b.rootlessProbes()...)
		strict = append(strict, "userns-probe", "cgroup-delegation")
		standard = append(standard, "userns-probe", "cgroup-delegation")
	}
	levels := runtime.LevelsFrom(probes, strict, standard)
	tier := "partial"
	if levels[0].OK {
		tier = "full"
	}
	return &runtime.Diagnosis{Backend: b.Name(), Tier: tier, Probes: probes, Levels: levels, Note: runtime.DiagnosisNote}
}

func probeLandlock() (string, runtime.Support, string) {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, landlockCreateRulesetVersion)
	switch errno {
	case 0:
		return "landlock", runtime.Supported, fmt.Sprintf("ABI %d (%s)", abi, landlockCoverage(int(abi)))
	case unix.ENOSYS:
		return "landlock", runtime.Unsupported, "kernel without Landlock"
	case unix.EOPNOTSUPP:
		return "landlock", runtime.Unsupported, "Landlock disabled at boot (lsm=)"
	}
	return "landlock", runtime.Unknown, errno.Error()
}

func probeSeccomp(name string, action uint32) (string, runtime.Support, string) {
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, seccompGetActionAvail, 0, uintptr(unsafe.Pointer(&action)))
	switch errno {
	case 0:
		return name, runtime.Supported, ""
	case unix.EOPNOTSUPP, unix.ENOSYS:
		return name, runtime.Unsupported, errno.Error()
	}
	return name, runtime.Unknown, errno.Error()
}

func probeUserns() (string, runtime.Support, string) {
	data, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil {
		return "user-namespaces", runtime.Unknown, err.Error()
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return "user-namespaces", runtime.Unknown, err.Error()
	}
	if n == 0 {
		return "user-namespaces", runtime.Unsupported, "max_user_namespaces is 0"
	}
	return "user-namespaces", runtime.Supported, "max " + strconv.Itoa(n)
}

// cgroupMode tells v1, v2 or hybrid, and where the v2 hierarchy is.
func cgroupMode() (string, string) {
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return "v2", "/sys/fs/cgroup"
	}
	if err := unix.Statfs("/sys/fs/cgroup/unified", &st); err == nil && st.Type == unix.CGROUP2_SUPER_MAGIC {
		return "hybrid", "/sys/fs/cgroup/unified"
	}
	return "v1", ""
}

// probeCgroupKill makes a throwaway child cgroup (cgroup.kill exists only
// below the root) and looks for the file.
func probeCgroupKill(v2dir string) (string, runtime.Support, string) {
	if v2dir == "" {
		return "cgroup.kill", runtime.Unsupported, "no cgroup v2 hierarchy"
	}
	if own := ownCgroup(v2dir); own != v2dir && own != "" {
		// Any cgroup below the root has the file; this process's own is
		// one a user without root can look at.
		if _, err := os.Stat(filepath.Join(own, "cgroup.kill")); err == nil {
			return "cgroup.kill", runtime.Supported, v2dir
		}
	}
	dir := filepath.Join(v2dir, "vetto-doctor-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "cgroup.kill", runtime.Unknown, "cannot create a probe cgroup: " + err.Error()
	}
	defer os.Remove(dir)
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		return "cgroup.kill", runtime.Unsupported, "kernel without cgroup.kill (< 5.14)"
	}
	return "cgroup.kill", runtime.Supported, v2dir
}

func probeController(name, ctrl, mode, v2dir string) (string, runtime.Support, string) {
	if mode != "v2" {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", ctrl, "cgroup.procs")); err == nil {
			return name, runtime.Supported, "cgroup v1 " + ctrl
		}
	}
	if v2dir != "" {
		data, err := os.ReadFile(filepath.Join(v2dir, "cgroup.controllers"))
		if err == nil && strings.Contains(" "+strings.TrimSpace(string(data))+" ", " "+ctrl+" ") {
			return name, runtime.Supported, "cgroup v2 " + ctrl
		}
	}
	return name, runtime.Unsupported, "no " + ctrl + " controller"
}

func probePidfd() (string, runtime.Support, string) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) {
			return "pidfd", runtime.Unsupported, "kernel < 5.3"
		}
		return "pidfd", runtime.Unknown, err.Error()
	}
	unix.Close(fd)
	return "pidfd", runtime.Supported, ""
}

// landlockCoverage says which access rights the host's ABI enforces and
// which it lacks (docs/landlock.md has the matrix).
func landlockCoverage(abi int) string {
	everything := &landlock.Ruleset{Ruleset: landlock.Supported(landlock.KnownABI)}
	if missing := everything.Unsupported(abi); len(missing) > 0 {
		return "lacks " + landlock.Describe(missing)
	}
	return "every right this build knows"
}

// ownCgroup is this process's cgroup in the v2 hierarchy at v2dir.
func ownCgroup(v2dir string) string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return filepath.Join(v2dir, rest)
		}
	}
	return ""
}
