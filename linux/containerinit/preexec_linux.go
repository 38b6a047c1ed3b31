package containerinit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/landlock"
	"github.com/vetto-dev/vetto-runtime/shim"
)

// Exit status of an init whose pre-exec step refused the process: the
// sandbox was not established (125, README.md, exit codes).
const preExecRefused = 125

// canaryWait bounds how long the init waits for the host's plan, and then
// for its verdict: a start that died leaves an init that gives up rather
// than wait for ever — and then it never runs the program.
const canaryWait = 30 * time.Second

// preExec is the pre-exec step (shim.Config), run by libcontainer's init
// as its last step before it execs the process (libcontainer.PreExecHook):
// the init is the container's process — pid, user, capabilities,
// no_new_privs, seccomp filter, cwd, stdio as the process gets them — and
// still the sealed init executable, on its one locked thread (libcontainer
// runs the init with GOMAXPROCS 1 and the main thread locked). In order:
//
//  1. make the process non-dumpable, so no process of the same uid can
//     read or write its memory or fds through /proc;
//  2. restrict the thread with the Landlock ruleset, if any — the domain
//     the program inherits across execve;
//  3. run the canaries, if the host asked for them: accept the host's
//     connection on the inherited listener, read the plan, make the
//     attempts on the restricted thread, report, and wait for the verdict;
//     abort means the program never runs; exec keeps the connection open,
//     close-on-exec, to the execve (the fd the step returns to
//     libcontainer), so the host reads EOF on it once the program runs
//     and need not poll for the exec;
//
// The rlimits the init's Go code could not run under are set after it,
// by libcontainer, with raw system calls just before execve
// (Process.FinalRlimits).
//
// Because it is the init itself, not a process exec'd after it, it starts
// no Go runtime of its own: a container whose pids limit leaves room for
// its program alone runs as it does under runc. What fails is returned as
// a refusal: libcontainer prints it on the process's stderr and the init
// exits 125, so the process never runs less restricted than planned.
func preExec(data []byte, env []string) (keep int, err error) {
	cfg, err := shim.Decode(data)
	if err != nil {
		return -1, refusal{err}
	}
	// First, before anything of the step: the environment the process is
	// about to get is the frozen spec's, no more (a host variable that
	// reached it would be in the sandbox's hands), no less.
	if cfg.EnvSHA256 != "" && !shim.EnvMatches(env, cfg.EnvSHA256, cfg.EnvHome) {
		return -1, refusal{errors.New("its environment is not the spec's process.env")}
	}
	if !cfg.Dumpable {
		// Undone by execve for a program the uid may read; the init is
		// the sealed init executable, and nothing of the container may touch
		// it. (Rootless, the host's own user must read it for the
		// canaries, and exec before start is refused instead.)
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
	// The canary listener is the one fd the step holds for itself: never
	// the program's, whatever happens next.
	if cfg.CanaryFD > 0 {
		unix.CloseOnExec(cfg.CanaryFD)
	}
	shimFault(env)
	if cfg.Ruleset != "" {
		if err := landlock.RestrictThread(shimRuleset(cfg.Ruleset, env)); err != nil {
			return -1, refusal{fmt.Errorf("landlock not applied: %w", err)}
		}
	}
	if cfg.CanaryFD > 0 {
		conn, err := shimCanaries(cfg.CanaryFD, cfg.CanaryConnected)
		// A listener is the init's own: closed whatever the outcome,
		// never the program's. A connection that failed is closed in
		// shimCanaries; one that passed is held, close-on-exec, to the
		// execve.
		if !cfg.CanaryConnected {
			unix.Close(cfg.CanaryFD)
		}
		if err != nil {
			return -1, refusal{err}
		}
		return conn, nil
	}
	return -1, nil
}

// refusal is the pre-exec step's failure: the init exits 125 with it.
type refusal struct{ err error }

func (r refusal) Error() string { return "vetto-runtime: the process does not run: " + r.err.Error() }
func (r refusal) Unwrap() error { return r.err }
func (refusal) ExitCode() int   { return preExecRefused }

// shimCanaries is the process's side of the canary channel: one
// connection from the host on the inherited listener (or, connected, the
// inherited fd is that connection), the plan, the attempts, the report,
// the verdict. On the verdict exec it returns the connection,
// close-on-exec, for the init to hold to the execve
// (the kernel's close of it there is what tells the host the program
// runs); on anything else it has closed it. It uses blocking system calls on raw
// fds, bounded by poll(2), not the Go netpoller: the init runs one
// locked thread, and a parked goroutine would need another thread to wake
// it, which a container at its pids limit cannot get.
func shimCanaries(fd int, connected bool) (conn int, err error) {
	deadline := time.Now().Add(canaryWait)
	// The host connects once its pre-launch checks passed, a fraction of
	// a millisecond from now: the codecs are warmed in that wait, not in
	// the exchange the host waits for.
	canary.WarmCodecs()
	if err := waitFD(fd, unix.POLLIN, deadline); err != nil {
		if connected {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("no plan from the host: %w", err)
	}
	cfd := fd
	if !connected {
		if cfd, _, err = unix.Accept4(fd, unix.SOCK_CLOEXEC); err != nil {
			return -1, fmt.Errorf("canary listener (fd %d): %w", fd, err)
		}
	}
	defer func() {
		if err != nil {
			unix.Close(cfd)
		}
	}()
	c := &fdConn{fd: cfd, deadline: deadline}
	var plan canary.Config
	if err := canary.ReadMessage(c, &plan); err != nil {
		return -1, err
	}
	if err := canary.WriteMessage(c, canary.Try(plan)); err != nil {
		return -1, fmt.Errorf("report to the host: %w", err)
	}
	c.deadline = time.Now().Add(canaryWait)
	var verdict string
	if err := canary.ReadMessage(c, &verdict); err != nil {
		return -1, fmt.Errorf("no verdict from the host: %w", err)
	}
	if verdict != canary.VerdictExec {
		return -1, errors.New("the host's verification of this container failed")
	}
	return cfd, nil
}

// fdConn reads and writes a blocking fd, each call bounded by deadline.
type fdConn struct {
	fd       int
	deadline time.Time
}

func (c *fdConn) Read(b []byte) (int, error) {
	if err := waitFD(c.fd, unix.POLLIN, c.deadline); err != nil {
		return 0, err
	}
	n, err := unix.Read(c.fd, b)
	switch {
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *fdConn) Write(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		if err := waitFD(c.fd, unix.POLLOUT, c.deadline); err != nil {
			return done, err
		}
		n, err := unix.Write(c.fd, b[done:])
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// waitFD polls fd for events until deadline.
func waitFD(fd int, events int16, deadline time.Time) error {
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return os.ErrDeadlineExceeded
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}
