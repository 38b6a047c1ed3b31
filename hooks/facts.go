package hooks

// ProcStatus is what /proc/<pid>/status says of a process's security state.
type ProcStatus struct {
	Seccomp    int // 0 off, 1 strict, 2 filter
	NoNewPrivs int
	CapInh     uint64
	CapPrm     uint64
	CapEff     uint64
	CapBnd     uint64
	CapAmb     uint64
}

// IDMapping is one line of /proc/<pid>/uid_map or gid_map.
type IDMapping struct {
	ContainerID, HostID, Size uint32
}

// Facts reads what the host knows of a live process. Every method reads the
// kernel's view (procfs, cgroupfs) from outside the container; nothing the
// container says of itself is consulted.
type Facts interface {
	NamespaceFacts
	Status(pid int) (ProcStatus, error)
	// IDMap reads "uid_map" or "gid_map" of pid.
	IDMap(pid int, which string) ([]IDMapping, error)
	// InCgroup reports whether pid is a member of the cgroup at dir.
	InCgroup(dir string, pid int) (bool, error)
	// CgroupFile reads one control file of the cgroup at dir.
	CgroupFile(dir, name string) (string, error)
	// CgroupHas reports whether the cgroup at dir has control file name.
	CgroupHas(dir, name string) (bool, error)
}

// CgroupKillFile is the cgroup v2 file that kills every process of a cgroup
// at once (Linux 5.14+).
const CgroupKillFile = "cgroup.kill"
