//go:build unix

package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// writeFile writes data to a new file beside path and renames it over
// path (writeFileAtomic), with plain system calls: a state record is
// written a few times a command, and os.CreateTemp's file also goes
// through the network poller's registration (an epoll_ctl the kernel
// refuses for a regular file) and fcntl calls. On a tmpfs root a record
// write takes 22 µs this way, 29 µs through os (BenchmarkStore).
func writeFile(path string, data []byte, perm fs.FileMode, sync bool) (retErr error) {
	dir, base := filepath.Split(path)
	var tmp string
	var fd int
	for attempt := 0; ; attempt++ {
		tmp = filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		var err error
		fd, err = unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) && attempt < 100 {
			continue
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", path, &fs.PathError{Op: "open", Path: tmp, Err: err})
		}
		break
	}
	closed := false
	defer func() {
		if !closed {
			unix.Close(fd)
		}
		if retErr != nil {
			_ = unix.Unlink(tmp)
		}
	}()
	fail := func(op string, err error) error {
		return fmt.Errorf("write %s: %w", path, &fs.PathError{Op: op, Path: tmp, Err: err})
	}
	preallocate(fd, len(data))
	for rest := data; len(rest) > 0; {
		n, err := unix.Write(fd, rest)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fail("write", err)
		}
		rest = rest[n:]
	}
	if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
		return fail("chmod", err)
	}
	if sync {
		if err := unix.Fsync(fd); err != nil {
			return fail("fsync", err)
		}
	}
	closed = true
	if err := unix.Close(fd); err != nil {
		return fail("close", err)
	}
	if err := unix.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err})
	}
	return nil
}
