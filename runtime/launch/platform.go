package launch

import "fmt"

// Platform is a platform translator's account of a spec (darwin's
// Seatbelt, Windows' job, restricted token and AppContainer): what that
// sandbox cannot honour at all, and what it gives only in part. They are
// facts for this evaluator, as the Linux host's are, so that one set of
// rules decides every launch: a refusal refuses at every level, a
// degradation is accepted only where the level, --allow-degraded, the
// bundle's dev.vetto.allow-degraded and the floor accept its feature, and
// what is accepted is on the launch line and in the record.
type Platform struct {
	// Name is the backend's ("darwin", "windows").
	Name string
	// Refusals are fields of the spec (or options of the request) the
	// platform cannot express; any one refuses the launch.
	Refusals []PlatformGap
	// Degradations are guarantees the platform gives only in part.
	Degradations []PlatformGap
	// Notes are what the container gets less of than the spec asks (a
	// tmpfs that is a hidden path instead): recorded, never a failure.
	Notes []string
	// Verifies: the backend's containers report verdicts read from host
	// facts (runtime.VerifyingContainer), before and after the program
	// starts. Without it the launch has no verification: the verify
	// degradation, as on any platform without host facts.
	Verifies bool
	// MasksLast: the platform enforces every mask after every mount
	// (Seatbelt's last matching rule wins and the masks come last; a deny
	// entry on a Windows object outranks any grant), so no later mount can
	// cover one: the masks.covered rule, which judges Linux's mount order,
	// has nothing to judge.
	MasksLast bool
}

// PlatformGap is one field or guarantee a platform cannot honour in full.
type PlatformGap struct {
	// Field is the JSON path in config.json ("linux.seccomp", "mounts[3]")
	// or the request's option ("--console-socket").
	Field string `json:"field,omitempty"`
	// Rule is the platform's stable id ("darwin.seccomp"), which
	// docs/platforms.md lists.
	Rule string `json:"rule"`
	// Feature names a degradation as --allow-degraded does; "" for a
	// refusal.
	Feature Feature `json:"feature,omitempty"`
	Reason  string  `json:"reason"`
	// Standard: the standard level accepts this degradation without an
	// opt-in (darwin's best-effort cleanup: without it nothing could run
	// at standard there). It is still named, refused at strict, and the
	// floor can forbid it.
	Standard bool `json:"standard,omitempty"`
}

func (g PlatformGap) String() string {
	if g.Field == "" {
		return g.Reason + " (" + g.Rule + ")"
	}
	return g.Field + " (" + g.Rule + "): " + g.Reason
}

// platformGaps judges a platform translator's account of the spec.
func platformGaps(p *Platform, d *Decision, v *violations) {
	if p == nil {
		return
	}
	for _, r := range p.Refusals {
		v.add(RulePlatformRefused, "%s cannot honour %s", p.Name, r)
	}
	for _, g := range p.Degradations {
		d.degradeAt(g.Feature, fmt.Sprintf("%s (%s)", g.Reason, g.Rule), g.Standard, v)
	}
	d.Notes = append(d.Notes, p.Notes...)
}
