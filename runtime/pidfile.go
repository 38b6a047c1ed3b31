package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// writePidFile writes pid with no trailing newline to a temporary file
// beside path and renames it into place, as runc does: whoever polls for
// the pid file (conmon, containerd) never reads a partial one.
func writePidFile(path string, pid int) error {
	if pid <= 0 {
		return fmt.Errorf("pid file %s: no init process", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("pid file %s: %w", path, err)
	}
	if err := writeFileSynced(abs, []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("pid file: %w", err)
	}
	return nil
}

// checkPidFileDir fails early, before anything is created, when the pid
// file could not be written at all.
func checkPidFileDir(path string) error {
	if path == "" {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("pid file %s: %w", path, err)
	}
	fi, err := os.Stat(filepath.Dir(abs))
	if err != nil {
		return Errorf(ErrInvalidInput, "pid file %s: %w", path, err)
	}
	if !fi.IsDir() {
		return Errorf(ErrInvalidInput, "pid file %s: parent is not a directory", path)
	}
	// The rename into place could never replace a directory: said now,
	// not after the container was made and had to be torn down.
	if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
		return Errorf(ErrInvalidInput, "pid file %s is a directory: name a file", path)
	}
	return nil
}
