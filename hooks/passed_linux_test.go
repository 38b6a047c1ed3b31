package hooks

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Each kind of open file, as a caller would pass it, examined as
// create examines --preserve-fds and LISTEN_FDS.
func TestExaminePassed(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	openFD := func(t *testing.T, path string, flags int) int {
		t.Helper()
		fd, err := unix.Open(path, flags, 0)
		if err != nil {
			t.Skipf("open %s: %v", path, err)
		}
		return fd
	}
	socketFD := func(t *testing.T, domain, typ int) int {
		t.Helper()
		fd, err := unix.Socket(domain, typ, 0)
		if err != nil {
			t.Skipf("socket: %v", err)
		}
		return fd
	}
	tests := []struct {
		name    string
		open    func(t *testing.T) int
		channel bool
		what    string
	}{
		{"pipe", func(t *testing.T) int {
			var p [2]int
			if err := unix.Pipe(p[:]); err != nil {
				t.Fatal(err)
			}
			unix.Close(p[1])
			return p[0]
		}, true, "a pipe"},
		{"regular file", func(t *testing.T) int { return openFD(t, file, unix.O_RDONLY) }, true, "the file " + file},
		{"memfd", func(t *testing.T) int {
			fd, err := unix.MemfdCreate("passed", 0)
			if err != nil {
				t.Skipf("memfd_create: %v", err)
			}
			return fd
		}, true, "/memfd:passed"},
		{"/dev/null", func(t *testing.T) int { return openFD(t, "/dev/null", unix.O_RDWR) }, true, "/dev/null"},
		{"unix socket pair", func(t *testing.T) int {
			p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { unix.Close(p[1]) })
			return p[0]
		}, true, "a connected unix socket"},
		{"listening unix socket", func(t *testing.T) int {
			l, err := net.Listen("unix", filepath.Join(dir, "l.sock"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			f, err := l.(*net.UnixListener).File()
			if err != nil {
				t.Fatal(err)
			}
			fd, _ := unix.Dup(int(f.Fd()))
			f.Close()
			return fd
		}, true, "a listening unix socket"},
		{"unconnected unix stream socket", func(t *testing.T) int { return socketFD(t, unix.AF_UNIX, unix.SOCK_STREAM) }, false, "an unconnected unix socket"},
		{"unix datagram socket", func(t *testing.T) int { return socketFD(t, unix.AF_UNIX, unix.SOCK_DGRAM) }, false, "a unix datagram socket"},
		{"inet udp socket", func(t *testing.T) int { return socketFD(t, unix.AF_INET, unix.SOCK_DGRAM) }, false, "an inet udp socket"},
		{"inet tcp socket", func(t *testing.T) int { return socketFD(t, unix.AF_INET, unix.SOCK_STREAM) }, false, "an inet tcp socket"},
		{"netlink socket", func(t *testing.T) int { return socketFD(t, unix.AF_NETLINK, unix.SOCK_RAW) }, false, "a netlink socket"},
		{"directory", func(t *testing.T) int { return openFD(t, dir, unix.O_RDONLY|unix.O_DIRECTORY) }, false, "the directory " + dir},
		{"O_PATH of a file", func(t *testing.T) int { return openFD(t, file, unix.O_PATH) }, false, "an O_PATH descriptor of " + file},
		{"proc file", func(t *testing.T) int { return openFD(t, "/proc/self/status", unix.O_RDONLY) }, false, "a file of the kernel's proc"},
		{"namespace", func(t *testing.T) int { return openFD(t, "/proc/self/ns/net", unix.O_RDONLY) }, false, "a file of the kernel's nsfs"},
		{"pidfd", func(t *testing.T) int {
			fd, err := unix.PidfdOpen(os.Getpid(), 0)
			if err != nil {
				t.Skipf("pidfd_open: %v", err)
			}
			return fd
		}, false, "pidfd"},
		{"eventfd", func(t *testing.T) int {
			fd, err := unix.Eventfd(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			return fd
		}, false, "eventfd"},
		{"terminal multiplexer", func(t *testing.T) int { return openFD(t, "/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY) }, false, "the character device 5:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := tt.open(t)
			defer unix.Close(fd)
			// What a caller passes has survived its execve: no close-on-exec.
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
				t.Fatal(err)
			}
			got := ExaminePassed([]int{fd})[0]
			if got.FD != fd || got.Channel != tt.channel || got.NotPassed || !strings.Contains(got.What, tt.what) {
				t.Errorf("ExaminePassed(%s) = %+v, want channel %v and %q in what", tt.name, got, tt.channel, tt.what)
			}
		})
	}
	// An fd the caller did not pass: closed, or one of ours (close-on-exec).
	fd := openFD(t, file, unix.O_RDONLY|unix.O_CLOEXEC)
	defer unix.Close(fd)
	if got := ExaminePassed([]int{fd})[0]; !got.NotPassed {
		t.Errorf("a close-on-exec fd: %+v, want NotPassed", got)
	}
	if got := ExaminePassed([]int{1 << 20})[0]; !got.NotPassed {
		t.Errorf("a closed fd: %+v, want NotPassed", got)
	}
}
