package linux

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/linux/relaywire"
	"github.com/vetto-dev/vetto-runtime/runtime"
)

// relayReadyTimeout bounds the wait for a started relay to harden itself
// and say so.
const relayReadyTimeout = 10 * time.Second

// credentialsCheck is the pre-launch check that the relay loaded exactly
// the credentials the runtime read, by host and header (never a value):
// what the relay said on its ready line.
func credentialsCheck(want []runtime.RelayCredential, got []string) hooks.Result {
	var exp []string
	for _, c := range want {
		exp = append(exp, fmt.Sprintf("%s:%d %s", c.Host, relaywire.CredentialPort, textproto.CanonicalMIMEHeaderKey(c.Header)))
	}
	sort.Strings(exp)
	r := hooks.Result{
		Check:    "relay/credentials",
		Evidence: hooks.HostFact,
		Expected: fmt.Sprintf("%d loaded: %s (values not shown)", len(exp), strings.Join(exp, ", ")),
		Found:    fmt.Sprintf("%d loaded: %s", len(got), strings.Join(got, ", ")),
		Verdict:  hooks.Pass,
	}
	if strings.Join(exp, "\n") != strings.Join(got, "\n") {
		r.Verdict = hooks.Fail
	}
	return r
}

var _ runtime.RelayBackend = (*Backend)(nil)

// StartRelay makes the relay's sockets in the init's network namespace,
// checks them from the host and, when they pass, starts the relay process
// with them and checks it too (runtime.RelayBackend).
func (b *Backend) StartRelay(rc runtime.Container, req *runtime.RelayRequest) (_ *runtime.RelayProcess, checks []hooks.Result, retErr error) {
	exe, err := b.relayExecutable(req)
	if err != nil {
		return nil, nil, runtime.Errorf(runtime.ErrPreLaunchFailed, "relay executable: %w", err)
	}
	cfg := &relaywire.Config{
		ID: req.ID, Spec: req.SpecHash, Level: req.Level, Mode: req.Mode, Allow: req.Allow,
		Resolvers: req.Resolvers, HostAddrs: req.HostAddrs, TestHosts: req.TestHosts, Exempt: req.Exempt,
		CheckSNI: req.CheckSNI, UID: req.UID, RootCAs: req.RootCAs,
	}
	for _, c := range req.Credentials {
		cfg.Credentials = append(cfg.Credentials, relaywire.Credential{Host: c.Host, Header: c.Header, Value: c.Value})
	}
	pid := rc.InitPid()
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("pidfd of init %d: %w", pid, err)
	}
	initFile := os.NewFile(uintptr(pidfd), "init-pidfd")
	defer initFile.Close()
	socks, err := makeRelaySockets(pidfd)
	if err != nil {
		return nil, nil, err
	}
	defer closeSocks(socks)
	plain := make([]hooks.RelaySocket, len(socks))
	for i, s := range socks {
		plain[i] = s.RelaySocket
	}
	checks = hooks.CheckRelaySockets(pid, plain)
	// The namespace read from /proc/<pid> was the init's only if the
	// init is still the process the pidfd holds.
	if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil {
		return nil, nil, fmt.Errorf("init %d: %w", pid, err)
	}
	for _, r := range checks {
		if r.Verdict != hooks.Pass {
			return nil, checks, nil
		}
	}

	// Descriptors the relay holds, in this order from fd 3.
	files := []*os.File{nil}
	add := func(f *os.File) int {
		files = append(files, f)
		return 2 + len(files)
	}
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer cfgR.Close()
	defer cfgW.Close()
	files[0] = cfgR
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	defer readyR.Close()
	defer readyW.Close()
	cfg.ReadyFd = add(readyW)
	cfg.InitFd = add(initFile)
	stats, err := os.OpenFile(filepath.Join(req.Dir, runtime.RelayStatsFile), os.O_RDWR|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("relay stats file: %w", err)
	}
	defer stats.Close()
	cfg.StatsFd = add(stats)
	for _, path := range req.AuditLogs {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("relay audit log: %w", err)
		}
		defer f.Close()
		cfg.AuditFds = append(cfg.AuditFds, add(f))
	}
	for _, s := range socks {
		cfg.Listeners = append(cfg.Listeners, relaywire.Listener{Name: s.Name, Kind: s.Kind, Stream: s.Stream, Port: s.Port, Fd: add(s.file)})
	}
	logFile, err := os.OpenFile(filepath.Join(req.Dir, runtime.RelayLogFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("relay log: %w", err)
	}
	defer logFile.Close()
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}

	cmd := &exec.Cmd{
		Path:       exe,
		Args:       []string{exe, relaywire.Arg, req.Dir},
		Env:        []string{},
		Dir:        "/",
		Stderr:     logFile,
		ExtraFiles: files,
		// Its own session: no terminal, no signal from the caller's
		// process group; it outlives create and lives as long as the
		// init.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start the relay process: %w", err)
	}
	defer func() {
		if retErr != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	// Our copies of what is now the relay's.
	cfgR.Close()
	readyW.Close()
	if _, err := cfgW.Write(data); err != nil {
		return nil, nil, fmt.Errorf("write the relay's config: %w", err)
	}
	cfgW.Close()
	loaded, err := waitRelayReady(readyR)
	if errors.Is(err, relaywire.ErrRefused) {
		// The relay's own validation (relay.NewConfig), which it runs
		// before anything else: the request's settings, or a credential
		// it cannot serve, which refuses the launch as not established.
		kind := runtime.ErrInvalidInput
		if len(req.Credentials) > 0 && strings.Contains(err.Error(), "credentials") {
			kind = runtime.ErrPreLaunchFailed
		}
		return nil, nil, runtime.Errorf(kind, "relay settings: %w", err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("relay process %d: %w%s", cmd.Process.Pid, err, logTail(filepath.Join(req.Dir, runtime.RelayLogFile)))
	}
	p := &runtime.RelayProcess{Pid: cmd.Process.Pid}
	ps, err := (hooks.ProcFacts{}).ProcStat(p.Pid)
	if err != nil {
		return nil, nil, fmt.Errorf("relay process %d: %w", p.Pid, err)
	}
	p.StartTime = ps.Start
	checks = append(checks, hooks.CheckRelayProcess(p.Pid, req.UID))
	if len(req.Credentials) > 0 || len(loaded) > 0 {
		checks = append(checks, credentialsCheck(req.Credentials, loaded))
	}
	// Reaped by whoever outlives it: this process when it is run's, in
	// the foreground, else init once create exits.
	go func() { _ = cmd.Wait() }()
	return p, checks, nil
}

// waitRelayReady reads the relay's one line (relaywire.ParseReady): the
// credentials it loaded once it is hardened and listening, or what failed.
func waitRelayReady(r *os.File) ([]string, error) {
	if err := r.SetReadDeadline(time.Now().Add(relayReadyTimeout)); err != nil {
		return nil, err
	}
	line, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if errors.Is(err, os.ErrDeadlineExceeded) && len(line) == 0 {
		return nil, fmt.Errorf("not ready after %s", relayReadyTimeout)
	}
	if err != nil && len(line) == 0 {
		return nil, err
	}
	return relaywire.ParseReady(string(line))
}

// logTail is the end of the relay's log, for an error message.
func logTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return ""
	}
	data = bytes.TrimSpace(data)
	if len(data) > 1024 {
		data = data[len(data)-1024:]
	}
	return " (relay log: " + string(data) + ")"
}

// StopRelay makes sure no relay of the container in dir runs
// (runtime.RelayBackend): the recorded one, by pidfd and start time,
// waited for and killed if it outstays timeout; without a record, any
// process on the host that runs this binary as that container's relay.
func (b *Backend) StopRelay(dir string, p *runtime.RelayProcess, timeout time.Duration) (bool, error) {
	if p != nil {
		// The record is written right after the relay started, so a
		// recorded relay is the only one there can be.
		if err := stopRelayProcess(p.Pid, p.StartTime, timeout); err != nil {
			return false, err
		}
		return true, nil
	}
	left, err := relaysOf(dir)
	if err != nil {
		return false, err
	}
	for _, pid := range left {
		// A relay of this container that the record did not name (a
		// create killed between starting it and recording it): it dies
		// with the init as well; wait, then kill.
		ps, err := (hooks.ProcFacts{}).ProcStat(pid)
		if err != nil {
			continue
		}
		start := ps.Start
		if err := stopRelayProcess(pid, start, timeout); err != nil {
			return false, err
		}
	}
	if left, err = relaysOf(dir); err != nil || len(left) > 0 {
		return false, err
	}
	return true, nil
}

// stopRelayProcess waits for the process pid that started at start to
// exit, and kills it if it has not within timeout. A pid that is gone or
// is another process now is done.
func stopRelayProcess(pid int, start uint64, timeout time.Duration) error {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pidfd of relay %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	// After pidfd_open: if the start time still matches, the pidfd holds
	// the relay, whatever happens to the pid from here on.
	ps, err := (hooks.ProcFacts{}).ProcStat(pid)
	if err != nil || ps.Start != start || ps.Gone() {
		return nil
	}
	if exited(pidfd, timeout) {
		return nil
	}
	if err := unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill relay %d: %w", pid, err)
	}
	if !exited(pidfd, time.Second) {
		return fmt.Errorf("relay %d survived SIGKILL", pid)
	}
	return nil
}

// exited waits up to timeout for the process behind pidfd to exit.
func exited(pidfd int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0
		}
		fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds()))
		if err == nil {
			return n > 0
		}
		if !errors.Is(err, unix.EINTR) || time.Now().After(deadline) {
			return false
		}
	}
}

// relayExecutable is the file a relay process runs: the relay executable
// this build embeds, written into the runtime's bin directory; or, in a
// build that embeds none, this binary itself (which then links the relay,
// platform/relay_self_linux.go).
func (b *Backend) relayExecutable(req *runtime.RelayRequest) (string, error) {
	if !theRelayExes.embeds() {
		if req.Self == "" {
			return "", errors.New("the runtime does not know its own executable")
		}
		// The file this process runs, not the path it was run from: a
		// container that could replace that path must not choose the
		// relay (the evaluator refuses such binds; this holds anyway).
		return "/proc/self/exe", nil
	}
	if req.BinDir == "" {
		return "", errors.New("no bin directory to keep it in")
	}
	return theRelayExes.resolve(req.BinDir)
}

// relaysOf scans the host's processes for the relays of the container
// whose state is in dir: argv exactly [*, "relay", dir], running a relay
// executable (isRelayExecutable), and not yet exited (a zombie serves
// nothing).
func relaysOf(dir string) ([]int, error) {
	self, err := os.Stat("/proc/self/exe")
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		argv, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(argv), "\x00"), "\x00")
		if len(args) != 3 || args[1] != relaywire.Arg || args[2] != dir {
			continue
		}
		if !isRelayExecutable(e.Name(), self) {
			continue
		}
		if ps, err := (hooks.ProcFacts{}).ProcStat(pid); err != nil || ps.Gone() {
			continue
		}
		out = append(out, pid)
	}
	return out, nil
}

// isRelayExecutable says whether process pid runs a relay executable: this
// very binary (a build that is its own relay), or a relay executable some
// build of the runtime wrote into a bin directory — named by the prefix,
// and, as the runtime writes it, this user's, 0500 and one link, which no
// other user can make (a process that merely names itself a relay is
// never waited for or killed).
func isRelayExecutable(pid string, self os.FileInfo) bool {
	exe, err := os.Stat("/proc/" + pid + "/exe")
	if err != nil {
		return false
	}
	if os.SameFile(exe, self) {
		return true
	}
	target, err := os.Readlink("/proc/" + pid + "/exe")
	if err != nil || !strings.HasPrefix(filepath.Base(target), relayExePrefix) {
		return false
	}
	st, ok := exe.Sys().(*syscall.Stat_t)
	return ok && exe.Mode().IsRegular() && exe.Mode().Perm() == 0o500 && exe.Mode()&(os.ModeSetuid|os.ModeSetgid) == 0 &&
		int(st.Uid) == os.Geteuid() && st.Nlink == 1
}
