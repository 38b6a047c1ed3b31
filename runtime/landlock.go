package runtime

import (
	"fmt"

	"github.com/vetto-dev/vetto-runtime/hooks"
)

// landlockLaunch is what the pre-launch checks judge of the Landlock
// restriction, nil when the plan runs the process without one.
func (r *Runtime) landlockLaunch(cr *created) *hooks.LandlockLaunch {
	if cr.plan.Decision.Landlock == "" {
		return nil
	}
	in := &hooks.LandlockLaunch{Ruleset: cr.plan.Decision.Landlock}
	in.ABI, in.ABIErr = r.landlockABI()
	if sc, ok := cr.c.(ShimContainer); ok {
		in.PreExec, in.Args, in.Known = sc.LaunchPlan()
	}
	return in
}

// watchShim reads, before start, which file the init runs (the runtime's
// clone, whose pre-exec step restricts it) and returns the post-launch
// check that the process is past that step: its executable is another file
// now. It is judged with the other poststart checks. Without a pre-exec
// step it checks nothing.
func (r *Runtime) watchShim(rec *Record, c Container) (func() []hooks.Result, error) {
	sc, ok := c.(ShimContainer)
	if (rec.Landlock == "" && !rec.Canary) || !ok {
		return func() []hooks.Result { return nil }, nil
	}
	clone, err := sc.InitExe()
	if err != nil {
		return nil, fmt.Errorf("read the init's executable: %w", err)
	}
	return func() []hooks.Result {
		now, nowErr := sc.InitExe()
		return []hooks.Result{hooks.CheckPastShim(clone, now, nowErr)}
	}, nil
}
