package linux

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// The canary socket is how the host reaches the exec shim at start: a unix
// listener the host makes at create in the backend's state directory
// (root's, 0700) and hands the init as an inherited fd; `start` connects
// to it there. Only root on the host can reach the path; the container
// never sees it, and the shim closes the fd before it execs the program.
const canarySocket = "canary.sock"

// procDirPath names dir/name through an O_PATH fd of dir, so the address
// fits in sun_path (108 bytes) however deep the state root is.
func procDirPath(dir, name string) (string, func(), error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return "/proc/self/fd/" + strconv.Itoa(fd) + "/" + name, func() { unix.Close(fd) }, nil
}

// listenCanary makes the canary listener in dir and returns it as a file
// for the init to inherit.
func listenCanary(dir string) (*os.File, error) {
	addr, done, err := procDirPath(dir, canarySocket)
	if err != nil {
		return nil, err
	}
	defer done()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("canary socket in %s: %w", dir, err)
	}
	// The socket outlives this process (the init holds it): closing our
	// copy must not unlink its path.
	ln.SetUnlinkOnClose(false)
	defer ln.Close()
	if err := os.Chmod(filepath.Join(dir, canarySocket), 0o600); err != nil {
		return nil, err
	}
	f, err := ln.File()
	if err != nil {
		return nil, fmt.Errorf("canary socket in %s: %w", dir, err)
	}
	return f, nil
}

// dialCanary connects to the exec shim's canary listener.
func dialCanary(dir string) (net.Conn, error) {
	addr, done, err := procDirPath(dir, canarySocket)
	if err != nil {
		return nil, err
	}
	defer done()
	conn, err := net.Dial("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to the canary socket in %s: %w", dir, err)
	}
	return conn, nil
}
