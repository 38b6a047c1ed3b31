//go:build darwin

package darwin

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// sandboxExec is Seatbelt's launcher. It is deprecated but ships with
// every macOS; if a release drops it the backend refuses to launch (and
// doctor says so), it never falls back to running unsandboxed, which is
// how many Seatbelt users silently lost the sandbox.
const sandboxExec = "/usr/bin/sandbox-exec"

// holdTimeout bounds each wait on the holder: for it to report ready at
// create, and to exec at start.
const holdTimeout = 10 * time.Second

// teardownLimit bounds the wait for killed processes to be gone.
const teardownLimit = 10 * time.Second

// state is the backend's record of one container, in its state directory.
type state struct {
	ID          string            `json:"id"`
	Bundle      string            `json:"bundle"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Pid         int               `json:"pid"`
	Start       int64             `json:"start"`
	Self        string            `json:"self"`
	Profile     string            `json:"profile"`
	ProfileHash string            `json:"profileSHA256"`
	// Plan has the paths as resolved at create: the -D values and the
	// paths verification asks the kernel about.
	Plan    *Plan   `json:"plan"`
	Queries []Query `json:"queries"`
	// Verdicts are the checks on the held process at create, Running
	// those on the running one (and the canaries) at start: reported to
	// the core (runtime.VerifyingContainer), which judges them.
	Verdicts []hooks.Result `json:"verdicts,omitempty"`
	Running  []hooks.Result `json:"running,omitempty"`
}

// resolve is a path as Seatbelt will match it: symlinks resolved; for a
// path that does not exist, its nearest existing ancestor resolved.
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	dir, base := filepath.Split(filepath.Clean(p))
	if dir == "" || dir == p || base == "" {
		return p
	}
	return filepath.Join(resolve(filepath.Clean(dir)), base)
}

func profileHash(profile string, params []Param) string {
	h := sha256.New()
	h.Write([]byte(profile))
	for _, p := range params {
		h.Write([]byte{0})
		h.Write([]byte(p.Name + "=" + p.Value))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (b *Backend) launch(req *runtime.CreateRequest, plan *Plan) (_ runtime.Container, _ runtime.Foreground, retErr error) {
	if fi, err := os.Stat(sandboxExec); err != nil || fi.Mode()&0o111 == 0 {
		return nil, nil, runtime.Errorf(runtime.ErrBackendUnavailable, "create %q: %s is missing or not executable; vetto-runtime never runs a container unsandboxed", req.ID, sandboxExec)
	}
	if err := os.MkdirAll(req.Dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create %q: %w", req.ID, err)
	}
	c := &container{b: b, dir: req.Dir}
	defer func() {
		if retErr != nil {
			c.killAll()
			_ = os.RemoveAll(req.Dir)
		}
	}()
	fifo := filepath.Join(req.Dir, fifoName)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		return nil, nil, fmt.Errorf("create %q: start fifo: %w", req.ID, err)
	}
	rp := plan.Resolved(resolve)
	self := resolve(b.Self)

	args := rp.SandboxArgs()
	args = append(args, self, HoldArg, "--fifo", resolve(fifo), "--ready", strconv.Itoa(3+req.PreserveFDs))
	if plan.Umask != nil {
		args = append(args, "--umask", strconv.FormatUint(uint64(*plan.Umask), 8))
	}
	for _, rl := range plan.Rlimits {
		args = append(args, "--rlimit", fmt.Sprintf("%d:%d:%d", rl.Resource, rl.Soft, rl.Hard))
	}
	args = append(append(args, "--"), plan.Args...)
	cmd := exec.Command(sandboxExec, args...)
	// The spec's environment exactly; never the runtime's own.
	cmd.Env = append([]string{}, plan.Env...)
	cmd.Dir = plan.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	for i := range req.PreserveFDs {
		cmd.ExtraFiles = append(cmd.ExtraFiles, os.NewFile(uintptr(3+i), "preserved-fd"))
	}
	ready, readyW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("create %q: %w", req.ID, err)
	}
	defer ready.Close()
	cmd.ExtraFiles = append(cmd.ExtraFiles, readyW)
	// Its own process group, which teardown kills: the closest darwin has
	// to a pid namespace.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		return nil, nil, runtime.Errorf(runtime.ErrSpawnFailed, "create %q: start %s: %w", req.ID, sandboxExec, err)
	}
	c.cmd = cmd
	pid := cmd.Process.Pid
	c.st = &state{ID: req.ID, Bundle: req.Bundle, Annotations: req.Spec.Annotations, Pid: pid, Self: self,
		Profile: plan.Profile, ProfileHash: profileHash(plan.Profile, rp.Params), Plan: rp}
	if err := waitReady(ready, pid); err != nil {
		return nil, nil, fmt.Errorf("create %q: %w", req.ID, err)
	}

	c.st.Queries = rp.Queries(resolve(req.Dir))
	facts := readFacts(pid, c.st.Queries)
	c.st.Start = facts.Start
	// Judged by the core (PreLaunch): the holder is blocked on the start
	// fifo, so nothing of the workload runs before the verdicts are.
	c.st.Verdicts = Judge(c.st.Queries, facts, 0)
	if err := c.save(); err != nil {
		return nil, nil, fmt.Errorf("create %q: %w", req.ID, err)
	}
	if req.Foreground {
		return c, &foreground{c: c}, nil
	}
	return c, nil, nil
}

// waitReady reads the holder's one line: "ready" once it set its limits
// and found the program, and is about to block on the start fifo.
func waitReady(r io.Reader, pid int) error {
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	var msg string
	select {
	case msg = <-line:
	case <-time.After(holdTimeout):
		return runtime.Errorf(runtime.ErrSpawnFailed, "the sandboxed holder (pid %d) did not report within %s", pid, holdTimeout)
	}
	switch {
	case msg == "ready":
		return nil
	case strings.HasPrefix(msg, "notfound: "):
		// runc's words, which podman maps to exit 127.
		return runtime.WithKind(runtime.ErrNotFound, errors.New(strings.TrimPrefix(msg, "notfound: ")))
	case msg == "":
		return runtime.Errorf(runtime.ErrSpawnFailed, "sandbox-exec (pid %d) exited before the holder ran: the profile was refused or the sandbox could not be applied (its error is on stderr)", pid)
	default:
		return runtime.Errorf(runtime.ErrSpawnFailed, "holder: %s", msg)
	}
}

func (c *container) save() error {
	data, err := json.MarshalIndent(c.st, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.dir, "."+stateName+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(c.dir, stateName))
}

func (b *Backend) load(dir, id string) (runtime.Container, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%q: %w", id, runtime.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	st := &state{}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("%q: backend state: %w", id, err)
	}
	if st.Plan == nil || st.ID != id {
		return nil, fmt.Errorf("%q: backend state: not this container's", id)
	}
	st.Plan.Profile = st.Profile
	if profileHash(st.Profile, st.Plan.Params) != st.ProfileHash {
		return nil, runtime.Errorf(runtime.ErrSpecMismatch, "%q: the stored sandbox profile no longer matches its hash", id)
	}
	return &container{b: b, dir: dir, st: st}, nil
}

// container is one Seatbelt container.
type container struct {
	b   *Backend
	dir string
	st  *state
	// cmd is set in the process that created the container (run in the
	// foreground waits on it); reap waits on it once, closing exited.
	cmd      *exec.Cmd
	reapOnce sync.Once
	exited   chan struct{}
}

// reap waits for the init in the background if this process is its
// parent, so that it does not linger as a zombie; exited closes then.
func (c *container) reap() <-chan struct{} {
	c.reapOnce.Do(func() {
		c.exited = make(chan struct{})
		if c.cmd == nil {
			close(c.exited)
			return
		}
		go func() {
			_ = c.cmd.Wait()
			close(c.exited)
		}()
	})
	return c.exited
}

var _ runtime.Container = (*container)(nil)

func (c *container) ID() string   { return c.st.ID }
func (c *container) InitPid() int { return c.st.Pid }

// alive reports whether the recorded init still runs (same pid, same
// start time, not a zombie).
func (c *container) alive() bool {
	p, err := procInfo(c.st.Pid)
	return err == nil && p.start == c.st.Start && !p.zombie
}

// Status: stopped once the init is gone; created while the start fifo
// exists (the holder waits on it); running otherwise.
func (c *container) Status() (runtime.Status, error) {
	if !c.alive() {
		return runtime.StatusStopped, nil
	}
	if _, err := os.Lstat(filepath.Join(c.dir, fifoName)); err == nil {
		return runtime.StatusCreated, nil
	}
	return runtime.StatusRunning, nil
}

func (c *container) OCIState() (*specs.State, error) {
	st, err := c.Status()
	if err != nil {
		return nil, err
	}
	pid := c.st.Pid
	if st == runtime.StatusStopped {
		pid = 0
	}
	return &specs.State{Version: specs.Version, ID: c.st.ID, Status: specs.ContainerState(st), Pid: pid, Bundle: c.st.Bundle, Annotations: c.st.Annotations}, nil
}

// Start releases the holder and waits until it exec'd the process: the
// holder writes one byte to the fifo, whose descriptor is close-on-exec,
// so end-of-file after the byte means it exec'd (or died). Then the
// running process is verified from the host; the core judges the verdicts
// (PostLaunch) and kills the container on a FAIL.
func (c *container) Start(_ *specs.Spec, ask *canary.Config) (*canary.Report, error) {
	if ask != nil {
		// The core asks for in-process canaries only where it reads host
		// facts (Linux); this backend runs its own probe after start.
		return nil, fmt.Errorf("start %q: this backend has no exec shim to run the canaries in", c.st.ID)
	}
	return nil, c.start()
}

// Proceed does nothing: Start never leaves a shim waiting here.
func (c *container) Proceed(bool) error { return nil }

func (c *container) start() error {
	fifo := filepath.Join(c.dir, fifoName)
	fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return runtime.Errorf(runtime.ErrWrongState, "start %q: already started", c.st.ID)
	}
	if err != nil {
		return fmt.Errorf("start %q: %w", c.st.ID, err)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(holdTimeout)
	buf := make([]byte, 1)
	for got := false; ; {
		n, err := unix.Read(fd, buf)
		switch {
		case n > 0:
			got = true
			continue
		case err == nil && got:
			// The writer closed: the holder exec'd the process.
			_ = os.Remove(fifo)
			return c.verifyRunning()
		case err == nil, errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR):
		default:
			return fmt.Errorf("start %q: read start fifo: %w", c.st.ID, err)
		}
		if !c.alive() {
			return runtime.Errorf(runtime.ErrSpawnFailed, "start %q: the held process (pid %d) died before it was started", c.st.ID, c.st.Pid)
		}
		if time.Now().After(deadline) {
			return runtime.Errorf(runtime.ErrSpawnFailed, "start %q: the holder did not exec within %s", c.st.ID, holdTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// verifyRunning reads the running process as create read the held one
// (identity against the recorded start time) and runs the canaries. It
// only reports: the core judges the verdicts (PostLaunch) as it judges
// Linux's, and kills the container on a FAIL at standard and strict.
func (c *container) verifyRunning() error {
	c.st.Running = append(c.running(), c.canaries()...)
	return c.save()
}

// running reads and judges the live process against the plan.
func (c *container) running() []hooks.Result {
	return Judge(c.st.Queries, readFacts(c.st.Pid, c.st.Queries), c.st.Start)
}

func (c *container) CgroupPaths() map[string]string { return map[string]string{} }

// Signal sends sig to the init, or with all to its process group and
// every descendant found.
func (c *container) Signal(sig syscall.Signal, all bool) error {
	if !c.alive() && !all {
		return runtime.ErrNotRunning
	}
	if !all {
		return unix.Kill(c.st.Pid, sig)
	}
	pids, err := c.Processes()
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return runtime.ErrNotRunning
	}
	var errs []error
	for _, p := range pids {
		if err := unix.Kill(p, sig); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("pid %d: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func (c *container) Processes() ([]int, error) {
	table, err := allProcs()
	if err != nil {
		return nil, err
	}
	return members(table, c.st.Pid, c.st.Start), nil
}

func (c *container) Destroy() error { return os.RemoveAll(c.dir) }

// killAll is the teardown of a create that failed: SIGKILL the group.
func (c *container) killAll() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	_ = unix.Kill(-c.cmd.Process.Pid, unix.SIGKILL)
	_ = c.cmd.Process.Kill()
	<-c.reap()
}

// Teardown stops the process group and the descendants it finds, kills
// them, and waits until the host lists none. It is best-effort
// (degraded-cleanup): without a pid namespace a process that left the
// group and lost its parent is not found. The receipt says what was
// found; it never claims more.
func (c *container) Teardown() (*hooks.Receipt, error) {
	rec := &hooks.Receipt{Method: "process-group (degraded-cleanup: no pid namespace)", CgroupRemoved: true}
	pids, err := c.Processes()
	if err != nil {
		return nil, fmt.Errorf("teardown %q: %w", c.st.ID, err)
	}
	if len(pids) > 0 {
		// Stopped, nothing forks while the list is taken again.
		_ = unix.Kill(-c.st.Pid, unix.SIGSTOP)
		for _, p := range pids {
			_ = unix.Kill(p, unix.SIGSTOP)
		}
		if again, err := c.Processes(); err == nil {
			pids = again
		}
		_ = unix.Kill(-c.st.Pid, unix.SIGKILL)
		for _, p := range pids {
			_ = unix.Kill(p, unix.SIGKILL)
		}
		rec.Killed = len(pids)
	}
	c.reap()
	deadline := time.Now().Add(teardownLimit)
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 20*time.Millisecond) {
		left, err := c.Processes()
		if err != nil {
			rec.Problems = append(rec.Problems, err.Error())
			return rec, nil
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			rec.Remaining = left
			return rec, nil
		}
		time.Sleep(delay)
	}
	if rec.Killed == 0 {
		rec.Method = "none (degraded-cleanup: no pid namespace)"
	}
	if err := os.RemoveAll(c.dir); err != nil {
		rec.Problems = append(rec.Problems, err.Error())
	}
	return rec, nil
}

// runProbe runs args in a sandbox with the container's own profile and
// parameters, in its process group while it has one, with stdin on its
// standard input, and returns stdout. Seatbelt cannot join a running
// sandbox: the probe gets the same one.
func (c *container) runProbe(args []string, stdin []byte, timeout time.Duration) ([]byte, error) {
	var out, errOut strings.Builder
	newCmd := func(pgid int) *exec.Cmd {
		cmd := exec.Command(sandboxExec, append(c.st.Plan.SandboxArgs(), args...)...)
		cmd.Env = []string{}
		cmd.Dir = "/"
		cmd.Stdin = bytes.NewReader(stdin)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
		return cmd
	}
	pgid := 0
	if c.alive() {
		pgid = c.st.Pid
	}
	cmd := newCmd(pgid)
	err := cmd.Start()
	if err != nil && pgid != 0 {
		// The group is in another session (a start from elsewhere than
		// the create): a group of its own, killed below on timeout.
		cmd = newCmd(0)
		err = cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("probe: %w: %s", err, strings.TrimSpace(errOut.String()))
		}
		return []byte(out.String()), nil
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done //nolint:errcheck // the error of a process we killed; the timeout is what is reported
		return nil, fmt.Errorf("probe: killed after %s", timeout)
	}
}

func unsupported(op, id, why string) error {
	return fmt.Errorf("%s %q: %w: %s", op, id, errors.ErrUnsupported, why)
}

func (c *container) Exec(*runtime.ExecRequest) (int, runtime.Foreground, error) {
	return 0, nil, unsupported("exec", c.st.ID, "the darwin backend does not exec into a running sandbox yet")
}
func (c *container) Pause() error {
	return unsupported("pause", c.st.ID, "darwin has no freezer; stopping the group would be best-effort")
}
func (c *container) Resume() error {
	return unsupported("resume", c.st.ID, "darwin has no freezer")
}
func (c *container) Stats() (any, error) {
	return nil, unsupported("events", c.st.ID, "darwin has no cgroup to account the container")
}
func (c *container) NotifyOOM() (<-chan struct{}, error) {
	return nil, unsupported("events", c.st.ID, "darwin has no memory limit to hit")
}
func (c *container) Update(*specs.LinuxResources) error {
	return unsupported("update", c.st.ID, "darwin cannot set limits")
}

var _ runtime.VerifyingContainer = (*container)(nil)

// PreLaunch are the verdicts on the held process, read at create.
func (c *container) PreLaunch() []hooks.Result { return c.st.Verdicts }

// PostLaunch are the verdicts on the running process and the canaries,
// read at start.
func (c *container) PostLaunch() []hooks.Result { return c.st.Running }

// OnDemand asks the kernel about the running process again, for verify
// (the canaries ran once, at start: the core carries their verdicts).
func (c *container) OnDemand() ([]hooks.Result, error) { return c.running(), nil }

// foreground is run's handle: the caller waits on sandbox-exec's process,
// which is the container's init (sandbox-exec and the holder exec).
type foreground struct {
	c    *container
	sigs chan os.Signal
}

// forwarded are the signals run passes on to the init, as runc does; the
// runtime's own (SIGURG for preemption, SIGCHLD) stay here.
var forwarded = []os.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGUSR1, unix.SIGUSR2, unix.SIGALRM, unix.SIGCONT, unix.SIGINFO, unix.SIGWINCH}

func (f *foreground) Wait() (int, error) {
	f.sigs = make(chan os.Signal, 16)
	signal.Notify(f.sigs, forwarded...)
	exited := f.c.reap()
	for {
		select {
		case s := <-f.sigs:
			_ = unix.Kill(f.c.st.Pid, s.(syscall.Signal))
		case <-exited:
			ps := f.c.cmd.ProcessState
			if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal()), nil
			}
			return ps.ExitCode(), nil
		}
	}
}

func (f *foreground) Close() {
	if f.sigs != nil {
		signal.Stop(f.sigs)
	}
}
