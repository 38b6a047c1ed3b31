package canary

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// connectOnce makes one TCP connection to addr (an IPv4 address and port)
// and closes it, within dialTimeout. It uses blocking system calls
// bounded by poll(2) on the calling thread, not the Go netpoller: in a
// container's init (the pre-exec step) there is one locked thread, and a
// parked goroutine would need another to wake it.
func connectOnce(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return fmt.Errorf("connect %s: not an IPv4 address and port", addr)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	sa := &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	err = unix.Connect(fd, sa)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINPROGRESS) {
		return fmt.Errorf("connect %s: %w", addr, err)
	}
	deadline := time.Now().Add(dialTimeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("connect %s: timed out", addr)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("connect %s: poll: %w", addr, err)
		}
		if n > 0 {
			break
		}
	}
	soErr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return fmt.Errorf("connect %s: %w", addr, err)
	}
	if soErr != 0 {
		return fmt.Errorf("connect %s: %w", addr, unix.Errno(soErr))
	}
	return nil
}
