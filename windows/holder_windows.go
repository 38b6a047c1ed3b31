//go:build windows

package windows

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// holderConfig is what create hands the holder, in its state directory.
type holderConfig struct {
	ID   string `json:"id"`
	Plan *Plan  `json:"plan"`
	// App is the program, resolved with the spec's PATH.
	App string `json:"app"`
	// Pipe is the control pipe's name, unguessable.
	Pipe string `json:"pipe"`
}

// readyMsg is the holder's one line to create: the process exists,
// suspended in the job, and these are its facts; or why not.
type readyMsg struct {
	Err   string `json:"err,omitempty"`
	Pid   int    `json:"pid,omitempty"`
	SID   string `json:"sid,omitempty"`
	Facts *Facts `json:"facts,omitempty"`
}

// request and response are the control pipe's protocol: one JSON line
// each way per connection.
type request struct {
	Op      string        `json:"op"` // status, start, facts, kill, wait, pids, probe, teardown
	All     bool          `json:"all,omitempty"`
	Args    []string      `json:"args,omitempty"`
	Stdin   []byte        `json:"stdin,omitempty"`
	Timeout time.Duration `json:"timeout,omitempty"`
}

type response struct {
	Err     string         `json:"err,omitempty"`
	Status  string         `json:"status,omitempty"`
	Exit    *uint32        `json:"exit,omitempty"`
	Facts   *Facts         `json:"facts,omitempty"`
	Pids    []int          `json:"pids,omitempty"`
	Stdout  []byte         `json:"stdout,omitempty"`
	Receipt *hooks.Receipt `json:"receipt,omitempty"`
}

// teardownLimit bounds the wait for a terminated job to be empty.
const teardownLimit = 10 * time.Second

type holder struct {
	cfg     *holderConfig
	job     windows.Handle
	sid     *windows.SID
	token   windows.Token
	std     []windows.Handle
	pi      windows.ProcessInformation
	granted []string // paths with an entry for sid

	mu      sync.Mutex
	started bool
	done    chan struct{}
}

// Holder is the hidden command "<self> windows-holder DIR READY": the
// holder of one container. It makes the job, the AppContainer profile,
// the grants and the restricted token, creates the process suspended
// inside the job, reports on the inherited handle READY, then serves the
// control pipe until teardown. Its job handle is the job's only one: if
// the holder dies, kill-on-close ends every process of the container.
func Holder(args []string) int {
	if len(args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: vetto-runtime", HolderArg, "DIR READY-HANDLE")
		return 2
	}
	hv, err := strconv.ParseUint(args[3], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "vetto-runtime", HolderArg+": ready handle:", err)
		return 2
	}
	ready := os.NewFile(uintptr(hv), "ready")
	h, msg := newHolder(args[2])
	err = json.NewEncoder(ready).Encode(msg)
	ready.Close()
	if msg.Err != "" || err != nil {
		if h != nil {
			h.close()
		}
		return 1
	}
	h.serve()
	return 0
}

func newHolder(dir string) (_ *holder, msg readyMsg) {
	fail := func(h *holder, err error) (*holder, readyMsg) {
		if h != nil {
			h.close()
		}
		return nil, readyMsg{Err: err.Error()}
	}
	data, err := os.ReadFile(filepath.Join(dir, planName))
	if err != nil {
		return fail(nil, err)
	}
	cfg := &holderConfig{}
	if err := json.Unmarshal(data, cfg); err != nil || cfg.Plan == nil {
		return fail(nil, fmt.Errorf("holder config: %v", err)) //nolint:errorlint // err is nil when the plan is missing: %v prints <nil>, %w would not
	}
	h := &holder{cfg: cfg, done: make(chan struct{})}
	p := cfg.Plan

	if h.job, err = windows.CreateJobObject(nil, nil); err != nil {
		return fail(h, fmt.Errorf("CreateJobObject: %w", err))
	}
	var lim windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	lim.BasicLimitInformation.LimitFlags = p.Job.LimitFlags
	lim.BasicLimitInformation.ActiveProcessLimit = p.Job.ActiveProcessLimit
	lim.JobMemoryLimit = uintptr(p.Job.JobMemoryLimit)
	if _, err := windows.SetInformationJobObject(h.job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&lim)), uint32(unsafe.Sizeof(lim))); err != nil {
		return fail(h, fmt.Errorf("job limits: %w", err))
	}
	ui := windows.JOBOBJECT_BASIC_UI_RESTRICTIONS{UIRestrictionsClass: p.Job.UIRestrictions}
	if _, err := windows.SetInformationJobObject(h.job, windows.JobObjectBasicUIRestrictions, uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui))); err != nil {
		return fail(h, fmt.Errorf("job UI restrictions: %w", err))
	}

	if h.sid, err = createAppContainerProfile(p.AppContainer.Name, "vetto-runtime container "+cfg.ID); err != nil {
		// A fresh name that exists already is not ours to reuse.
		return fail(h, fmt.Errorf("AppContainer profile %s: %w", p.AppContainer.Name, err))
	}
	for _, g := range p.Grants {
		applied, err := applyGrant(g, h.sid, p.WriteRoots)
		if err != nil {
			return fail(h, err)
		}
		if applied {
			h.granted = append(h.granted, g.Path)
		}
	}
	if h.token, err = restrictedToken(p.Token); err != nil {
		return fail(h, err)
	}
	for _, f := range []*os.File{os.Stdin, os.Stdout, os.Stderr} {
		h.std = append(h.std, inheritable(windows.Handle(f.Fd())))
	}
	// The pipe first: start may connect as soon as create returns.
	first, err := newPipe(cfg.Pipe, true)
	if err != nil {
		return fail(h, err)
	}
	go h.acceptLoop(first)

	h.pi, err = h.spawn(p.CommandLine, cfg.App, p.Env, p.Cwd, h.std, true)
	if err != nil {
		return fail(h, err)
	}
	f := readFacts(h.pi.Process, h.job, int(h.pi.ProcessId))
	return h, readyMsg{Pid: int(h.pi.ProcessId), SID: h.sid.String(), Facts: &f}
}

// restrictedToken is the holder's own token with every privilege but
// SeChangeNotifyPrivilege removed, Administrators deny-only, at low
// integrity: the token the AppContainer's is derived from.
func restrictedToken(t Token) (windows.Token, error) {
	var own windows.Token
	if err := windows.OpenProcessToken(windows.CurrentProcess(), windows.TOKEN_ALL_ACCESS, &own); err != nil {
		return 0, fmt.Errorf("open own token: %w", err)
	}
	defer own.Close()
	var disable []windows.SIDAndAttributes
	for _, s := range t.DenyOnly {
		sid, err := windows.StringToSid(s)
		if err != nil {
			return 0, err
		}
		disable = append(disable, windows.SIDAndAttributes{Sid: sid})
	}
	flags := uint32(0)
	if t.DisableMaxPrivilege {
		flags |= disableMaxPrivilege
	}
	tok, err := createRestrictedToken(own, flags, disable)
	if err != nil {
		return 0, err
	}
	low, err := windows.StringToSid(t.Integrity)
	if err != nil {
		tok.Close()
		return 0, err
	}
	tml := windows.Tokenmandatorylabel{Label: windows.SIDAndAttributes{Sid: low, Attributes: windows.SE_GROUP_INTEGRITY}}
	if err := windows.SetTokenInformation(tok, windows.TokenIntegrityLevel, (*byte)(unsafe.Pointer(&tml)), tml.Size()); err != nil {
		tok.Close()
		return 0, fmt.Errorf("set low integrity: %w", err)
	}
	return tok, nil
}

// inheritable is an inheritable duplicate of h (0 for none).
func inheritable(h windows.Handle) windows.Handle {
	if h == 0 || h == windows.InvalidHandle {
		return 0
	}
	var dup windows.Handle
	if err := windows.DuplicateHandle(windows.CurrentProcess(), h, windows.CurrentProcess(), &dup, 0, true, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return 0
	}
	return dup
}

// spawn creates a process inside the job from its first instruction
// (PROC_THREAD_ATTRIBUTE_JOB_LIST: never AssignProcessToJobObject after
// creation, which leaves a window in which a child can be started outside
// the job), in the AppContainer (SECURITY_CAPABILITIES, no capability),
// with the restricted token, inheriting only std (HANDLE_LIST: not the
// job's or the pipe's handles), and without a console (DETACHED_PROCESS:
// a process sharing the caller's console could write into its input).
func (h *holder) spawn(cmdline, app string, env []string, cwd string, std []windows.Handle, suspended bool) (windows.ProcessInformation, error) {
	var pi windows.ProcessInformation
	al, err := windows.NewProcThreadAttributeList(3)
	if err != nil {
		return pi, err
	}
	defer al.Delete()
	job := h.job
	if err := al.Update(procThreadAttributeJobList, unsafe.Pointer(&job), unsafe.Sizeof(job)); err != nil {
		return pi, fmt.Errorf("job list attribute: %w", err)
	}
	sc := &securityCapabilities{AppContainerSid: h.sid}
	if err := al.Update(procThreadAttributeSecurityCapabilities, unsafe.Pointer(sc), unsafe.Sizeof(*sc)); err != nil {
		return pi, fmt.Errorf("security capabilities attribute: %w", err)
	}
	var handles []windows.Handle
	for _, s := range std {
		if s != 0 && !containsHandle(handles, s) {
			handles = append(handles, s)
		}
	}
	if len(handles) > 0 {
		if err := al.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&handles[0]), uintptr(len(handles))*unsafe.Sizeof(handles[0])); err != nil {
			return pi, fmt.Errorf("handle list attribute: %w", err)
		}
	}
	si := &windows.StartupInfoEx{ProcThreadAttributeList: al.List()}
	si.Cb = uint32(unsafe.Sizeof(*si))
	si.Flags = windows.STARTF_USESTDHANDLES
	si.StdInput, si.StdOutput, si.StdErr = std[0], std[1], std[2]

	cmd, err := windows.UTF16FromString(cmdline)
	if err != nil {
		return pi, err
	}
	var appPtr, cwdPtr *uint16
	if app != "" {
		if appPtr, err = windows.UTF16PtrFromString(app); err != nil {
			return pi, err
		}
	}
	if cwd != "" {
		if cwdPtr, err = windows.UTF16PtrFromString(cwd); err != nil {
			return pi, err
		}
	}
	block, err := envBlock(env)
	if err != nil {
		return pi, err
	}
	flags := uint32(windows.EXTENDED_STARTUPINFO_PRESENT | windows.CREATE_UNICODE_ENVIRONMENT | windows.DETACHED_PROCESS)
	if suspended {
		flags |= windows.CREATE_SUSPENDED
	}
	if err := windows.CreateProcessAsUser(h.token, appPtr, &cmd[0], nil, nil, len(handles) > 0, flags, &block[0], cwdPtr, &si.StartupInfo, &pi); err != nil {
		return pi, fmt.Errorf("CreateProcessAsUser %s: %w", cmdline, err)
	}
	return pi, nil
}

func containsHandle(list []windows.Handle, h windows.Handle) bool {
	for _, x := range list {
		if x == h {
			return true
		}
	}
	return false
}

// envBlock is env as CreateProcess wants it, exactly: an empty env is an
// empty block, never "inherit the holder's".
func envBlock(env []string) ([]uint16, error) {
	var out []uint16
	for _, kv := range env {
		u, err := windows.UTF16FromString(kv)
		if err != nil {
			return nil, err
		}
		out = append(out, u...)
	}
	if len(out) == 0 {
		out = append(out, 0)
	}
	return append(out, 0), nil
}

// newPipe makes one instance of the control pipe: only the holder's user
// may open it (and not an AppContainer, nor a lower integrity), never
// from the network; the first instance must be the first of its name, so
// nobody squats it.
func newPipe(name string, first bool) (windows.Handle, error) {
	var tok windows.Token
	if err := windows.OpenProcessToken(windows.CurrentProcess(), windows.TOKEN_QUERY, &tok); err != nil {
		return 0, err
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return 0, err
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;" + u.User.Sid.String() + ")")
	if err != nil {
		return 0, err
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return 0, err
	}
	flags := uint32(windows.PIPE_ACCESS_DUPLEX)
	if first {
		flags |= windows.FILE_FLAG_FIRST_PIPE_INSTANCE
	}
	h, err := windows.CreateNamedPipe(n, flags, windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		windows.PIPE_UNLIMITED_INSTANCES, 64<<10, 64<<10, 0, sa)
	if err != nil {
		return 0, fmt.Errorf("control pipe %s: %w", name, err)
	}
	return h, nil
}

// acceptLoop serves each connection in its own goroutine, on a fresh
// instance for the next (a foreground run's wait holds one for as long
// as the process lives).
func (h *holder) acceptLoop(inst windows.Handle) {
	for {
		err := windows.ConnectNamedPipe(inst, nil)
		if err != nil && !errors.Is(err, windows.ERROR_PIPE_CONNECTED) {
			windows.CloseHandle(inst)
			return
		}
		go h.handle(inst)
		next, err := newPipe(h.cfg.Pipe, false)
		if err != nil {
			return
		}
		inst = next
	}
}

func (h *holder) serve() { <-h.done }

func (h *holder) handle(inst windows.Handle) {
	f := os.NewFile(uintptr(inst), "pipe")
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	var req request
	var resp response
	if err := json.Unmarshal(line, &req); err != nil {
		resp.Err = "bad request: " + err.Error()
	} else {
		resp = h.do(req)
	}
	_ = json.NewEncoder(f).Encode(resp)
	_ = windows.FlushFileBuffers(inst)
	// Only a teardown that proved the job empty and removed everything
	// ends the holder: otherwise it keeps the job (and its handle) for
	// delete --force to try again.
	if r := resp.Receipt; req.Op == "teardown" && r != nil && len(r.Remaining) == 0 && len(r.Problems) == 0 {
		h.close()
	}
}

func (h *holder) status() (string, *uint32) {
	if ev, _ := windows.WaitForSingleObject(h.pi.Process, 0); ev == windows.WAIT_OBJECT_0 {
		var code uint32
		_ = windows.GetExitCodeProcess(h.pi.Process, &code)
		return "stopped", &code
	}
	if h.started {
		return "running", nil
	}
	return "created", nil
}

func (h *holder) do(req request) response {
	switch req.Op {
	case "wait":
		_, _ = windows.WaitForSingleObject(h.pi.Process, windows.INFINITE)
		var code uint32
		_ = windows.GetExitCodeProcess(h.pi.Process, &code)
		return response{Status: "stopped", Exit: &code}
	case "probe":
		out, err := h.probe(req.Args, req.Stdin, req.Timeout)
		if err != nil {
			return response{Err: err.Error()}
		}
		return response{Stdout: out}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch req.Op {
	case "status":
		st, code := h.status()
		return response{Status: st, Exit: code}
	case "start":
		if h.started {
			return response{Err: "already started"}
		}
		if _, err := windows.ResumeThread(h.pi.Thread); err != nil {
			return response{Err: "ResumeThread: " + err.Error()}
		}
		h.started = true
		return response{Status: "running"}
	case "facts":
		f := readFacts(h.pi.Process, h.job, int(h.pi.ProcessId))
		return response{Facts: &f}
	case "pids":
		pids, err := jobPids(h.job)
		if err != nil {
			return response{Err: err.Error()}
		}
		return response{Pids: pids}
	case "kill":
		var err error
		if req.All {
			err = windows.TerminateJobObject(h.job, 137)
		} else {
			err = windows.TerminateProcess(h.pi.Process, 137)
		}
		if err != nil {
			return response{Err: err.Error()}
		}
		return response{}
	case "teardown":
		return response{Receipt: h.teardown()}
	}
	return response{Err: "unknown op " + strconv.Quote(req.Op)}
}

// teardown terminates the job, proves it empty (ActiveProcesses 0 in the
// job's accounting), then takes the grants off the host's files and
// deletes the AppContainer profile.
func (h *holder) teardown() *hooks.Receipt {
	rec := &hooks.Receipt{Method: "job-terminate"}
	problem := func(format string, a ...any) { rec.Problems = append(rec.Problems, fmt.Sprintf(format, a...)) }
	before, err := jobActive(h.job)
	if err != nil {
		problem("job accounting: %v", err)
	}
	if err := windows.TerminateJobObject(h.job, 137); err != nil {
		problem("TerminateJobObject: %v", err)
	}
	rec.Killed = int(before)
	deadline := time.Now().Add(teardownLimit)
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 20*time.Millisecond) {
		active, err := jobActive(h.job)
		if err != nil {
			problem("job accounting: %v", err)
			break
		}
		if active == 0 {
			break
		}
		if time.Now().After(deadline) {
			pids, _ := jobPids(h.job)
			rec.Remaining = pids
			if len(pids) == 0 {
				problem("%d processes still active in the job", active)
			}
			break
		}
		time.Sleep(delay)
	}
	if len(rec.Remaining) > 0 || len(rec.Problems) > 0 {
		return rec
	}
	removed := true
	for i := len(h.granted) - 1; i >= 0; i-- {
		if err := removeGrant(h.granted[i], h.sid); err != nil {
			problem("%v", err)
			removed = false
		}
	}
	h.granted = nil
	if err := deleteAppContainerProfile(h.cfg.Plan.AppContainer.Name); err != nil {
		problem("%v", err)
		removed = false
	}
	// No cgroup on Windows: CgroupRemoved says the grants and the
	// profile, the container's host objects, are gone.
	rec.CgroupRemoved = removed
	return rec
}

// probe runs args in the job, with the container's token and
// AppContainer, and returns its stdout.
func (h *holder) probe(args []string, stdin []byte, timeout time.Duration) ([]byte, error) {
	var r, w windows.Handle
	sa := &windows.SecurityAttributes{InheritHandle: 1}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	if err := windows.CreatePipe(&r, &w, sa, 0); err != nil {
		return nil, err
	}
	_ = windows.SetHandleInformation(r, windows.HANDLE_FLAG_INHERIT, 0)
	out := os.NewFile(uintptr(r), "probe-stdout")
	defer out.Close()
	// The probe's plan arrives on its stdin: a pipe whose write end only
	// the holder holds, closed once the plan is written.
	var inR, inW windows.Handle
	if err := windows.CreatePipe(&inR, &inW, sa, uint32(len(stdin))); err != nil {
		windows.CloseHandle(w)
		return nil, err
	}
	_ = windows.SetHandleInformation(inW, windows.HANDLE_FLAG_INHERIT, 0)
	planW := os.NewFile(uintptr(inW), "probe-stdin")
	pi, err := h.spawn(composeCommandLine(args), args[0], nil, "", []windows.Handle{inR, w, w}, false)
	windows.CloseHandle(w)
	windows.CloseHandle(inR)
	if err != nil {
		planW.Close()
		return nil, err
	}
	go func() {
		_, _ = planW.Write(stdin)
		planW.Close()
	}()
	defer windows.CloseHandle(pi.Process)
	defer windows.CloseHandle(pi.Thread)
	type result struct {
		b   []byte
		err error
	}
	read := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(out, 1<<20))
		read <- result{b, err}
	}()
	ev, _ := windows.WaitForSingleObject(pi.Process, uint32(timeout/time.Millisecond))
	if ev != windows.WAIT_OBJECT_0 {
		_ = windows.TerminateProcess(pi.Process, 137)
		return nil, fmt.Errorf("probe: killed after %s", timeout)
	}
	res := <-read
	var code uint32
	_ = windows.GetExitCodeProcess(pi.Process, &code)
	if code != 0 {
		return nil, fmt.Errorf("probe: exit status %d", code)
	}
	return res.b, res.err
}

// close releases everything; closing the job's last handle kills what is
// left in it (kill on close).
func (h *holder) close() {
	for i := len(h.granted) - 1; i >= 0; i-- {
		_ = removeGrant(h.granted[i], h.sid)
	}
	h.granted = nil
	if h.sid != nil {
		_ = deleteAppContainerProfile(h.cfg.Plan.AppContainer.Name)
	}
	for _, x := range []windows.Handle{h.pi.Thread, h.pi.Process, h.job} {
		if x != 0 {
			windows.CloseHandle(x)
		}
	}
	if h.token != 0 {
		h.token.Close()
	}
	select {
	case <-h.done:
	default:
		close(h.done)
	}
}
