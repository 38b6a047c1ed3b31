package hostpolicy

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// renameInDir renames dir/old to dir/new. dir is opened without following
// any symlink on its whole path (openat2's RESOLVE_NO_SYMLINKS: a path the
// scan found has none), and the rename is RENAME_NOREPLACE: an existing
// new is fs.ErrExist, never replaced.
func renameInDir(dir, old, new string) error {
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		return renameInDirPortable(dir, old, new)
	}
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("%s: a symlink on the way, put there since it was scanned", dir)
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(fd)
	err = unix.Renameat2(fd, old, fd, new, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) {
		// A file system without RENAME_NOREPLACE: look first.
		var st unix.Stat_t
		if unix.Fstatat(fd, new, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			return unix.EEXIST
		}
		err = unix.Renameat(fd, old, fd, new)
	}
	return err
}
