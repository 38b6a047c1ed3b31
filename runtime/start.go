package runtime

import (
	"errors"
	"fmt"
	"syscall"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// Start lets a created container's init exec the user process, then runs
// the poststart hooks. Of two concurrent starts exactly one succeeds: the
// container's lock serialises them and the second finds it running.
func (r *Runtime) Start(id string) error {
	l, rec, c, err := r.loadLocked(id)
	if err != nil {
		return err
	}
	notify, err := r.listenNotifyAtStart(id)
	if err != nil {
		l.unlock()
		return fmt.Errorf("start %q: %w", id, err)
	}
	err = r.startLocked(rec, c, nil, false)
	// The wait for READY=1 below must not keep kill or state out.
	l.unlock()
	if err != nil || notify == nil {
		notify.close()
		return err
	}
	if err := r.relayReady(notify, id, c); err != nil {
		return fmt.Errorf("start %w", err)
	}
	return nil
}

// startLocked starts the container; with lazyMonitor (a foreground run,
// whose process stays) the monitor is not spawned here but by the caller,
// if the container is still running when the monitor's first round is due.
// frozen is the spec a run's create froze in this process, under the lock
// it still holds: nothing can have changed it, and it is used as it is
// (docs/architecture.md, "One command, one transaction"). nil: the stored
// spec is read and checked against the record's hash.
func (r *Runtime) startLocked(rec *Record, c Container, frozen *specs.Spec, lazyMonitor bool) (err error) {
	if c == nil {
		return Errorf(ErrWrongState, "start %q: container is still being created or its create failed", rec.ID)
	}
	status, err := c.Status()
	if err != nil {
		return fmt.Errorf("start %q: %w", rec.ID, err)
	}
	switch status {
	case StatusCreated:
	case StatusStopped:
		return Errorf(ErrWrongState, "cannot start a container that has stopped")
	case StatusRunning:
		return Errorf(ErrWrongState, "cannot start an already running container")
	default:
		return Errorf(ErrWrongState, "cannot start a container in the %s state", status)
	}
	if rec.State != StateLaunchable {
		return Errorf(ErrWrongState, "start %q: container is %s, not Launchable", rec.ID, rec.State)
	}
	defer func() {
		if err != nil && rec.State != StateLaunchable {
			// The start failed and stopped the container (every such
			// failure moves it on from Launchable): the monitor its
			// create began has nothing left to watch, and goes now, not
			// at its next look.
			r.stopMonitor(rec)
		}
	}()
	// The spec must still be the one that was verified: its hooks are about
	// to run, as root on the host for poststart.
	sp := frozen
	if sp == nil {
		if sp, err = r.Store.readSpec(rec); err != nil {
			if errors.Is(err, ErrSpecMismatch) {
				_ = r.Store.moveLocked(rec, StateSpecMismatch, err.Error())
				return stopAfterFailure(c, fmt.Errorf("start %q: %w", rec.ID, err))
			}
			return fmt.Errorf("start %q: %w", rec.ID, err)
		}
	}
	if sp.Process == nil {
		// runtime.md: start "MUST generate an error if process was not
		// set". Nothing can ever run in this container, so it is stopped.
		_ = r.Store.moveLocked(rec, StateSpawnFailed, "no process to start")
		return stopAfterFailure(c, Errorf(ErrInvalidInput, "start %q: config.json sets no process; a container created without one cannot start", rec.ID))
	}
	// The canaries' host side is made while the executable and the shim
	// are looked at. A start that fails before using it closes it.
	canarySession := prepareCanaries(rec, sp)
	if canarySession != nil {
		defer func() {
			if err != nil {
				canarySession().Close() // a second Close is harmless
			}
		}()
	}
	if ec, ok := c.(ExecutableContainer); ok && rec.Executable != nil {
		// Held through the exec: an init that refuses its file and exits
		// must not take the evidence with it.
		release, err := ec.HoldRoot()
		if err != nil {
			return fmt.Errorf("start %q: %w", rec.ID, err)
		}
		defer release()
	}
	var checked []hooks.Result
	if res := checkExecutableLocked(rec, c, sp); res != nil {
		// A PASS is judged with the post-exec checks, in one audit event.
		checked = append(checked, *res)
		if res.Verdict != hooks.Pass {
			if err := r.Store.auditLocked(AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: rec.Level.String(), Event: "verdicts", Results: checked}, true); err != nil {
				r.Warnf("%v", err)
			}
			_ = r.Store.moveLocked(rec, StateSpecMismatch, res.String())
			return stopAfterFailure(c, Errorf(ErrSpecMismatch, "start %q: the process's executable is not the file verified at create: %s; create the container again", rec.ID, res.Found))
		}
	}
	verifyPastShim, err := r.watchShim(rec, c)
	if err != nil {
		return fmt.Errorf("start %q: %w", rec.ID, err)
	}
	// A foreground run's job is most often done before its post-exec
	// checks, which then skip P2 (the process is gone): read early, P2
	// would be CPU spent for nothing on a small host running many.
	var membership func() []hooks.Result
	if !lazyMonitor {
		membership = r.earlyMembership(rec, c, sp)
	}
	canaries, took, err := r.startWithCanaries(rec, c, sp, canarySession)
	if err != nil {
		return err
	}
	// The monitor is the one its create began, if it still runs. If not
	// (a container an older binary created, a monitor killed meanwhile),
	// it begins once the program runs: its fork, exec and Go start-up
	// (milliseconds of CPU) then overlap the post-exec checks and the
	// record's write, which leave a CPU idle, not the canaries and the
	// exec, which want both of a two-CPU host's.
	var monitor *monitorSpawn
	if !lazyMonitor && !r.monitorAlive(rec) {
		monitor = r.beginMonitor(rec)
		defer func() {
			if err != nil {
				r.abandonMonitor(monitor)
			}
		}()
	}
	// vetto's own poststart step comes first: a user's poststart hook must
	// not run against a container that failed verification.
	// Read right after the exec: the longer the host waits, the likelier
	// the program has exec'd something of its own.
	checked = append(checked, executedCheck(rec, c, sp)...)
	if err := r.verifyPostLaunchLocked(rec, c, sp, append(append(canaries, verifyPastShim()...), checked...), took, monitor, membership); err != nil {
		return err
	}
	user := bundlePoststart(sp)
	// Verdicts that all PASS are fsync'd beside the record's promotion
	// (judgeLocked); nothing more is done on them before they are
	// durable — a poststart hook, start's return. A foreground run that
	// keeps nothing waits where it acts next: before it lets the lock go
	// (Run), or in the teardown that follows under it.
	if len(user) > 0 || !rec.teardownOnExit {
		if err := r.verdictsDurableLocked(rec, c); err != nil {
			return err
		}
	}
	// libcontainer would run poststart inside create; the spec puts it
	// after the user process started, and since runtime-spec 1.1 says "If
	// any poststart hook fails, the runtime MUST generate an error, stop the
	// container, and continue the lifecycle at step 12" — which is also
	// vetto's kill-on-FAIL — a failing poststart hook kills the container.
	// vetto's own entries are what verifyPostLaunchLocked just did.
	if len(user) > 0 {
		st, err := c.OCIState()
		if err == nil {
			err = hooks.RunOCI("poststart", user, st)
		}
		if err != nil {
			_ = r.Store.moveLocked(rec, StateTerminating, err.Error())
			return stopAfterFailure(c, Errorf(ErrHookFailed, "start %q: %w", rec.ID, err))
		}
	}
	return nil
}

// verdictsDurableLocked waits for the fsync of verdicts judgeLocked began
// in the background; evidence that cannot be made durable stops c. A
// promotion judgeLocked passed for a foreground run (promotionPending)
// is written here, and its verdicts, still in the batch, are appended
// and fsync'd now: the run is about to let other commands see the
// container, or to run a poststart hook on its verdicts.
func (r *Runtime) verdictsDurableLocked(rec *Record, c Container) error {
	if rec.promotionPending {
		rec.promotionPending = false
		if err := r.Store.writeRecordLocked(rec); err != nil {
			return stopAfterFailure(c, fmt.Errorf("start %q: %w", c.ID(), err))
		}
		if err := r.Store.flushAudit(true); err != nil {
			return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "start %q: the verdicts are not durable: %w", c.ID(), err))
		}
	}
	if err := r.Store.waitDurable(); err != nil {
		return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "start %q: the verdicts are not durable: %w", c.ID(), err))
	}
	return nil
}

// stopAfterFailure SIGKILLs every process of a container whose start
// failed. If that fails too, something may still run that must not: the
// error then also says TeardownIncomplete (exit 125), never just the cause.
func stopAfterFailure(c Container, cause error) error {
	if err := c.Signal(syscall.SIGKILL, true); err != nil && !errors.Is(err, ErrNotRunning) {
		return errors.Join(cause, Errorf(ErrTeardownIncomplete, "stop %q: %w", c.ID(), err))
	}
	return cause
}

// bundlePoststart are the spec's poststart hooks without vetto's own.
func bundlePoststart(sp *specs.Spec) []specs.Hook {
	if sp.Hooks == nil {
		return nil
	}
	return spec.WithoutRuntimeHooks(sp.Hooks.Poststart, spec.RuntimeHookPoststart)
}
