package runtime

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// ExecOptions are exec's inputs, as runc's flags name them.
type ExecOptions struct {
	ID string
	// ProcessFile is a JSON specs.Process to run instead of the
	// container's own process with the overrides below.
	ProcessFile    string
	Args           []string
	Cwd            string
	Env            []string
	TTY            bool
	User           string // uid[:gid]
	AdditionalGids []int64
	NoNewPrivs     bool
	Caps           []string
	ProcessLabel   string
	Apparmor       string
	ConsoleSocket  string
	PidfdSocket    string
	// Cgroups are runc's --cgroup values: [CONTROLLER[,CONTROLLER…]:]PATH,
	// a sub-cgroup of the container's to run the process in.
	Cgroups      []string
	PidFile      string
	Detach       bool
	PreserveFDs  int
	IgnorePaused bool
}

// Exec runs another process in a running (or created) container and, in
// the foreground, returns its exit status. The process never gets more
// than the container's own process has: capabilities outside the
// container's bounding set, or dropping no_new_privs, are refused.
func (r *Runtime) Exec(opts ExecOptions) (int, error) {
	if err := checkPidFileDir(opts.PidFile); err != nil {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, err)
	}
	l, rec, c, err := r.loadLocked(opts.ID)
	if err != nil {
		return -1, err
	}
	unlocked := false
	defer func() {
		if !unlocked {
			l.unlock()
		}
	}()
	if c == nil {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, ErrNotRunning)
	}
	if p, ok := r.Backend.(ForegroundPreparer); ok && !opts.Detach {
		p.PrepareForeground()
	}
	status, err := c.Status()
	if err != nil {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, err)
	}
	switch {
	case status == StatusStopped:
		return -1, Errorf(ErrWrongState, "cannot exec in a stopped container")
	case status == StatusCreated && rec.Rootless && rec.Canary:
		// Its init stays dumpable until the program execs, so that the
		// host's user can read it for the canaries at start; a process
		// exec'd now could reach it too (shim.Config.Dumpable).
		return -1, Errorf(ErrWrongState, "cannot exec in a created rootless container before start: its init must stay readable by you for start's canaries, and would be by the exec'd process; start it first")
	case status == StatusPaused && !opts.IgnorePaused:
		return -1, Errorf(ErrWrongState, "cannot exec in a paused container (use --ignore-paused to override)")
	}
	sp, err := r.Store.readSpec(rec)
	if err != nil {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, err)
	}
	proc, err := execProcess(opts, sp.Process)
	if err != nil {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, err)
	}
	if bad := launch.Exec(sp.Process, proc); len(bad) > 0 {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, refusal(rec.Level, bad))
	}
	if opts.PidFile != "" {
		if bad := execPidFile(sp, opts.PidFile); len(bad) > 0 {
			return -1, fmt.Errorf("exec %q: %w", opts.ID, refusal(rec.Level, bad))
		}
	}
	if opts.PreserveFDs < 0 {
		return -1, Errorf(ErrInvalidInput, "--preserve-fds must not be negative")
	}
	passed, err := examinePassed(0, opts.PreserveFDs)
	if err != nil {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, err)
	}
	bad, handles := launch.ExecPassed(rec.Level, passed)
	if len(bad) > 0 {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, refusal(rec.Level, bad))
	}
	if handles != "" {
		r.Warnf("exec %q: %s", opts.ID, handles)
	}
	if err := checkExecTerminal(proc.Terminal, opts); err != nil {
		return -1, err
	}
	sub, err := SubCgroups(opts.Cgroups)
	if err != nil {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, err)
	}
	pid, fg, err := c.Exec(&ExecRequest{Process: proc, SubCgroups: sub, ConsoleSocket: opts.ConsoleSocket, PidfdSocket: opts.PidfdSocket, Detach: opts.Detach, PreserveFDs: opts.PreserveFDs, Landlock: rec.Landlock, BinDir: r.binDir()})
	if err != nil {
		return -1, fmt.Errorf("exec %q: %w", opts.ID, err)
	}
	if err := r.Store.auditLocked(AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: rec.Level.String(), Event: "exec",
		Reason: strings.TrimSuffix(fmt.Sprintf("pid %d: %s; %s", pid, strings.Join(proc.Args, " "), handles), "; ")}, false); err != nil {
		r.Warnf("exec %q: %v", opts.ID, err)
	}
	// conmon's only sign that a detached exec failed is a missing pid
	// file: write it only now that the process runs.
	if opts.PidFile != "" {
		if err := writePidFile(opts.PidFile, pid); err != nil {
			return -1, fmt.Errorf("exec %q: %w", opts.ID, err)
		}
	}
	l.unlock()
	unlocked = true
	if fg == nil {
		return 0, nil
	}
	defer fg.Close()
	return fg.Wait()
}

// execProcess builds the process to run: the --process file as given, or
// the container's own process with exec's overrides (runc's rules).
func execProcess(opts ExecOptions, base *specs.Process) (*specs.Process, error) {
	var p specs.Process
	if opts.ProcessFile != "" {
		data, err := ReadInput(opts.ProcessFile, MaxProcessFile)
		if err != nil {
			return nil, Errorf(ErrInvalidInput, "--process: %w", err)
		}
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, Errorf(ErrInvalidInput, "--process %s: %w", opts.ProcessFile, err)
		}
	} else {
		if base == nil {
			return nil, Errorf(ErrInvalidInput, "the container has no process to base exec on; use --process")
		}
		data, _ := json.Marshal(base)
		_ = json.Unmarshal(data, &p) // a deep copy of a value that came from JSON
		if len(opts.Args) == 0 {
			return nil, Errorf(ErrInvalidInput, "exec args cannot be empty")
		}
		p.Args = opts.Args
		p.Terminal = opts.TTY
		p.Env = append(p.Env, opts.Env...)
		if opts.Cwd != "" {
			p.Cwd = opts.Cwd
		}
		if opts.Apparmor != "" {
			p.ApparmorProfile = opts.Apparmor
		}
		if opts.ProcessLabel != "" {
			p.SelinuxLabel = opts.ProcessLabel
		}
		if opts.NoNewPrivs {
			p.NoNewPrivileges = true
		}
		if len(opts.Caps) > 0 {
			if p.Capabilities == nil {
				p.Capabilities = &specs.LinuxCapabilities{}
			}
			for _, c := range opts.Caps {
				if _, err := hooks.CapMask([]string{c}); err != nil {
					return nil, Errorf(ErrInvalidInput, "--cap: %w (names are the kernel's, as CAP_NET_BIND_SERVICE)", err)
				}
				p.Capabilities.Bounding = append(p.Capabilities.Bounding, c)
				p.Capabilities.Effective = append(p.Capabilities.Effective, c)
				p.Capabilities.Permitted = append(p.Capabilities.Permitted, c)
			}
		}
		if opts.User != "" {
			uid, gid, hasGID := strings.Cut(opts.User, ":")
			u, err := strconv.ParseUint(uid, 10, 32)
			if err != nil {
				return nil, Errorf(ErrInvalidInput, "--user %q: bad uid", opts.User)
			}
			p.User.UID = uint32(u)
			if hasGID {
				g, err := strconv.ParseUint(gid, 10, 32)
				if err != nil {
					return nil, Errorf(ErrInvalidInput, "--user %q: bad gid", opts.User)
				}
				p.User.GID = uint32(g)
			}
		}
		for _, g := range opts.AdditionalGids {
			if g < 0 || g > 1<<32-1 {
				return nil, Errorf(ErrInvalidInput, "--additional-gids %d: out of range", g)
			}
			p.User.AdditionalGids = append(p.User.AdditionalGids, uint32(g))
		}
	}
	if len(p.Args) == 0 {
		return nil, Errorf(ErrInvalidInput, "process.args must not be empty")
	}
	if p.Cwd == "" || !filepath.IsAbs(p.Cwd) {
		return nil, Errorf(ErrInvalidInput, "process.cwd %q must be an absolute path", p.Cwd)
	}
	return &p, nil
}

// checkExecTerminal applies runc's rules to exec.
func checkExecTerminal(terminal bool, opts ExecOptions) error {
	if opts.Detach && terminal && opts.ConsoleSocket == "" {
		return Errorf(ErrInvalidInput, "cannot allocate tty if vetto-runtime will detach without setting console socket")
	}
	if (!opts.Detach || !terminal) && opts.ConsoleSocket != "" {
		return Errorf(ErrInvalidInput, "cannot use console socket if vetto-runtime will not detach or allocate tty")
	}
	return nil
}

// SubCgroups parses exec's --cgroup values as runc does: PATH alone (the
// only value then) is a sub-cgroup of the container's in every
// hierarchy; CONTROLLER[,CONTROLLER…]:PATH names the hierarchies. PATH is
// relative to the container's cgroup and may not climb out of it: the
// process stays under the container's limits and its cgroup.kill.
func SubCgroups(values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(values))
	for _, v := range values {
		ctrls, p, named := strings.Cut(v, ":")
		if !named {
			if len(values) != 1 {
				return nil, Errorf(ErrInvalidInput, "--cgroup %q: name its controller (CONTROLLER:PATH) when --cgroup is given more than once", v)
			}
			ctrls, p = "", v
		}
		if p == "" || slices.Contains(strings.Split(p, "/"), "..") {
			return nil, Errorf(ErrInvalidInput, "--cgroup %q: the path must name a sub-cgroup of the container's, without \"..\"", v)
		}
		for _, c := range strings.Split(ctrls, ",") {
			if named && c == "" {
				return nil, Errorf(ErrInvalidInput, "--cgroup %q: empty controller name", v)
			}
			if _, dup := out[c]; dup {
				return nil, Errorf(ErrInvalidInput, "--cgroup %q: controller %q given twice", v, c)
			}
			out[c] = strings.TrimPrefix(p, "/")
		}
	}
	return out, nil
}

// execPidFile gathers the host facts launch.ExecPidFile judges exec's
// pid file by.
func execPidFile(sp *specs.Spec, pidFile string) launch.Violations {
	abs, err := filepath.Abs(pidFile)
	if err != nil {
		return nil // checkPidFileDir has said so
	}
	sources := map[string]launch.Source{}
	for _, m := range sp.Mounts {
		if isBindMount(m) && m.Source != "" {
			sources[m.Source] = sourceFact(m.Source)
		}
	}
	rootfs := ""
	if sp.Root != nil {
		rootfs = realOrSelf(sp.Root.Path)
	}
	return launch.ExecPidFile(sp, realAsFar(abs), symlinksOnPath("pid file", abs), sources, rootfs)
}
