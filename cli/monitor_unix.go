//go:build unix

package cli

import (
	"os"
	"strconv"
	"syscall"
)

// spawnDetached starts argv (path is argv[0]'s file) with env in /, in a
// session of its own (no terminal, no signal from the caller's), its
// stdio null, and does not wait for it: it outlives this process, whose
// parent — the nearest subreaper (containerd's shim, conmon) or init —
// reaps it. syscall.ForkExec, not os/exec: a process's first os/exec
// start on Linux forks a throw-away child to learn whether pidfds work
// (Go 1.23 and later), a clone a start's critical path paid, for a pidfd
// nothing here uses.
func spawnDetached(path string, argv, env []string, null *os.File) (int, error) {
	fd := null.Fd()
	return syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Dir:   "/",
		Env:   env,
		Files: []uintptr{fd, fd, fd},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
}

// closeInherited closes every descriptor above stdio that this process
// inherited rather than opened: the ones without close-on-exec (Go opens
// all of its own with it, so those that crossed the exec are the
// spawner's). A monitor begun by create would otherwise hold, for the
// container's life, what create's caller passed it — conmon's sync pipes,
// --preserve-fds, a socket activation's listeners — and a caller waiting
// for their other end to close would wait for ever.
func closeInherited() {
	d, err := os.Open("/dev/fd")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	self := int(d.Fd())
	var inherited []int
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd <= 2 || fd == self {
			continue
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
			inherited = append(inherited, fd)
		}
	}
	d.Close()
	for _, fd := range inherited {
		_ = syscall.Close(fd)
	}
}
