package darwin

import "github.com/vetto-dev/vetto-runtime/runtime"

// Refusal, Degradation and Note are the core's (runtime.PlatformShortfalls):
// one field this sandbox cannot honour, a guarantee it gives only in part,
// something the container gets less of than asked.
type (
	Refusal     = runtime.PlatformRefusal
	Degradation = runtime.PlatformDegradation
	Note        = runtime.PlatformNote
)

// Feature names of the degradations this backend can report.
const (
	// FeatureCleanup: no pid namespace; teardown kills the process group
	// and the descendants it can find, and a process that left both
	// survives it.
	FeatureCleanup = string(runtime.FeatureCleanup)
	// FeatureLimits is runtime.FeatureLimits: memory and pids limits
	// Seatbelt cannot set.
	FeatureLimits = string(runtime.FeatureLimits)
	// FeatureNoNewPrivs: darwin has no no_new_privs and Seatbelt does not
	// strip set-id bits, so a set-id binary the process can execute runs
	// with its owner's ids (still inside the same sandbox).
	FeatureNoNewPrivs = string(runtime.FeatureNoNewPrivs)
)

// LaunchFacts is the plan's account for the launch evaluator, which
// decides with the caller's level and opt-ins; this backend does not.
func (p *Plan) LaunchFacts() *runtime.PlatformFacts {
	return p.PlatformShortfalls.LaunchFacts("darwin")
}

// refused is the error of a plan with refusals (ErrDegradedRefused, 125).
func (p *Plan) refused() error { return p.Refused("the darwin sandbox (Seatbelt)") }
