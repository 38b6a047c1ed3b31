package hooks

import (
	"fmt"
	"sort"
	"strings"
)

// capBits maps capability names to their bit in /proc/<pid>/status masks
// (linux/capability.h; the numbers are kernel ABI and never change).
var capBits = map[string]uint{
	"CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_DAC_READ_SEARCH": 2, "CAP_FOWNER": 3,
	"CAP_FSETID": 4, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7, "CAP_SETPCAP": 8,
	"CAP_LINUX_IMMUTABLE": 9, "CAP_NET_BIND_SERVICE": 10, "CAP_NET_BROADCAST": 11,
	"CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_IPC_LOCK": 14, "CAP_IPC_OWNER": 15,
	"CAP_SYS_MODULE": 16, "CAP_SYS_RAWIO": 17, "CAP_SYS_CHROOT": 18, "CAP_SYS_PTRACE": 19,
	"CAP_SYS_PACCT": 20, "CAP_SYS_ADMIN": 21, "CAP_SYS_BOOT": 22, "CAP_SYS_NICE": 23,
	"CAP_SYS_RESOURCE": 24, "CAP_SYS_TIME": 25, "CAP_SYS_TTY_CONFIG": 26, "CAP_MKNOD": 27,
	"CAP_LEASE": 28, "CAP_AUDIT_WRITE": 29, "CAP_AUDIT_CONTROL": 30, "CAP_SETFCAP": 31,
	"CAP_MAC_OVERRIDE": 32, "CAP_MAC_ADMIN": 33, "CAP_SYSLOG": 34, "CAP_WAKE_ALARM": 35,
	"CAP_BLOCK_SUSPEND": 36, "CAP_AUDIT_READ": 37, "CAP_PERFMON": 38, "CAP_BPF": 39,
	"CAP_CHECKPOINT_RESTORE": 40,
}

// CapMask turns capability names into a mask. Names the kernel does not
// know are an error: a spec that names one asks for something unknowable.
func CapMask(names []string) (uint64, error) {
	var m uint64
	for _, n := range names {
		b, ok := capBits[strings.ToUpper(n)]
		if !ok {
			return 0, fmt.Errorf("unknown capability %q", n)
		}
		m |= 1 << b
	}
	return m, nil
}

// CapNames lists the names of the bits set in m, for messages.
func CapNames(m uint64) []string {
	var out []string
	for n, b := range capBits {
		if m&(1<<b) != 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	if extra := m &^ allCaps(); extra != 0 {
		out = append(out, fmt.Sprintf("unknown bits %#x", extra))
	}
	return out
}

func allCaps() uint64 {
	var m uint64
	for _, b := range capBits {
		m |= 1 << b
	}
	return m
}

// capDiff says what differs between two masks, by name.
func capDiff(want, got uint64) string {
	var parts []string
	if missing := want &^ got; missing != 0 {
		parts = append(parts, "missing "+strings.Join(CapNames(missing), ","))
	}
	if extra := got &^ want; extra != 0 {
		parts = append(parts, "extra "+strings.Join(CapNames(extra), ","))
	}
	return strings.Join(parts, "; ")
}
