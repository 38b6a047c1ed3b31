//go:build !unix

package hostpolicy

import "io/fs"

// devOf is 0 where files have no device number: the scan then does not
// tell filesystems apart.
func devOf(fs.FileInfo) uint64 { return 0 }

// ownerOf knows no owners on this platform.
func ownerOf(fs.FileInfo) (uint32, uint32, bool) { return 0, 0, false }
