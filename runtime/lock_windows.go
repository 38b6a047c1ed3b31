//go:build windows

package runtime

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lock is an exclusive LockFileEx on a ".lock" file in the container's
// directory; Windows cannot lock a directory handle the way flock can.
type lock struct {
	f *os.File
	// flush writes the command's pending audit events before the lock
	// goes (Store.locked).
	flush func()
}

func lockDir(dir string, _ func(holder string)) (*lock, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if _, err := os.Stat(dir); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, fs.ErrNotExist)
	}
	return &lock{f: f}, nil
}

// tryLockDir takes dir's lock only if it is free: ErrBusy otherwise.
func tryLockDir(dir string) (*lock, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol); err != nil {
		f.Close()
		return nil, ErrBusy
	}
	return &lock{f: f}, nil
}

// signalPid ends pid (Windows has no SIGTERM: both end it).
func signalPid(pid int, _ bool) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func (l *lock) unlock() {
	if l != nil && l.f != nil && l.flush != nil {
		l.flush()
	}
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
