package hooks

import (
	"fmt"
)

// PassedFD is what one file the caller hands a container besides its
// stdio is: one of --preserve-fds, or of socket activation's LISTEN_FDS.
// An open file keeps the access it was opened with wherever it goes: the
// container's mounts, namespaces, devices cgroup and Landlock, all
// checked when a file is opened, do not apply to it.
type PassedFD struct {
	FD int `json:"fd"`
	// What the file is, as the launch line and a refusal name it.
	What string `json:"what"`
	// Channel: it carries data and reaches nothing else — a pipe or FIFO,
	// a socket that is connected or listening, a file of an ordinary file
	// system open for reading or writing, one of the null devices every
	// container has. Anything else is a handle on the host: a directory
	// or O_PATH descriptor (the host's file tree, through openat and
	// ".."), a device (around the devices cgroup), a terminal (TIOCSTI
	// types into the host's shell), a file of a kernel file system (proc,
	// sysfs, cgroup: host settings and processes), a pidfd, a namespace,
	// an event or ring of the kernel, a socket that is neither connected
	// nor listening (it sends from the host's network namespace, or
	// connects to its abstract unix sockets).
	Channel bool `json:"channel"`
	// NotPassed: the caller did not pass this fd — it is not open, or it
	// is the runtime's own (close-on-exec: it did not survive the
	// runtime's execve; since Go 1.25 the Go runtime opens cgroup files
	// at start, at fds 3 and 4 when nothing was inherited).
	NotPassed bool `json:"-"`
}

func (p PassedFD) String() string { return fmt.Sprintf("fd %d (%s)", p.FD, p.What) }

// HostHandles lists, as "fd N (what)", the passed files that are not
// data channels.
func HostHandles(passed []PassedFD) []string {
	var out []string
	for _, p := range passed {
		if !p.Channel {
			out = append(out, p.String())
		}
	}
	return out
}

// PassedRange is the fds a create or exec passes: 3 up to
// 3+listen+preserve-1, socket activation's first (runc's order).
func PassedRange(listen, preserve int) []int {
	fds := make([]int, 0, listen+preserve)
	for fd := 3; fd < 3+listen+preserve; fd++ {
		fds = append(fds, fd)
	}
	return fds
}
