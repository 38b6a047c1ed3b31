package hooks

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// procNames maps OCI namespace types to their /proc/<pid>/ns entries.
var procNames = map[specs.LinuxNamespaceType]string{
	specs.PIDNamespace: "pid", specs.NetworkNamespace: "net", specs.MountNamespace: "mnt",
	specs.IPCNamespace: "ipc", specs.UTSNamespace: "uts", specs.UserNamespace: "user",
	specs.CgroupNamespace: "cgroup", specs.TimeNamespace: "time",
}

// ProcNamespaces reads namespace facts from the host's /proc.
type ProcNamespaces struct{}

func (ProcNamespaces) Of(pid int, t specs.LinuxNamespaceType) (NamespaceID, error) {
	name, ok := procNames[t]
	if !ok {
		return NamespaceID{}, fmt.Errorf("unknown namespace type %q", t)
	}
	return statNS("/proc/" + strconv.Itoa(pid) + "/ns/" + name)
}

// Host reads the namespace of the thread we run on, not /proc/<our pid>:
// the latter shows the main thread, and libcontainer joins the container's
// mount namespace from a locked goroutine it lets exit, which — when it ran
// on the main thread — Go parks there for good. /proc/<pid>/ns/mnt then
// names the *container's* namespace and a "differs from host" check would
// compare the container with itself. Locked to this thread, nothing else
// can have moved it.
func (ProcNamespaces) Host(t specs.LinuxNamespaceType) (NamespaceID, error) {
	name, ok := procNames[t]
	if !ok {
		return NamespaceID{}, fmt.Errorf("unknown namespace type %q", t)
	}
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	return statNS("/proc/thread-self/ns/" + name)
}

func (ProcNamespaces) Path(path string) (NamespaceID, error) { return statNS(path) }

func statNS(path string) (NamespaceID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return NamespaceID{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return NamespaceID{Dev: uint64(st.Dev), Ino: st.Ino}, nil //nolint:unconvert // Dev is uint32 on some arches
}

// ProcFacts reads every pre-launch fact from the host's /proc and cgroupfs.
type ProcFacts struct{ ProcNamespaces }

var _ Facts = ProcFacts{}

func (ProcFacts) Status(pid int) (ProcStatus, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	data, err := os.ReadFile(path)
	if err != nil {
		return ProcStatus{}, err
	}
	return parseStatus(string(data))
}

func (ProcFacts) IDMap(pid int, which string) ([]IDMapping, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + which)
	if err != nil {
		return nil, err
	}
	return parseIDMap(string(data))
}

func (ProcFacts) InCgroup(dir string, pid int) (bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return false, err
	}
	want := strconv.Itoa(pid)
	for _, line := range strings.Fields(string(data)) {
		if line == want {
			return true, nil
		}
	}
	return false, nil
}

func (ProcFacts) CgroupFile(dir, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

func (ProcFacts) CgroupHas(dir, name string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, name))
	if err == nil {
		return true, nil
	}
	if os.IsNotExist(err) {
		return false, nil
	}
	return false, err
}
