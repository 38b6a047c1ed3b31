package relayproc

import (
	"fmt"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// The relay's seccomp filter: an allowlist, and any other system call
// kills the process. It is the set the relay was seen to make while
// serving under the filter in the integration tests (TestRelay…, run
// under strace -f once to list them), and nothing it could use to reach
// anything but its sockets: no open (Landlock refuses it anyway; it gets
// EACCES here so that Go's resolver, which tries /etc/hosts, does not
// die), no exec, no fork (clone only for threads), no new executable
// memory, sockets only of the two internet families.

// relaySyscalls are allowed with any arguments: what strace -f -c showed
// the relay making while it served every kind of listener (proxy, SOCKS5,
// CONNECT tunnels, DNS over UDP and TCP, transparent), plus what the Go
// runtime needs on paths a short trace may miss (preemption signals,
// garbage collection, thread exit).
var relaySyscalls = []string{
	// Descriptors the relay holds: sockets, splice pipes, the stats and
	// audit files, the init's pidfd.
	"read", "write", "pread64", "pwrite64", "close", "fcntl", "pipe2", "splice",
	// The netpoller, waits, the init's pidfd.
	"epoll_ctl", "epoll_pwait", "epoll_wait", "ppoll", "futex", "nanosleep", "restart_syscall",
	"sched_yield", "sched_getaffinity",
	// The clock: the vDSO answers without a system call where the host's
	// clocksource allows, and falls back to these where it does not (a
	// virtual machine without a stable TSC: clock_gettime killed the relay
	// in a qemu guest).
	"clock_gettime", "clock_getres", "gettimeofday", "clock_nanosleep",
	// The Go runtime and glibc: signals (preemption), memory, threads,
	// the kernel version the net package asks for.
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "tgkill", "getpid", "gettid",
	"munmap", "madvise", "set_robust_list", "rseq", "uname", "exit", "exit_group",
	// crypto/rand, for the TLS connections to credentials' upstreams (Go
	// reads the kernel's generator with getrandom(2) where the vDSO has
	// none): randomness only, no file, no descriptor.
	"getrandom",
	// Network: the accepted connections, the upstream dials, the resolver.
	"accept4", "connect", "getsockopt", "setsockopt", "getsockname", "getpeername",
	"sendto", "recvfrom", "shutdown",
}

// relayErrno are refused with an errno instead of the kill: calls the
// Go runtime or glibc make on a path the relay takes, whose failure they
// handle.
var relayErrno = map[string]unix.Errno{
	// Go's resolver reads /etc/hosts and /etc/nsswitch.conf; Landlock
	// refuses the open anyway.
	"openat": unix.EACCES,
	"open":   unix.EACCES,
	// It also stats them, which Landlock does not control: refused here,
	// so that the relay cannot learn what exists on the host.
	"newfstatat": unix.EACCES,
	"stat":       unix.EACCES,
	"lstat":      unix.EACCES,
	"statx":      unix.EACCES,
	// glibc's pthread_create tries clone3 first, whose flags a filter
	// cannot read, and falls back to clone on ENOSYS.
	"clone3": unix.ENOSYS,
}

// relayFilter compiles the filter; harden loads it, last. NewFilter sets
// TSYNC, so the filter applies to every thread of the process.
func relayFilter() (*libseccomp.ScmpFilter, error) {
	f, err := libseccomp.NewFilter(libseccomp.ActKillProcess)
	if err != nil {
		return nil, fmt.Errorf("seccomp filter: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Release()
		}
	}()
	rule := func(name string, act libseccomp.ScmpAction, conds ...libseccomp.ScmpCondition) error {
		sc, err := libseccomp.GetSyscallFromName(name)
		if err != nil {
			return nil // not a system call of this architecture
		}
		if len(conds) == 0 {
			err = f.AddRule(sc, act)
		} else {
			err = f.AddRuleConditional(sc, act, conds)
		}
		if err != nil {
			return fmt.Errorf("seccomp rule %s: %w", name, err)
		}
		return nil
	}
	var condErr error
	cond := func(arg uint, op libseccomp.ScmpCompareOp, v ...uint64) libseccomp.ScmpCondition {
		c, err := libseccomp.MakeCondition(arg, op, v...)
		if err != nil && condErr == nil {
			condErr = fmt.Errorf("seccomp condition: %w", err)
		}
		return c
	}
	for _, name := range relaySyscalls {
		if err := rule(name, libseccomp.ActAllow); err != nil {
			return nil, err
		}
	}
	for name, errno := range relayErrno {
		if err := rule(name, libseccomp.ActErrno.SetReturnCode(int16(errno))); err != nil {
			return nil, err
		}
	}
	// Threads only: a clone without CLONE_THREAD is a fork.
	if err := rule("clone", libseccomp.ActAllow, cond(0, libseccomp.CompareMaskedEqual, unix.CLONE_THREAD, unix.CLONE_THREAD)); err != nil {
		return nil, err
	}
	// Memory, never executable: nothing injected can be run.
	for _, name := range []string{"mmap", "mprotect"} {
		if err := rule(name, libseccomp.ActAllow, cond(2, libseccomp.CompareMaskedEqual, unix.PROT_EXEC, 0)); err != nil {
			return nil, err
		}
	}
	// TCP and UDP over IPv4 and IPv6: no unix, netlink, packet or raw
	// socket.
	for _, domain := range []uint64{unix.AF_INET, unix.AF_INET6} {
		for _, typ := range []uint64{unix.SOCK_STREAM, unix.SOCK_DGRAM} {
			if err := rule("socket", libseccomp.ActAllow, cond(0, libseccomp.CompareEqual, domain), cond(1, libseccomp.CompareMaskedEqual, 0xf, typ)); err != nil {
				return nil, err
			}
		}
	}
	if condErr != nil {
		return nil, condErr
	}
	ok = true
	return f, nil
}
