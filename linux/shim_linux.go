package linux

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/landlock"
)

// Exit statuses of the shim when it cannot hand over to the process. A
// refused Landlock restriction is the sandbox not being established
// (125, DESIGN.md §8); the exec failures use the shell's convention.
const (
	shimExitRestrict = 125
	shimExitExec     = 126
	shimExitNotFound = 127
)

// Shim is the Landlock exec shim (argv: landlock.ShimArgs). It runs as the
// container's process — pid, environment, cwd, stdio and capabilities as
// libcontainer left them — restricts its one locked thread with the
// ruleset and execve's the process's args in its place, so the process
// is the same task (pid 1 stays pid 1) inside the Landlock domain.
//
// Only the calling thread is restricted: execve keeps only that thread and
// the new image inherits its domain, so nothing else needs to be (and the
// go-landlock all-threads path does not work in a cgo binary like this
// one). It returns only on failure, with the exit status; it never runs
// the process unrestricted.
func Shim(argv []string) int {
	// Never unlocked: this thread is restricted and then replaced.
	goruntime.LockOSThread()
	ruleset, args, err := landlock.ParseShimArgs(argv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vetto-runtime %s: %v\n", landlock.ShimCommand, err)
		return shimExitRestrict
	}
	shimFault()
	if err := landlock.RestrictThread(ruleset); err != nil {
		fmt.Fprintf(os.Stderr, "vetto-runtime %s: Landlock not applied, the process does not run: %v\n", landlock.ShimCommand, err)
		return shimExitRestrict
	}
	// Resolved through the process's own PATH, after the restriction, as
	// libcontainer's init resolves args[0] (exec.LookPath with the
	// process's environment in place).
	name, err := exec.LookPath(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "vetto-runtime %s: %v\n", landlock.ShimCommand, err)
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, unix.ENOENT) {
			return shimExitNotFound
		}
		return shimExitExec
	}
	// The environment is the one the shim was given, unchanged. Every fd
	// the shim opened is close-on-exec (the Go runtime's, the ruleset's);
	// the ones libcontainer passed (stdio, --preserve-fds) pass on as they
	// came.
	err = unix.Exec(name, args, os.Environ())
	fmt.Fprintf(os.Stderr, "vetto-runtime %s: exec %s: %v\n", landlock.ShimCommand, name, err)
	if errors.Is(err, unix.ENOENT) {
		return shimExitNotFound
	}
	return shimExitExec
}
