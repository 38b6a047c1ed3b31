//go:build !windows

package sdnotify

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestCheckAddress(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"/run/systemd/notify", true},
		{"@/org/freedesktop/systemd1/notify/123", true},
		{"", false},
		{"run/systemd/notify", false},
		{"/" + strings.Repeat("a", maxAddr), false},
		{"/a\x00b", false},
	} {
		if err := CheckAddress(tc.addr); (err == nil) != tc.ok {
			t.Errorf("CheckAddress(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
}

func TestIsReady(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		{"READY=1", true},
		{"READY=1\n", true},
		{"STATUS=starting\nREADY=1\nMAINPID=1", true},
		{"READY=10", false},
		{"READY=0", false},
		{"XREADY=1", false},
		{"STATUS=READY=1", false},
		{"MAINPID=1", false},
		{"", false},
	} {
		if got := IsReady([]byte(tc.msg)); got != tc.want {
			t.Errorf("IsReady(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
}

// fakeManager is a service manager's notify socket: it keeps what it reads
// and, unless deaf, closes the fds that come with it (the barrier).
type fakeManager struct {
	conn *net.UnixConn
	msgs chan string
}

func newFakeManager(t *testing.T, deaf bool) (string, *fakeManager) {
	t.Helper()
	addr := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeManager{conn: conn, msgs: make(chan string, 16)}
	t.Cleanup(func() { conn.Close() })
	go func() {
		var kept []int
		defer func() {
			for _, fd := range kept {
				unix.Close(fd)
			}
		}()
		buf, oob := make([]byte, 4096), make([]byte, 256)
		for {
			n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
			if err != nil {
				return
			}
			if cms, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for _, cm := range cms {
					fds, _ := unix.ParseUnixRights(&cm)
					if deaf {
						kept = append(kept, fds...)
						continue
					}
					for _, fd := range fds {
						unix.Close(fd)
					}
				}
			}
			m.msgs <- string(buf[:n])
		}
	}()
	return addr, m
}

func (m *fakeManager) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-m.msgs:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("the manager got nothing")
		return ""
	}
}

func TestNotifySendsReadyAndMainPidThenBarrier(t *testing.T) {
	addr, m := newFakeManager(t, false)
	if err := Notify(addr, 4242); err != nil {
		t.Fatal(err)
	}
	if got := m.next(t); got != "READY=1\nMAINPID=4242\n" {
		t.Errorf("first message %q", got)
	}
	if got := m.next(t); got != "BARRIER=1" {
		t.Errorf("second message %q", got)
	}
}

func TestNotifyBarrierNotAcknowledged(t *testing.T) {
	defer func(d time.Duration) { BarrierTimeout = d }(BarrierTimeout)
	BarrierTimeout = 200 * time.Millisecond
	addr, m := newFakeManager(t, true)
	err := Notify(addr, 7)
	if err == nil || !strings.Contains(err.Error(), ErrNoBarrier.Error()) {
		t.Fatalf("Notify to a manager that keeps the barrier's fd: %v", err)
	}
	if got := m.next(t); got != "READY=1\nMAINPID=7\n" {
		t.Errorf("the message still went out first: %q", got)
	}
}

func TestNotifyNobodyListening(t *testing.T) {
	err := Notify(filepath.Join(t.TempDir(), "none"), 1)
	if err == nil || !strings.Contains(err.Error(), "NOTIFY_SOCKET=") {
		t.Fatalf("Notify to a missing socket: %v", err)
	}
	if err := Notify("relative", 1); err == nil {
		t.Fatal("Notify to a relative address succeeded")
	}
}

func send(t *testing.T, path, msg string) {
	t.Helper()
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func TestWaitReady(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sends []string
		ready bool
	}{
		{"ready", []string{"READY=1"}, true},
		{"status first, then ready", []string{"STATUS=warming up", "MAINPID=1", "READY=1"}, true},
		{"ready inside a longer message", []string{"STATUS=x\nREADY=1"}, true},
		{"never ready, then gone", []string{"STATUS=x", "READY=0", "MAINPID=1"}, false},
		{"nothing, then gone", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), SocketName)
			l, err := Listen(path)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != 0o777 {
				t.Fatalf("socket mode: %v %v", st, err)
			}
			for _, s := range tc.sends {
				send(t, path, s)
			}
			var asked atomic.Int32
			gone := func() bool { return asked.Add(1) > 2 }
			ready, err := l.WaitReady(gone)
			if err != nil || ready != tc.ready {
				t.Fatalf("WaitReady = %v, %v; want %v", ready, err, tc.ready)
			}
		})
	}
}

func TestCloseRemovesTheSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), SocketName)
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("socket left after Close: %v", err)
	}
}
