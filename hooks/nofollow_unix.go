//go:build unix

package hooks

import "syscall"

// oNoFollow makes an open refuse a symlink at the last component.
const oNoFollow = syscall.O_NOFOLLOW
