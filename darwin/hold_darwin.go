//go:build darwin

package darwin

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Hold is the holder: the runtime itself, started by sandbox-exec inside
// the sandbox as
//
//	<self> darwin-hold --fifo F --ready N [--umask U] [--rlimit R:S:H]... -- ARGS...
//
// It sets the process's limits, finds the program, says "ready" on fd N,
// then blocks opening the fifo for writing until start opens it for
// reading, writes one byte and execs ARGS with the spec's environment
// (its own). The fifo is close-on-exec: start sees end-of-file once the
// exec happened. It runs only what the sandbox already confines; it
// returns (an exit status) only when it could not exec.
func Hold(args []string) int {
	fail := func(ready *os.File, format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		if ready != nil {
			fmt.Fprintln(ready, msg)
		}
		fmt.Fprintln(os.Stderr, "vetto-runtime "+HoldArg+":", msg)
		return 127
	}
	var fifo string
	var ready *os.File
	var umask *int
	var rlimits [][3]uint64
	i := 2
	for ; i < len(args) && args[i] != "--"; i++ {
		if i+1 >= len(args) {
			return fail(ready, "flag %s needs a value", args[i])
		}
		v := args[i+1]
		switch args[i] {
		case "--fifo":
			fifo = v
		case "--ready":
			n, err := strconv.Atoi(v)
			if err != nil || n < 3 {
				return fail(nil, "--ready %q", v)
			}
			ready = os.NewFile(uintptr(n), "ready")
		case "--umask":
			n, err := strconv.ParseUint(v, 8, 32)
			if err != nil {
				return fail(ready, "--umask %q", v)
			}
			m := int(n)
			umask = &m
		case "--rlimit":
			var rl [3]uint64
			parts := strings.Split(v, ":")
			if len(parts) != 3 {
				return fail(ready, "--rlimit %q", v)
			}
			for j, p := range parts {
				n, err := strconv.ParseUint(p, 10, 64)
				if err != nil {
					return fail(ready, "--rlimit %q", v)
				}
				rl[j] = n
			}
			rlimits = append(rlimits, rl)
		default:
			return fail(ready, "unknown flag %q", args[i])
		}
		i++
	}
	if ready == nil || fifo == "" || i+1 >= len(args) {
		return fail(ready, "usage: %s --fifo F --ready N [...] -- ARGS...", HoldArg)
	}
	argv := args[i+1:]
	if umask != nil {
		unix.Umask(*umask)
	}
	for _, rl := range rlimits {
		if err := unix.Setrlimit(int(rl[0]), &unix.Rlimit{Cur: rl[1], Max: rl[2]}); err != nil {
			return fail(ready, "setrlimit %d: %v", rl[0], err)
		}
	}
	// Resolved inside the sandbox with the spec's PATH, as runc resolves
	// it inside the container, and before start, so that create fails
	// (with runc's words) rather than start.
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return fail(ready, "notfound: exec: %q: executable file not found in $PATH", argv[0])
	}
	fmt.Fprintln(ready, "ready")
	ready.Close()

	fd, err := unix.Open(fifo, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail(nil, "open start fifo: %v", err)
	}
	if _, err := unix.Write(fd, []byte{'1'}); err != nil {
		return fail(nil, "write start fifo: %v", err)
	}
	err = unix.Exec(path, argv, os.Environ())
	return fail(nil, "exec %s: %v", path, err)
}

// SelfTest runs inside the base profile for doctor as
// "<self> darwin-selftest ADDR": it must find itself sandboxed, and a
// connect to the host's listener at ADDR must fail.
func SelfTest(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: vetto-runtime", SelfTestArg, "ADDR")
		return 2
	}
	in, err := sandboxed(os.Getpid())
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "sandbox_check:", err)
		return 1
	case !in:
		fmt.Fprintln(os.Stderr, "not sandboxed")
		return 1
	}
	if conn, err := net.DialTimeout("tcp4", args[2], 500*time.Millisecond); err == nil {
		conn.Close()
		fmt.Fprintln(os.Stderr, "connected to the host's loopback listener")
		return 1
	}
	return 0
}
