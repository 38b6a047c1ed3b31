package hooks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks/canary"
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
	data, err := ReadKernelFile(path)
	if err != nil {
		return ProcStatus{}, err
	}
	return parseStatus(string(data))
}

func (ProcFacts) IDMap(pid int, which string) ([]IDMapping, error) {
	data, err := ReadKernelFile("/proc/" + strconv.Itoa(pid) + "/" + which)
	if err != nil {
		return nil, err
	}
	return parseIDMap(string(data))
}

func (ProcFacts) InCgroup(dir string, pid int) (bool, error) {
	data, err := ReadKernelFile(filepath.Join(dir, "cgroup.procs"))
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
	data, err := ReadKernelFile(filepath.Join(dir, name))
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

var _ PostFacts = ProcFacts{}

func (ProcFacts) ProcStat(pid int) (ProcState, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	data, err := ReadKernelFile(path)
	if err != nil {
		return ProcState{}, err
	}
	st, err := parseStat(string(data))
	if err != nil {
		return ProcState{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

func (ProcFacts) Mounts(pid int) ([]Mount, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/mountinfo"
	data, err := ReadKernelFile(path)
	if err != nil {
		return nil, err
	}
	ms, err := parseMountinfo(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ms, nil
}

// inRoot opens dir as pid sees it: resolved inside the process's root, so
// a symlink the container planted cannot lead the host out of it.
func inRoot(pid int, dir string) (int, error) {
	rfd, err := openProcRoot(pid)
	if err != nil {
		return -1, err
	}
	defer unix.Close(rfd)
	return inRootAt(rfd, pid, dir)
}

// openProcRoot opens /proc/<pid>/root, the root pid sees.
func openProcRoot(pid int) (int, error) {
	root := "/proc/" + strconv.Itoa(pid) + "/root"
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", root, err)
	}
	return rfd, nil
}

// inRootAt is inRoot with pid's root open at rfd.
func inRootAt(rfd, pid int, dir string) (int, error) {
	fd, err := unix.Openat2(rfd, dir, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return -1, fmt.Errorf("open %s in the root of pid %d: %w", dir, pid, err)
	}
	return fd, nil
}

func (ProcFacts) Exists(pid int, path string) (bool, error) {
	dfd, err := inRoot(pid, filepath.Dir(path))
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return false, nil
		}
		return false, err
	}
	defer unix.Close(dfd)
	if path == "/" {
		return true, nil
	}
	var st unix.Stat_t
	err = unix.Fstatat(dfd, filepath.Base(path), &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, unix.ENOENT):
		return false, nil
	}
	return false, fmt.Errorf("stat %s in the root of pid %d: %w", path, pid, err)
}

// LookPath is Exists and NullDevice of one path in one look: the
// directory opened in pid's root once, one stat of the last component.
func (ProcFacts) LookPath(pid int, path string) (exists, null bool, err error) {
	rfd, err := openProcRoot(pid)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return false, false, nil
		}
		return false, false, err
	}
	defer unix.Close(rfd)
	return lookPathAt(rfd, pid, path)
}

// lookPathAt is LookPath with pid's root open at rfd.
func lookPathAt(rfd, pid int, path string) (exists, null bool, err error) {
	dfd, err := inRootAt(rfd, pid, filepath.Dir(path))
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return false, false, nil
		}
		return false, false, err
	}
	defer unix.Close(dfd)
	if path == "/" {
		return true, false, nil
	}
	var st unix.Stat_t
	err = unix.Fstatat(dfd, filepath.Base(path), &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case err == nil:
		return true, isNullDevice(&st), nil
	case errors.Is(err, unix.ENOENT):
		return false, false, nil
	}
	return false, false, fmt.Errorf("stat %s in the root of pid %d: %w", path, pid, err)
}

func isNullDevice(st *unix.Stat_t) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == unix.Mkdev(1, 3)
}

func (ProcFacts) NullDevice(pid int, path string) (bool, error) {
	dfd, err := inRoot(pid, filepath.Dir(path))
	if err != nil {
		return false, err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, filepath.Base(path), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, err
	}
	return isNullDevice(&st), nil
}

// removeInContainer removes the file at path as pid sees it (the canary
// file a probe created).
func removeInContainer(pid int, path string) error {
	dfd, err := inRoot(pid, filepath.Dir(path))
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Unlinkat(dfd, filepath.Base(path), 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove %s in the root of pid %d: %w", path, pid, err)
	}
	return nil
}

func (ProcFacts) FileDigest(root, path string) (string, int, error) {
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", 0, fmt.Errorf("open %s: %w", root, err)
	}
	defer unix.Close(rfd)
	return fileDigestAt(rfd, root, path)
}

// fileDigestAt is FileDigest with root open at rfd.
func fileDigestAt(rfd int, root, path string) (string, int, error) {
	// O_PATH first: the rootfs is the bundle's, and a device node there
	// (a c 5 1 planted at /proc/kcore, a watchdog) must never be opened by
	// the host, as root, before its type is known.
	pfd, err := unix.Openat2(rfd, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return "", 0, fmt.Errorf("open %s under %s: %w", path, root, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return "", 0, fmt.Errorf("stat %s under %s: %w", path, root, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", 0, fmt.Errorf("%s under %s: not a regular file", path, root)
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", 0, fmt.Errorf("open %s under %s: %w", path, root, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(root, path))
	defer f.Close()
	buf := make([]byte, canary.MaxRead)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", 0, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return canary.Digest(buf[:n]), n, nil
}

func (ProcFacts) CgroupProcs(dir string) ([]int, error) {
	data, err := ReadKernelFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s/cgroup.procs: %q: %w", dir, f, err)
		}
		out = append(out, pid)
	}
	return out, nil
}

func (ProcFacts) PidsInNamespace(ns NamespaceID) ([]int, error) {
	return PidsInNamespace(ns)
}

// PidsInNamespace scans /proc for every live process in pid namespace ns.
// A process that exits during the scan is skipped, and so is a zombie: it
// is dead, only its parent has not collected its status yet (a detached
// container's init is reaped by whoever inherited it, in its own time).
func PidsInNamespace(ns NamespaceID) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		id, err := statNS("/proc/" + e.Name() + "/ns/pid")
		if err != nil {
			continue
		}
		if id != ns {
			continue
		}
		if st, err := (ProcFacts{}).ProcStat(pid); err != nil || st.Gone() {
			continue
		}
		out = append(out, pid)
	}
	return out, nil
}

// loopbackListener is the canaries' listener on the host's 127.0.0.1,
// made with plain system calls: Go's first net.Listen in a process reads
// somaxconn and probes the host's IPv4 and IPv6 support, 0.45 ms of a
// start on the 2-CPU test host, for a listener that never accepts.
type loopbackListener struct {
	fd   int
	addr string
}

// listenLoopback listens on an ephemeral port of 127.0.0.1, non-blocking.
func listenLoopback() (*loopbackListener, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	sa := &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind 127.0.0.1: %w", err)
	}
	if err := unix.Listen(fd, 16); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("the listener's address: %w", err)
	}
	in4, ok := got.(*unix.SockaddrInet4)
	if !ok {
		unix.Close(fd)
		return nil, fmt.Errorf("the listener's address: %T, not IPv4", got)
	}
	return &loopbackListener{fd: fd, addr: fmt.Sprintf("127.0.0.1:%d", in4.Port)}, nil
}

func (l *loopbackListener) Addr() string { return l.addr }

func (l *loopbackListener) Close() {
	if l.fd >= 0 {
		unix.Close(l.fd)
		l.fd = -1
	}
}

// accepted drains the listener's queue without blocking and counts what
// was in it: a connection from the container completes its handshake in
// the kernel whether or not anyone accepted it yet.
func (l *loopbackListener) accepted() (int, error) {
	if l.fd < 0 {
		return 0, errors.New("the listener is closed")
	}
	n := 0
	for {
		nfd, _, err := unix.Accept4(l.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			if errors.Is(err, unix.EAGAIN) {
				return n, nil
			}
			return n, fmt.Errorf("accept on %s: %w", l.addr, err)
		}
		unix.Close(nfd)
		n++
	}
}

// ioctls of nsfs (linux/nsfs.h).
const (
	nsGetUserns = 0xb701 // _IO(0xb7, 0x1)
	nsGetParent = 0xb702 // _IO(0xb7, 0x2)
)

// NestedIn: pid's user or pid namespace descends from ancestor (a
// namespace of the same type), or its namespace of another type is owned
// by a user namespace that descends from ancestor, the container's user
// namespace (strictly: one owned by that user namespace itself may be the
// host's, joined, and is not judged nested).
func (ProcNamespaces) NestedIn(pid int, t specs.LinuxNamespaceType, ancestor NamespaceID) (bool, error) {
	userns := ancestor
	name, ok := procNames[t]
	if !ok {
		return false, fmt.Errorf("unknown namespace type %q", t)
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/ns/"+name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	// The first step: a user namespace's parent, another's owner.
	hierarchical := t == specs.UserNamespace || t == specs.PIDNamespace
	op := uintptr(nsGetUserns)
	if hierarchical {
		op = nsGetParent
	}
	cur, err := nsIoctl(fd, op)
	unix.Close(fd)
	if err != nil {
		return false, nil // no parent (the initial namespace) or none we may see
	}
	first := true
	for {
		var st unix.Stat_t
		if err := unix.Fstat(cur, &st); err != nil {
			unix.Close(cur)
			return false, err
		}
		if (NamespaceID{Dev: uint64(st.Dev), Ino: st.Ino}) == userns { //nolint:unconvert // Dev is uint32 on some arches
			unix.Close(cur)
			return hierarchical || !first, nil
		}
		next, err := nsIoctl(cur, nsGetParent)
		unix.Close(cur)
		if err != nil {
			return false, nil
		}
		cur, first = next, false
	}
}

func nsIoctl(fd int, op uintptr) (int, error) {
	r, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), op, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

var _ LimitFacts = ProcFacts{}

func (ProcFacts) Limits(pid int) (map[string][2]uint64, error) {
	path := "/proc/" + strconv.Itoa(pid) + "/limits"
	data, err := ReadKernelFile(path)
	if err != nil {
		return nil, err
	}
	l, err := ParseLimits(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// heldRoots is a PostFacts that reads procfs (ProcFacts, or a wrapper of
// it) with a process's root and a rootfs held open for a run of looks in
// one judgement: each path is one openat2 and one stat under the held
// root instead of opening the root again. Holding the root also pins the
// looks to the one process: a pid reused meanwhile would not move them.
type heldRoots struct {
	PostFacts
	pid, procRoot int // procRoot -1: not held
	rootfs        string
	rootfsFd      int // -1: not held
}

// procfsReader marks ProcFacts: its looks go through procfs, which
// holdRoots may do from held descriptors. A fake's do not.
type procfsReader interface{ readsProcfs() }

func (ProcFacts) readsProcfs() {}

// holdRoots returns f with pid's root and rootfs held open until release,
// when f reads procfs; f itself otherwise. A root that cannot be opened
// is not held: its looks then go to f, which reports the error as before.
func holdRoots(f PostFacts, pid int, rootfs string) (_ PostFacts, release func()) {
	if _, ok := f.(procfsReader); !ok {
		return f, func() {}
	}
	h := &heldRoots{PostFacts: f, pid: pid, procRoot: -1, rootfs: rootfs, rootfsFd: -1}
	if fd, err := openProcRoot(pid); err == nil {
		h.procRoot = fd
	}
	if rootfs != "" {
		if fd, err := unix.Open(rootfs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			h.rootfsFd = fd
		}
	}
	return h, func() {
		for _, fd := range []int{h.procRoot, h.rootfsFd} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		h.procRoot, h.rootfsFd = -1, -1
	}
}

func (h *heldRoots) LookPath(pid int, path string) (exists, null bool, err error) {
	if pid != h.pid || h.procRoot < 0 {
		return lookPath(h.PostFacts, pid, path)
	}
	return lookPathAt(h.procRoot, pid, path)
}

func (h *heldRoots) Exists(pid int, path string) (bool, error) {
	if pid != h.pid || h.procRoot < 0 {
		return h.PostFacts.Exists(pid, path)
	}
	exists, _, err := lookPathAt(h.procRoot, pid, path)
	return exists, err
}

func (h *heldRoots) FileDigest(root, path string) (string, int, error) {
	if root != h.rootfs || h.rootfsFd < 0 {
		return h.PostFacts.FileDigest(root, path)
	}
	return fileDigestAt(h.rootfsFd, root, path)
}

// ReadKernelFile reads a file the kernel makes up on read (procfs,
// cgroupfs) with plain system calls: open, read to the end, close.
// os.ReadFile also offers each file to the network poller (an epoll_ctl
// the kernel refuses for these files) and stats it for a size procfs does
// not know; on a verification that reads some fifty such files, those
// are a hundred system calls for nothing. Not for files of the
// container's: it follows symlinks like os.ReadFile.
func ReadKernelFile(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 1024)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
