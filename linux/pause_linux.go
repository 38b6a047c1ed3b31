package linux

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// pause sleeps for d, to the microsecond when d is under a millisecond.
//
// The polls here wait for a kernel event that is usually a fraction of a
// millisecond away: an init's exec, its exit, a cgroup emptying. Go's
// time.Sleep parks the goroutine on the runtime's timer, and a process
// with nothing else to do then waits in the netpoller, whose timeout is
// in whole milliseconds: a time.Sleep of 20 µs takes about 1.1 ms on the
// 2-CPU test host, every time. A start that polls for its init's exec
// paid that millisecond on every container. Under a millisecond, pause
// blocks the thread in nanosleep(2) instead, which sleeps as asked; a
// signal's interruption sleeps the rest, so it never returns early.
func pause(d time.Duration) {
	if d >= time.Millisecond {
		time.Sleep(d)
		return
	}
	ts := unix.NsecToTimespec(int64(d))
	for ts.Sec > 0 || ts.Nsec > 0 {
		var left unix.Timespec
		if err := unix.Nanosleep(&ts, &left); !errors.Is(err, unix.EINTR) {
			return
		}
		ts = left
	}
}
