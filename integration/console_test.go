//go:build linux

package integration

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// consoleTerminal makes the container's process get a terminal.
func consoleTerminal(s *specs.Spec) { s.Process.Terminal = true }

// consoleSocket listens on a unix socket under e.tmp and receives the one
// fd the runtime sends over it, as containerd's shim does. The received
// master (or the error) arrives on the returned channel.
func consoleSocket(e *env) (string, <-chan consoleMaster) {
	e.t.Helper()
	path := filepath.Join(e.tmp, "console.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		e.t.Fatal(err)
	}
	ch := make(chan consoleMaster, 1)
	go func() {
		defer l.Close()
		_ = l.SetDeadline(time.Now().Add(20 * time.Second))
		conn, err := l.AcceptUnix()
		if err != nil {
			ch <- consoleMaster{err: fmt.Errorf("accept: %w", err)}
			return
		}
		defer conn.Close()
		f, err := consoleRecvFd(conn)
		ch <- consoleMaster{f: f, err: err}
	}()
	return path, ch
}

type consoleMaster struct {
	f   *os.File
	err error
}

// consoleRecvFd reads one SCM_RIGHTS message carrying exactly one fd.
func consoleRecvFd(conn *net.UnixConn) (*os.File, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	name := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4*4))
	var n, oobn int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), name, oob, unix.MSG_CMSG_CLOEXEC)
		return !errors.Is(rerr, unix.EAGAIN)
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return nil, fmt.Errorf("recvmsg: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return nil, fmt.Errorf("parse control message: %w", err)
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("got %d control messages, want 1", len(msgs))
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil {
		return nil, fmt.Errorf("parse rights: %w", err)
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
		return nil, fmt.Errorf("got %d fds, want 1", len(fds))
	}
	// Non-blocking, so that the runtime poller serves reads with deadlines.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		_ = unix.Close(fds[0])
		return nil, err
	}
	return os.NewFile(uintptr(fds[0]), string(name[:n])), nil
}

// consoleReadUntil reads the pty master until want appears, EOF (EIO once
// the last slave fd closed), or the deadline, and returns what it read.
func consoleReadUntil(f *os.File, want string, limit time.Duration) string {
	_ = f.SetReadDeadline(time.Now().Add(limit))
	var out bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(out.String(), want) {
		n, err := f.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return out.String()
}

// A detached container with a terminal sends the pty master to the console
// socket; the process's stdio is that terminal.
func TestConsoleSocket(t *testing.T) {
	tests := []struct {
		name string
		// launch starts the container with the given console socket.
		launch func(e *env, b, id, sock string)
	}{
		{"create and start", func(e *env, b, id, sock string) {
			e.mustVetto("create", "--console-socket", sock, "-b", b, id)
			if st := e.state(id); st["status"] != "created" {
				e.t.Fatalf("after create: status %v", st["status"])
			}
			e.mustVetto("start", id)
		}},
		{"run detached", func(e *env, b, id, sock string) {
			e.mustVetto("run", "-d", "--console-socket", sock, "-b", b, id)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			b := e.bundle([]string{"sh", "-c", "tty; echo ready; sleep 0.3"}, consoleTerminal)
			sock, masters := consoleSocket(e)
			tt.launch(e, b, id, sock)

			var m consoleMaster
			select {
			case m = <-masters:
			case <-time.After(10 * time.Second):
				t.Fatal("no fd arrived on the console socket")
			}
			if m.err != nil {
				t.Fatalf("console socket: %v", m.err)
			}
			defer m.f.Close()
			if _, err := unix.IoctlGetTermios(int(m.f.Fd()), unix.TCGETS); err != nil {
				t.Fatalf("fd from the console socket is not a terminal: %v", err)
			}
			out := consoleReadUntil(m.f, "ready", 10*time.Second)
			if !strings.Contains(out, "ready") {
				t.Fatalf("pty master output %q: no 'ready' from the container", out)
			}
			if !strings.Contains(out, "/dev/pts/") && !strings.Contains(out, "/dev/console") {
				t.Errorf("tty in the container printed %q, want a pty", out)
			}
			e.waitStatus(id, "stopped")
			e.mustVetto("delete", id)
		})
	}
}

// In the foreground with a terminal, run bridges the caller's terminal to
// the container's pty and exits with the process's status.
func TestConsoleForeground(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("script(1) from util-linux is needed to give run a terminal: %v", err)
	}
	tests := []struct {
		name     string
		terminal bool
		want     string
	}{
		{"terminal", true, "/dev/pts/"},
		// Without process.terminal the container gets pipes, never the
		// caller's terminal.
		{"no terminal", false, "not a tty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			id := e.id()
			b := e.bundle([]string{"sh", "-c", "tty; exit 7"}, func(s *specs.Spec) { s.Process.Terminal = tt.terminal })
			inner := strings.Join([]string{consoleQuote(binary), "--root", consoleQuote(e.root), "run", "-b", consoleQuote(b), id}, " ")
			out := e.tempFile()
			defer out.Close()
			cmd := exec.Command(script, "-qec", inner, "/dev/null")
			cmd.Stdout, cmd.Stderr = out, out
			err := cmd.Start()
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					_ = cmd.Process.Kill()
				}
			}()
			code := exitCode(t, cmd)
			close(done)
			output := readAll(t, out)
			if code != 7 {
				t.Fatalf("script -e run: exit %d, want the container's 7; output %q", code, output)
			}
			if !strings.Contains(output, tt.want) {
				t.Errorf("output %q: tty printed no %q", output, tt.want)
			}
			if r := e.vetto("state", id); r.code == 0 {
				t.Errorf("container left after foreground run: %s", r)
			}
		})
	}
}

// consoleQuote quotes s for sh -c.
func consoleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
