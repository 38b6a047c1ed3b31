package landlock

import (
	"errors"
	"fmt"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// HostABI is the Landlock ABI version the running kernel supports; 0 when
// the kernel has no Landlock or it is disabled at boot.
func HostABI() (int, error) {
	abi, err := llsyscall.LandlockGetABIVersion()
	switch {
	case err == nil:
		return abi, nil
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return 0, nil
	}
	return 0, fmt.Errorf("query the Landlock ABI version: %w", err)
}

// RestrictThread parses annotation (the dev.vetto.landlock JSON), checks
// that the host's ABI enforces every right it handles, and restricts the
// calling OS thread with it. The caller must have locked its goroutine to
// the thread (runtime.LockOSThread) and must never unlock it: the thread
// stays restricted, the rest of the process does not. It must hold
// no_new_privs or CAP_SYS_ADMIN. On any error nothing is restricted.
func RestrictThread(annotation string) error {
	rs, err := Parse(annotation)
	if err != nil {
		return err
	}
	return rs.RestrictThread()
}

// RestrictThread restricts the calling, locked OS thread with rs, refusing
// (before anything is restricted) when the host's ABI lacks a right rs
// handles: Landlock would silently not enforce it.
func (rs *Ruleset) RestrictThread() error {
	abi, err := HostABI()
	if err != nil {
		return err
	}
	return rs.restrictAt(abi)
}

// restrictAt restricts the calling thread on a host whose ABI is abi.
func (rs *Ruleset) restrictAt(abi int) error {
	if missing := rs.Unsupported(abi); len(missing) > 0 {
		return fmt.Errorf("the host's Landlock ABI %d does not enforce %s", abi, Describe(missing))
	}
	fd, err := llsyscall.LandlockCreateRuleset(&llsyscall.RulesetAttr{
		HandledAccessFS:  rs.Ruleset.AccessFS,
		HandledAccessNet: rs.Ruleset.AccessNet,
		Scoped:           rs.Ruleset.Scoped,
	}, 0)
	if err != nil {
		return fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	defer unix.Close(fd)
	for _, r := range rs.Rules.PathBeneath {
		for _, p := range r.Paths {
			if err := addPath(fd, p, r.AllowedAccess); err != nil {
				return err
			}
		}
	}
	for _, r := range rs.Rules.NetPort {
		for _, port := range r.Ports {
			if err := llsyscall.LandlockAddNetPortRule(fd, &llsyscall.NetPortAttr{AllowedAccess: r.AllowedAccess, Port: port}, 0); err != nil {
				return fmt.Errorf("landlock_add_rule port %d: %w", port, err)
			}
		}
	}
	if err := llsyscall.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// dirOnly are the rights the kernel accepts only on a directory's
// hierarchy; a rule on a file must not carry them (EINVAL).
const dirOnly = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12 | 1<<13

// addPath grants access beneath p. A path that does not exist is skipped:
// a rule only ever allows, and nothing can be allowed on what is not
// there. A file (a /dev/null mask, say) gets the rights a file can have.
func addPath(fd int, p string, access uint64) error {
	pfd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open landlock rule path %s: %w", p, err)
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("stat landlock rule path %s: %w", p, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &^= dirOnly
		if access == 0 {
			return nil
		}
	}
	if err := llsyscall.LandlockAddPathBeneathRule(fd, &llsyscall.PathBeneathAttr{AllowedAccess: access, ParentFd: pfd}, 0); err != nil {
		return fmt.Errorf("landlock_add_rule %s: %w", p, err)
	}
	return nil
}
