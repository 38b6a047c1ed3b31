package relayproc

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/landlock"
)

// The relay's hardening, each piece as the attack it stops: a child
// process (this test binary, re-executed) applies it and then tries what a
// relay taken over by a hostile workload would try. A kill by the seccomp
// filter shows as SIGSYS.

const hardenChildEnv = "TESTONLY_RELAY_HARDEN_CHILD"

// preListener is made before the filter, as the relay's are.
var preListener net.Listener

func TestMain(m *testing.M) {
	if what := os.Getenv(hardenChildEnv); what != "" {
		os.Exit(hardenChild(what))
	}
	os.Exit(m.Run())
}

// hardenChild applies the filter (and, as root, all of harden) and then
// makes the one call what names; it prints what the kernel answered.
func hardenChild(what string) int {
	mode, call, _ := strings.Cut(what, ":")
	if call == "dial" {
		// The relay's listeners exist before it hardens; so does this one.
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			fmt.Println("listen:", err)
			return 2
		}
		preListener = l
	}
	filter, err := relayFilter()
	if err != nil {
		fmt.Println("filter:", err)
		return 2
	}
	switch mode {
	case "filter":
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fmt.Println("nnp:", err)
			return 2
		}
		if err := filter.Load(); err != nil {
			fmt.Println("load:", err)
			return 2
		}
	case "landlock":
		// Landlock alone, with a thread that existed before it: every
		// thread is restricted, not only the caller.
		ready, opened := make(chan struct{}), make(chan error)
		go func() {
			goruntime.LockOSThread()
			<-ready
			f, err := os.Open("/etc/passwd")
			if err == nil {
				f.Close()
			}
			opened <- err
		}()
		if _, err := landlock.RestrictProcess(); err != nil {
			fmt.Println("landlock:", err)
			return 2
		}
		if call == "open-other-thread" {
			close(ready)
			fmt.Printf("%s: %v\n", call, errName(<-opened))
			return 0
		}
	case "harden":
		if err := harden(65534, filter); err != nil {
			fmt.Println("harden:", err)
			return 2
		}
	}
	err = attempt(call)
	fmt.Printf("%s: %v\n", call, errName(err))
	return 0
}

func errName(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	if err == nil {
		return "OK"
	}
	return err.Error()
}

func attempt(call string) error {
	switch call {
	case "socket-inet":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	case "dial":
		// The relay's own job: accept, and dial out, through the
		// netpoller.
		errs := make(chan error, 1)
		go func() {
			c, err := preListener.Accept()
			if err == nil {
				c.Close()
			}
			errs <- err
		}()
		c, err := net.Dial("tcp4", preListener.Addr().String())
		if err != nil {
			return err
		}
		c.Close()
		return <-errs
	case "thread":
		// A new OS thread (clone with CLONE_THREAD, via glibc's clone3
		// fallback).
		done := make(chan error)
		for i := 0; i < 8; i++ {
			go func() {
				lockAndExit()
				done <- nil
			}()
		}
		for i := 0; i < 8; i++ {
			<-done
		}
		return nil
	case "socket-unix":
		_, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		return err
	case "socket-netlink":
		_, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
		return err
	case "socket-raw":
		_, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP)
		return err
	case "socket-packet":
		_, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		return err
	case "open":
		f, err := os.Open("/etc/passwd")
		if err == nil {
			f.Close()
		}
		return err
	case "stat":
		_, err := os.Stat("/etc/shadow")
		return err
	case "exec":
		return syscall.Exec("/bin/true", []string{"true"}, nil)
	case "fork":
		_, _, e := unix.RawSyscall6(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
		if e != 0 {
			return e
		}
		return nil
	case "mmap-exec":
		_, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE|unix.MAP_ANON)
		return err
	case "mprotect-exec":
		b, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			return err
		}
		return unix.Mprotect(b, unix.PROT_READ|unix.PROT_EXEC)
	case "ptrace":
		return unix.PtraceAttach(1)
	case "kill-init":
		return unix.Kill(1, 0)
	case "setuid-root":
		return syscall.Setresuid(0, 0, 0)
	case "bind-tcp":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Bind(fd, &unix.SockaddrInet4{Port: 0, Addr: [4]byte{127, 0, 0, 1}})
	}
	return fmt.Errorf("unknown call %q", call)
}

// lockAndExit ends its goroutine locked to its thread, which Go then
// retires: the next goroutine needs a new thread.
func lockAndExit() { goruntime.LockOSThread() }

func runHardenChild(t *testing.T, what string) (string, syscall.Signal) {
	t.Helper()
	// argv[1] "relay": the early hardening's constructor runs, as in the
	// relay (TestMain never parses these as flags).
	cmd := exec.Command(os.Args[0], "relay", t.TempDir())
	cmd.Env = append(os.Environ(), hardenChildEnv+"="+what)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return string(out), ws.Signal()
		}
		t.Fatalf("child %s: %v: %s", what, err, out)
	} else if err != nil {
		t.Fatalf("child %s: %v", what, err)
	}
	return strings.TrimSpace(string(out)), 0
}

// TestRelayFilter: the seccomp filter alone (no root needed).
func TestRelayFilter(t *testing.T) {
	tests := []struct {
		call string
		want string // the child's line, or "SIGSYS" for a kill
	}{
		// What the relay does keeps working.
		{"socket-inet", "socket-inet: OK"},
		{"dial", "dial: OK"},
		{"thread", "thread: OK"},
		// Refused with an errno: what Go's resolver tries and survives.
		{"open", "open: EACCES"},
		{"stat", "stat: EACCES"},
		// What a relay taken over would try: the process dies.
		{"socket-unix", "SIGSYS"},
		{"socket-netlink", "SIGSYS"},
		{"socket-raw", "SIGSYS"},
		{"socket-packet", "SIGSYS"},
		{"exec", "SIGSYS"},
		{"fork", "SIGSYS"},
		{"mmap-exec", "SIGSYS"},
		{"mprotect-exec", "SIGSYS"},
		{"ptrace", "SIGSYS"},
		{"kill-init", "SIGSYS"},
		{"setuid-root", "SIGSYS"},
		{"bind-tcp", "SIGSYS"},
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			out, sig := runHardenChild(t, "filter:"+tt.call)
			got := out
			if sig != 0 {
				got = unix.SignalName(sig)
			}
			if got != tt.want {
				t.Fatalf("%s under the relay's filter: got %q, want %q", tt.call, got, tt.want)
			}
		})
	}
}

// TestRelayLandlock: the relay's Landlock domain alone: nothing opens, on
// any thread, and a TCP bind is refused (ABI 4).
func TestRelayLandlock(t *testing.T) {
	for _, tt := range []struct{ call, want string }{
		{"open", "open: EACCES"},
		{"open-other-thread", "open-other-thread: EACCES"},
		{"stat", "stat: OK"}, // Landlock does not control stat: the filter does
		{"bind-tcp", "bind-tcp: EACCES"},
		{"dial", "dial: OK"},
	} {
		t.Run(tt.call, func(t *testing.T) {
			if out, sig := runHardenChild(t, "landlock:"+tt.call); out != tt.want || sig != 0 {
				t.Fatalf("%s under the relay's Landlock domain: got %q (signal %v), want %q", tt.call, out, sig, tt.want)
			}
		})
	}
}

// Started any other way than as `vetto-runtime relay`, the constructor
// did not empty the bounding set before the threads existed, and harden
// refuses rather than go on without it.
func TestRelayHardenNeedsTheConstructor(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hardenChildEnv+"=harden:dial")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "early hardening did not run") {
		t.Fatalf("harden without the constructor: %v: %s", err, out)
	}
}

// TestRelayHarden: all of it, as the relay does it (root: setresuid).
// After it the process is nobody with no capability, in a Landlock
// domain that opens nothing, and the filter is on every thread.
func TestRelayHarden(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("TestRelayHarden needs root (setresuid); in CI this is a failure")
		}
		t.Skip("needs root (setresuid)")
	}
	tests := []struct{ call, want string }{
		{"dial", "dial: OK"},
		{"thread", "thread: OK"},
		{"open", "open: EACCES"},
		{"setuid-root", "SIGSYS"},
		{"exec", "SIGSYS"},
		{"socket-unix", "SIGSYS"},
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			out, sig := runHardenChild(t, "harden:"+tt.call)
			got := out
			if sig != 0 {
				got = unix.SignalName(sig)
			}
			if got != tt.want {
				t.Fatalf("%s after harden: got %q, want %q", tt.call, got, tt.want)
			}
		})
	}
}
