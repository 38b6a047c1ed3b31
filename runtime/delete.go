package runtime

import (
	"errors"
	"fmt"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// Delete removes a stopped container, or with force any container after
// killing it. The poststop hooks run after the container's resources are
// gone and before Delete returns; per the spec their failure is a warning.
//
// As runc: with force, a container that does not exist is not an error —
// containerd's shim and podman delete --force containers that may be gone.
func (r *Runtime) Delete(id string, force bool) error {
	return r.deleteWith(id, nil, force)
}

// deleteWith is Delete with the backend's container already at hand (run's
// own, after its process exited), or nil to load it.
func (r *Runtime) deleteWith(id string, held Container, force bool) error {
	l, err := r.Store.lockContainer(id)
	if err != nil {
		if force && errors.Is(err, ErrNotExist) {
			return nil
		}
		return err
	}
	defer l.unlock()
	rec, err := r.Store.readRecord(id)
	if err != nil {
		return r.deleteWithoutRecordLocked(id, held, force, err)
	}
	if r.fromAnotherBoot(rec) {
		return r.deleteAfterRebootLocked(rec)
	}
	c, err := held, error(nil)
	if c == nil {
		c, err = r.Backend.Load(r.Store.BackendDir(id), id)
	}
	if err != nil && !errors.Is(err, ErrNotExist) {
		if !force {
			return fmt.Errorf("delete %q: %w", id, err)
		}
		r.Warnf("delete %q: backend state unreadable, removing vetto state only: %v", id, err)
		c = nil
	}
	return r.deleteLocked(rec, c, force)
}

// deleteWithoutRecordLocked is delete of a container directory whose
// record is missing or unreadable (recErr). A create that died before its
// first record left nothing of the backend's (the record is written
// first): the directory goes. But a record can also be lost after the
// container was built — removed by hand, a disk that fails, a restore
// from backup — and then the backend's state still names a container
// that may be running. Removing the directory then would forget a live
// workload: no later command could find, kill or account for it. So
// delete refuses, and delete --force tears down what the backend records,
// with a receipt, as it would with the record.
//
// The stored spec is trusted for the poststop hooks and the quarantine
// only through the frozen hash the evidence directory kept of its create;
// without that nothing of it runs.
func (r *Runtime) deleteWithoutRecordLocked(id string, held Container, force bool, recErr error) error {
	c, err := held, error(nil)
	if c == nil {
		c, err = r.Backend.Load(r.Store.BackendDir(id), id)
	}
	switch {
	case err == nil:
	case errors.Is(err, ErrNotExist):
		if !errors.Is(recErr, ErrNotExist) {
			// A record that cannot be read, and no container of the
			// backend's: what the directory holds says nothing trusted
			// about where processes of it might run; keep it.
			return fmt.Errorf("delete %q: %w, and the backend has no container of that id: nothing trusted says where processes of it may run; check that none do, then remove %s", id, recErr, r.Store.dir(id))
		}
		_ = r.Store.removeLocked(id)
		if force {
			return nil
		}
		return recErr
	default:
		return fmt.Errorf("%w; the backend's state of it cannot be read either: %w", recErr, err)
	}
	// Not wrapped: a caller that reads "does not exist" (a shim) would
	// take the container for gone.
	lost := recErr.Error()
	if errors.Is(recErr, ErrNotExist) {
		lost = fmt.Sprintf("the state record %s of %q is missing", recordFile, id)
	}
	if !force {
		return fmt.Errorf("delete %q: %s, but the backend still has the container: delete --force kills whatever of it runs and removes it", id, lost)
	}
	r.Warnf("delete %q: %s; tearing down the container the backend records", id, lost)
	rec := &Record{ID: id, Backend: r.Backend.Name(), lost: true}
	if h, err := r.Store.Evidence.frozenHash(r.Store.Root, id); err == nil {
		rec.SpecHash = h
	}
	if st, err := c.OCIState(); err == nil && st != nil {
		rec.Bundle = st.Bundle
	}
	return r.deleteLocked(rec, c, force)
}

func (r *Runtime) deleteLocked(rec *Record, c Container, force bool) error {
	return r.deleteLockedWith(rec, c, force, nil)
}

// deleteLockedWith is deleteLocked with the frozen spec of a run whose
// lock was held since its create froze it (startLocked); nil reads it.
func (r *Runtime) deleteLockedWith(rec *Record, c Container, force bool, frozen *specs.Spec) error {
	var st *specs.State
	// A stored spec that no longer matches its hash is not trusted: its
	// poststop hooks would be commands someone else chose, run on the
	// host. Read once, for the teardown (quarantine) and the hooks.
	sp, specErr := frozen, error(nil)
	if sp == nil {
		sp, specErr = r.Store.readSpec(rec)
	}
	if c != nil {
		status, err := c.Status()
		if err != nil {
			return fmt.Errorf("delete %q: %w", rec.ID, err)
		}
		// runtime.md: "Attempting to delete a container that is not
		// stopped MUST have no effect on the container and MUST generate
		// an error" — created included (runc deletes those; --force does).
		if status != StatusStopped && !force {
			return Errorf(ErrWrongState, "cannot delete container %s that is not stopped: %s (use --force)", rec.ID, status)
		}
		st, _ = c.OCIState()
		if rec.State != StateTerminating && Transition(rec.State, StateTerminating) == nil {
			if frozen != nil {
				// A run's teardown under the lock its create took: no
				// other process has seen this container, and none has a
				// monitor watching it (Run starts none before it tears
				// down), so Terminating is passed, not written. The
				// record is written with it if the teardown leaves
				// anything (recordReceiptLocked) or the state cannot be
				// removed; a crash meanwhile leaves it in the last state
				// written (Compiled, or the verdicts' state), which a
				// later delete tears down the same way.
				_ = r.Store.passLocked(rec, StateTerminating, "")
			} else {
				_ = r.Store.moveLocked(rec, StateTerminating, "")
			}
		}
		var verified *specs.Spec
		if specErr == nil {
			verified = sp
		}
		if err := r.recordReceiptLaterLocked(rec, r.teardown(rec, c, verified)); err != nil {
			return err
		}
	}
	if specErr != nil && c != nil {
		r.Warnf("delete %q: not running poststop hooks: %v", rec.ID, specErr)
	}
	if c == nil && specErr == nil {
		// The create died before the backend recorded the container; its
		// init may still run in the cgroups the spec names, or they may
		// be left empty. Only a spec whose hash still matches is trusted
		// to say where to kill.
		if sw, ok := r.Backend.(Sweeper); ok {
			start := time.Now()
			killed, err := sw.Sweep(rec.ID, sp)
			receipt := &hooks.Receipt{Method: "sweep", Killed: killed, RelayStopped: true}
			if err != nil {
				receipt.Problems = []string{err.Error()}
			} else {
				// The sweep removed the cgroups, and found them empty
				// after the kill; the init was among what it killed, so
				// its pid namespace went with it.
				receipt.CgroupRemoved, receipt.PidNamespaceGone = true, true
			}
			receipt.Duration = time.Since(start)
			if err := r.recordReceiptLocked(rec, receipt); err != nil {
				return err
			}
			if killed > 0 {
				r.Warnf("delete %q: killed %d process(es) left by an interrupted create", rec.ID, killed)
			}
		}
	}
	// Terminated is written only if the state cannot be removed: a
	// removed record needs no last state (the audit log has it).
	if Transition(rec.State, StateTerminated) == nil {
		_ = r.Store.passLocked(rec, StateTerminated, "")
	}
	if err := r.Store.removeLocked(rec.ID); err != nil {
		_ = r.Store.waitDurable()
		_ = r.Store.writeRecordLocked(rec)
		return fmt.Errorf("delete %q: %w", rec.ID, err)
	}
	// The receipt's fsync ran beside the removal; delete does not return
	// before it is durable.
	if err := r.Store.waitDurable(); err != nil {
		return Errorf(ErrTeardownIncomplete, "delete %q: the teardown's receipt is not durable: %w", rec.ID, err)
	}
	// Poststop only for a container that was built: "The poststop hooks
	// MUST be called after the container is deleted but before the delete
	// operation returns", and "the runtime MUST log a warning, but the
	// remaining hooks and lifecycle continue as if the hook had succeeded".
	// vetto's own poststop entry is the teardown above, with its receipt.
	var user []specs.Hook
	if c != nil && specErr == nil && sp.Hooks != nil {
		user = spec.WithoutRuntimeHooks(sp.Hooks.Poststop, spec.RuntimeHookPoststop)
	}
	if len(user) > 0 {
		if st == nil {
			st = &specs.State{Version: specs.Version, ID: rec.ID, Bundle: rec.Bundle, Annotations: rec.Annotations}
		}
		st.Status = specs.StateStopped
		for _, err := range hooks.RunOCIEach("poststop", user, st) {
			r.Warnf("%v", err)
		}
	}
	return nil
}

// teardownLocked kills and removes c and records the receipt. A teardown
// that left anything keeps the state directory, so delete --force can try
// again, and fails with TeardownIncomplete (125): never reported clean.
func (r *Runtime) teardownLocked(rec *Record, c Container) error {
	return r.recordReceiptLocked(rec, r.teardown(rec, c, nil))
}

// recordReceiptLaterLocked is recordReceiptLocked whose fsync of a clean
// receipt runs in the background (auditLaterLocked): delete removes the
// state meanwhile and waits for it before it returns. An incomplete
// teardown's receipt is synced at once: its state is kept.
func (r *Runtime) recordReceiptLaterLocked(rec *Record, receipt *hooks.Receipt) error {
	if !receipt.Clean() {
		return r.recordReceiptLocked(rec, receipt)
	}
	rec.Receipt = receipt
	return r.Store.auditLaterLocked(receiptEvent(rec, receipt))
}

func receiptEvent(rec *Record, receipt *hooks.Receipt) AuditEvent {
	level := rec.Level.String()
	if rec.lost {
		level = "" // the lost record had it; a guess would be evidence
	}
	return AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: level, Event: "receipt", Reason: receipt.String(), Receipt: receipt}
}

// recordReceiptLocked writes the receipt to the audit log (synced: it is
// the evidence) and says TeardownIncomplete unless it is clean. An
// incomplete teardown's record is written with it, for delete --force; a
// clean one's is not: every caller removes the state next, and writes the
// record (receipt and all) only if that fails.
func (r *Runtime) recordReceiptLocked(rec *Record, receipt *hooks.Receipt) error {
	rec.Receipt = receipt
	auditErr := r.Store.auditLocked(receiptEvent(rec, receipt), true)
	if !receipt.Clean() {
		rec.Reason = "teardown incomplete: " + receipt.String()
		_ = r.Store.writeRecordLocked(rec)
		return Errorf(ErrTeardownIncomplete, "teardown of %q incomplete, state kept for delete --force: %s", rec.ID, receipt.String())
	}
	return auditErr
}

// deleteAfterRebootLocked removes a container whose record outlived a
// reboot, with or without --force: nothing of it can run, since a reboot
// ends every process, and nothing is signalled or swept — its pids,
// cgroup paths, monitor and relay pids are another boot's numbers, which
// may now be anyone's. The receipt says so (method unknown-after-reboot),
// and no Terminated is recorded: nobody saw it end. Its poststop hooks do
// not run: no teardown of it happened here for them to follow.
func (r *Runtime) deleteAfterRebootLocked(rec *Record) error {
	now := r.bootID()
	r.Warnf("delete %q: created before this host last booted; its state was %s, its end unseen (%s): removing the record without signalling any pid", rec.ID, rec.State, ReceiptUnknownAfterReboot)
	if err := r.recordReceiptLocked(rec, rebootReceipt(rec, now)); err != nil {
		return err
	}
	if err := r.Store.removeLocked(rec.ID); err != nil {
		_ = r.Store.writeRecordLocked(rec)
		return fmt.Errorf("delete %q: %w", rec.ID, err)
	}
	return nil
}
