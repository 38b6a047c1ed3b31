package linux

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// container wraps one libcontainer container.
type container struct {
	lc *libcontainer.Container
	// proc is the init when this process created it: we are its parent
	// and must reap it.
	proc *libcontainer.Process
}

func (c *container) ID() string { return c.lc.ID() }

func (c *container) Status() (runtime.Status, error) {
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
	st, err := c.lc.State()
	if err != nil {
		return 0
	}
	return st.InitProcessPid
}

func (c *container) OCIState() (*specs.State, error) {
	st, err := c.lc.OCIState()
	return st, mapErr(err)
}

// execWaitLimit bounds how long Start waits for the init to exec the user
// process after the fifo opened (startContainer hooks run in between).
const execWaitLimit = 2 * time.Minute

// Start opens the exec fifo and returns once the init has exec'd the user
// process (or died). libcontainer's Exec returns as soon as the init wrote
// the fifo, but the init then still runs the startContainer hooks before
// execve; returning then would let poststart hooks — which the spec puts
// after "the user-specified process is executed" — race them.
func (c *container) Start() error {
	pid := c.InitPid()
	before, err := exeID(pid)
	if err != nil {
		return fmt.Errorf("start %q: read init executable: %w", c.ID(), err)
	}
	if err := c.lc.Exec(); err != nil {
		return mapErr(err)
	}
	deadline := time.Now().Add(execWaitLimit)
	for delay := 20 * time.Microsecond; ; delay = min(2*delay, 5*time.Millisecond) {
		now, err := exeID(pid)
		if err != nil || now != before {
			return nil // exec'd, or exited (then the caller sees it stopped)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("start %q: init pid %d has not exec'd the process after %s (a startContainer hook hanging?)", c.ID(), pid, execWaitLimit)
		}
		time.Sleep(delay)
	}
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

// Signal sends sig to the init, or with all to every process in the
// container's cgroup as well. Without a pid namespace of its own, killing
// the init does not kill the rest; --all is how a caller makes sure.
func (c *container) Signal(sig syscall.Signal, all bool) error {
	err := mapErr(c.lc.Signal(sig))
	if !all {
		return err
	}
	if err != nil && !errors.Is(err, runtime.ErrNotRunning) {
		return err
	}
	pids, perr := c.lc.Processes()
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
	if c.proc != nil {
		// Reap our child so it does not stay a zombie; it is dead or
		// about to be (the core kills before it destroys).
		_, _ = c.proc.Wait()
		c.proc = nil
	}
	return mapErr(c.lc.Destroy())
}
