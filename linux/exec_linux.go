package linux

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/shim"
)

// Exec starts a process in the container through libcontainer's setns
// path: it joins the container's namespaces and cgroup and gets the
// container's seccomp filter; its own capabilities, user and
// no_new_privs come from req.Process, which the core has already bounded
// by the container's.
func (c *container) Exec(req *runtime.ExecRequest) (_ int, _ runtime.Foreground, retErr error) {
	proc, err := newProcess(req.Process)
	if err != nil {
		return 0, nil, err
	}
	proc.Init = false
	proc.InitExecutable = initExecutable(req.BinDir)
	if req.Landlock != "" && !execUnconfined() {
		// The same ruleset as the container's process, in a domain of its
		// own: Landlock domains are per process tree, not per container.
		// The setns init restricts itself in its pre-exec step.
		proc.PreExec = shim.Config{Ruleset: req.Landlock}.Encode()
	}
	proc.LogLevel = strconv.Itoa(int(logrus.GetLevel()))
	if err := passFDs(proc, 3, req.PreserveFDs, "--preserve-fds"); err != nil {
		return 0, nil, err
	}
	// libcontainer joins them below the container's own cgroup and
	// refuses one that would leave it.
	proc.SubCgroupPaths = req.SubCgroups
	config := c.lc.Config()
	rootUID, err := config.HostRootUID()
	if err != nil {
		return 0, nil, err
	}
	rootGID, err := config.HostRootGID()
	if err != nil {
		return 0, nil, err
	}
	io, err := setupStdio(proc, req.Process.Terminal, !req.Detach, req.ConsoleSocket, rootUID, rootGID)
	if err != nil {
		return 0, nil, err
	}
	if err := io.sendPidfd(proc, req.PidfdSocket); err != nil {
		io.close()
		return 0, nil, err
	}
	var fg *foreground
	if !req.Detach {
		// No subreaper: the exec'd process is our own child (runc does
		// the same for exec).
		if fg, err = newForeground(proc, io, false, true); err != nil {
			io.close()
			return 0, nil, err
		}
	}
	defer func() {
		if retErr != nil {
			if fg != nil {
				fg.Close()
			} else {
				io.close()
			}
		}
	}()
	if err := c.lc.Run(proc); err != nil {
		return 0, nil, mapErr(err)
	}
	if err := io.waitConsole(); err != nil {
		_ = proc.Signal(unix.SIGKILL)
		return 0, nil, err
	}
	io.closePostStart()
	pid, err := proc.Pid()
	if err != nil {
		return 0, nil, err
	}
	waitPastInit(pid)
	if fg == nil {
		io.close()
		return pid, nil, nil
	}
	return pid, fg, nil
}

// initComm is what libcontainer names a process until it execs the
// user's program.
const initComm = "runc:[2:INIT]"

// waitPastInit waits (at most 2 s) until pid has exec'd its program, or is
// gone: libcontainer returns from Run once the setns init is ready, before
// it applies the last restrictions and execs. Returning only then means
// the pid file of a detached exec names the program, and nothing sees the
// process half set up while exec still holds the container's lock.
func waitPastInit(pid int) {
	path := "/proc/" + strconv.Itoa(pid) + "/comm"
	deadline := time.Now().Add(2 * time.Second)
	for delay := 20 * time.Microsecond; time.Now().Before(deadline); delay = min(2*delay, time.Millisecond) {
		comm, err := os.ReadFile(path)
		if err != nil || strings.TrimSpace(string(comm)) != initComm {
			return
		}
		pause(delay)
	}
}

// passFDs passes the caller's fds first..first+n-1 to the process, asked
// for by flag (--preserve-fds, LISTEN_FDS). Each must be one the caller
// handed us: it survived our execve, so its close-on-exec flag is clear.
// One with the flag set is our own (since Go 1.25 the Go runtime opens
// cgroup files at start, at fds 3 and 4 when nothing was inherited) and
// must not reach the container.
func passFDs(proc *libcontainer.Process, first, n int, flag string) error {
	for fd := first; fd < first+n; fd++ {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			return runtime.Errorf(runtime.ErrInvalidInput, "%s=%d: fd %d is not open", flag, n, fd)
		}
		proc.ExtraFiles = append(proc.ExtraFiles, os.NewFile(uintptr(fd), "passed-fd-"+strconv.Itoa(fd)))
	}
	return nil
}

func (c *container) Processes() ([]int, error) {
	if rootlessCgroups() && len(c.CgroupPaths()) == 0 {
		return c.namespaceProcesses()
	}
	pids, err := c.lc.Processes()
	return pids, mapErr(err)
}

// namespaceProcesses lists a container created in no cgroup (rootless,
// no delegation) by its pid namespace, which such a launch must have of
// its own: every live process in it. With the init gone the kernel has
// killed the rest, so there is none.
func (c *container) namespaceProcesses() ([]int, error) {
	st, err := c.state()
	if err != nil {
		return nil, mapErr(err)
	}
	if st.InitProcessPid <= 0 {
		return nil, nil
	}
	ns, err := hooks.ProcFacts{}.Of(st.InitProcessPid, specs.PIDNamespace)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH) {
			return nil, nil
		}
		return nil, fmt.Errorf("pid namespace of %q's init %d: %w", c.ID(), st.InitProcessPid, err)
	}
	return hooks.PidsInNamespace(ns)
}

func (c *container) Pause() error  { return mapErr(c.lc.Pause()) }
func (c *container) Resume() error { return mapErr(c.lc.Resume()) }

func (c *container) NotifyOOM() (<-chan struct{}, error) {
	ch, err := c.lc.NotifyOOM()
	return ch, mapErr(err)
}
