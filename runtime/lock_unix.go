//go:build unix

package runtime

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// lock is an exclusive flock(2) on a container's directory. flock locks go
// with the open file and die with the process, so a runtime killed mid-way
// never leaves a container locked.
type lock struct {
	f *os.File
}

func lockDir(dir string) (*lock, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	// The holder we waited for may have deleted the container: a removed
	// directory has no links left.
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if st.Nlink == 0 {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, fs.ErrNotExist)
	}
	return &lock{f: f}, nil
}

func (l *lock) unlock() {
	if l != nil && l.f != nil {
		l.f.Close() // closing the last fd drops the flock
		l.f = nil
	}
}
