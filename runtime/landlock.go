package runtime

import (
	"fmt"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// landlockLaunch is what the pre-launch checks judge of the Landlock shim,
// nil when the plan runs the process without one.
func (r *Runtime) landlockLaunch(cr *created) *hooks.LandlockLaunch {
	if cr.plan.Decision.Landlock == "" {
		return nil
	}
	in := &hooks.LandlockLaunch{Ruleset: cr.plan.Decision.Landlock}
	in.ABI, in.ABIErr = r.landlockABI()
	if sc, ok := cr.c.(ShimContainer); ok {
		in.LaunchArgs = sc.LaunchArgs()
	}
	return in
}

// watchShim reads, before start, which file the init runs (the runtime's
// clone, which the shim runs too) and returns the post-launch check that
// the process is past the shim: its executable is another file now. A
// FAIL kills the container (125). Without a shim it checks nothing.
func (r *Runtime) watchShim(rec *Record, c Container) (func() error, error) {
	sc, ok := c.(ShimContainer)
	if rec.Landlock == "" || !ok {
		return func() error { return nil }, nil
	}
	clone, err := sc.InitExe()
	if err != nil {
		return nil, fmt.Errorf("read the init's executable: %w", err)
	}
	return func() error {
		now, nowErr := sc.InitExe()
		res := hooks.CheckPastShim(clone, now, nowErr)
		if err := r.Store.auditLocked(AuditEvent{ID: rec.ID, Spec: rec.SpecHash, Level: rec.Level.String(), Event: "verdicts", Results: []hooks.Result{res}}, true); err != nil {
			return stopAfterFailure(c, fmt.Errorf("start %q: %w", rec.ID, err))
		}
		if res.Verdict == hooks.Fail {
			_ = r.Store.moveLocked(rec, StatePostLaunchFailed, res.String())
			return stopAfterFailure(c, Errorf(ErrPostLaunchFailed, "start %q: %s", rec.ID, res))
		}
		return nil
	}, nil
}
