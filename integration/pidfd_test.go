//go:build linux

package integration

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// --pidfd-socket (runc's, on create, run and exec): the caller's unix
// socket gets a pidfd of the container's init, or of the exec'd process,
// with which it can signal it and never hit a reused pid.

// pidfdReceiver listens on a unix socket and hands over the first fd sent
// to it.
func pidfdReceiver(t *testing.T, dir string) (string, <-chan int) {
	t.Helper()
	path := filepath.Join(dir, "pidfd.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got := make(chan int, 1)
	go func() {
		conn, err := l.AcceptUnix()
		if err != nil {
			return
		}
		defer conn.Close()
		buf, oob := make([]byte, 64), make([]byte, 64)
		_, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
		if err != nil {
			return
		}
		cms, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(cms) != 1 {
			return
		}
		if fds, err := unix.ParseUnixRights(&cms[0]); err == nil && len(fds) == 1 {
			got <- fds[0]
		}
	}()
	return path, got
}

// pidOfPidfd reads the pid a pidfd refers to from /proc/self/fdinfo.
func pidOfPidfd(t *testing.T, fd int) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Pid:"); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
	}
	t.Fatalf("fd %d is not a pidfd: %s", fd, data)
	return 0
}

func receivedPidfd(t *testing.T, got <-chan int) int {
	t.Helper()
	select {
	case fd := <-got:
		t.Cleanup(func() { unix.Close(fd) })
		return fd
	case <-time.After(5 * time.Second):
		t.Fatal("no pidfd reached the socket")
		return -1
	}
}

func TestPidfdSocket(t *testing.T) {
	// Each subtest its own world: a failure is its own.
	world := func(t *testing.T) (*env, string) {
		e := newEnv(t)
		return e, e.bundle([]string{"sleep", "1000"}, nil)
	}
	for _, cmd := range []string{"create", "run"} {
		t.Run(cmd, func(t *testing.T) {
			e, bundle := world(t)
			sock, got := pidfdReceiver(t, t.TempDir())
			id := e.id()
			args := []string{cmd, "--pidfd-socket", sock, "--bundle", bundle, id}
			if cmd == "run" {
				args = append([]string{"run", "-d"}, args[1:]...)
			}
			e.mustVetto(args...)
			fd := receivedPidfd(t, got)
			if pid := int(e.state(id)["pid"].(float64)); pidOfPidfd(t, fd) != pid {
				t.Errorf("the pidfd names pid %d, the container's init is %d", pidOfPidfd(t, fd), pid)
			}
			if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil {
				t.Fatalf("pidfd_send_signal: %v", err)
			}
			e.waitStatus(id, "stopped")
			e.mustVetto("delete", id)
		})
	}

	t.Run("exec", func(t *testing.T) {
		e, bundle := world(t)
		id := e.id()
		e.mustVetto("run", "-d", "--bundle", bundle, id)
		sock, got := pidfdReceiver(t, t.TempDir())
		pidFile := filepath.Join(t.TempDir(), "exec.pid")
		e.mustVetto("exec", "-d", "--pidfd-socket", sock, "--pid-file", pidFile, id, "sleep", "999")
		fd := receivedPidfd(t, got)
		data, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := strconv.Atoi(strings.TrimSpace(string(data))); pidOfPidfd(t, fd) != want {
			t.Errorf("the pidfd names pid %d, the exec'd process is %d", pidOfPidfd(t, fd), want)
		}
		e.mustVetto("delete", "--force", id)
	})

	t.Run("no socket there", func(t *testing.T) {
		e, bundle := world(t)
		id := e.id()
		missing := filepath.Join(t.TempDir(), "none.sock")
		r := e.vetto("create", "--pidfd-socket", missing, "--bundle", bundle, id)
		if r.code == 0 || !strings.Contains(r.stderr, "pidfd socket "+missing) {
			t.Errorf("create --pidfd-socket to no socket: %s", r)
		}
		if _, err := os.Stat(filepath.Join(e.root, id)); !os.IsNotExist(err) {
			t.Errorf("state left after the refused create: %v", err)
		}
	})
}
