package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// RunOptions are run's inputs: create's, and what happens after start.
type RunOptions struct {
	CreateOptions
	Detach      bool
	Keep        bool // keep the stopped container instead of deleting it
	NoSubreaper bool
}

// Run creates and starts a container. Detached, it returns once the user
// process runs. In the foreground it forwards signals and stdio until the
// container's init exits, deletes the container (unless Keep) and returns
// the init's exit status for the caller to exit with.
func (r *Runtime) Run(opts RunOptions) (int, error) {
	opts.foreground = !opts.Detach
	opts.noSubreaper = opts.NoSubreaper
	opts.starting = true
	if err := checkPidFileDir(opts.PidFile); err != nil {
		return -1, fmt.Errorf("run %q: %w", opts.ID, err)
	}
	cr, err := r.create(opts.CreateOptions)
	if err != nil {
		return -1, err
	}
	cr.rec.teardownOnExit = !opts.Detach && !opts.Keep
	var notify *notifyRelay
	if cr.notifyDir != "" {
		if notify, err = r.listenNotify(cr.notifyDir); err != nil {
			return -1, joinDistinct(fmt.Errorf("run %q: %w", opts.ID, err), r.abandonLocked(cr))
		}
	}
	if err := r.startLocked(cr.rec, cr.c, cr.plan.frozen.spec, !opts.Detach); err != nil {
		notify.close()
		return -1, joinDistinct(err, r.abandonLocked(cr))
	}
	if notify != nil && !opts.Detach {
		// Beside the wait: the relay ends with READY=1 or the init.
		c := cr.c
		go func() {
			if err := r.relayReady(notify, opts.ID, c); err != nil {
				r.Warnf("run %v", err)
			}
		}()
	}
	if opts.PidFile != "" {
		if err := writePidFile(opts.PidFile, cr.c.InitPid()); err != nil {
			return -1, joinDistinct(fmt.Errorf("run %q: %w", opts.ID, err), r.abandonLocked(cr))
		}
	}
	// An init that exited before its checks must be torn down here (its
	// EXITED record was not written); one that exited since may be.
	if cr.rec.teardownOnExit {
		if cr.rec.Verification == "EXITED" || r.initGone(cr.rec, cr.c) || awaitExit(cr.fg) {
			return r.teardownExitedLocked(cr, opts.ID)
		}
		if err := r.verdictsDurableLocked(cr.rec, cr.c); err != nil {
			return -1, joinDistinct(err, r.abandonLocked(cr))
		}
	}
	// From here on other commands (kill, state) must get at the container.
	cr.lock.unlock()
	if opts.Detach {
		if notify != nil {
			// runc's: a detached run returns once the program said it is
			// ready (or ended), so that the service manager's start does.
			if err := r.relayReady(notify, opts.ID, cr.c); err != nil {
				return -1, fmt.Errorf("run %w", err)
			}
		}
		return 0, nil
	}
	stopMonitor := r.lazyMonitor(opts.ID)
	status, waitErr := cr.fg.Wait()
	if err := stopMonitor(); err != nil && waitErr == nil {
		// Strict killed the container for it: that, not the kill's
		// status, is the outcome.
		_ = r.deleteWith(opts.ID, cr.c, true)
		cr.fg.Close()
		return -1, err
	}
	if waitErr != nil {
		cr.fg.Close()
		// We lost track of the init; make sure it is gone.
		if err := r.Delete(opts.ID, true); err != nil {
			r.Warnf("%v", err)
		}
		return -1, fmt.Errorf("run %q: wait: %w", opts.ID, waitErr)
	}
	if opts.Keep {
		cr.fg.Close()
		return status, nil
	}
	// Tear down before draining the output: without a pid namespace of
	// its own the init's exit leaves its children running, and one that
	// holds stdout would keep the drain (and the run) waiting for ever.
	// Signal forwarding stays on until Close, so a ^C meanwhile does not
	// kill this process halfway through the teardown.
	err = r.deleteWith(opts.ID, cr.c, true)
	cr.fg.Close()
	if err != nil {
		return status, Errorf(ErrTeardownIncomplete, "run %q: %w", opts.ID, err)
	}
	return status, nil
}

// teardownExitedLocked ends a foreground run whose init has exited by the
// end of start (a short job): nothing of it is left to watch or signal,
// so the teardown follows under the lock start took, with the record,
// container and frozen spec at hand — no second lock, read of the record
// or of the spec, or load of the backend's state. Nothing of it is
// written to the record on the way (its EXITED verdicts, Terminating):
// the audit log has them, and the state is removed next, or written,
// receipt and all, if the teardown leaves anything or the removal fails.
func (r *Runtime) teardownExitedLocked(cr *created, id string) (int, error) {
	status, waitErr := cr.fg.Wait()
	err := r.deleteLockedWith(cr.rec, cr.c, true, cr.plan.frozen.spec)
	cr.lock.unlock()
	cr.fg.Close()
	if waitErr != nil {
		if err != nil {
			r.Warnf("%v", err)
		}
		return -1, fmt.Errorf("run %q: wait: %w", id, waitErr)
	}
	if err != nil {
		return status, Errorf(ErrTeardownIncomplete, "run %q: %w", id, err)
	}
	return status, nil
}

// initGone says the host reads container c's init gone, a zombie or
// exiting — or reaped already, by the foreground's wait: one look at its
// stat, where initExited asks the backend first. Unreadable for another
// reason, it is not gone.
func (r *Runtime) initGone(rec *Record, c Container) bool {
	pf, ok := r.postFacts()
	if !ok || rec.Baseline == nil {
		return false
	}
	ps, err := pf.ProcStat(c.InitPid())
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return ps.Start != rec.Baseline.StartTime || ps.Gone()
}

// shortJobWait is how long a foreground run that keeps nothing waits, at
// the end of its start, for a job that has not exited yet. A job done
// within it (a /bin/true, a quick check) is torn down under the lock its
// create took: no record written at VerifiedRuntime, no fsync of its
// verdicts of their own, no second lock, read of the record and of the
// frozen spec for the delete. A job that runs on only lets other
// commands at its container this much later, and its monitor begins
// this much later too (its first round is 100 ms after start).
const shortJobWait = 5 * time.Millisecond

// awaitExit says fg's init exited within shortJobWait; false on a
// backend that cannot wait for it without reaping it.
func awaitExit(fg Foreground) bool {
	w, ok := fg.(ExitAwaiter)
	return ok && w.AwaitExit(shortJobWait)
}
