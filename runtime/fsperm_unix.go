//go:build unix

package runtime

import (
	"fmt"
	"os"

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
	if int(st.Uid) != os.Geteuid() && st.Uid != 0 {
		return fmt.Errorf("%s is owned by uid %d: want this user's (or root's)", d, st.Uid)
	}
	// A parent writable by others is fine only if it is sticky (/tmp):
	// then nobody else can rename or remove what this user put there.
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
		return fmt.Errorf("%s has mode %o: writable by others", d, st.Mode&0o7777)
	}
	return nil
}
