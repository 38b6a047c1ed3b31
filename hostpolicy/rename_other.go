//go:build !linux

package hostpolicy

// renameInDir renames dir/old to dir/new (renameInDirPortable).
func renameInDir(dir, old, new string) error { return renameInDirPortable(dir, old, new) }
