package windows

import (
	"strings"

	"github.com/vetto-dev/vetto-runtime/runtime"
)

// Refusal is one field of the spec that a Job Object, a restricted token and an AppContainer cannot honour. Field is
// the JSON path in config.json ("linux.seccomp", "mounts[3]"), Rule a
// stable id ("windows.seccomp") the launch evaluator and the docs use.
type Refusal struct {
	Field  string `json:"field"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

func (r Refusal) String() string { return r.Field + " (" + r.Rule + "): " + r.Reason }

// Degradation is a guarantee the platform gives only in part, by name.
// Feature is the name --allow-degraded and dev.vetto.allow-degraded use.
type Degradation struct {
	Feature string `json:"feature"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	// Standard: the standard level accepts it without an opt-in. None
	// does on Windows.
	Standard bool `json:"standard,omitempty"`
}

func (d Degradation) String() string { return d.Feature + ": " + d.Reason }

// Note is something the container gets less of than the spec asks:
// recorded, the container runs. docs/security-levels.md: less privilege than asked is
// a note, never a refusal.
type Note struct {
	Field  string `json:"field"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// FeatureLimits is runtime.FeatureLimits: a pids limit the job counts in
// processes, not threads.
const FeatureLimits = string(runtime.FeatureLimits)

// LaunchFacts is the plan's account for the launch evaluator
// (the evaluator's platform facts): every refusal and degradation, by its rule, and
// the notes. The evaluator decides with the caller's level and opt-ins —
// --security-level, --allow-degraded, the bundle's annotations, the floor
// — as it decides everything on Linux; this backend no longer does. Its
// containers report verdicts read from host facts (Verifies).
func (p *Plan) LaunchFacts() *runtime.PlatformFacts {
	out := &runtime.PlatformFacts{Name: "windows", Verifies: true, MasksLast: true}
	for _, r := range p.Refusals {
		out.Refusals = append(out.Refusals, runtime.PlatformGap{Field: r.Field, Rule: r.Rule, Reason: r.Reason})
	}
	for _, g := range p.Degradations {
		out.Degradations = append(out.Degradations, runtime.PlatformGap{Rule: g.Rule, Feature: runtime.Feature(g.Feature), Reason: g.Reason, Standard: g.Standard})
	}
	for _, n := range p.Notes {
		out.Notes = append(out.Notes, n.Field+": "+n.Reason+" ["+n.Rule+"]")
	}
	return out
}

// refused is the error of a plan with refusals: every one at once (kind
// runtime.ErrDegradedRefused, exit 125). The core refuses such a spec
// before the backend is asked (the same list, through the evaluator);
// Create keeps this check because no sandbox may be built from a profile
// that does not express the spec, whoever calls it.
func (p *Plan) refused() error {
	if len(p.Refusals) == 0 {
		return nil
	}
	bad := make([]string, len(p.Refusals))
	for i, r := range p.Refusals {
		bad[i] = r.String()
	}
	return runtime.Errorf(runtime.ErrDegradedRefused, "the windows sandbox (Job Object, restricted token, AppContainer) cannot honour this bundle: %s", strings.Join(bad, "; "))
}
