//go:build unix

package runtime

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// lock is an exclusive flock(2) on a container's directory. flock locks go
// with the open file and die with the process, so a runtime killed mid-way
// never leaves a container locked.
type lock struct {
	f *os.File
}

// lockDir takes dir's lock. When another process holds it, waiting says
// so once, naming the holder (from /proc/locks), and gives up with ErrBusy
// after lockWaitLimit.
func lockDir(dir string, waiting func(holder string)) (*lock, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	deadline := time.Time{}
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(lockWaitLimit)
			if waiting != nil {
				waiting(lockHolder(f))
			}
		}
		if time.Now().After(deadline) {
			holder := lockHolder(f)
			f.Close()
			return nil, Errorf(ErrBusy, "%s is still locked by %s after %s; if that process is stuck, kill it and try again", dir, holder, lockWaitLimit)
		}
		time.Sleep(delay)
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

// lockHolder names the process holding an flock on f's inode, from
// /proc/locks ("pid N (command line)"), or says it cannot tell.
func lockHolder(f *os.File) string {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return "another process"
	}
	want := fmt.Sprintf(":%d", st.Ino)
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return "another process"
	}
	defer locks.Close()
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || !strings.HasSuffix(f[5], want) {
			continue
		}
		pid, err := strconv.Atoi(f[4])
		if err != nil {
			continue
		}
		return describePid(pid)
	}
	return "another process"
}

// describePid is "pid N (argv)": argv[0]'s base name and the arguments,
// shortened.
func describePid(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(data) == 0 {
		return "pid " + strconv.Itoa(pid)
	}
	argv := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
	argv[0] = filepath.Base(argv[0])
	cmd := strings.Join(argv, " ")
	if len(cmd) > 200 {
		cmd = cmd[:197] + "..."
	}
	return fmt.Sprintf("pid %d (%s)", pid, cmd)
}

func (l *lock) unlock() {
	if l != nil && l.f != nil {
		l.f.Close() // closing the last fd drops the flock
		l.f = nil
	}
}
