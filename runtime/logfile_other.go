//go:build !unix

package runtime

import (
	"io"
	"os"
	"path/filepath"
)

// appendLine adds line to the log at path with one write, opened without
// following a symlink at its name, and fsyncs it when sync.
func appendLine(path string, line []byte, sync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := syncLog(f); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// syncPath fsyncs the audit log at path, which this process appended to.
func syncPath(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|oNoFollow, 0)
	if err != nil {
		return err
	}
	if err := syncLog(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readNoFollow reads path (at most maxReadNoFollow), refusing a symlink at
// its last component.
func readNoFollow(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxReadNoFollow))
}

// CheckAuditLog says whether the audit log at path can be appended to:
// an existing regular file, or a new one in a directory that exists.
// Nothing is created.
func CheckAuditLog(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case os.IsNotExist(err):
		if d, err := os.Stat(filepath.Dir(path)); err != nil || !d.IsDir() {
			return Errorf(ErrInvalidInput, "--audit-log %s: directory %s does not exist: give a file in a directory that exists", path, filepath.Dir(path))
		}
		return nil
	case err != nil:
		return Errorf(ErrInvalidInput, "--audit-log %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return Errorf(ErrInvalidInput, "--audit-log %s is not a regular file: give the path of a log file", path)
	}
	return nil
}
