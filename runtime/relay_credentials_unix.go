//go:build unix

package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// readCredentialFile reads a credential file: under one of dirs (by the
// path as written and as it resolves), opened without following a symlink
// at its last component, a regular file owned by this process's user and
// readable by nobody else (mode 0600 or 0400: a file others can read is
// no secret, and one another user owns is not ours to send), at most
// maxCredentialSize bytes, not empty. One trailing newline is dropped, as
// `echo token > file` writes it.
func readCredentialFile(path string, dirs []string) (string, error) {
	real, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return "", fmt.Errorf("its directory: %w", err)
	}
	real = filepath.Join(real, filepath.Base(path))
	inside := false
	for _, d := range dirs {
		rd, err := filepath.EvalSymlinks(d)
		if err != nil {
			rd = d
		}
		inside = inside || (withinDir(path, d) && withinDir(real, rd))
	}
	if !inside {
		return "", fmt.Errorf("not under a credential directory (%s; [relay] credential_dirs in runtime.toml)", strings.Join(dirs, ", "))
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return "", errors.New("is a symlink: name the file itself")
		}
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	case !ok:
		return "", errors.New("no owner information")
	case int(st.Uid) != os.Geteuid():
		return "", fmt.Errorf("owned by uid %d, not this runtime's uid %d", st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o077 != 0:
		return "", fmt.Errorf("mode %04o: group or others may read it: chmod 600", fi.Mode().Perm())
	case fi.Size() > maxCredentialSize:
		return "", fmt.Errorf("%d bytes, more than %d", fi.Size(), maxCredentialSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCredentialSize+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxCredentialSize {
		return "", fmt.Errorf("more than %d bytes", maxCredentialSize)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if s == "" {
		return "", errors.New("empty")
	}
	return s, nil
}

// withinDir says path is dir or below it, by its clean name.
func withinDir(path, dir string) bool {
	dir = filepath.Clean(dir)
	return dir == "/" || strings.HasPrefix(filepath.Clean(path), dir+"/")
}
