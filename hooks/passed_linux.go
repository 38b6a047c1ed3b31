package hooks

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// kernelFS are the file systems whose files are the kernel's interfaces,
// not data: a file of one, opened on the host, sets host settings (proc's
// /proc/sys, sysfs), moves processes or limits (cgroup), reads kernel
// memory or traces (debugfs, tracefs), loads policy (securityfs,
// selinuxfs, apparmorfs), names a namespace or process (nsfs, pidfs) or
// a kernel object (anon_inode: eventfd, signalfd, timerfd, epoll,
// io_uring, userfaultfd, bpf maps and programs, perf events).
var kernelFS = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "proc",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.SELINUX_MAGIC:       "selinuxfs",
	unix.SMACK_MAGIC:         "smackfs",
	unix.AAFS_MAGIC:          "apparmorfs",
	unix.BPF_FS_MAGIC:        "bpf",
	unix.EFIVARFS_MAGIC:      "efivarfs",
	unix.PSTOREFS_MAGIC:      "pstore",
	unix.BINFMTFS_MAGIC:      "binfmt_misc",
	unix.NSFS_MAGIC:          "nsfs",
	unix.PID_FS_MAGIC:        "pidfs",
	unix.ANON_INODE_FS_MAGIC: "anon_inode",
	unix.BDEVFS_MAGIC:        "bdev",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
	0x62656570:               "configfs",
	0x65735543:               "fusectl",
}

// nullDevices are the character devices every container has (runc's
// default device list less the terminals): data only.
var nullDevices = map[[2]uint32]string{
	{1, 3}: "/dev/null", {1, 5}: "/dev/zero", {1, 7}: "/dev/full",
	{1, 8}: "/dev/random", {1, 9}: "/dev/urandom",
}

// ExaminePassed says what each of fds, open in this process, is and
// whether it is only a data channel (PassedFD). A file it cannot examine
// counts as a handle on the host.
func ExaminePassed(fds []int) []PassedFD {
	out := make([]PassedFD, 0, len(fds))
	for _, fd := range fds {
		out = append(out, examinePassed(fd))
	}
	return out
}

func examinePassed(fd int) PassedFD {
	p := PassedFD{FD: fd}
	if fdFlags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fdFlags&unix.FD_CLOEXEC != 0 {
		p.What, p.NotPassed = "not open", true
		return p
	}
	target, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		p.What = fmt.Sprintf("not examined: %v", err)
		return p
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		p.What = fmt.Sprintf("not examined: %v", err)
		return p
	}
	if flags&unix.O_PATH != 0 {
		p.What = "an O_PATH descriptor of " + quoteTarget(target)
		return p
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		p.What = fmt.Sprintf("not examined: %v", err)
		return p
	}
	if fs, ok := kernelFS[int64(sfs.Type)]; ok && st.Mode&unix.S_IFMT != unix.S_IFCHR {
		p.What = "a file of the kernel's " + fs + ": " + quoteTarget(target)
		return p
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
		p.What, p.Channel = "a pipe", true
	case unix.S_IFREG:
		p.What, p.Channel = "the file "+quoteTarget(target), strings.HasPrefix(target, "/")
	case unix.S_IFSOCK:
		p.What, p.Channel = examineSocket(fd)
	case unix.S_IFCHR:
		dev := [2]uint32{unix.Major(st.Rdev), unix.Minor(st.Rdev)}
		if name, ok := nullDevices[dev]; ok {
			p.What, p.Channel = name, true
		} else {
			p.What = fmt.Sprintf("the character device %d:%d %s", dev[0], dev[1], quoteTarget(target))
		}
	case unix.S_IFBLK:
		p.What = fmt.Sprintf("the block device %d:%d %s", unix.Major(st.Rdev), unix.Minor(st.Rdev), quoteTarget(target))
	case unix.S_IFDIR:
		p.What = "the directory " + quoteTarget(target)
	default:
		p.What = quoteTarget(target)
	}
	return p
}

// examineSocket: a unix stream or seqpacket socket that is connected or
// listening only carries data (it cannot be pointed elsewhere). Any other
// socket acts in the network namespace it was made in, which is not the
// container's: an inet socket, even connected, is disconnected with
// connect(AF_UNSPEC) and connected anywhere (a datagram one sends
// anywhere as it is), a unix datagram socket sends to the abstract
// sockets of that namespace, and netlink and packet sockets configure or
// read its network.
func examineSocket(fd int) (string, bool) {
	domain, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return fmt.Sprintf("a socket not examined: %v", err), false
	}
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return fmt.Sprintf("a socket not examined: %v", err), false
	}
	switch domain {
	case unix.AF_UNIX:
		if typ != unix.SOCK_STREAM && typ != unix.SOCK_SEQPACKET {
			return "a unix datagram socket (it sends to the abstract sockets of the host's network namespace)", false
		}
		if listening, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err == nil && listening == 1 {
			return "a listening unix socket", true
		}
		if _, err := unix.Getpeername(fd); err == nil {
			return "a connected unix socket", true
		}
		return "an unconnected unix socket (it connects to the abstract sockets of the host's network namespace)", false
	case unix.AF_INET, unix.AF_INET6:
		proto := "udp"
		if typ == unix.SOCK_STREAM {
			proto = "tcp"
		} else if typ == unix.SOCK_RAW {
			proto = "raw"
		}
		return "an inet " + proto + " socket (connect(AF_UNSPEC) frees it to connect anywhere from the network namespace it was made in)", false
	case unix.AF_NETLINK:
		return "a netlink socket (it configures the network namespace it was made in)", false
	case unix.AF_PACKET:
		return "a packet socket (it reads and writes the frames of the network namespace it was made in)", false
	}
	return fmt.Sprintf("a socket of address family %d", domain), false
}

// quoteTarget keeps a file's name on one line of the launch line.
func quoteTarget(s string) string {
	if strings.ContainsAny(s, " \t\n,;()") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
