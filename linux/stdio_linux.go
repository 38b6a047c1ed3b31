package linux

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/containerd/console"
	"github.com/opencontainers/runc/libcontainer"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// stdio is how a container's process gets its standard streams, and what
// this process must hold or close once the container has started.
type stdio struct {
	// postStart are our copies of fds handed to the container; closed as
	// soon as the init has them so the container sees EOF properly.
	postStart []io.Closer
	// closers are our ends, closed when the caller is done.
	closers []io.Closer
	copies  sync.WaitGroup

	// Foreground terminal: the pty master bridged to the caller's terminal.
	consoleErr  chan error
	host        console.Console
	epoller     *console.Epoller
	epollMaster *console.EpollConsole
}

// setupStdio wires the process's stdio for one of four cases, as runc does:
//
//   - terminal, detached: the pty master goes to the caller's console socket
//     (containerd, conmon); we only dial it.
//   - terminal, foreground: a new pty bridged to the caller's terminal, which
//     is put in raw mode for the duration.
//   - no terminal, detached: the process inherits our stdio; the caller
//     chose what it is.
//   - no terminal, foreground: pipes we copy, so the container never holds
//     the caller's terminal fd (through which it could inject keystrokes
//     with TIOCSTI into the caller's shell).
func setupStdio(p *libcontainer.Process, terminal, foreground bool, consoleSocket string, rootUID, rootGID int) (_ *stdio, retErr error) {
	s := &stdio{}
	defer func() {
		if retErr != nil {
			s.close()
		}
	}()
	switch {
	case terminal && !foreground:
		conn, err := net.Dial("unix", consoleSocket)
		if err != nil {
			return nil, fmt.Errorf("console socket %s: %w", consoleSocket, err)
		}
		s.postStart = append(s.postStart, conn)
		f, err := conn.(*net.UnixConn).File()
		if err != nil {
			return nil, fmt.Errorf("console socket %s: %w", consoleSocket, err)
		}
		s.postStart = append(s.postStart, f)
		p.ConsoleSocket = f
	case terminal && foreground:
		host, err := hostConsole()
		if err != nil {
			return nil, fmt.Errorf("terminal: %w", err)
		}
		s.host = host
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("console socket pair: %w", err)
		}
		parent, child := os.NewFile(uintptr(fds[0]), "console-parent"), os.NewFile(uintptr(fds[1]), "console-child")
		s.postStart = append(s.postStart, parent, child)
		p.ConsoleSocket = child
		s.consoleErr = make(chan error, 1)
		go func() { s.consoleErr <- s.bridgeConsole(parent) }()
	case !terminal && !foreground:
		p.Stdin, p.Stdout, p.Stderr = os.Stdin, os.Stdout, os.Stderr
	default:
		pipes, err := p.InitializeIO(rootUID, rootGID)
		if err != nil {
			return nil, fmt.Errorf("stdio pipes: %w", err)
		}
		s.closers = append(s.closers, pipes.Stdin, pipes.Stdout, pipes.Stderr)
		for _, f := range []any{p.Stdin, p.Stdout, p.Stderr} {
			if c, ok := f.(io.Closer); ok {
				s.postStart = append(s.postStart, c)
			}
		}
		go func() {
			_, _ = io.Copy(pipes.Stdin, os.Stdin)
			_ = pipes.Stdin.Close()
		}()
		s.copies.Add(2)
		go s.copy(os.Stdout, pipes.Stdout)
		go s.copy(os.Stderr, pipes.Stderr)
	}
	return s, nil
}

func (s *stdio) copy(w io.Writer, r io.ReadCloser) {
	defer s.copies.Done()
	_, _ = io.Copy(w, r)
	_ = r.Close()
}

// hostConsole finds the caller's terminal among stdio, or /dev/tty.
func hostConsole() (console.Console, error) {
	for _, f := range []*os.File{os.Stderr, os.Stdout, os.Stdin} {
		c, err := console.ConsoleFromFile(f)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, console.ErrNotAConsole) {
			return nil, err
		}
	}
	tty, err := os.Open("/dev/tty")
	if err != nil {
		return nil, fmt.Errorf("process.terminal is true but there is no terminal to attach to (use --detach with --console-socket): %w", err)
	}
	return console.ConsoleFromFile(tty)
}

// bridgeConsole receives the pty master from the container's init and
// copies between it and the caller's terminal.
func (s *stdio) bridgeConsole(sock *os.File) error {
	master, err := recvFile(sock)
	if err != nil {
		return fmt.Errorf("receive pty master: %w", err)
	}
	c, err := console.ConsoleFromFile(master)
	if err != nil {
		return err
	}
	if err := console.ClearONLCR(c.Fd()); err != nil {
		return err
	}
	ep, err := console.NewEpoller()
	if err != nil {
		return err
	}
	em, err := ep.Add(c)
	if err != nil {
		return err
	}
	go func() { _ = ep.Wait() }()
	go func() { _, _ = io.Copy(em, os.Stdin) }()
	s.copies.Add(1)
	go s.copy(os.Stdout, em)
	if err := s.host.SetRaw(); err != nil {
		_ = em.Close()
		return fmt.Errorf("set caller's terminal raw: %w", err)
	}
	s.epoller, s.epollMaster = ep, em
	s.closers = append(s.closers, em)
	return nil
}

// recvFile reads one fd passed with SCM_RIGHTS.
func recvFile(sock *os.File) (*os.File, error) {
	name := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), name, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("expected one control message, got %d", len(msgs))
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil {
		return nil, err
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return nil, fmt.Errorf("expected one fd, got %d", len(fds))
	}
	return os.NewFile(uintptr(fds[0]), string(name[:n])), nil
}

// waitConsole waits until a foreground terminal is bridged.
func (s *stdio) waitConsole() error {
	if s.consoleErr == nil {
		return nil
	}
	return <-s.consoleErr
}

// resize copies the caller's terminal size to the container's pty.
func (s *stdio) resize() {
	if s.epollMaster != nil && s.host != nil {
		_ = s.epollMaster.ResizeFrom(s.host)
	}
}

// sendPidfd has libcontainer's init send a pidfd of itself to the unix
// socket at path (runc's --pidfd-socket): the caller can then signal the
// process, or wait for it, with no pid to be reused. The init sends it and
// closes the socket before the program runs; our ends close once started.
func (s *stdio) sendPidfd(p *libcontainer.Process, path string) error {
	if path == "" {
		return nil
	}
	conn, err := net.Dial("unix", path)
	if err != nil {
		return fmt.Errorf("pidfd socket %s: %w", path, err)
	}
	s.postStart = append(s.postStart, conn)
	f, err := conn.(*net.UnixConn).File()
	if err != nil {
		return fmt.Errorf("pidfd socket %s: %w", path, err)
	}
	s.postStart = append(s.postStart, f)
	p.PidfdSocket = f
	return nil
}

func (s *stdio) closePostStart() {
	for _, c := range s.postStart {
		_ = c.Close()
	}
	s.postStart = nil
}

// drainLimit bounds the wait for the container's output once its init is
// gone: a process left behind (a container without a pid namespace of its
// own, kept with --keep) may hold stdout for ever.
const drainLimit = 2 * time.Second

// close waits for output to drain (at most drainLimit), closes our ends
// and restores the caller's terminal.
func (s *stdio) close() {
	s.closePostStart()
	if s.epollMaster != nil && s.epoller != nil {
		_ = s.epollMaster.Shutdown(s.epoller.CloseConsole)
	}
	drained := make(chan struct{})
	go func() { s.copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(drainLimit):
		logrus.Debugf("stdio: output still open %s after the init exited (a process left behind holds it); closing", drainLimit)
	}
	for _, c := range s.closers {
		_ = c.Close()
	}
	s.closers = nil
	if s.host != nil {
		_ = s.host.Reset()
	}
}
