//go:build windows

package windows

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/windows"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hooks/canary"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// readyTimeout bounds create's wait for the holder: the grants walk the
// mounts' trees, which on a large project takes a while.
const readyTimeout = 2 * time.Minute

// state is the backend's record of one container.
type state struct {
	ID          string            `json:"id"`
	Bundle      string            `json:"bundle"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Pid         int               `json:"pid"`
	HolderPid   int               `json:"holderPid"`
	Pipe        string            `json:"pipe"`
	SID         string            `json:"sid"`
	Self        string            `json:"self"`
	Plan        *Plan             `json:"plan"`
	// Verdicts are the checks on the suspended process at create,
	// Running those on the running one (and the canaries) at start:
	// reported to the core (runtime.VerifyingContainer), which judges
	// them.
	Verdicts []hooks.Result `json:"verdicts,omitempty"`
	Running  []hooks.Result `json:"running,omitempty"`
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeFileAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (b *Backend) launch(req *runtime.CreateRequest, plan *Plan) (_ runtime.Container, _ runtime.Foreground, retErr error) {
	app := ""
	if len(plan.Args) > 0 {
		var err error
		app, err = findProgram(plan.Args[0], plan.Cwd, plan.Env, func(p string) bool {
			fi, err := os.Stat(p)
			return err == nil && fi.Mode().IsRegular()
		})
		if err != nil {
			return nil, nil, fmt.Errorf("create %q: %w", req.ID, err)
		}
	}
	if err := os.MkdirAll(req.Dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create %q: %w", req.ID, err)
	}
	c := &container{b: b, dir: req.Dir}
	defer func() {
		if retErr != nil {
			if c.st != nil {
				if _, err := c.call(request{Op: "teardown"}); err != nil && c.holder != nil {
					_ = c.holder.Process.Kill()
				}
			} else if c.holder != nil {
				_ = c.holder.Process.Kill()
			}
			_ = os.RemoveAll(req.Dir)
		}
	}()
	cfg := &holderConfig{ID: req.ID, Plan: plan, App: app, Pipe: `\\.\pipe\vetto-runtime-` + randomHex(16)}
	if err := writeFileAtomic(filepath.Join(req.Dir, planName), cfg); err != nil {
		return nil, nil, fmt.Errorf("create %q: %w", req.ID, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	wh := windows.Handle(w.Fd())
	if err := windows.SetHandleInformation(wh, windows.HANDLE_FLAG_INHERIT, windows.HANDLE_FLAG_INHERIT); err != nil {
		w.Close()
		return nil, nil, err
	}
	cmd := exec.Command(b.Self, HolderArg, req.Dir, strconv.FormatUint(uint64(wh), 10))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = []string{}
	// Not the caller's directory, nor the state directory: a process's
	// current directory cannot be removed on Windows.
	cmd.Dir = filepath.VolumeName(req.Dir) + `\`
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Its own group: a Ctrl-C meant for the CLI does not reach it.
		CreationFlags:              windows.CREATE_NEW_PROCESS_GROUP,
		AdditionalInheritedHandles: []syscall.Handle{syscall.Handle(wh)},
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, nil, runtime.Errorf(runtime.ErrSpawnFailed, "create %q: start the holder: %w", req.ID, err)
	}
	c.holder = cmd
	msg, err := readReady(r)
	if err != nil {
		return nil, nil, runtime.Errorf(runtime.ErrSpawnFailed, "create %q: %w", req.ID, err)
	}
	if msg.Err != "" || msg.Facts == nil {
		return nil, nil, runtime.Errorf(runtime.ErrSpawnFailed, "create %q: holder: %s", req.ID, msg.Err)
	}
	c.st = &state{ID: req.ID, Bundle: req.Bundle, Annotations: req.Spec.Annotations, Pid: msg.Pid, HolderPid: cmd.Process.Pid,
		Pipe: cfg.Pipe, SID: msg.SID, Self: b.Self, Plan: plan}
	// Judged by the core (PreLaunch): the process is suspended, so nothing
	// of the workload runs before the verdicts are.
	c.st.Verdicts = Judge(plan, msg.SID, *msg.Facts)
	if err := c.save(); err != nil {
		return nil, nil, fmt.Errorf("create %q: %w", req.ID, err)
	}
	// The holder outlives this process; nothing here waits on it.
	_ = cmd.Process.Release()
	if req.Foreground {
		return c, &foreground{c: c}, nil
	}
	return c, nil, nil
}

func readReady(r io.Reader) (*readyMsg, error) {
	type result struct {
		msg *readyMsg
		err error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadBytes('\n')
		if err != nil && len(line) == 0 {
			ch <- result{nil, fmt.Errorf("the holder exited without reporting: %w", err)}
			return
		}
		m := &readyMsg{}
		if err := json.Unmarshal(line, m); err != nil {
			ch <- result{nil, fmt.Errorf("holder report: %w", err)}
			return
		}
		ch <- result{m, nil}
	}()
	select {
	case res := <-ch:
		return res.msg, res.err
	case <-time.After(readyTimeout):
		return nil, fmt.Errorf("the holder did not report within %s", readyTimeout)
	}
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
	if err := json.Unmarshal(data, st); err != nil || st.ID != id || st.Plan == nil {
		return nil, fmt.Errorf("%q: backend state unreadable or not this container's", id)
	}
	return &container{b: b, dir: dir, st: st}, nil
}

// container is one job container, as the CLI sees it: every operation
// goes to its holder over the control pipe.
type container struct {
	b      *Backend
	dir    string
	st     *state
	holder *exec.Cmd // in the process that created it
}

var _ runtime.Container = (*container)(nil)

var errHolderGone = errors.New("the container's holder is gone (its job was closed: kill on close ended its processes)")

// call sends one request to the holder and reads its answer.
func (c *container) call(req request) (*response, error) {
	deadline := time.Now().Add(5 * time.Second)
	var f *os.File
	for {
		var err error
		f, err = os.OpenFile(c.st.Pipe, os.O_RDWR, 0)
		if err == nil {
			break
		}
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
			return nil, errHolderGone
		}
		if !errors.Is(err, windows.ERROR_PIPE_BUSY) || time.Now().After(deadline) {
			return nil, fmt.Errorf("holder pipe: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	defer f.Close()
	if err := json.NewEncoder(f).Encode(req); err != nil {
		return nil, fmt.Errorf("holder %s: %w", req.Op, err)
	}
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return nil, fmt.Errorf("holder %s: %w", req.Op, err)
	}
	resp := &response{}
	if err := json.Unmarshal(line, resp); err != nil {
		return nil, fmt.Errorf("holder %s: %w", req.Op, err)
	}
	if resp.Err != "" {
		return resp, fmt.Errorf("holder %s: %s", req.Op, resp.Err)
	}
	return resp, nil
}

func (c *container) save() error { return writeFileAtomic(filepath.Join(c.dir, stateName), c.st) }

func (c *container) ID() string   { return c.st.ID }
func (c *container) InitPid() int { return c.st.Pid }

func (c *container) Status() (runtime.Status, error) {
	resp, err := c.call(request{Op: "status"})
	if errors.Is(err, errHolderGone) {
		return runtime.StatusStopped, nil
	}
	if err != nil {
		return "", err
	}
	return runtime.Status(resp.Status), nil
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

// Start has the holder resume the suspended thread, then reads the
// running process from the host (its job, its token) and runs the
// canaries in the job. It only reports: the core judges the verdicts
// (PostLaunch) as it judges Linux's, and kills the container on a FAIL.
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
	if _, err := c.call(request{Op: "start"}); err != nil {
		return runtime.Errorf(runtime.ErrSpawnFailed, "start %q: %w", c.st.ID, err)
	}
	c.st.Running = append(c.running(), c.canaries()...)
	return c.save()
}

// running asks the holder for the live process's facts and judges them
// against the plan; facts it cannot get are UNAVAILABLE, never PASS.
func (c *container) running() []hooks.Result {
	resp, err := c.call(request{Op: "facts"})
	if err != nil || resp.Facts == nil {
		found := "the holder returned no facts"
		if err != nil {
			found = err.Error()
		}
		return []hooks.Result{{Check: "job/member", Verdict: hooks.Unavailable, Evidence: hooks.HostFact, Feature: string(runtime.FeatureVerify),
			Expected: "IsProcessInJob = true", Found: found}}
	}
	return Judge(c.st.Plan, c.st.SID, *resp.Facts)
}

func (c *container) CgroupPaths() map[string]string { return map[string]string{} }

// Signal terminates: the init alone, or with all the whole job. Windows
// has no signals (ParseSignal accepts only the terminating ones).
func (c *container) Signal(_ syscall.Signal, all bool) error {
	st, err := c.Status()
	if err != nil {
		return err
	}
	if st == runtime.StatusStopped && !all {
		return runtime.ErrNotRunning
	}
	if _, err := c.call(request{Op: "kill", All: all}); err != nil {
		if errors.Is(err, errHolderGone) {
			return runtime.ErrNotRunning
		}
		return err
	}
	return nil
}

func (c *container) Processes() ([]int, error) {
	resp, err := c.call(request{Op: "pids"})
	if errors.Is(err, errHolderGone) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return resp.Pids, nil
}

func (c *container) Destroy() error { return os.RemoveAll(c.dir) }

// Teardown has the holder terminate the job and prove it empty; it then
// removes the grants and the profile and exits. With the holder gone the
// job was closed, and kill-on-close ended its processes, but nothing can
// ask the job any more: the receipt says so, it is never clean.
func (c *container) Teardown() (*hooks.Receipt, error) {
	resp, err := c.call(request{Op: "teardown"})
	switch {
	case errors.Is(err, errHolderGone):
		return &hooks.Receipt{Method: "kill-on-close", CgroupRemoved: false, Problems: []string{err.Error() + "; the job's emptiness and the removal of its grants cannot be proven"}}, nil
	case err != nil:
		return nil, fmt.Errorf("teardown %q: %w", c.st.ID, err)
	}
	rec := resp.Receipt
	if rec == nil {
		return nil, fmt.Errorf("teardown %q: the holder sent no receipt", c.st.ID)
	}
	if len(rec.Remaining) == 0 && len(rec.Problems) == 0 {
		if err := os.RemoveAll(c.dir); err != nil {
			rec.Problems = append(rec.Problems, err.Error())
		}
	}
	return rec, nil
}

// runProbe has the holder run args in the job, with the container's
// token and AppContainer, stdin on its standard input, and returns its
// stdout.
func (c *container) runProbe(args []string, stdin []byte, timeout time.Duration) ([]byte, error) {
	resp, err := c.call(request{Op: "probe", Args: args, Stdin: stdin, Timeout: timeout})
	if err != nil {
		return nil, err
	}
	return resp.Stdout, nil
}

// canaries runs the probe in the job and judges it from the host: the
// canary files as the host sees them (the container's paths are host
// paths), its own loopback listener, the deny entries read back from the
// masked paths' DACLs, the bytes under each masked path.
func (c *container) canaries() []hooks.Result {
	cp := c.st.Plan.CanaryPlan()
	if cp.Empty() {
		return nil
	}
	nonce := randomHex(16)
	o := Observation{Common: hooks.Observation{Nonce: nonce}}
	cfg := canary.Config{Nonce: nonce, MaskedRead: cp.MaskedRead, WriteOutside: cp.WriteOutside, WriteInside: cp.WriteInside}
	lis, err := net.Listen("tcp4", "127.0.0.1:0")
	accepted := make(chan int, 1)
	if err != nil {
		o.Common.ListenerErr = err.Error()
	} else {
		cfg.Connect = lis.Addr().String()
		go func() {
			n := 0
			for {
				conn, err := lis.Accept()
				if err != nil {
					accepted <- n
					return
				}
				n++
				conn.Close()
			}
		}()
	}
	// The plan goes on the probe's stdin: a command line is readable by
	// the workload beside it, which could forge the canaries with the
	// nonce.
	in, runErr := canary.EncodeMessage(cfg)
	var out []byte
	if runErr == nil {
		out, runErr = c.runProbe([]string{c.st.Self, canary.ProbeArg}, in, canary.Timeout)
	}
	if runErr == nil {
		runErr = canary.ReadMessage(bytes.NewReader(out), &o.Common.Report)
	}
	if runErr != nil {
		o.Common.ProbeErr = runErr.Error()
	}
	if lis != nil {
		lis.Close()
		o.Common.Accepted = <-accepted
	}
	o.Common.Created = map[string]bool{}
	for _, dir := range slices.Concat(cp.WriteInside, cp.WriteOutside) {
		file := filepath.Join(dir, filepath.Base(canary.File("/", nonce)))
		_, err := os.Lstat(file)
		switch {
		case err == nil:
			o.Common.Created[dir] = true
			if err := os.Remove(file); err != nil {
				o.Common.FactErr = append(o.Common.FactErr, err.Error())
			}
		case errors.Is(err, os.ErrNotExist):
			o.Common.Created[dir] = false
		default:
			o.Common.FactErr = append(o.Common.FactErr, err.Error())
		}
	}
	o.DenyACE, o.HostDigest = map[string]Answer{}, map[string]string{}
	sid, err := windows.StringToSid(c.st.SID)
	for _, m := range cp.MaskedRead {
		if err != nil {
			o.DenyACE[m] = Answer{Err: err.Error()}
		} else if denied, derr := hasDenyEntry(m, sid); derr != nil {
			o.DenyACE[m] = Answer{Err: derr.Error()}
		} else {
			o.DenyACE[m] = Answer{Denied: denied}
		}
		if d, ok := hostDigest(m); ok {
			o.HostDigest[m] = d
		}
	}
	return JudgeCanaries(cp, o)
}

// hostDigest is what the host reads at p, as the probe would hash it.
func hostDigest(p string) (string, bool) {
	f, err := os.Open(p)
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	buf := make([]byte, canary.MaxRead)
	n, err := io.ReadFull(f, buf)
	if n == 0 || err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", false
	}
	return canary.Digest(buf[:n]), true
}

func unsupported(op, id, why string) error {
	return fmt.Errorf("%s %q: %w: %s", op, id, errors.ErrUnsupported, why)
}

func (c *container) Exec(*runtime.ExecRequest) (int, runtime.Foreground, error) {
	return 0, nil, unsupported("exec", c.st.ID, "the windows backend does not exec into a running job yet")
}
func (c *container) Pause() error {
	return unsupported("pause", c.st.ID, "suspending every thread of a job is not implemented")
}
func (c *container) Resume() error { return unsupported("resume", c.st.ID, "not implemented") }
func (c *container) Stats() (any, error) {
	return nil, unsupported("events", c.st.ID, "job accounting is not reported yet")
}
func (c *container) NotifyOOM() (<-chan struct{}, error) {
	return nil, unsupported("events", c.st.ID, "job memory notifications are not reported yet")
}
func (c *container) Update(*specs.LinuxResources) error {
	return unsupported("update", c.st.ID, "changing a running job's limits is not implemented")
}

var _ runtime.VerifyingContainer = (*container)(nil)

// PreLaunch are the verdicts on the suspended process, read at create.
func (c *container) PreLaunch() []hooks.Result { return c.st.Verdicts }

// PostLaunch are the verdicts on the running process and the canaries,
// read at start.
func (c *container) PostLaunch() []hooks.Result { return c.st.Running }

// OnDemand has the holder read the running process again, for verify (the
// canaries ran once, at start: the core carries their verdicts).
func (c *container) OnDemand() ([]hooks.Result, error) { return c.running(), nil }

// foreground is run's handle: the holder answers "wait" when the process
// exits. A Ctrl-C terminates the job.
type foreground struct {
	c    *container
	sigs chan os.Signal
}

func (f *foreground) Wait() (int, error) {
	f.sigs = make(chan os.Signal, 4)
	signal.Notify(f.sigs, os.Interrupt)
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := f.c.call(request{Op: "wait"})
		if err != nil {
			done <- result{-1, err}
			return
		}
		code := 0
		if resp.Exit != nil {
			code = int(*resp.Exit)
		}
		done <- result{code, nil}
	}()
	for {
		select {
		case <-f.sigs:
			_, _ = f.c.call(request{Op: "kill", All: true})
		case r := <-done:
			return r.code, r.err
		}
	}
}

func (f *foreground) Close() {
	if f.sigs != nil {
		signal.Stop(f.sigs)
	}
}
