package windows

import "github.com/vetto-dev/vetto-runtime/runtime"

// Refusal, Degradation and Note are the core's (runtime.PlatformShortfalls):
// one field this sandbox cannot honour, a guarantee it gives only in part,
// something the container gets less of than asked.
type (
	Refusal     = runtime.PlatformRefusal
	Degradation = runtime.PlatformDegradation
	Note        = runtime.PlatformNote
)

// FeatureLimits is runtime.FeatureLimits: a pids limit the job counts in
// processes, not threads.
const FeatureLimits = string(runtime.FeatureLimits)

// LaunchFacts is the plan's account for the launch evaluator, which
// decides with the caller's level and opt-ins; this backend does not.
func (p *Plan) LaunchFacts() *runtime.PlatformFacts {
	return p.PlatformShortfalls.LaunchFacts("windows")
}

// refused is the error of a plan with refusals (ErrDegradedRefused, 125).
func (p *Plan) refused() error {
	return p.Refused("the windows sandbox (Job Object, restricted token, AppContainer)")
}
