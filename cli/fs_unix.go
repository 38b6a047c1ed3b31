//go:build unix

package cli

import (
	"errors"
	"syscall"
)

// oNoFollow makes an open refuse a symlink at the last component.
const oNoFollow = syscall.O_NOFOLLOW

// isSymlinkRefused: an O_NOFOLLOW open met a symlink.
func isSymlinkRefused(err error) bool { return errors.Is(err, syscall.ELOOP) }
