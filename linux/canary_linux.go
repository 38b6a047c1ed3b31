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
// A run starts the container from the process that created it, and gets
// a socket pair instead (pairCanary).
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
// for the init to inherit. Made with the socket calls themselves, not
// net.ListenUnix: this process never accepts on it (the init does), so
// it needs no poller, no backlog read from /proc and no address
// bookkeeping, and the path stays when our copy is closed (the init
// holds the socket).
func listenCanary(dir string) (*os.File, error) {
	addr, done, err := procDirPath(dir, canarySocket)
	if err != nil {
		return nil, err
	}
	defer done()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("canary socket in %s: %w", dir, err)
	}
	fail := func(what string, err error) (*os.File, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("canary socket in %s: %s: %w", dir, what, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: addr}); err != nil {
		return fail("bind", err)
	}
	// The host connects once per start or exec, under the container's
	// lock: one pending connection is all there is.
	if err := unix.Listen(fd, 4); err != nil {
		return fail("listen", err)
	}
	if err := os.Chmod(filepath.Join(dir, canarySocket), 0o600); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir, canarySocket)), nil
}

// pairCanary makes the canary channel of a container this process will
// start itself (CreateRequest.StartsHere): a socket pair, the host's end
// a connection ready for the exchange, the init's end a file for it to
// inherit. Nothing is made in the state directory, and nobody else can
// reach either end.
func pairCanary() (host net.Conn, init *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("canary socket pair: %w", err)
	}
	hf := os.NewFile(uintptr(fds[0]), "canary (host)")
	defer hf.Close() // net.FileConn holds its own copy
	if host, err = net.FileConn(hf); err != nil {
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("canary socket pair: %w", err)
	}
	return host, os.NewFile(uintptr(fds[1]), "canary (init)"), nil
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
