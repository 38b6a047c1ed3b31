package launch

import (
	"github.com/vetto-dev/vetto-runtime/hooks"
)

// PreLaunch judges the pre-launch verdicts on the live init: a failing or
// unavailable check tagged with a degradable feature is accepted where
// the decision's level, its Allow and the floor accept that feature, and
// recorded in d.Degraded; every other non-PASS check is a violation
// (verify.prelaunch); a PASS with a note (less privilege than asked) is
// recorded in d.Notes. It appends to d and returns the violations it
// added.
func (d *Decision) PreLaunch(results []hooks.Result) Violations {
	var v violations
	for _, res := range results {
		switch {
		case res.Verdict == hooks.Pass:
			if res.Note != "" {
				d.Notes = append(d.Notes, res.Check+": "+res.Note)
			}
		case res.Feature != "" && d.NoCgroup && d.hasDegraded(Feature(res.Feature)) && res.Feature != string(FeatureLandlock):
			// A limit read back from a cgroup the container has none
			// of: the evaluator's degradation already says so.
		case res.Feature != "":
			d.degrade(Feature(res.Feature), res.String(), &v)
		default:
			v.add(RulePreLaunchFail, "%s", res.String())
		}
	}
	d.Violations = append(d.Violations, v.list...)
	return v.list
}

// Action is what the runtime does with a post-launch outcome.
type Action int

const (
	// Verified: every check passed on host facts → VerifiedRuntime.
	Verified Action = iota
	// Kill: the container is killed and the command fails with 125.
	Kill
	// Record: the failure is recorded and named; the container runs on
	// (degraded).
	Record
	// Unverified: nothing failed but something could not conclude; said
	// once, the container runs on, not VerifiedRuntime.
	Unverified
	// Exited: the process exited before verification could conclude;
	// recorded, its exit status passes through.
	Exited
)

func (a Action) String() string {
	return [...]string{"verified", "kill", "record", "unverified", "exited"}[a]
}

// PostLaunch decides what a post-launch (or verify) outcome means at
// level: a FAIL kills at standard and strict and is recorded at degraded;
// an inconclusive outcome kills at strict unless the process exited first
// (then nothing is left to verify or kill, and the sandbox it ran in was
// verified before it could exec), and is said once elsewhere. It returns
// the action and the rule behind it.
func PostLaunch(level Level, s hooks.Summary, exitedFirst bool) (Action, RuleID) {
	switch s {
	case hooks.AllPass:
		return Verified, ""
	case hooks.AnyFail:
		if level == Degraded {
			return Record, RulePostLaunchFail
		}
		return Kill, RulePostLaunchFail
	}
	switch {
	case exitedFirst:
		return Exited, RulePostLaunchExited
	case level == Strict:
		return Kill, RulePostLaunchIncomplete
	}
	return Unverified, RulePostLaunchIncomplete
}

// hasDegraded reports whether f is an accepted degradation already.
func (d *Decision) hasDegraded(f Feature) bool {
	for _, g := range d.Degraded {
		if g.Feature == f {
			return true
		}
	}
	return false
}
