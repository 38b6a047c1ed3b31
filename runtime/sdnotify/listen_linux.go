package sdnotify

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// listen binds a datagram socket at path through its directory's fd
// (/proc/self/fd/N/name): a socket address holds 107 bytes, and a state
// root with a long container id in it is longer than that.
func listen(path string) (*net.UnixConn, error) {
	dir, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	short := "/proc/self/fd/" + strconv.Itoa(dir) + "/" + filepath.Base(path)
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: short}); err != nil {
		return nil, fmt.Errorf("bind: %w", err)
	}
	c, err := net.FileConn(f)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return c.(*net.UnixConn), nil
}
