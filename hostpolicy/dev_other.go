//go:build !unix

package hostpolicy

import "io/fs"

// oNoFollow: this platform's opens have no such flag; readRegular's
// stat of the open file still refuses what is not a regular file.
const oNoFollow = 0

// devOf is 0 where files have no device number: the scan then does not
// tell filesystems apart.
func devOf(fs.FileInfo) uint64 { return 0 }

// ownerOf knows no owners on this platform.
func ownerOf(fs.FileInfo) (uint32, uint32, bool) { return 0, 0, false }
