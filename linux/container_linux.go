package linux

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/cgroups/manager"
	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/utils"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/shim"
)

// container wraps one libcontainer container.
type container struct {
	lc *libcontainer.Container
	// dir is the backend's state directory, libcontainer's own (or, for a
	// container of the earlier layout, the one above it: legacyLayout),
	// where the canary socket is.
	dir string
	// proc is the init when this process created it: we are its parent
	// and must reap it.
	proc *libcontainer.Process
	// canary is the connection to the exec shim: from the first exchange
	// until its verdict (Start, Proceed), and from create on when this
	// process made the socket pair (pairCanary); startExe the file the
	// init ran before start.
	canary   net.Conn
	startExe [2]uint64
	// canaryAtCreate: the init made its canaries at create (Canaries),
	// and start only lets it exec.
	canaryAtCreate bool
	// signalsCaught, for a foreground run's container, is closed once
	// this process catches every signal: Start waits for it before the
	// program may exec, so from then on no signal sent to the runtime
	// is lost or ends it (newForeground).
	signalsCaught <-chan struct{}
	// root is the init's root, held across start with its mount
	// namespace (HoldRoot): the executable can still be looked at once
	// the init is gone.
	root, mntNS int

	// st is libcontainer's State once the init exists: its pid, start
	// time and cgroup paths are fixed for the container's life, and each
	// lc.State() opens the init's /proc/<pid>/stat through a fresh procfs
	// handle (0.1 ms; a run asked for it about fifteen times).
	stMu sync.Mutex
	st   *libcontainer.State
}

// state is libcontainer's State of the container, read once the init
// exists and kept: what it holds that callers use (the init's pid, the
// cgroup paths, the namespace paths named by that pid) does not change
// after the init is created. Before that (a create in progress, pid -1)
// it is read each time.
func (c *container) state() (*libcontainer.State, error) {
	c.stMu.Lock()
	defer c.stMu.Unlock()
	if c.st != nil {
		return c.st, nil
	}
	st, err := c.lc.State()
	if err != nil {
		return nil, err
	}
	if st.InitProcessPid > 0 {
		c.st = st
	}
	return st, nil
}

func (c *container) ID() string { return c.lc.ID() }

// stoppedForSure reports a container whose init is dead by a check that
// needs no procfs mount: its pid has no entry in /proc, and its cgroup is
// not frozen (libcontainer calls a frozen one paused, init or not).
// libcontainer's status of a dead init costs a fresh procfs mount per
// question — pathrs-lite retries the ENOENT of its pid-subset handle on
// an unmasked private mount — and a run's teardown, `state` and `list`
// of stopped containers ask it again and again. Anything else (a pid
// that exists, which may be a reused one; a freezer that cannot be read;
// a /proc that is not this process's pid namespace) is libcontainer's to
// judge, by the init's start time.
//
// It uses the State already read, never reads it for this: for a
// container just loaded, a State read costs what it saves.
func (c *container) stoppedForSure() bool {
	c.stMu.Lock()
	st := c.st
	c.stMu.Unlock()
	if st == nil || st.InitProcessPid <= 0 || !procIsOurs() {
		return false
	}
	var proc unix.Stat_t
	if err := unix.Stat("/proc/"+strconv.Itoa(st.InitProcessPid), &proc); !errors.Is(err, unix.ENOENT) {
		return false
	}
	return !maybeFrozen(c.CgroupPaths())
}

// procIsOurs reports whether /proc shows this process's pid namespace,
// so that a pid missing from it is missing from libcontainer's view too
// (its private procfs mounts are of the caller's pid namespace; a /proc
// left from another one is not).
var procIsOurs = sync.OnceValue(func() bool {
	self, err := os.Readlink("/proc/self")
	return err == nil && self == strconv.Itoa(os.Getpid())
})

// maybeFrozen reports whether the freezer libcontainer reads for these
// cgroup paths may say frozen: the v1 freezer where there is one (a
// hybrid host's included), else the v2 cgroup.freeze. Only a freezer
// that is known thawed, or gone, is not.
func maybeFrozen(paths map[string]string) bool {
	file, thawed := "", ""
	if dir, ok := paths["freezer"]; ok {
		file, thawed = filepath.Join(dir, "freezer.state"), "THAWED"
	} else if dir, ok := paths[""]; ok {
		file, thawed = filepath.Join(dir, "cgroup.freeze"), "0"
	} else {
		return false // no freezer: libcontainer says thawed
	}
	data, err := hooks.ReadKernelFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	return err != nil || strings.TrimSpace(string(data)) != thawed
}

func (c *container) Status() (runtime.Status, error) {
	if c.stoppedForSure() {
		return runtime.StatusStopped, nil
	}
	st, err := c.lc.Status()
	if err != nil {
		return "", mapErr(err)
	}
	switch st {
	case libcontainer.Created:
		return runtime.StatusCreated, nil
	case libcontainer.Running:
		return runtime.StatusRunning, nil
	case libcontainer.Paused:
		return runtime.StatusPaused, nil
	case libcontainer.Stopped:
		return runtime.StatusStopped, nil
	}
	return "", fmt.Errorf("container %q: unknown libcontainer status %v", c.ID(), st)
}

func (c *container) InitPid() int {
	st, err := c.state()
	if err != nil {
		return 0
	}
	return st.InitProcessPid
}

func (c *container) OCIState() (*specs.State, error) {
	if c.stoppedForSure() {
		// libcontainer's own answer for a stopped container, without
		// its status lookup: no pid, the bundle and annotations it keeps
		// in its labels.
		bundle, annotations := utils.Annotations(c.lc.Config().Labels)
		return &specs.State{Version: specs.Version, ID: c.ID(), Status: specs.StateStopped, Bundle: bundle, Annotations: annotations}, nil
	}
	st, err := c.lc.OCIState()
	return st, mapErr(err)
}

// canaryExchange bounds how long start waits for the init's canary
// report: the init's pre-exec step restricts itself and makes a few dozen
// attempts, milliseconds on an idle host; the bound is for a loaded one,
// and for an init that will never answer.
const canaryExchange = 30 * time.Second

// execWaitLimit bounds how long Start waits for the init to exec the user
// process after the fifo opened (startContainer hooks run in between).
const execWaitLimit = 2 * time.Minute

// Start runs the spec's startContainer hooks in the container, then opens
// the exec fifo and — without canaries — returns once the init has exec'd
// the user process (or died); with canaries it returns the exec shim's
// report while the shim waits for Proceed.
//
// libcontainer would run startContainer hooks inside the init after the
// fifo opened, where a failing hook only kills the init and `start` still
// succeeds. The spec: "If any startContainer hook fails, the runtime MUST
// generate an error, stop the container". So they run here first, each as
// a process joined to the container (libcontainer's setns path, as `runc
// exec` uses) with the container process's user, capabilities,
// no_new_privs and seccomp — what it had in the init too — and with the
// path resolved in the container, as the spec says.
//
// And libcontainer's Exec returns when the init wrote the fifo, before
// execve; returning then would let poststart hooks — which the spec puts
// after "the user-specified process is executed" — run too early.
func (c *container) Start(sp *specs.Spec, ask *canary.Config) (*canary.Report, error) {
	if c.signalsCaught != nil {
		<-c.signalsCaught
	}
	pid := c.InitPid()
	before, err := exeID(pid)
	if err != nil {
		return nil, fmt.Errorf("start %q: read init executable: %w", c.ID(), err)
	}
	c.startExe = before
	if sp.Hooks != nil {
		for i, h := range sp.Hooks.StartContainer {
			if err := c.runInContainer(sp.Process, h); err != nil {
				return nil, fmt.Errorf("error running startContainer hook #%d (%s): %w", i, h.Path, err)
			}
		}
	}
	if err := c.lc.Exec(); err != nil {
		return nil, mapErr(err)
	}
	if ask == nil {
		return nil, c.waitExec(pid, before)
	}
	rep, err := c.exchangeCanaries(ask)
	if err != nil {
		return nil, fmt.Errorf("start %q: %w", c.ID(), err)
	}
	return rep, nil
}

// Canaries runs the canaries of an init built to make them at create
// (CreateRequest.CanaryAtCreate), waiting in its pre-exec step.
func (c *container) Canaries(ask *canary.Config) (*canary.Report, error) {
	c.canaryAtCreate = true
	return c.exchangeCanaries(ask)
}

// exchangeCanaries sends the plan to the init's pre-exec step and returns
// its report; the step then waits for Proceed.
func (c *container) exchangeCanaries(ask *canary.Config) (*canary.Report, error) {
	conn := c.canary
	if conn == nil {
		var err error
		if conn, err = dialCanary(c.dir); err != nil {
			return nil, fmt.Errorf("the container's exec shim: %w", err)
		}
		c.canary = conn
	}
	_ = conn.SetDeadline(time.Now().Add(canaryExchange))
	if err := canary.WriteMessage(conn, ask); err != nil {
		return nil, fmt.Errorf("send the canary plan: %w", err)
	}
	var rep canary.Report
	if err := canary.ReadMessage(conn, &rep); err != nil {
		return nil, fmt.Errorf("the exec shim's canary report: %w", err)
	}
	return &rep, nil
}

// Proceed sends the verdict to the waiting shim and, for exec, returns
// once the user process runs.
func (c *container) Proceed(exec bool) error {
	if c.canary == nil {
		return nil
	}
	conn := c.canary
	c.canary = nil
	defer conn.Close()
	verdict := canary.VerdictAbort
	if exec {
		verdict = canary.VerdictExec
	}
	if err := canary.WriteMessage(conn, verdict); err != nil {
		return fmt.Errorf("send the verdict to the exec shim of %q: %w", c.ID(), err)
	}
	if !exec || c.canaryAtCreate {
		// At create, exec lets the init wait for start, which
		// returns once it has exec'd (Start, without canaries).
		return nil
	}
	return c.waitExecClosed(conn, c.InitPid(), c.startExe)
}

// waitExecClosed returns once pid has exec'd its program (or is gone). The
// shim holds its end of conn, close-on-exec, to the execve: the kernel
// closes it there, just after the process's executable became the new
// file, so EOF is the exec (or the init's exit) with no poll's delay — a
// Go timer under a millisecond is rounded up to one when the process has
// nothing else to do. The host's own view confirms it, and is looked at
// every execCheckEvery besides: an init that closed the connection early
// (one an older vetto-runtime binary started, or one that fails before
// its exec) is polled for as before, and a program that runs with the
// connection still open holds the runtime's socket, which it must never
// have: that fails the start (the caller stops the container).
func (c *container) waitExecClosed(conn net.Conn, pid int, before [2]uint64) error {
	deadline := time.Now().Add(execWaitLimit)
	var b [1]byte
	for {
		next := time.Now().Add(execCheckEvery)
		if next.After(deadline) {
			next = deadline
		}
		_ = conn.SetReadDeadline(next)
		_, err := conn.Read(b[:])
		open := err == nil || errors.Is(err, os.ErrDeadlineExceeded)
		now, serr := exeID(pid)
		exec := serr != nil || now != before
		switch {
		case exec && open:
			// The exec is a moment ahead of the close.
			_ = conn.SetReadDeadline(time.Now().Add(execCheckEvery))
			if _, err := conn.Read(b[:]); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
				return fmt.Errorf("init pid %d runs its program with the runtime's canary connection open", pid)
			}
			return nil
		case exec:
			return nil
		case !open:
			return c.waitExec(pid, before)
		case time.Now().After(deadline):
			return fmt.Errorf("init pid %d has not exec'd the process after %s", pid, execWaitLimit)
		}
	}
}

// execCheckEvery is how often waitExecClosed looks at the process itself
// while the connection stays open.
const execCheckEvery = 50 * time.Millisecond

// waitExec polls until pid runs another file than before (it exec'd) or is
// gone. Nothing tells a parent that a process exec'd; a stat costs a few
// microseconds, and the ceiling keeps the wait within 0.5 ms of the exec.
func (c *container) waitExec(pid int, before [2]uint64) error {
	deadline := time.Now().Add(execWaitLimit)
	for delay := 20 * time.Microsecond; ; delay = min(2*delay, 500*time.Microsecond) {
		now, err := exeID(pid)
		if err != nil || now != before {
			return nil // exec'd, or exited (then the caller sees it stopped)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("init pid %d has not exec'd the process after %s", pid, execWaitLimit)
		}
		pause(delay)
	}
}

// runInContainer runs one hook as a process in the container with the OCI
// state on stdin, honouring its timeout.
func (c *container) runInContainer(proc *specs.Process, h specs.Hook) error {
	st, err := c.lc.OCIState()
	if err != nil {
		return mapErr(err)
	}
	// runtime.md: "For hooks executed in the container namespace, it is
	// the pid as seen by the container" — 1 in a pid namespace of its own.
	if ns := c.lc.Config().Namespaces; ns.IsPrivate(configs.NEWPID) {
		st.Pid = 1
	}
	stdin, err := json.Marshal(st)
	if err != nil {
		return err
	}
	args := h.Args
	if len(args) == 0 {
		args = []string{h.Path}
	}
	// libcontainer execs Args[0] found through PATH; the hook names a path.
	args = append([]string{h.Path}, args[1:]...)
	var timeout time.Duration
	if h.Timeout != nil && *h.Timeout > 0 {
		timeout = time.Duration(*h.Timeout) * time.Second
	}
	var out boundedOutput
	err = c.runJoined(proc, args, h.Env, stdin, &out, &out, timeout)
	if err != nil && out.Len() > 0 {
		return fmt.Errorf("%w, output: %s", err, bytes.TrimSpace(out.Bytes()))
	}
	return err
}

// runJoined runs args in the container through libcontainer's setns path
// (as `runc exec`): the container's namespaces, cgroup and seccomp filter,
// and proc's user, capabilities and no_new_privs, which are the container
// process's own. The environment is exactly env, the cwd /. A zero timeout
// waits for ever; past it the process is killed.
func (c *container) runJoined(proc *specs.Process, args, env []string, stdin []byte, stdout, stderr io.Writer, timeout time.Duration) error {
	p, err := newProcess(proc)
	if err != nil {
		return err
	}
	p.Args = args
	p.Env = append([]string{}, env...)
	p.Cwd = "/"
	p.Init = false
	// The init executable a create or exec of this process resolved, if
	// one did; else this binary.
	p.InitExecutable = theInitExes.resolved()
	p.LogLevel = strconv.Itoa(int(logrus.GetLevel()))
	p.Stdin, p.Stdout, p.Stderr = bytes.NewReader(stdin), stdout, stderr
	if err := c.lc.Run(p); err != nil {
		return mapErr(err)
	}
	done := make(chan error, 1)
	go func() {
		ps, err := p.Wait()
		if err == nil && !ps.Success() {
			err = errors.New(ps.String())
		}
		done <- err
	}()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case err = <-done:
	case <-expired:
		_ = p.Signal(unix.SIGKILL)
		<-done //nolint:errcheck // the error of a process we killed; the timeout is what is reported
		err = fmt.Errorf("timeout after %s", timeout)
	}
	return err
}

// boundedOutput keeps the first 4 KiB a hook writes, for the error message.
type boundedOutput struct{ bytes.Buffer }

func (b *boundedOutput) Write(p []byte) (int, error) {
	if room := 4096 - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// exeID identifies the file a process runs. A zombie has no executable,
// which reads as an error.
func exeID(pid int) ([2]uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/"+strconv.Itoa(pid)+"/exe", &st); err != nil {
		return [2]uint64{}, err
	}
	return [2]uint64{uint64(st.Dev), st.Ino}, nil //nolint:unconvert // Dev is uint32 on some arches
}

// LaunchPlan is the pre-exec step and argv this process handed
// libcontainer's init; unknown when another process created the
// container.
func (c *container) LaunchPlan() (*shim.Config, []string, bool) {
	if c.proc == nil {
		return nil, nil, false
	}
	if len(c.proc.PreExec) == 0 {
		return nil, c.proc.Args, true
	}
	step, err := shim.Decode(c.proc.PreExec)
	if err != nil {
		return nil, c.proc.Args, true
	}
	return &step, c.proc.Args, true
}

// InitExe identifies the file the init runs now, from the host.
func (c *container) InitExe() ([2]uint64, error) { return exeID(c.InitPid()) }

// Signal sends sig to the init, or with all to every process in the
// container's cgroup as well. Without a pid namespace of its own, killing
// the init does not kill the rest; --all is how a caller makes sure.
//
// SIGKILL to all goes through the cgroup (cgroup.kill, see killCgroup):
// one step the kernel applies to every process, so nothing forks away
// between a listing and the signals.
func (c *container) Signal(sig syscall.Signal, all bool) error {
	if all && sig == unix.SIGKILL {
		if st, err := c.state(); err == nil {
			if m, err := manager.NewWithPaths(c.lc.Config().Cgroups, st.CgroupPaths); err == nil && m.Exists() {
				if _, _, err := killCgroup(m); err != nil {
					return fmt.Errorf("kill %q: %w", c.ID(), err)
				}
				// An init that left its cgroup is not hit by it; killing
				// it takes its pid namespace, and every process in it, along.
				_ = c.lc.Signal(unix.SIGKILL)
				return nil
			}
		}
	}
	err := mapErr(c.lc.Signal(sig))
	if !all {
		return err
	}
	if err != nil && !errors.Is(err, runtime.ErrNotRunning) {
		return err
	}
	pids, perr := c.Processes()
	if perr != nil {
		if err != nil {
			return err // not running and no cgroup: nothing to signal
		}
		return fmt.Errorf("list processes of %q: %w", c.ID(), perr)
	}
	for _, pid := range pids {
		if kerr := unix.Kill(pid, sig); kerr != nil && !errors.Is(kerr, unix.ESRCH) {
			return fmt.Errorf("signal pid %d of %q: %w", pid, c.ID(), kerr)
		}
	}
	return nil
}

func (c *container) Destroy() error {
	if c.canary != nil {
		c.canary.Close()
		c.canary = nil
	}
	if c.proc != nil {
		// Reap our child so it does not stay a zombie; it is dead or
		// about to be (the core kills before it destroys).
		_, _ = c.proc.Wait()
		c.proc = nil
	}
	return mapErr(c.lc.Destroy())
}

func (c *container) CgroupPaths() map[string]string {
	st, err := c.state()
	if err != nil {
		return nil
	}
	if !rootlessCgroups() {
		return maps.Clone(st.CgroupPaths) // st is shared: the caller's copy
	}
	// Rootless, libcontainer keeps the paths of hierarchies it could not
	// create in (the unified and named ones of a hybrid host) in its
	// state; the container is in none of those.
	out := make(map[string]string, len(st.CgroupPaths))
	for c, dir := range st.CgroupPaths {
		if _, err := os.Stat(dir); err == nil {
			out[c] = dir
		}
	}
	return out
}
