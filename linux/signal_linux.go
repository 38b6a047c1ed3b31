package linux

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Real-time signal range as glibc exposes it (the kernel's 32 and 33 are
// taken by the C library), which is what `kill -l` shows users.
const (
	sigRTMin = 34
	sigRTMax = 64
)

// ParseSignal accepts what runc and kill(1) accept: a number, or a name with
// or without "SIG" in any case, including RTMIN+n and RTMAX-n.
func ParseSignal(raw string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(raw); err == nil {
		if n < 1 || n > sigRTMax {
			return 0, fmt.Errorf("invalid signal number %d", n)
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(raw)
	name = strings.TrimPrefix(name, "SIG")
	if rt, ok := parseRT(name); ok {
		return rt, nil
	}
	if s := unix.SignalNum("SIG" + name); s != 0 {
		return s, nil
	}
	return 0, fmt.Errorf("unknown signal %q", raw)
}

func parseRT(name string) (syscall.Signal, bool) {
	base, sign, rest := 0, 1, ""
	switch {
	case name == "RTMIN":
		return sigRTMin, true
	case name == "RTMAX":
		return sigRTMax, true
	case strings.HasPrefix(name, "RTMIN+"):
		base, rest = sigRTMin, name[len("RTMIN+"):]
	case strings.HasPrefix(name, "RTMAX-"):
		base, sign, rest = sigRTMax, -1, name[len("RTMAX-"):]
	default:
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		return 0, false
	}
	s := base + sign*n
	if s < sigRTMin || s > sigRTMax {
		return 0, false
	}
	return syscall.Signal(s), true
}
