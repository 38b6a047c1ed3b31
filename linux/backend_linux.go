package linux

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/shim"
)

// Backend is the Linux backend.
type Backend struct {
	// Version and Commit go into the features document's annotations.
	Version, Commit string

	// looked is the cgroup v1 paths CgroupInUse looked up before the
	// create, handed to libcontainer's own manager (cgroup_paths_linux.go).
	looked atomic.Pointer[cgroupLookup]
}

var _ runtime.Backend = (*Backend)(nil)

func (*Backend) Name() string { return "linux" }

// RelaysNotify: a bind mount gives the container the socket directory of
// the caller's NOTIFY_SOCKET (runtime/notify.go).
func (*Backend) RelaysNotify() bool { return true }

// UsesBinDir: a build with the helper executables embedded keeps them in
// the runtime's bin directory (helperexe_linux.go).
func (*Backend) UsesBinDir() bool { return theInitExes.embeds() || theRelayExes.embeds() }

func (*Backend) ParseSignal(s string) (syscall.Signal, error) { return ParseSignal(s) }

// Load opens the container whose libcontainer state is in dir, or, for a
// container an earlier vetto-runtime created, in dir/<id> (legacyLayout).
func (*Backend) Load(dir, id string) (runtime.Container, error) {
	var lc *libcontainer.Container
	var err error
	if legacyLayout(dir, id) {
		lc, err = libcontainer.Load(dir, id)
	} else {
		lc, err = libcontainer.LoadFromDir(dir, id)
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return &container{lc: lc, dir: dir}, nil
}

// legacyLayout says whether the container was created by an earlier
// vetto-runtime, which gave libcontainer dir as a root of containers: its
// state is then in dir/<id>/state.json. Now dir is libcontainer's state
// directory itself, one directory fewer to make and remove for every
// container (on a journal-less ext4 under 32 parallel runs a new inode
// costs about 1 ms of CPU: docs/performance.md, fourteenth round). A
// container created before an upgrade is still run, stopped and deleted
// where it is. In the current layout dir/<id>/state.json is never a
// regular file, whatever the id: dir holds only libcontainer's files
// (state.json, exec.fifo) and the canary socket, none of them a directory.
func legacyLayout(dir, id string) bool {
	st, err := os.Lstat(filepath.Join(dir, id, "state.json"))
	return err == nil && st.Mode().IsRegular()
}

// Create builds the container with libcontainer and starts its init, which
// then blocks on the exec fifo until Start.
func (b *Backend) Create(req *runtime.CreateRequest) (_ runtime.Container, _ runtime.Foreground, retErr error) {
	config, err := b.libcontainerConfig(req)
	if err != nil {
		return nil, nil, err
	}
	lc, err := libcontainer.CreateInDir(req.Dir, req.ID, config, b.lookedUpCgroupPaths(req.ID, config.Cgroups))
	if err != nil {
		return nil, nil, mapErr(err)
	}
	c := &container{lc: lc, dir: req.Dir}
	defer func() {
		if retErr != nil {
			if err := c.Destroy(); err != nil {
				logrus.Warnf("clean up failed create of %q: %v", req.ID, err)
			}
		}
	}()

	sp := req.Spec.Process
	if sp == nil {
		sp = holderProcess()
	}
	if req.ListenFDs > 0 {
		// Socket activation, as runc passes it on: the listeners are fds
		// 3.. in the container too, and its process is the one they are
		// for. The frozen spec stays as it is; the init checks its
		// environment against this list.
		withListen := *sp
		withListen.Env = append(slices.Clip(sp.Env), "LISTEN_FDS="+strconv.Itoa(req.ListenFDs), "LISTEN_PID=1")
		sp = &withListen
	}
	proc, err := newProcess(sp)
	if err != nil {
		return nil, nil, err
	}
	proc.Init = true
	proc.InitExecutable = initExecutable(req.BinDir)
	proc.LogLevel = strconv.Itoa(int(logrus.GetLevel()))
	if err := passFDs(proc, 3, req.ListenFDs, "LISTEN_FDS"); err != nil {
		return nil, nil, err
	}
	if err := passFDs(proc, 3+req.ListenFDs, req.PreserveFDs, "--preserve-fds"); err != nil {
		return nil, nil, err
	}
	if req.Landlock != "" || req.Canary {
		// The init runs the pre-exec step before it execs the process;
		// the frozen spec, its hash and the argv say what the process is.
		env, home := shim.InitEnv(sp.Env)
		step := shim.Config{Ruleset: req.Landlock, Dumpable: req.Canary && rootlessEUID(), EnvSHA256: shim.EnvDigest(env), EnvHome: home}
		if req.Canary {
			var initEnd *os.File
			if req.StartsHere {
				if c.canary, initEnd, err = pairCanary(); err != nil {
					return nil, nil, err
				}
				step.CanaryConnected = true
			} else if initEnd, err = listenCanary(req.Dir); err != nil {
				return nil, nil, err
			}
			// The init's copy is the only one once it is started: its
			// exec (or exit) is what closes the channel for the host.
			defer initEnd.Close()
			// After the preserved fds, which keep their numbers; the step
			// closes this one before the exec.
			proc.ExtraFiles = append(proc.ExtraFiles, initEnd)
			step.CanaryFD = 2 + len(proc.ExtraFiles)
			proc.PreExecAtCreate = req.CanaryAtCreate
		}
		proc.Rlimits, proc.FinalRlimits = deferRlimits(proc.Rlimits)
		proc.PreExec = step.Encode()
	}
	rootUID, err := config.HostRootUID()
	if err != nil {
		return nil, nil, err
	}
	rootGID, err := config.HostRootGID()
	if err != nil {
		return nil, nil, err
	}
	io, err := setupStdio(proc, sp.Terminal, req.Foreground, req.ConsoleSocket, rootUID, rootGID)
	if err != nil {
		return nil, nil, err
	}
	if err := io.sendPidfd(proc, req.PidfdSocket); err != nil {
		io.close()
		return nil, nil, err
	}
	var fg *foreground
	if req.Foreground {
		if fg, err = newForeground(proc, io, !req.NoSubreaper, false); err != nil {
			io.close()
			return nil, nil, err
		}
		c.signalsCaught = fg.allCaught
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
	injectFault(config, proc)
	if err := lc.Start(proc); err != nil {
		return nil, nil, initExecError(mapErr(err))
	}
	c.proc = proc
	if err := orderDevices(c, config); err != nil {
		_ = proc.Signal(unix.SIGKILL)
		return nil, nil, err
	}
	if err := io.waitConsole(); err != nil {
		_ = proc.Signal(unix.SIGKILL)
		return nil, nil, err
	}
	io.closePostStart()
	if fg == nil {
		// Detached: our copies of the container's stdio are not needed.
		io.close()
		return c, nil, nil
	}
	return c, fg, nil
}

// libcontainerConfig converts the effective spec. The core runs poststart
// and poststop itself (libcontainer would run poststart inside create, which
// the OCI spec forbids), so those hooks are left out here.
func (b *Backend) libcontainerConfig(req *runtime.CreateRequest) (*configs.Config, error) {
	sp := *req.Spec
	if sp.Hooks != nil {
		h := *sp.Hooks
		// startContainer too: libcontainer runs those inside the init after
		// the exec fifo opened, where a failure cannot fail `start`; the
		// container's Start runs them first (container_linux.go).
		h.Poststart, h.Poststop, h.StartContainer = nil, nil, nil
		// A hook with no env gets an empty environment, as the ones the
		// core runs do: libcontainer would hand it the runtime's own.
		//lint:ignore SA1019 prestart is deprecated in the spec but still honoured
		for _, list := range []*[]specs.Hook{&h.Prestart, &h.CreateRuntime, &h.CreateContainer} {
			*list = withEmptyEnv(*list)
		}
		sp.Hooks = &h
	}
	config, err := specconv.CreateLibcontainerConfig(&specconv.CreateOpts{
		CgroupName:       req.ID,
		UseSystemdCgroup: req.SystemdCgroup && !req.NoCgroup,
		NoPivotRoot:      req.NoPivot,
		NoNewKeyring:     req.NoNewKeyring,
		Spec:             &sp,
		RootlessEUID:     rootlessEUID(),
		RootlessCgroups:  rootlessCgroups(),
	})
	if err != nil {
		return nil, runtime.Errorf(runtime.ErrInvalidInput, "convert spec: %w", err)
	}
	if req.NoCgroup {
		// The plan accepted no cgroup (limits and cgroup-kill degraded):
		// with no path of its own and nothing to set, libcontainer's
		// rootless manager skips every cgroup it may not create
		// (ErrRootless) instead of failing, and the init stays where its
		// parent is.
		// (The name is relative: libcontainer tries it below the
		// runtime's own cgroup, which is not writable here either, or the
		// evaluator would have judged it delegated.)
		config.Cgroups.Path, config.Cgroups.Parent, config.Cgroups.Name = "", "", "vetto-"+req.ID
		config.Cgroups.Resources = &cgroups.Resources{}
	}
	fixupConfig(config)
	// specconv takes the bundle from the working directory (runc chdirs
	// into it); we do not, so set the label it derives the OCI state's
	// "bundle" from.
	for i, l := range config.Labels {
		if strings.HasPrefix(l, "bundle=") {
			config.Labels[i] = "bundle=" + req.Bundle
		}
	}
	return config, nil
}

func withEmptyEnv(list []specs.Hook) []specs.Hook {
	out := make([]specs.Hook, len(list))
	for i, h := range list {
		if h.Env == nil {
			h.Env = []string{}
		}
		out[i] = h
	}
	return out
}

// holderProcess stands in for the process of a spec that sets none
// (config.md 1.3 makes process optional until start). libcontainer's init
// needs something to exec once started; the core never starts such a
// container, so this is never exec'd. It is the runtime binary as the
// init sees it, which exists in any rootfs with /proc, with no
// capabilities and no_new_privs in case anything ever did.
func holderProcess() *specs.Process {
	return &specs.Process{
		Args:            []string{"/proc/self/exe", "never-started"},
		Cwd:             "/",
		NoNewPrivileges: true,
		Capabilities:    &specs.LinuxCapabilities{},
	}
}

// newProcess converts the spec's process for libcontainer.
func newProcess(p *specs.Process) (*libcontainer.Process, error) {
	nnp := p.NoNewPrivileges
	lp := &libcontainer.Process{
		Args:            p.Args,
		Env:             p.Env,
		UID:             int(p.User.UID),
		GID:             int(p.User.GID),
		Cwd:             p.Cwd,
		Label:           p.SelinuxLabel,
		NoNewPrivileges: &nnp,
		AppArmorProfile: p.ApparmorProfile,
		Scheduler:       p.Scheduler,
		IOPriority:      p.IOPriority,
	}
	if p.ConsoleSize != nil {
		lp.ConsoleWidth = uint16(p.ConsoleSize.Width)
		lp.ConsoleHeight = uint16(p.ConsoleSize.Height)
	}
	if p.Capabilities != nil {
		lp.Capabilities = &configs.Capabilities{
			Bounding:    p.Capabilities.Bounding,
			Effective:   p.Capabilities.Effective,
			Inheritable: p.Capabilities.Inheritable,
			Permitted:   p.Capabilities.Permitted,
			Ambient:     p.Capabilities.Ambient,
		}
	}
	for _, g := range p.User.AdditionalGids {
		lp.AdditionalGroups = append(lp.AdditionalGroups, int(g))
	}
	for _, rl := range p.Rlimits {
		t, ok := rlimits[rl.Type]
		if !ok {
			return nil, runtime.Errorf(runtime.ErrInvalidInput, "process.rlimits: unknown type %q", rl.Type)
		}
		lp.Rlimits = append(lp.Rlimits, configs.Rlimit{Type: t, Hard: rl.Hard, Soft: rl.Soft})
	}
	aff, err := configs.ConvertCPUAffinity(p.ExecCPUAffinity)
	if err != nil {
		return nil, runtime.Errorf(runtime.ErrInvalidInput, "process.execCPUAffinity: %w", err)
	}
	lp.CPUAffinity = aff
	return lp, nil
}

// deferRlimits takes out of what libcontainer sets early the limits under
// which the init's Go code (its pre-exec step, its last steps) could not
// run — address space, data, processes — for libcontainer to set with raw
// system calls just before execve (Process.FinalRlimits, in the patch).
// Only limits the runtime's own hard limit allows move: the init, with no
// capabilities left by then, can lower a limit but not raise it.
func deferRlimits(in []configs.Rlimit) (keep, last []configs.Rlimit) {
	for _, rl := range in {
		var cur unix.Rlimit
		movable := rl.Type == unix.RLIMIT_AS || rl.Type == unix.RLIMIT_DATA || rl.Type == unix.RLIMIT_NPROC
		if movable && unix.Getrlimit(rl.Type, &cur) == nil && rl.Hard <= cur.Max {
			last = append(last, rl)
			continue
		}
		keep = append(keep, rl)
	}
	return keep, last
}

var rlimits = map[string]int{
	"RLIMIT_CPU": unix.RLIMIT_CPU, "RLIMIT_FSIZE": unix.RLIMIT_FSIZE, "RLIMIT_DATA": unix.RLIMIT_DATA,
	"RLIMIT_STACK": unix.RLIMIT_STACK, "RLIMIT_CORE": unix.RLIMIT_CORE, "RLIMIT_RSS": unix.RLIMIT_RSS,
	"RLIMIT_NPROC": unix.RLIMIT_NPROC, "RLIMIT_NOFILE": unix.RLIMIT_NOFILE, "RLIMIT_MEMLOCK": unix.RLIMIT_MEMLOCK,
	"RLIMIT_AS": unix.RLIMIT_AS, "RLIMIT_LOCKS": unix.RLIMIT_LOCKS, "RLIMIT_SIGPENDING": unix.RLIMIT_SIGPENDING,
	"RLIMIT_MSGQUEUE": unix.RLIMIT_MSGQUEUE, "RLIMIT_NICE": unix.RLIMIT_NICE, "RLIMIT_RTPRIO": unix.RLIMIT_RTPRIO,
	"RLIMIT_RTTIME": unix.RLIMIT_RTTIME,
}

// ExampleSpec is runc's default spec, made rootless on request.
func (*Backend) ExampleSpec(rootless bool) (*specs.Spec, error) {
	s := specconv.Example()
	if rootless {
		specconv.ToRootless(s)
	}
	return s, nil
}
