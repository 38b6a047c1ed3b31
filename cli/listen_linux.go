package cli

import (
	"os"
	"strconv"
)

// socketActivation is the number of sockets systemd's socket activation
// handed this process (sd_listen_fds(3)): LISTEN_FDS, when LISTEN_PID is
// this process's pid, as runc reads them. create and run pass them to
// the container as fds 3.., before --preserve-fds's, with LISTEN_FDS and
// LISTEN_PID=1 in its process's environment.
func socketActivation() int {
	pid, err := strconv.Atoi(os.Getenv("LISTEN_PID"))
	if err != nil || pid != os.Getpid() {
		return 0
	}
	n, err := strconv.Atoi(os.Getenv("LISTEN_FDS"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
