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
	// flush writes the command's pending audit events before the lock
	// goes (Store.locked).
	flush func()
}

// lockQuiet is how long a lock wait goes unmentioned.
const lockQuiet = time.Second

// lockDir takes dir's lock. When another process holds it for more than
// lockQuiet, waiting says so once, naming the holder (from /proc/locks),
// and it gives up with ErrBusy after lockWaitLimit.
func lockDir(dir string, waiting func(holder string)) (*lock, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	var began, deadline time.Time
	told := false
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
			began = time.Now()
			deadline = began.Add(lockWaitLimit)
		}
		// A holder that lets go within a second (a monitor round, a
		// state) is not worth a word; one that does not is named.
		if !told && time.Since(began) > lockQuiet {
			told = true
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

// tryLockDir takes dir's lock only if it is free: ErrBusy otherwise.
func tryLockDir(dir string) (*lock, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Nlink == 0 {
		f.Close()
		return nil, fs.ErrNotExist
	}
	return &lock{f: f}, nil
}

// signalPid sends SIGTERM, or SIGKILL with kill, to pid.
func signalPid(pid int, kill bool) error {
	sig := unix.SIGTERM
	if kill {
		sig = unix.SIGKILL
	}
	return unix.Kill(pid, sig)
}

func (l *lock) unlock() {
	if l != nil && l.f != nil && l.flush != nil {
		l.flush()
	}
	if l != nil && l.f != nil {
		l.f.Close() // closing the last fd drops the flock
		l.f = nil
	}
}
