// Package sdnotify relays systemd's readiness protocol (sd_notify(3)) out of
// a container, as runc does when its caller sets NOTIFY_SOCKET: the runtime
// binds a datagram socket that the container sees, waits for the program
// in it to say READY=1, and tells the caller's socket so, with the
// container's init as the service's main process.
//
// What the container sends is not passed on: any process in it can write
// to the socket, and a MAINPID of its choosing would make the service
// manager watch, and at stop kill, a host process. Only the fact that a
// line READY=1 arrived leaves; the main pid is the runtime's own
// knowledge of the init.
package sdnotify

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Env is the environment variable that names the caller's socket, and the
// one the container's process gets naming its own.
const Env = "NOTIFY_SOCKET"

// DirInContainer is where the container sees the directory that holds its
// socket, and SocketName the socket's name in it: runc's places, so a
// program that looks for them there finds them.
const (
	DirInContainer = "/run/notify"
	SocketName     = "notify.sock"
)

// maxAddr is the longest socket path sockaddr_un holds (108 bytes with
// its terminating NUL on Linux).
const maxAddr = 107

// CheckAddress reports whether addr can name the caller's socket: an
// absolute path, or an abstract name written with a leading '@', that fits
// a socket address.
func CheckAddress(addr string) error {
	switch {
	case addr == "":
		return errors.New("empty")
	case len(addr) > maxAddr:
		return fmt.Errorf("%d bytes, longer than a socket address holds (%d)", len(addr), maxAddr)
	case strings.HasPrefix(addr, "@"):
		return nil
	case !filepath.IsAbs(addr):
		return errors.New("neither an absolute path nor an abstract name (@…)")
	case strings.ContainsRune(addr, 0):
		return errors.New("contains a NUL byte")
	}
	return nil
}

// BarrierTimeout bounds the wait for the caller to acknowledge the
// message (sd_notify_barrier(3)); a receiver that does not speak the
// barrier costs this long once, and a warning.
var BarrierTimeout = 5 * time.Second

// ErrNoBarrier is returned, after the message went out, when the caller
// did not acknowledge it within BarrierTimeout.
var ErrNoBarrier = errors.New("the notify socket did not acknowledge BARRIER=1")

// Listener is the runtime's end of the container's socket.
type Listener struct {
	conn *net.UnixConn
	path string
}

// Listen binds the datagram socket at path, which the container sees
// through its bind of path's directory. Anyone may write to it: the
// container's processes may run as any user of its own.
func Listen(path string) (*Listener, error) {
	conn, err := listen(path)
	if err != nil {
		return nil, fmt.Errorf("notify socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o777); err != nil {
		conn.Close()
		return nil, fmt.Errorf("notify socket %s: %w", path, err)
	}
	return &Listener{conn: conn, path: path}, nil
}

// Close stops listening; a datagram sent later is refused to its sender.
func (l *Listener) Close() error {
	err := l.conn.Close()
	if rmErr := os.Remove(l.path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) && err == nil {
		err = rmErr
	}
	return err
}

// pollEvery is how often WaitReady asks whether the container still runs
// while no datagram comes.
const pollEvery = 100 * time.Millisecond

// WaitReady waits until a datagram holds the line READY=1 (true) or gone
// reports the container's init gone (false).
func (l *Listener) WaitReady(gone func() bool) (bool, error) {
	buf := make([]byte, 4096)
	for {
		if err := l.conn.SetReadDeadline(time.Now().Add(pollEvery)); err != nil {
			return false, fmt.Errorf("notify socket %s: %w", l.path, err)
		}
		n, err := l.conn.Read(buf)
		switch {
		case err == nil:
			if IsReady(buf[:n]) {
				return true, nil
			}
		case errors.Is(err, os.ErrDeadlineExceeded):
			if gone() {
				return false, nil
			}
		default:
			return false, fmt.Errorf("notify socket %s: %w", l.path, err)
		}
	}
}

// IsReady reports whether a datagram of the protocol says READY=1: one of
// its newline-separated assignments, exactly.
func IsReady(msg []byte) bool {
	for line := range bytes.SplitSeq(msg, []byte{'\n'}) {
		if string(line) == "READY=1" {
			return true
		}
	}
	return false
}

// Message is what the caller's socket is told: the service is ready, and
// its main process is pid.
func Message(pid int) []byte {
	return []byte("READY=1\nMAINPID=" + strconv.Itoa(pid) + "\n")
}
