//go:build unix

package hostpolicy

import (
	"io/fs"
	"syscall"
)

// oNoFollow makes an open refuse a symlink at the last component.
const oNoFollow = syscall.O_NOFOLLOW

// devOf is the device a file is on.
func devOf(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev) //nolint:unconvert // Dev is uint32 on some arches
	}
	return 0
}

// ownerOf is the uid and gid that own a file.
func ownerOf(fi fs.FileInfo) (uint32, uint32, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid, st.Gid, true
	}
	return 0, 0, false
}
