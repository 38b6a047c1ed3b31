package landlock

import (
	"errors"
	"fmt"
	"os"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// bindTCP is LANDLOCK_ACCESS_NET_BIND_TCP (ABI 4); readDir is
// LANDLOCK_ACCESS_FS_READ_DIR.
const (
	bindTCP = 1 << 0
	readDir = 1 << 3
)

// RestrictProcess puts every thread of the calling process into a
// Landlock domain that handles every file-system right the host's ABI
// enforces and grants none but listing its own /proc/<pid>/task (see
// below): no file can be opened, created, executed or removed any more,
// while descriptors already open stay usable. Where the
// ABI has network rights (4) binding a TCP port is refused too, and where
// it has scopes (6) abstract unix sockets and signals outside the domain
// are out of reach. It sets no_new_privs on every thread first, as
// landlock_restrict_self requires. It returns the ABI it enforced; a host
// without Landlock is an error, since nothing would then be restricted.
//
// Unlike RestrictThread, which restricts one locked thread of a process
// that goes on to exec, this is for a process that keeps running Go code
// on every thread: the egress relay.
func RestrictProcess() (int, error) {
	abi, err := HostABI()
	if err != nil {
		return 0, err
	}
	if abi < 1 {
		return 0, errors.New("the kernel has no Landlock (or it is disabled at boot)")
	}
	s := Supported(abi)
	attr := &llsyscall.RulesetAttr{HandledAccessFS: s.AccessFS, Scoped: s.Scoped}
	if s.AccessNet&bindTCP != 0 {
		attr.HandledAccessNet = bindTCP
	}
	fd, err := llsyscall.LandlockCreateRuleset(attr, 0)
	if err != nil {
		return 0, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	defer unix.Close(fd)
	// The one rule: listing /proc/<pid>/task, which libpsx does right
	// after restricting each thread, to find the next one
	// (go-landlock#39). It shows the process its own thread ids and
	// nothing else: no file under it can be read.
	task := fmt.Sprintf("/proc/%d/task", os.Getpid())
	if err := addPath(fd, task, readDir); err != nil {
		return 0, err
	}
	if err := llsyscall.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS) on every thread: %w", err)
	}
	if err := llsyscall.AllThreadsLandlockRestrictSelf(fd, 0); err != nil {
		return 0, fmt.Errorf("landlock_restrict_self on every thread: %w", err)
	}
	return abi, nil
}
