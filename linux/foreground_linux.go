package linux

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/utils"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"
)

// signalBuffer is large so that a burst of signals is not lost while we
// are busy reaping.
const signalBuffer = 2048

// foreground is `run` without --detach: we are the container init's parent
// and stay until it exits.
type foreground struct {
	proc    *libcontainer.Process
	io      *stdio
	signals chan os.Signal
	// allCaught is closed once every signal is caught (urgentSignals may
	// be before it): the container's program does not exec before it is.
	allCaught <-chan struct{}
	waited    bool
}

// newForeground registers for signals before the container starts, so
// neither the init's SIGCHLD nor a user's ^C can slip past, and makes us a
// child subreaper so orphans inside a shared-pid container are reaped here.
// With all, it returns with every signal caught (exec: the process runs at
// once); without, with urgentSignals caught and the rest on their way
// (allCaught), which a run's container waits for before its program execs
// (container.Start).
func newForeground(proc *libcontainer.Process, io *stdio, subreaper, all bool) (*foreground, error) {
	if subreaper {
		// Without it, processes that leave the container's init would be
		// reaped by someone else and escape our accounting: fail, do not
		// warn and go on.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return nil, fmt.Errorf("become child subreaper (use --no-subreaper to run without): %w", err)
		}
	}
	signals, allCaught := caughtSignals(all)
	return &foreground{proc: proc, io: io, signals: signals, allCaught: allCaught}, nil
}

// urgentSignals are caught before the container's init starts; the rest
// while it sets itself up, before its program execs. Registering a signal
// is one round trip through the Go runtime's signal-mask thread, some
// 30 µs between two CPUs here and several times that while the plan keeps
// both busy: all 65 took 2-2.5 ms, which every run waited for between its
// plan and its init. These are the ones whose loss in that window would
// cost something: the init's exit (SIGCHLD, which Wait and the short-job
// teardown rely on), and those a Go program dies of uncaught, which a
// user, a terminal or a process manager sends (HUP, INT, QUIT, TERM,
// ABRT; PIPE, on a write to a closed stdout or stderr). Of the others,
// one that arrives before the program execs is dropped by the Go runtime
// (USR1, USR2, ALRM, WINCH, CONT, the real-time ones: nothing is there
// yet to forward it to), or stops the runtime as the kernel does by
// default (TSTP, TTIN, TTOU), or — a kill with a synchronous fault's
// number (ILL, TRAP, BUS, FPE, SEGV, STKFLT, SYS) — ends it as SIGKILL
// would, before anything of the workload ran, and delete tears the
// container down.
var urgentSignals = []os.Signal{
	unix.SIGCHLD,
	unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGABRT, unix.SIGPIPE,
}

// early is the registration PrepareForeground began, if it did.
var early struct {
	sync.Mutex
	signals chan os.Signal
	// urgent is closed once urgentSignals are caught, all once every
	// signal is.
	urgent, all chan struct{}
}

// PrepareForeground begins registering for every signal in the
// background, urgentSignals first: it runs beside the plan and the
// records, and the rest beside the init's own set-up. newForeground waits
// for the urgent ones, so they are caught before the container's init
// starts; the container's Start waits for the rest.
func (*Backend) PrepareForeground() {
	early.Lock()
	defer early.Unlock()
	if early.signals != nil {
		return
	}
	early.signals, early.urgent, early.all = make(chan os.Signal, signalBuffer), make(chan struct{}), make(chan struct{})
	go func(c chan os.Signal, urgent, all chan struct{}) {
		signal.Notify(c, urgentSignals...)
		close(urgent)
		slowSignals()
		// Every signal; the urgent ones are not registered twice.
		signal.Notify(c)
		close(all)
	}(early.signals, early.urgent, early.all)
}

// caughtSignals is a channel every signal is delivered to, and a channel
// closed once every signal is caught: the registration PrepareForeground
// began (once), or a new one. It returns with urgentSignals caught, or,
// with all, every signal.
func caughtSignals(all bool) (chan os.Signal, <-chan struct{}) {
	early.Lock()
	c, urgent, done := early.signals, early.urgent, early.all
	early.signals, early.urgent, early.all = nil, nil, nil
	early.Unlock()
	if c != nil {
		<-urgent
		if all {
			<-done
		}
		return c, done
	}
	c = make(chan os.Signal, signalBuffer)
	signal.Notify(c)
	done = make(chan struct{})
	close(done)
	return c, done
}

// Wait forwards signals to the init until it exits and returns its status.
func (f *foreground) Wait() (int, error) {
	pid1, err := f.proc.Pid()
	if err != nil {
		return -1, err
	}
	<-f.allCaught
	f.io.resize()
	for s := range f.signals {
		switch s {
		case unix.SIGWINCH:
			f.io.resize()
		case unix.SIGCHLD:
			for _, e := range reap() {
				if e.pid == pid1 {
					// Wait on the process too: it finishes the
					// copying of its stdio before returning.
					_, _ = f.proc.Wait()
					f.waited = true
					return e.status, nil
				}
			}
		case unix.SIGURG:
			// The Go runtime's preemption signal, never the user's.
		default:
			logrus.Debugf("forwarding signal %v to %d", s, pid1)
			if err := f.proc.Signal(s); err != nil {
				logrus.Debugf("forward signal %v: %v", s, err)
			}
		}
	}
	return -1, nil
}

// AwaitExit waits up to limit for the init to exit, through a pidfd: it
// is this process's child, not reaped before Wait, so its pid cannot
// name another process meanwhile. False if it still runs, or if the
// kernel has no pidfd (before 5.3).
func (f *foreground) AwaitExit(limit time.Duration) bool {
	pid, err := f.proc.Pid()
	if err != nil {
		return false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(limit)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		ts := unix.NsecToTimespec(left.Nanoseconds())
		n, err := unix.Ppoll(fds, &ts, nil)
		if errors.Is(err, unix.EINTR) && left > 0 {
			continue
		}
		return err == nil && n > 0 && fds[0].Revents&unix.POLLIN != 0
	}
}

type exit struct{ pid, status int }

// reap collects every child that has exited, so none stays a zombie.
func reap() []exit {
	var out []exit
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err != nil || pid <= 0 {
			return out
		}
		out = append(out, exit{pid: pid, status: utils.ExitStatus(ws)})
	}
}

// Close releases stdio. Signals stay caught (and, with Wait returned,
// unforwarded) until the process exits, which it does next: run and exec
// return from here. signal.Stop would undo the registration of each of
// the 65 signals one at a time, every one a round trip through the Go
// runtime's signal-mask thread: 1-2 ms of every run's and exec's tail,
// to leave a process that is exiting open to ^C a moment sooner.
func (f *foreground) Close() {
	f.io.close()
}
