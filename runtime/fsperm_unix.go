//go:build unix

package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// oNoFollow makes an open refuse a symlink at the last component.
const oNoFollow = unix.O_NOFOLLOW | unix.O_CLOEXEC

// privateDir refuses d unless it is a real directory (not a symlink)
// owned by this user and writable by no one else.
func privateDir(d string) error {
	var st unix.Stat_t
	if err := unix.Lstat(d, &st); err != nil {
		return fmt.Errorf("%s: %w", d, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("%s is not a directory (a symlink?)", d)
	}
	if int(st.Uid) != os.Geteuid() && st.Uid != 0 && !unmappedInUserNamespace(st.Uid) {
		return fmt.Errorf("%s is owned by uid %d: want this user's (or root's)", d, st.Uid)
	}
	// A parent writable by others is fine only if it is sticky (/tmp):
	// then nobody else can rename or remove what this user put there.
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
		return fmt.Errorf("%s has mode %o: writable by others", d, st.Mode&0o7777)
	}
	return nil
}

// CheckStateRoot refuses a state root another user could write into: one
// not owned by this user, or writable by group or others, or below a
// directory others can write without the sticky bit (a sticky /tmp holding
// a root of this user's is fine). A record or backend state planted there
// would have this runtime — root, often — kill the pid it names and run
// the hooks it lists. Components that do not exist yet are made 0700.
func CheckStateRoot(root string) error {
	for d, first := root, true; ; d, first = filepath.Dir(d), false {
		var st unix.Stat_t
		err := unix.Lstat(d, &st)
		if errors.Is(err, unix.ENOENT) {
			if d == filepath.Dir(d) {
				return nil
			}
			continue
		}
		if err != nil {
			return Errorf(ErrInvalidInput, "state root %s: %s: %w", root, d, err)
		}
		if first && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if int(st.Uid) != os.Geteuid() {
				return Errorf(ErrInvalidInput, "state root %s is owned by uid %d, not this user (%d): another user's records would be trusted; use a root of your own", root, st.Uid, os.Geteuid())
			}
			if st.Mode&0o022 != 0 {
				return Errorf(ErrInvalidInput, "state root %s has mode %o: others could plant records there; chmod 700 it", root, st.Mode&0o777)
			}
		} else if err := privateDir(d); err != nil {
			return Errorf(ErrInvalidInput, "state root %s: %v: others could replace it", root, err)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// unmappedInUserNamespace: uid is the kernel's overflow uid and this
// process runs in a user namespace, so the directory's owner is a host
// user outside its map — for the directories above a normal user's
// runtime directory (/tmp, /run/user) that is the host's root, seen from
// the namespace rootless podman runs its runtime in. Still refused if
// others may write there without the sticky bit.
func unmappedInUserNamespace(uid uint32) bool {
	data, err := os.ReadFile("/proc/sys/kernel/overflowuid")
	if err != nil || strings.TrimSpace(string(data)) != strconv.FormatUint(uint64(uid), 10) {
		return false
	}
	return InUserNamespace()
}

// InUserNamespace reports whether this process runs in a user namespace
// other than the initial one, whose uid map is the whole range onto
// itself.
//
// Read once per process: the runtime never changes its own user
// namespace, and one command asks several times.
func InUserNamespace() bool { return inUserNamespace() }

var inUserNamespace = sync.OnceValue(func() bool {
	m, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	f := strings.Fields(string(m))
	return !(len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295")
})

// NormalUser: the runtime runs for a normal user — not root, or root only
// of a user namespace a normal user made (rootless podman runs its
// runtime as uid 0 of its namespace, with the user's $USER and
// $XDG_RUNTIME_DIR), as runc decides where its state goes.
func NormalUser() bool {
	return os.Geteuid() != 0 || InUserNamespace() && os.Getenv("USER") != "root"
}

// ownedBySelf says fi's owner is this process's effective user.
func ownedBySelf(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
