//go:build unix

package cli

import (
	"os"
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
