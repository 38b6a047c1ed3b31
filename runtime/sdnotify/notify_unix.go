//go:build !windows

package sdnotify

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Notify tells the socket at addr (NOTIFY_SOCKET: a path, or @name for an
// abstract one) that the service is ready with main process pid, then
// waits for it to have read that (BARRIER=1): systemd attributes a
// message by its sender, and a runtime that exits before its message is
// read may have it dropped.
func Notify(addr string, pid int) error {
	if err := CheckAddress(addr); err != nil {
		return fmt.Errorf("%s=%q: %w", Env, addr, err)
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("%s=%s: %w", Env, addr, err)
	}
	defer conn.Close()
	if _, err := conn.Write(Message(pid)); err != nil {
		return fmt.Errorf("%s=%s: %w", Env, addr, err)
	}
	return barrier(conn, addr)
}

// barrier sends BARRIER=1 with the write end of a pipe and waits for the
// receiver to close it: it has then read everything sent before.
func barrier(conn *net.UnixConn, addr string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("barrier for %s: %w", addr, err)
	}
	defer r.Close()
	// A connected datagram socket: sendmsg(2) without an address, which
	// net's WriteMsgUnix refuses to do.
	raw, err := conn.SyscallConn()
	if err != nil {
		w.Close()
		return fmt.Errorf("barrier for %s: %w", addr, err)
	}
	if cerr := raw.Write(func(fd uintptr) bool {
		err = unix.Sendmsg(int(fd), []byte("BARRIER=1"), unix.UnixRights(int(w.Fd())), nil, 0)
		return !errors.Is(err, unix.EAGAIN)
	}); cerr != nil && err == nil {
		err = cerr
	}
	w.Close()
	if err != nil {
		return fmt.Errorf("%s=%s: barrier: %w", Env, addr, err)
	}
	if err := r.SetReadDeadline(time.Now().Add(BarrierTimeout)); err != nil {
		return fmt.Errorf("barrier for %s: %w", addr, err)
	}
	var b [1]byte
	switch _, err := r.Read(b[:]); {
	case errors.Is(err, io.EOF):
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("%s=%s: %w within %s", Env, addr, ErrNoBarrier, BarrierTimeout)
	case err != nil:
		return fmt.Errorf("barrier for %s: %w", addr, err)
	}
	return fmt.Errorf("%s=%s: the barrier pipe was written to, not closed", Env, addr)
}
