package hostpolicy

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// renameInDirPortable is renameInDir where openat2 is missing: dir must
// resolve to itself (no symlink on its path) and new must not exist,
// each looked at just before the rename.
func renameInDirPortable(dir, old, new string) error {
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != filepath.Clean(dir) {
		return fmt.Errorf("%s: a symlink on the way, put there since it was scanned", dir)
	}
	if _, err := os.Lstat(filepath.Join(dir, new)); err == nil {
		return fs.ErrExist
	}
	return os.Rename(filepath.Join(dir, old), filepath.Join(dir, new))
}
