package spec

import (
	"fmt"
	"sort"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// vetto's seccomp profile (docs/policy.md): default deny, and an allowlist
// that runs shells, coreutils, git, go, python, node, gcc and make
// (integration TestPolicyToolchains runs them under it, behind the Landlock
// shim, itself a Go program). It is written for this project, by
// category, so each entry can be argued for; integration
// TestSeccompProfileTable runs every refused call in a real container.
//
// What it never allows, even under conditions (TestSeccompBlocks keeps it
// so): debugging and memory access of other processes (ptrace,
// process_vm_readv/writev, pidfd_getfd, kcmp), io_uring (a history of
// privilege escalations and a way around seccomp itself: its operations are
// not syscalls), userfaultfd (the race amplifier of many kernel exploits),
// bpf, perf_event_open, kexec and kernel modules, every mount and namespace
// call (mount, umount2, pivot_root, the new mount API, unshare, setns, and
// clone with a CLONE_NEW* flag), the kernel keyring, open_by_handle_at
// (CVE-2014-3519, "shocker"), clocks, swap, reboot, quotas, raw I/O ports.
//
// Refusals return EPERM, as runc's default profile does, so programs see an
// ordinary permission failure; clone3 returns ENOSYS instead, because its
// flags live in memory seccomp cannot read, and ENOSYS is what makes glibc
// and others fall back to clone, whose flags we can check.

// seccompAllowed is the unconditional allowlist. Names unknown to the
// host's libseccomp (an x86-only call on arm64, a call newer than the
// library) are skipped by runc with a debug message.
var seccompAllowed = []string{
	// Files: open, read, write, seek, sync. open, openat and creat are
	// allowed below, only without a set-id mode; openat2, whose mode
	// seccomp cannot read, is refused with ENOSYS, and libc falls back
	// to openat.
	"close", "close_range",
	"read", "readv", "pread64", "preadv", "preadv2",
	"write", "writev", "pwrite64", "pwritev", "pwritev2",
	"lseek", "sendfile", "copy_file_range", "splice", "tee",
	"fsync", "fdatasync", "sync", "syncfs", "sync_file_range",
	"truncate", "ftruncate", "fallocate", "fadvise64", "readahead",
	"dup", "dup2", "dup3", "fcntl", "flock",
	// ioctl whole: the terminal-injection ioctl TIOCSTI (CVE-2017-5226's
	// class) works only on the caller's controlling terminal without
	// CAP_SYS_ADMIN, and runc's init calls setsid(2), so a sandbox has no
	// controlling terminal but its own pty.
	"ioctl",
	// Metadata and directories.
	"stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs",
	"access", "faccessat", "faccessat2", "readlink", "readlinkat",
	"getdents", "getdents64", "getcwd", "chdir", "fchdir",
	"rmdir", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
	// chmod and mkdir are allowed below, only without a set-id mode.
	"chown", "fchown", "lchown", "fchownat",
	"utime", "utimes", "utimensat", "futimesat", "umask",
	// mknod (FIFOs and sockets; device nodes need CAP_MKNOD, which no
	// profile grants) is allowed below, only without a set-id mode.
	"getxattr", "lgetxattr", "fgetxattr", "getxattrat",
	"listxattr", "llistxattr", "flistxattr", "listxattrat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat",
	"removexattr", "lremovexattr", "fremovexattr", "removexattrat",
	"inotify_init", "inotify_init1", "inotify_add_watch", "inotify_rm_watch",
	// Memory.
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync", "mincore",
	"mlock", "mlock2", "munlock", "mlockall", "munlockall", "membarrier",
	"memfd_create", "pkey_alloc", "pkey_free", "pkey_mprotect",
	"get_mempolicy", "set_mempolicy", "map_shadow_stack", "mseal", "cachestat",
	// Processes and threads. clone is allowed below, only without
	// namespace flags.
	"fork", "vfork", "execve", "execveat", "exit", "exit_group",
	"wait4", "waitid", "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
	"pidfd_open", "pidfd_send_signal",
	"getpid", "getppid", "gettid", "getpgid", "setpgid", "getpgrp", "getsid", "setsid",
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
	"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
	"setfsuid", "setfsgid", "capget", "capset", "prctl", "arch_prctl",
	"set_tid_address", "set_robust_list", "get_robust_list", "rseq",
	"futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue",
	"sched_yield", "sched_getaffinity", "sched_setaffinity", "sched_getparam", "sched_setparam",
	"sched_getscheduler", "sched_setscheduler", "sched_get_priority_max", "sched_get_priority_min",
	"sched_rr_get_interval", "sched_getattr", "sched_setattr", "getcpu",
	"getpriority", "setpriority", "ioprio_get", "ioprio_set",
	"getrlimit", "setrlimit", "prlimit64", "getrusage", "times", "sysinfo", "uname",
	"getrandom", "restart_syscall",
	// A process may narrow itself further: seccomp and Landlock only ever
	// take rights away.
	"seccomp", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
	// Signals.
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
	"rt_sigsuspend", "sigaltstack", "signalfd", "signalfd4", "pause", "alarm",
	// Time (reading it and sleeping, never setting clocks).
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
	"timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete",
	"timerfd_create", "timerfd_settime", "timerfd_gettime", "getitimer", "setitimer",
	// Waiting for events.
	"poll", "ppoll", "select", "pselect6",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	"eventfd", "eventfd2", "pipe", "pipe2",
	// Asynchronous I/O the old way (libaio); not io_uring.
	"io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents", "io_pgetevents",
	// Sockets. socket and socketpair are allowed below, for some families.
	"bind", "listen", "accept", "accept4", "connect", "getsockname", "getpeername",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
	"shutdown", "setsockopt", "getsockopt",
	// System V IPC, private to the container's IPC namespace.
	"semget", "semop", "semtimedop", "semctl", "shmget", "shmat", "shmdt", "shmctl",
	"msgget", "msgsnd", "msgrcv", "msgctl",
}

// seccompBlocked is what the profile must never allow, under any
// condition. It is documentation that a test enforces, not part of the
// filter: anything not allowed is refused by the default action anyway.
var seccompBlocked = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"userfaultfd", "bpf", "perf_event_open",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"mount", "umount", "umount2", "pivot_root", "chroot",
	"move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "open_tree", "open_tree_attr", "mount_setattr",
	"unshare", "setns", "clone3",
	"keyctl", "add_key", "request_key",
	"open_by_handle_at", "name_to_handle_at",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"iopl", "ioperm", "modify_ldt", "syslog", "uselib", "vhangup",
	"lookup_dcookie", "fanotify_init", "sethostname", "setdomainname",
}

// Clone flags that create namespaces (linux/sched.h). clone is allowed
// only when none is set; CLONE_NEWTIME (0x80) shares its bit with the
// obsolete CSIGNAL range but is refused for clone too.
const cloneNamespaceFlags = 0x00020000 | // CLONE_NEWNS
	0x02000000 | // CLONE_NEWCGROUP
	0x04000000 | // CLONE_NEWUTS
	0x08000000 | // CLONE_NEWIPC
	0x10000000 | // CLONE_NEWUSER
	0x20000000 | // CLONE_NEWPID
	0x40000000 | // CLONE_NEWNET
	0x00000080 // CLONE_NEWTIME

// Mode bits no file the sandbox creates may carry (S_ISUID | S_ISGID): a
// set-id file written into a bind of the user's project is one the host
// honours, whoever runs it there.
const setIDBits = 0o6000

// Open flags after which open(2) reads its mode: O_CREAT and __O_TMPFILE
// (asm-generic values, which every architecture here uses).
const openCreates = 0o100 | 0o20000000

// modeArg says where each mode-carrying call has its mode (and, for the
// opens, its flags): they are allowed only when the mode has no set-id
// bit. Together with no CAP_SETFCAP (the kernel refuses security.capability
// without it; seccomp cannot read an xattr's name) and nosuid binds, no
// file the sandbox writes can give anyone privilege on the host.
var modeArg = []struct {
	name        string
	mode, flags int // argument index; flags -1 when the call always creates
}{
	{"chmod", 1, -1}, {"fchmod", 1, -1}, {"fchmodat", 2, -1}, {"fchmodat2", 2, -1},
	{"creat", 1, -1}, {"mkdir", 1, -1}, {"mkdirat", 2, -1}, {"mknod", 1, -1}, {"mknodat", 2, -1},
	{"open", 2, 1}, {"openat", 3, 2},
}

// Socket families a sandbox may create. Others (AF_VSOCK to the
// hypervisor, which no network namespace fences; AF_ALG, the kernel crypto
// API; AF_PACKET; Bluetooth, XDP, …) are refused.
var socketFamilies = []struct {
	name  string
	value uint64
}{
	{"AF_UNIX", 1}, {"AF_INET", 2}, {"AF_INET6", 10}, {"AF_NETLINK", 16},
}

// Personalities a process may select: PER_LINUX, PER_LINUX32, and the
// query 0xffffffff. Others turn off ASLR or emulate old kernels.
var personalities = []uint64{0x0, 0x8, 0xffffffff}

// seccompArchitectures maps GOARCH to the architectures the filter is
// built for: only the native one, so a 32-bit binary (and the 32-bit
// syscall table's attack surface) is refused outright.
var seccompArchitectures = map[string][]specs.Arch{
	"amd64":   {specs.ArchX86_64},
	"arm64":   {specs.ArchAARCH64},
	"riscv64": {specs.ArchRISCV64},
	"ppc64le": {specs.ArchPPC64LE},
	"s390x":   {specs.ArchS390X},
}

// Errno values (asm-generic/errno-base.h).
const (
	errnoEPERM  = 1
	errnoENOSYS = 38
)

// SeccompProfile returns vetto's seccomp profile for the architecture
// named by GOARCH.
func SeccompProfile(goarch string) (*specs.LinuxSeccomp, error) {
	archs, ok := seccompArchitectures[goarch]
	if !ok {
		return nil, fmt.Errorf("no seccomp profile for architecture %q", goarch)
	}
	eperm, enosys := uint(errnoEPERM), uint(errnoENOSYS)
	allowed := append([]string{}, seccompAllowed...)
	sort.Strings(allowed)
	// clone's flags are its first argument everywhere but s390x, where
	// the first two arguments are swapped.
	cloneArg := uint(0)
	if goarch == "s390x" {
		cloneArg = 1
	}
	syscalls := []specs.LinuxSyscall{
		{Names: allowed, Action: specs.ActAllow},
		{
			Names:  []string{"clone"},
			Action: specs.ActAllow,
			Args:   []specs.LinuxSeccompArg{{Index: cloneArg, Value: cloneNamespaceFlags, ValueTwo: 0, Op: specs.OpMaskedEqual}},
		},
		{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &enosys},
		{Names: []string{"openat2"}, Action: specs.ActErrno, ErrnoRet: &enosys},
	}
	for _, m := range modeArg {
		syscalls = append(syscalls, specs.LinuxSyscall{
			Names:  []string{m.name},
			Action: specs.ActAllow,
			Args:   []specs.LinuxSeccompArg{{Index: uint(m.mode), Value: setIDBits, ValueTwo: 0, Op: specs.OpMaskedEqual}},
		})
		if m.flags >= 0 {
			// Without O_CREAT or O_TMPFILE the mode is not read (and may
			// be anything): allowed whatever it is.
			syscalls = append(syscalls, specs.LinuxSyscall{
				Names:  []string{m.name},
				Action: specs.ActAllow,
				Args:   []specs.LinuxSeccompArg{{Index: uint(m.flags), Value: openCreates, ValueTwo: 0, Op: specs.OpMaskedEqual}},
			})
		}
	}
	// socket(2) and personality(2) take an int; the kernel ignores the
	// upper 32 bits of the register, so compare only the lower ones
	// (otherwise 0x1_0000_0028 would pass a check for 40 and be AF_VSOCK).
	for _, f := range socketFamilies {
		syscalls = append(syscalls, specs.LinuxSyscall{
			Names:  []string{"socket"},
			Action: specs.ActAllow,
			Args:   []specs.LinuxSeccompArg{{Index: 0, Value: 0xffffffff, ValueTwo: f.value, Op: specs.OpMaskedEqual}},
		})
	}
	syscalls = append(syscalls, specs.LinuxSyscall{
		Names:  []string{"socketpair"},
		Action: specs.ActAllow,
		Args:   []specs.LinuxSeccompArg{{Index: 0, Value: 0xffffffff, ValueTwo: 1, Op: specs.OpMaskedEqual}},
	})
	for _, p := range personalities {
		syscalls = append(syscalls, specs.LinuxSyscall{
			Names:  []string{"personality"},
			Action: specs.ActAllow,
			Args:   []specs.LinuxSeccompArg{{Index: 0, Value: 0xffffffff, ValueTwo: p, Op: specs.OpMaskedEqual}},
		})
	}
	return &specs.LinuxSeccomp{
		DefaultAction:   specs.ActErrno,
		DefaultErrnoRet: &eperm,
		Architectures:   append([]specs.Arch{}, archs...),
		Syscalls:        syscalls,
	}, nil
}
