package relayproc

/*
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

// The relay's first hardening steps, in a constructor: it runs before the
// Go runtime starts its threads (as libcontainer's nsexec does), so the
// settings below are made once, on the one thread there is, and every
// thread Go creates later inherits them. Done from Go, each is a libpsx
// broadcast to every thread, and emptying the bounding set one capability
// at a time is forty of them: milliseconds added to every launch with a
// relay.
//
// vetto_relay_early_errno is -1 when this process is not the relay
// (argv[1] is not "relay"), 0 when every step succeeded, else the errno
// of the step vetto_relay_early_step names.
int vetto_relay_early_errno = -1;
int vetto_relay_early_step = 0;

__attribute__((constructor)) static void vetto_relay_early(int argc, char **argv) {
	if (argc != 3 || argv[1] == NULL || strcmp(argv[1], "relay") != 0)
		return;
	vetto_relay_early_errno = 0;
	// 1: nothing it could exec gains privilege.
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		vetto_relay_early_errno = errno;
		vetto_relay_early_step = 1;
		return;
	}
	// 2: the bounding set, every capability the kernel knows (reading one
	// past the last fails with EINVAL).
	for (int c = 0; c < 64; c++) {
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) < 0)
			break;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
			vetto_relay_early_errno = errno;
			vetto_relay_early_step = 2;
			return;
		}
	}
	// 3: the ambient set.
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
		vetto_relay_early_errno = errno;
		vetto_relay_early_step = 3;
		return;
	}
}
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
)

// earlyHardening reports what the constructor did: nil when the process
// was started as the relay and set no_new_privs and emptied its bounding
// and ambient sets before any other thread existed.
func earlyHardening() error {
	switch int(C.vetto_relay_early_errno) {
	case 0:
		return nil
	case -1:
		return errors.New("not started as `vetto-runtime relay`: the early hardening did not run")
	}
	what := "step " + fmt.Sprint(int(C.vetto_relay_early_step))
	switch C.vetto_relay_early_step {
	case 1:
		what = "no_new_privs"
	case 2:
		what = "drop the bounding set"
	case 3:
		what = "clear the ambient set"
	}
	return fmt.Errorf("%s: %w", what, syscall.Errno(int(C.vetto_relay_early_errno)))
}
