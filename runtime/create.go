package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/hostpolicy"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
	"github.com/vetto-dev/vetto-runtime/runtime/sdnotify"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// CreateOptions are create's inputs (and run's, which creates first).
type CreateOptions struct {
	ID            string
	Bundle        string
	PidFile       string
	ConsoleSocket string
	// PidfdSocket is where a pidfd of the container's init is sent
	// (--pidfd-socket).
	PidfdSocket string
	PreserveFDs int
	// ListenFDs is the number of fds socket activation passed the
	// runtime (LISTEN_FDS, with LISTEN_PID its pid): they go to the
	// container before the preserved ones.
	ListenFDs     int
	NoPivot       bool
	NoNewKeyring  bool
	SystemdCgroup bool

	Security Security

	// detach is false only for run in the foreground.
	foreground  bool
	noSubreaper bool
	// starting: run creates to start at once, so a spec without a
	// process is refused before anything is built.
	starting bool
	// notifyDir is the socket directory the caller's NOTIFY_SOCKET is
	// relayed through (notify.go), "" when it is not.
	notifyDir string
}

// DefaultCgroupParent is the cgroup under which containers whose spec sets
// no cgroupsPath are placed (cgroupfs driver).
const DefaultCgroupParent = "/vetto-runtime"

// created is a container that create built and left locked.
type created struct {
	lock *lock
	rec  *Record
	c    Container
	fg   Foreground
	plan *Plan
	sec  Security
	// relayChecks are the egress relay's host checks, for the pre-launch
	// verification (relay.go).
	relayChecks []hooks.Result
	// monitor is the monitor a detached create begins for its start.
	monitor *monitorSpawn
	// notifyDir is the socket directory of a relayed NOTIFY_SOCKET.
	notifyDir string
}

// Create builds the container and leaves its init waiting for start. On any
// failure nothing is left behind: no process, cgroup, or state directory.
func (r *Runtime) Create(opts CreateOptions) error {
	if err := checkPidFileDir(opts.PidFile); err != nil {
		return fmt.Errorf("create %q: %w", opts.ID, err)
	}
	cr, err := r.create(opts)
	if err != nil {
		return err
	}
	defer cr.lock.unlock()
	if opts.PidFile != "" {
		if err := writePidFile(opts.PidFile, cr.c.InitPid()); err != nil {
			return joinDistinct(fmt.Errorf("create %q: %w", opts.ID, err), r.abandonLocked(cr))
		}
	}
	return nil
}

func (r *Runtime) create(opts CreateOptions) (_ *created, retErr error) {
	if err := ValidateID(opts.ID); err != nil {
		return nil, err
	}
	if p, ok := r.Backend.(ForegroundPreparer); ok && opts.foreground {
		// First: the signals' registration needs the CPU the plan leaves.
		p.PrepareForeground()
	}
	bundle, effective, err := r.effectiveSpec(opts)
	if err != nil {
		return nil, fmt.Errorf("create %q: %w", opts.ID, err)
	}
	if opts.notifyDir, err = r.notifyDir(opts.ID, effective); err != nil {
		return nil, fmt.Errorf("create %q: %w", opts.ID, err)
	}
	// The id is taken first: the exclusive mkdir is what tells two
	// creates of one id apart, before either looks at the host (whose
	// cgroup the other may already hold).
	l, err := r.Store.createDirLocked(opts.ID)
	if err != nil {
		return nil, err
	}
	cr := &created{lock: l, sec: opts.Security}
	defer func() {
		if retErr != nil {
			// The refusal is evidence too: the host-wide log keeps it
			// once the state directory is gone.
			ev := AuditEvent{ID: opts.ID, Event: "refused", Reason: retErr.Error(), Exit: ExitCode(retErr), Bundle: bundle}
			if cr.plan != nil {
				ev.Spec, ev.Level = cr.plan.Hash(), cr.plan.Decision.Level.String()
			}
			if err := r.Store.auditLocked(ev, true); err != nil {
				r.Warnf("%v", err)
			}
			if cr.rec == nil || cr.rec.Monitor == nil {
				r.abandonMonitor(cr.monitor) // else the teardown stops it
			}
			retErr = joinDistinct(retErr, r.abandonLocked(cr))
		}
	}()
	plan, err := r.plan(opts, bundle, effective)
	if err != nil {
		return nil, fmt.Errorf("create %q: %w", opts.ID, err)
	}
	cr.plan = plan
	d := plan.Decision
	if hostpolicy.IsPolicyBundle(effective) {
		// The bundle's masks and read-only paths were decided against the
		// host as it was at compile time; the workload of an earlier run
		// may have changed it since (the policy-mode issue, 12.4).
		drift, err := hostpolicy.Drift(effective)
		if err != nil {
			return nil, fmt.Errorf("create %q: check the policy bundle against the host: %w", opts.ID, err)
		}
		if len(drift) > 0 {
			return nil, Errorf(ErrDriftDetected, "create %q: the host changed since the bundle was compiled: %s; compile it again (vetto-runtime spec)", opts.ID, strings.Join(drift, "; "))
		}
	}
	for _, w := range d.Warnings {
		r.Warnf("%s", w)
	}
	cr.rec = &Record{
		ID:          opts.ID,
		Bundle:      bundle,
		Rootfs:      effective.Root.Path,
		Created:     time.Now().UTC(),
		BootID:      r.bootID(),
		Owner:       currentOwner(),
		Backend:     r.Backend.Name(),
		State:       StateRequested,
		Annotations: effective.Annotations,
		Level:       d.Level,
		SpecHash:    plan.Hash(),
		Degraded:    d.DegradedStrings(),
		Notes:       d.Notes,
		Posture:     d.Posture.Weakened,
		Landlock:    d.Landlock,
		NoVerify:    d.Unverified,
		Canary:      r.wantsCanaries(d.Unverified, plan.frozen.spec),
		Allow:       sortedAllow(d.Allow),
		Limits:      launch.LimitsOf(plan.frozen.spec),
		Rootless:    d.Rootless,
		NoCgroup:    d.NoCgroup,
	}
	cr.rec.OwnPidNamespace = launch.HasNewNamespace(effective, specs.PIDNamespace)
	// The record is first written at Compiled, with the frozen spec beside
	// it, before the backend makes anything: a directory with no record is
	// a create that made nothing yet (readRecord), which is what it is
	// until then.
	for _, w := range d.Warnings {
		if err := r.Store.auditLocked(AuditEvent{ID: opts.ID, Spec: plan.Hash(), Level: d.Level.String(), Event: "warning", Reason: w}, false); err != nil {
			return nil, err
		}
	}
	if err := r.Store.passLocked(cr.rec, StateValidated, ""); err != nil {
		return nil, err
	}
	if !opts.starting {
		// A create's start is another process, often the next one its
		// caller runs: begun there, the monitor's fork, exec and Go
		// start-up (some 13 ms of CPU on a 2-CPU test host) fell on the
		// start, by 1.5 to 3 ms. Begun here, they overlap the build of
		// the container, and the monitor waits for the start without
		// taking the lock (Monitor). A run starts at once, and begins
		// it as it starts.
		cr.monitor = r.beginMonitor(cr.rec)
	}
	if opts.notifyDir != "" {
		// In the state directory: removed with it, and nobody else's.
		if err := os.Mkdir(opts.notifyDir, 0o755); err != nil {
			return nil, fmt.Errorf("create %q: notify socket directory: %w", opts.ID, err)
		}
		cr.notifyDir = opts.notifyDir
	}
	// Frozen: from here on the stored bytes, the hash and the object the
	// backend gets are one and the same.
	if err := r.Store.freezeSpecLocked(opts.ID, plan.frozen); err != nil {
		return nil, fmt.Errorf("create %q: %w", opts.ID, err)
	}
	if err := r.Store.moveLocked(cr.rec, StateCompiled, ""); err != nil {
		return nil, err
	}

	c, fg, err := r.Backend.Create(&CreateRequest{
		ID:             opts.ID,
		Dir:            r.Store.BackendDir(opts.ID),
		Bundle:         bundle,
		Spec:           plan.frozen.spec,
		ConsoleSocket:  opts.ConsoleSocket,
		PidfdSocket:    opts.PidfdSocket,
		ListenFDs:      opts.ListenFDs,
		PreserveFDs:    opts.PreserveFDs,
		BinDir:         r.binDir(),
		Landlock:       d.Landlock,
		Canary:         cr.rec.Canary,
		CanaryAtCreate: cr.rec.Canary && canariesAtCreate(plan.frozen.spec),
		StartsHere:     opts.starting,
		NoPivot:        opts.NoPivot,
		NoNewKeyring:   opts.NoNewKeyring,
		SystemdCgroup:  opts.SystemdCgroup,
		NoCgroup:       d.NoCgroup,
		Foreground:     opts.foreground,
		NoSubreaper:    opts.noSubreaper,
	})
	if err != nil {
		to := StateSpawnFailed
		if errors.Is(err, ErrBackendUnavailable) {
			to = StateBackendUnavailable
		}
		_ = r.Store.moveLocked(cr.rec, to, err.Error())
		if opts.notifyDir != "" && strings.Contains(err.Error(), notifyMountpoint) {
			err = fmt.Errorf("%w (the mount that relays %s: the bundle's root filesystem needs a %s the container can mount on; a policy bundle compiled by this version has one, or unset %s)", err, sdnotify.Env, notifyMountpoint, sdnotify.Env)
		}
		return nil, fmt.Errorf("create %q: %w", opts.ID, spawnFailed(err))
	}
	cr.c, cr.fg = c, fg
	// Constructed is not written: a crash from here on leaves the record
	// at Compiled, and delete then finds the backend's container (Load)
	// and tears it down, as it would from Constructed. Nothing outside
	// this process can tell the two apart: the lock is held throughout.
	if err := r.Store.passLocked(cr.rec, StateConstructed, ""); err != nil {
		return nil, err
	}
	if err := r.startRelayLocked(cr); err != nil {
		return nil, fmt.Errorf("create %q: %w", opts.ID, err)
	}
	if err := r.verifyPreLaunchLocked(cr); err != nil {
		return nil, fmt.Errorf("create %q: %w", opts.ID, err)
	}
	if err := r.recordBaselineLocked(cr); err != nil {
		return nil, err
	}
	cr.rec.Degraded, cr.rec.Notes = d.DegradedStrings(), d.Notes
	// Launchable is a state other commands act on (start): written. A run
	// starts the container next under the same lock, and the start writes
	// the state it ends in; a run killed in between leaves the record at
	// Compiled, which delete tears down as it would Launchable (the
	// backend's container is found by Load).
	if !opts.starting {
		if err := r.joinMonitorLocked(cr.rec, c, cr.monitor, "create"); err != nil {
			return nil, err
		}
		if err := r.Store.writeRecordLocked(cr.rec); err != nil {
			return nil, err
		}
		// A create returns with its launch's evidence durable; a run's
		// program does not exec before it is (startWithCanaries), and
		// until then the fsync overlaps the start.
		if err := r.Store.waitDurable(); err != nil {
			return nil, err
		}
	}
	r.Launchf("%s", cr.rec.LaunchLine)
	return cr, nil
}

// binDir is the directory a BinDirBackend keeps its executables in: bin/
// of the evidence directory, made and checked as the evidence is; "" for
// other backends, or if it cannot be made (the backend then does without:
// Linux starts inits from this binary).
func (r *Runtime) binDir() string {
	if b, ok := r.Backend.(BinDirBackend); !ok || !b.UsesBinDir() || r.Store.Evidence.Dir == "" {
		return ""
	}
	dir, err := r.Store.Evidence.ensure("bin")
	if err != nil {
		return ""
	}
	return dir
}

// DryRun compiles and checks a create (or run) and returns its plan's
// line, marked NOT ENFORCED. Nothing is created: no state, no process.
func (r *Runtime) DryRun(opts CreateOptions) (string, error) {
	if err := ValidateID(opts.ID); err != nil {
		return "", err
	}
	bundle, effective, err := r.effectiveSpec(opts)
	if err != nil {
		return "", fmt.Errorf("create %q: %w", opts.ID, err)
	}
	if opts.notifyDir, err = r.notifyDir(opts.ID, effective); err != nil {
		return "", fmt.Errorf("create %q: %w", opts.ID, err)
	}
	plan, err := r.plan(opts, bundle, effective)
	if err != nil {
		return "", fmt.Errorf("create %q: %w", opts.ID, err)
	}
	for _, w := range plan.Decision.Warnings {
		r.Warnf("%s", w)
	}
	return plan.DryRunLine(), nil
}

// effectiveSpec loads and validates the bundle and makes the runtime's
// changes to the spec: resolved paths and the default cgroup path. After
// it, nothing changes the spec any more.
func (r *Runtime) effectiveSpec(opts CreateOptions) (string, *specs.Spec, error) {
	bundle, s, err := loadBundle(opts.Bundle)
	if err != nil {
		return "", nil, err
	}
	if s.Process == nil {
		// config.md 1.3: process is "REQUIRED when start is called":
		// create builds the container without one, start refuses.
		if opts.starting {
			return "", nil, Errorf(ErrInvalidInput, "config.json: process: must be set to run a container")
		}
		if opts.ConsoleSocket != "" {
			return "", nil, Errorf(ErrInvalidInput, "--console-socket given, but config.json sets no process to have a terminal")
		}
	} else if err := checkTerminal(s.Process.Terminal, opts); err != nil {
		return "", nil, err
	}
	if opts.PreserveFDs < 0 {
		return "", nil, Errorf(ErrInvalidInput, "--preserve-fds must not be negative")
	}
	// s is this call's own, just parsed: resolved where it is.
	effective := s
	if err := spec.ResolveInPlace(effective, bundle); err != nil {
		return "", nil, err
	}
	if r.Self != "" {
		// vetto's own verification hooks are part of the spec that is
		// frozen and hashed, at every level: whoever runs this spec runs
		// them. A bundle that leaves them out gets them anyway.
		effective.Hooks = spec.WithRuntimeHooks(effective.Hooks, r.Self)
	}
	if effective.Linux != nil && effective.Linux.CgroupsPath == "" && !opts.SystemdCgroup {
		// Group our containers under one parent so that what we leave
		// behind is easy to see; runc would use /<id> at the top.
		effective.Linux.CgroupsPath = DefaultCgroupParent + "/" + opts.ID
	}
	if err := checkRootfs(effective.Root.Path); err != nil {
		return "", nil, err
	}
	return bundle, effective, nil
}

// verifyPreLaunchLocked judges the live init from host facts before it may
// exec the user's process (docs/verification.md), and moves the container to
// Launchable. A failing check destroys the container (exit 125), unless it
// is a degradation the level accepts, which is then recorded.
func (r *Runtime) verifyPreLaunchLocked(cr *created) error {
	pid := cr.c.InitPid()
	d := cr.plan.Decision
	var results []hooks.Result
	// The canaries' host side (their plan, nonce and loopback listener) is
	// made while the init is looked at; the canaries themselves only run
	// once it passed. Closed here if they never do.
	canaries, judged := r.prepareCanariesAtCreate(cr), false
	defer func() {
		if canaries != nil && !judged {
			canaries().Close()
		}
	}()
	switch {
	case r.Facts != nil:
		results = hooks.PreLaunch(hooks.PreLaunchInput{
			Pid:               pid,
			Spec:              cr.plan.frozen.spec,
			CgroupPaths:       cr.c.CgroupPaths(),
			RequireCgroupKill: d.Level == LevelStrict,
			NoCgroup:          d.NoCgroup,
			Landlock:          r.landlockLaunch(cr),
		}, r.Facts)
		results = append(results, cr.relayChecks...)
		exe, exeResults := recordExecutable(cr.c, cr.plan.frozen.spec, r.Store.digests())
		cr.rec.Executable = exe
		results = append(results, exeResults...)
	case cr.plan.platform != nil && cr.plan.platform.Verifies:
		// The backend read its platform's facts of the held process; the
		// core judges them, as it judges Linux's.
		results = platformPreLaunch(cr.c)
	default:
		// The evaluator accepted the launch without host facts only as a
		// named degradation (verify), which the record carries.
		return r.launchLocked(cr)
	}
	// The verdicts are the evidence: a launch whose evidence cannot be
	// written does not go ahead. They go out (and are fsync'd) with the
	// launch event (launchLocked), or with the refusal: either comes
	// before the process can run.
	if err := r.Store.auditLocked(AuditEvent{ID: cr.rec.ID, Spec: cr.rec.SpecHash, Level: cr.rec.Level.String(), Event: "verdicts", Results: results}, false); err != nil {
		return err
	}
	if bad := d.PreLaunch(results); len(bad) > 0 {
		if st, err := cr.c.Status(); err == nil && st == StatusStopped {
			// Every check failed for want of a process to check: that
			// is what the caller is told, not a page of FAILs.
			_ = r.Store.moveLocked(cr.rec, StatePreLaunchFailed, "init exited before pre-launch verification")
			return Errorf(ErrPreLaunchFailed, "the container's init (pid %d) exited while it was being set up, before it could be verified: nothing of the program ran (does the spec leave it what it needs — a seccomp filter that refuses everything, a user it cannot become?)", pid)
		}
		_ = r.Store.moveLocked(cr.rec, StatePreLaunchFailed, bad.String())
		err := refusal(d.Level, bad)
		if errors.Is(err, ErrDegradedRefused) {
			err = Errorf(ErrPreLaunchFailed, "pre-launch verification of init pid %d failed: %s", pid, bad)
		}
		return err
	}
	// Launched on these verdicts: the launch event's fsync runs beside
	// the canaries' exchange with the init, the longest wait of create.
	if err := r.launchLocked(cr); err != nil {
		return err
	}
	judged = true // canariesAtCreateLocked closes the session
	return r.canariesAtCreateLocked(cr, canaries)
}

// launchLocked moves the record through Verified to Launchable (the
// caller, create, writes it once, with the baseline) and writes the
// launch event, whose fsync runs in the background: nothing of the
// program runs before it is done (create waits for it before it returns,
// a run's start before the program execs). The canaries a create makes
// come after it and are judged as the canaries a start makes are, after
// the launch: failed, they move the record on from Launchable to
// PreLaunchFailed, and the refusal follows the launch event in the log.
func (r *Runtime) launchLocked(cr *created) error {
	if err := r.Store.passLocked(cr.rec, StateVerified, ""); err != nil {
		return err
	}
	if err := r.Store.passLocked(cr.rec, StateLaunchable, ""); err != nil {
		return err
	}
	d := cr.plan.Decision
	cr.rec.LaunchLine = cr.plan.LaunchLine()
	return r.Store.auditLaterLocked(AuditEvent{ID: cr.rec.ID, Spec: cr.plan.Hash(), Level: d.Level.String(), Event: "launch", Reason: cr.rec.LaunchLine, Bundle: cr.rec.Bundle})
}

// abandonLocked undoes a create (or run) that failed part-way: kill and
// destroy what the backend built, remove the state directory, release the
// lock. If the teardown left anything running the state stays, so that
// delete --force can finish the job, and the error says TeardownIncomplete.
func (r *Runtime) abandonLocked(cr *created) error {
	// Kill before closing stdio: closing waits for the container's output
	// to drain, which only ends when its processes are gone.
	var auditErr error
	if cr.c != nil {
		if err := r.teardownLocked(cr.rec, cr.c); err != nil {
			if !errors.Is(err, ErrTeardownIncomplete) {
				// Torn down clean, only its receipt not written (the
				// log that failed the create fails it again): nothing
				// is left for a delete to do, so nothing is kept.
				auditErr = err
			} else {
				if cr.fg != nil {
					cr.fg.Close()
				}
				cr.lock.unlock()
				return err
			}
		}
	}
	if cr.fg != nil {
		cr.fg.Close()
	}
	if cr.rec != nil {
		if err := r.Store.removeLocked(cr.rec.ID); err != nil {
			_ = r.Store.writeRecordLocked(cr.rec)
			r.Warnf("%v", err)
		}
	} else if cr.lock != nil && cr.lock.f != nil {
		_ = os.RemoveAll(cr.lock.f.Name())
	}
	cr.lock.unlock()
	return auditErr
}

// joinDistinct joins a teardown's error to the error that caused it,
// unless it only says the same again (an audit log that failed both).
func joinDistinct(cause, more error) error {
	if more == nil || more.Error() == cause.Error() || strings.HasSuffix(cause.Error(), ": "+more.Error()) {
		return cause
	}
	return errors.Join(cause, more)
}

// loadBundle reads and validates bundle/config.json.
func loadBundle(bundle string) (string, *specs.Spec, error) {
	if bundle == "" {
		bundle = "."
	}
	abs, err := filepath.Abs(bundle)
	if err != nil {
		return "", nil, fmt.Errorf("bundle %q: %w", bundle, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", nil, Errorf(ErrInvalidInput, "bundle %s: %w", abs, err)
	}
	if !fi.IsDir() {
		return "", nil, Errorf(ErrInvalidInput, "bundle %s: not a directory", abs)
	}
	data, err := hooks.ReadBundleConfig(abs)
	if err != nil {
		return "", nil, Errorf(ErrInvalidInput, "bundle %s: %w", abs, err)
	}
	s, err := spec.Parse(data)
	if err != nil {
		return "", nil, Errorf(ErrInvalidInput, "bundle %s: %w", abs, err)
	}
	if err := spec.Validate(s); err != nil {
		return "", nil, Errorf(ErrInvalidInput, "bundle %s: %w", abs, err)
	}
	return abs, s, nil
}

func checkRootfs(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Errorf(ErrInvalidInput, "root.path %s: rootfs does not exist", path)
		}
		return fmt.Errorf("root.path %s: %w", path, err)
	}
	if !fi.IsDir() {
		return Errorf(ErrInvalidInput, "root.path %s: not a directory", path)
	}
	return nil
}

// checkTerminal applies runc's rules for where a terminal can go.
func checkTerminal(terminal bool, opts CreateOptions) error {
	detach := !opts.foreground
	if detach && terminal && opts.ConsoleSocket == "" {
		return Errorf(ErrInvalidInput, "cannot allocate tty if vetto-runtime will detach without setting console socket")
	}
	if (!detach || !terminal) && opts.ConsoleSocket != "" {
		return Errorf(ErrInvalidInput, "cannot use console socket if vetto-runtime will not detach or allocate tty")
	}
	return nil
}

func currentOwner() string {
	uid := os.Geteuid()
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	if uid < 0 { // Windows
		if u, err := user.Current(); err == nil {
			return u.Username
		}
		return ""
	}
	return "#" + strconv.Itoa(uid)
}

// spawnFailed tags a backend's failure to build the container as the
// sandbox not established (125), unless it is the user's input the
// backend refused (a bad spec field, a missing executable: 1, as runc).
func spawnFailed(err error) error {
	if errors.Is(err, ErrInvalidInput) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrExist) {
		return err
	}
	return WithKind(ErrSpawnFailed, err)
}

func sortedAllow(allow map[launch.Feature]bool) []string {
	var out []string
	for f, ok := range allow {
		if ok {
			out = append(out, string(f))
		}
	}
	sort.Strings(out)
	return out
}
