//go:build linux

package integration

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// A caller's NOTIFY_SOCKET (systemd's Type=notify, podman's
// --sdnotify=container) is relayed as runc relays it: the container gets a
// socket at /run/notify/notify.sock, and the runtime tells the caller
// READY=1 with the container's init as MAINPID once the program says so.

// notifyManager is a service manager's notify socket: it keeps every
// datagram and closes the fds that come with one (BARRIER=1's pipe).
type notifyManager struct {
	addr string
	msgs chan string
}

func newNotifyManager(t *testing.T, dir string) *notifyManager {
	t.Helper()
	addr := filepath.Join(dir, "manager.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	m := &notifyManager{addr: addr, msgs: make(chan string, 64)}
	go func() {
		buf, oob := make([]byte, 4096), make([]byte, 256)
		for {
			n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
			if err != nil {
				return
			}
			if cms, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
				for _, cm := range cms {
					fds, _ := unix.ParseUnixRights(&cm)
					for _, fd := range fds {
						unix.Close(fd)
					}
				}
			}
			m.msgs <- string(buf[:n])
		}
	}()
	return m
}

// got returns what the manager received until it has been quiet for a
// while.
func (m *notifyManager) got(quiet time.Duration) []string {
	var out []string
	for {
		select {
		case s := <-m.msgs:
			out = append(out, s)
		case <-time.After(quiet):
			return out
		}
	}
}

// vettoNotify runs the binary with NOTIFY_SOCKET=addr in its environment.
func (e *env) vettoNotify(addr string, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(binary, append([]string{"--root", e.root}, args...)...)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+addr)
	return e.runCmd(cmd)
}

// notifyBundle is a bundle whose process is script, with sysprobe (which
// sends a datagram to $NOTIFY_SOCKET: "sysprobe notify MSG") at /probe.
func (e *env) notifyBundle(script string) string {
	e.t.Helper()
	probe := filepath.Dir(buildSysprobe(e.t, filepath.Join(e.tmp, "probe")))
	return e.bundle([]string{"sh", "-c", script}, func(s *specs.Spec) {
		s.Mounts = append(s.Mounts, specs.Mount{Destination: "/probe", Type: "bind", Source: probe, Options: []string{"bind", "ro"}})
	})
}

// The attack: the container writes MAINPID=1 (the host's init: a service
// manager that believed it would watch, and at stop kill, the host's pid
// 1) and other assignments beside READY=1. The caller gets READY=1 and the
// container's own init as MAINPID, nothing else. A detached run returns
// only once the program said it is ready, and the socket's directory is
// read-only in the container.
func TestNotifySocketPassesOnReadyOnly(t *testing.T) {
	e := newEnv(t)
	m := newNotifyManager(t, e.tmp)
	id := e.id()
	bundle := e.notifyBundle(`
echo "env=$NOTIFY_SOCKET"
if touch /run/notify/planted 2>/dev/null; then echo WROTE-NOTIFY-DIR; fi
/probe/sysprobe notify MAINPID=1
/probe/sysprobe notify "$(printf 'STATUS=warming up\nMAINPID=1')"
sleep 0.5
/probe/sysprobe notify "$(printf 'MAINPID=1\nREADY=1\nEXTEND_TIMEOUT_USEC=999999999')"
exec sleep 1000`)
	out := e.tempFile()
	cmd := exec.Command(binary, "--root", e.root, "run", "-d", "--bundle", bundle, id)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+m.addr)
	cmd.Stdout, cmd.Stderr = out, out
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("run -d with NOTIFY_SOCKET: %v: %s", err, readAll(t, out))
	}
	took := time.Since(began)
	msgs := m.got(500 * time.Millisecond)
	pid := strconv.Itoa(int(e.state(id)["pid"].(float64)))
	want := []string{"READY=1\nMAINPID=" + pid + "\n", "BARRIER=1"}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("the manager got %q, want %q", msgs, want)
	}
	if took < 400*time.Millisecond {
		t.Errorf("run -d returned after %s, before the program said READY=1 (0.5 s in)", took)
	}
	e.mustVetto("delete", "--force", id)
	printed := readAll(t, out)
	if !strings.Contains(printed, "env=/run/notify/notify.sock") {
		t.Errorf("the container's NOTIFY_SOCKET: %q", printed)
	}
	if strings.Contains(printed, "WROTE-NOTIFY-DIR") {
		t.Errorf("the container wrote into its notify directory: %q", printed)
	}
}

// create and start: the start binds the socket and returns once the
// program is ready; a program that ends without READY=1 ends the wait, and
// the caller hears nothing.
func TestNotifySocketCreateStart(t *testing.T) {
	e := newEnv(t)
	m := newNotifyManager(t, e.tmp)

	id := e.id()
	bundle := e.notifyBundle(`sleep 0.3; /probe/sysprobe notify READY=1; exec sleep 1000`)
	if r := e.vettoNotify(m.addr, "create", "--bundle", bundle, id); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	if r := e.vettoNotify(m.addr, "start", id); r.code != 0 {
		t.Fatalf("start: %s", r)
	}
	pid := strconv.Itoa(int(e.state(id)["pid"].(float64)))
	if msgs := m.got(300 * time.Millisecond); len(msgs) == 0 || msgs[0] != "READY=1\nMAINPID="+pid+"\n" {
		t.Errorf("after start the manager had %q, want READY=1 and MAINPID=%s", msgs, pid)
	}
	e.mustVetto("delete", "--force", id)

	quiet := e.id()
	bundle = e.notifyBundle(`/probe/sysprobe notify STATUS=bye; exit 0`)
	if r := e.vettoNotify(m.addr, "create", "--bundle", bundle, quiet); r.code != 0 {
		t.Fatalf("create: %s", r)
	}
	done := make(chan result, 1)
	go func() { done <- e.vettoNotify(m.addr, "start", quiet) }()
	select {
	case r := <-done:
		if r.code != 0 {
			t.Errorf("start of a program that ends without READY=1: %s", r)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("start still waits for READY=1 20 s after its program ended")
	}
	if msgs := m.got(300 * time.Millisecond); len(msgs) != 0 {
		t.Errorf("the manager heard %q from a program that never said READY=1", msgs)
	}
	e.mustVetto("delete", "--force", quiet)
}

// A NOTIFY_SOCKET that cannot name a socket is refused before anything is
// made, in one line that names it.
func TestNotifySocketBadValue(t *testing.T) {
	e := newEnv(t)
	bundle := e.bundle([]string{"true"}, nil)
	for _, bad := range []string{"relative/notify", "/" + strings.Repeat("n", 120)} {
		id := e.id()
		r := e.vettoNotify(bad, "run", "--bundle", bundle, id)
		if r.code != 1 || !strings.Contains(r.stderr, "NOTIFY_SOCKET=") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("NOTIFY_SOCKET=%.20q…: %s, want exit 1 and one line naming it", bad, r)
		}
		if _, err := os.Stat(filepath.Join(e.root, id)); !os.IsNotExist(err) {
			t.Errorf("NOTIFY_SOCKET=%.20q…: state directory left: %v", bad, err)
		}
	}
}

// A policy sandbox (its own user namespace, root unmapped, Landlock) gets
// the relay too: the mount is the runtime's own, and its mount point is in
// the compiled rootfs.
func TestNotifySocketPolicySandbox(t *testing.T) {
	e := newEnv(t)
	m := newNotifyManager(t, e.tmp)
	p := policyProject(e)
	buildSysprobe(t, p)
	bundle, _ := e.compilePolicy(`extends = "default"`+"\n", p, "./sysprobe notify READY=1; sleep 0.3")
	id := e.id()
	r := e.vettoNotify(m.addr, append(append([]string{"run"}, runFlags...), "--bundle", bundle, id)...)
	if r.code != 0 || !strings.Contains(r.stdout, "notify OK") {
		t.Fatalf("policy run with NOTIFY_SOCKET: %s", r)
	}
	if msgs := m.got(300 * time.Millisecond); len(msgs) == 0 || !strings.HasPrefix(msgs[0], "READY=1\nMAINPID=") {
		t.Errorf("the manager got %q, want READY=1", msgs)
	}
}
