package windows

import (
	"fmt"
	"strings"

	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/spec"
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

// Decision is what a level makes of a plan's degradations.
type Decision struct {
	Level    runtime.Level
	Accepted []Degradation
}

// Decide applies level and the opt-ins in allow to p: every refusal, and
// every degradation the level does not accept, is in the error (kind
// runtime.ErrDegradedRefused, exit 125), all of them at once. The launch
// evaluator will make this decision instead (with the same inputs);
// until it exists the backend does.
func (p *Plan) Decide(level runtime.Level, allow map[string]bool) (*Decision, error) {
	var bad []string
	for _, r := range p.Refusals {
		bad = append(bad, r.String())
	}
	d := &Decision{Level: level}
	for _, g := range p.Degradations {
		switch {
		case level == runtime.LevelStrict:
			bad = append(bad, fmt.Sprintf("%s (%s): %s; level strict allows no degradation", g.Feature, g.Rule, g.Reason))
		case level == runtime.LevelStandard && !g.Standard && !allow[g.Feature]:
			bad = append(bad, fmt.Sprintf("%s (%s): %s; refused at level standard (accept it with dev.vetto.allow-degraded=%s, or level degraded)", g.Feature, g.Rule, g.Reason, g.Feature))
		default:
			d.Accepted = append(d.Accepted, g)
		}
	}
	if len(bad) > 0 {
		return nil, runtime.Errorf(runtime.ErrDegradedRefused, "the windows sandbox (Job Object, restricted token, AppContainer) cannot honour this bundle at level %s: %s", level, strings.Join(bad, "; "))
	}
	return d, nil
}

// LevelOf reads the level and the opt-ins a bundle states for itself
// (dev.vetto.level, dev.vetto.allow-degraded). The CLI's --security-level
// and --allow-degraded do not reach a backend today (CreateRequest has no
// field for them), so a caller who lowered the level by flag is refused
// here as at standard: the backend can only err towards refusing.
func LevelOf(annotations map[string]string) (runtime.Level, map[string]bool, error) {
	level := runtime.LevelStandard
	if a, ok := annotations[spec.AnnotationLevel]; ok {
		l, err := runtime.ParseLevel(a)
		if err != nil {
			return 0, nil, runtime.Errorf(runtime.ErrInvalidInput, "annotation %s: %w", spec.AnnotationLevel, err)
		}
		level = l
	}
	allow := map[string]bool{}
	for _, f := range strings.Split(annotations[spec.AnnotationAllowDegraded], ",") {
		if f = strings.TrimSpace(f); f != "" {
			allow[f] = true
		}
	}
	return level, allow, nil
}
