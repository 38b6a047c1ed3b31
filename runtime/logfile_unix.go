//go:build unix

package runtime

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// The audit logs and the records are opened, written and read with plain
// system calls, as writeFile writes: an os.File of a regular file is first
// offered to the network poller (an epoll_ctl the kernel refuses, and two
// fcntl calls around it), and os.ReadFile grows its buffer read by read.
// A run appends to its logs seven times and reads its record back.

// appendLine adds line to the log at path with one write(2) — O_APPEND,
// so concurrent writers' lines never interleave — opened without following
// a symlink planted at its name, and fsyncs it when sync.
func appendLine(path string, line []byte, sync bool) error {
	fd, err := openRaw(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT, 0o600)
	if err != nil {
		return err
	}
	for rest := line; len(rest) > 0; {
		n, err := unix.Write(fd, rest)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return &fs.PathError{Op: "write", Path: path, Err: err}
		}
		rest = rest[n:]
	}
	if !sync {
		return closeRaw(fd, path)
	}
	return syncFD(fd, path)
}

// syncPath fsyncs the audit log at path, which this process appended to.
func syncPath(path string) error {
	fd, err := openRaw(path, unix.O_WRONLY|unix.O_APPEND, 0)
	if err != nil {
		return err
	}
	return syncFD(fd, path)
}

// syncFD fsyncs and closes fd, through syncLog (the seam a test counts).
func syncFD(fd int, path string) error {
	f := os.NewFile(uintptr(fd), path)
	if err := syncLog(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readNoFollow reads path (at most maxReadNoFollow), refusing a symlink at
// its last component: one read of the size fstat gives, and one more to
// see the end.
func readNoFollow(path string) ([]byte, error) {
	fd, err := openRaw(path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	size := 0
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Size > 0 && st.Size < maxReadNoFollow {
		size = int(st.Size)
	}
	buf := make([]byte, 0, size+512)
	for len(buf) < maxReadNoFollow {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf))
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	if len(buf) > maxReadNoFollow {
		buf = buf[:maxReadNoFollow]
	}
	return buf, nil
}

func openRaw(path string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Open(path, flags|oNoFollow, perm)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

func closeRaw(fd int, path string) error {
	if err := unix.Close(fd); err != nil {
		return &fs.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// CheckAuditLog says, before a command builds or changes anything,
// whether it can append to the audit log at path: an existing regular
// file of the caller's, or a new one in a directory that exists and the
// caller may write. Nothing is created. A symlink, a fifo (whose open
// would block the runtime until someone reads), a directory or another
// user's file at the name is refused: the log is evidence, appended to as
// root.
func CheckAuditLog(path string) error {
	var st unix.Stat_t
	err := unix.Lstat(path, &st)
	switch {
	case errors.Is(err, unix.ENOENT):
		dir := filepath.Dir(path)
		if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
			return Errorf(ErrInvalidInput, "--audit-log %s: directory %s: %w: give a file in a directory that exists and you can write", path, dir, err)
		}
		return nil
	case err != nil:
		return Errorf(ErrInvalidInput, "--audit-log %s: %w", path, err)
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return Errorf(ErrInvalidInput, "--audit-log %s is not a regular file (%s): give the path of a log file", path, fileKind(uint32(st.Mode)))
	case int(st.Uid) != os.Geteuid():
		return Errorf(ErrInvalidInput, "--audit-log %s is owned by uid %d, not by you: the runtime appends only to its own log", path, st.Uid)
	}
	fd, err := openRaw(path, unix.O_WRONLY|unix.O_APPEND|unix.O_NONBLOCK, 0)
	if err != nil {
		return Errorf(ErrInvalidInput, "--audit-log %s: %w", path, err)
	}
	return closeRaw(fd, path)
}

func fileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symlink"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a fifo"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	}
	return "not a regular file"
}
