package runtime

import (
	"errors"
	"fmt"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/hooks"
	"github.com/vetto-dev/vetto-runtime/runtime/launch"
)

// The launch evaluator's platform facts, for the backends that report
// them (PlatformBackend), which import the core and not the evaluator.
type (
	// Feature is a degradable part of the sandbox (--allow-degraded).
	Feature = launch.Feature
	// PlatformFacts is a translator's account of a spec.
	PlatformFacts = launch.Platform
	// PlatformGap is one refusal or degradation in it.
	PlatformGap = launch.PlatformGap
)

// DecidePlatform is the launch evaluator's decision on s for a platform
// whose translator gave p, at sec, as create makes it but without reading
// the host (no bind-source facts, no floor): what the backends' tests
// compare their translations against. A refusal is the error create
// returns (ErrDegradedRefused, 125, every rule named); otherwise the
// accepted degradations, as the launch line names them.
func DecidePlatform(s *specs.Spec, sec Security, p *PlatformFacts) ([]string, error) {
	d := launch.Evaluate(launch.Request{Spec: s, Level: sec.Level, LevelSet: sec.LevelSet, Allow: sec.AllowDegraded, NoVerify: sec.NoVerify},
		launch.Host{Facts: p != nil && p.Verifies, Platform: p}, nil)
	if !d.OK() {
		return nil, refusal(d.Level, d.Violations)
	}
	return d.DegradedStrings(), nil
}

// platformVerifies says whether c's verdicts are this runtime's to judge
// after launch: there are no Linux host facts, and c reports its own.
func (r *Runtime) platformVerifies(c Container) bool {
	_, ok := c.(VerifyingContainer)
	return ok && r.Facts == nil
}

// noPlatformVerdicts stands for verdicts a platform container did not
// report: never a PASS.
func noPlatformVerdicts(c Container, phase string) []hooks.Result {
	return []hooks.Result{{Check: "platform/" + phase, Verdict: hooks.Unavailable, Evidence: hooks.HostFact,
		Expected: "the backend's verdicts on the process, from host facts", Found: fmt.Sprintf("container %q reports none", c.ID())}}
}

// platformPreLaunch are a platform container's verdicts on its process
// before the program runs.
func platformPreLaunch(c Container) []hooks.Result {
	vc, ok := c.(VerifyingContainer)
	if !ok {
		return noPlatformVerdicts(c, "pre-launch")
	}
	if res := vc.PreLaunch(); len(res) > 0 {
		return res
	}
	return noPlatformVerdicts(c, "pre-launch")
}

// platformPostLaunch are a platform container's verdicts on its running
// process.
func platformPostLaunch(c Container) []hooks.Result {
	vc, ok := c.(VerifyingContainer)
	if !ok {
		return noPlatformVerdicts(c, "post-launch")
	}
	if res := vc.PostLaunch(); len(res) > 0 {
		return res
	}
	return noPlatformVerdicts(c, "post-launch")
}

// platformOnDemand reads a platform container's verdicts again, for
// verify. A backend that cannot is ErrBackendUnavailable: verify then
// says so instead of judging nothing as a pass.
func platformOnDemand(c Container) ([]hooks.Result, error) {
	vc, ok := c.(VerifyingContainer)
	if !ok {
		return nil, Errorf(ErrBackendUnavailable, "verify %q: the %T container reports no verdicts", c.ID(), c)
	}
	res, err := vc.OnDemand()
	if errors.Is(err, errors.ErrUnsupported) {
		return nil, Errorf(ErrBackendUnavailable, "verify %q: %w", c.ID(), err)
	}
	if err != nil {
		return nil, fmt.Errorf("verify %q: %w", c.ID(), err)
	}
	if len(res) == 0 {
		return noPlatformVerdicts(c, "verify"), nil
	}
	return res, nil
}

// PlatformRefusal is one field of the spec (or option of the request) a
// platform's sandbox cannot honour. Field is the JSON path in config.json
// ("linux.seccomp", "mounts[3]"), Rule a stable id ("darwin.seccomp") the
// launch evaluator and docs/platforms.md use.
type PlatformRefusal struct {
	Field  string `json:"field"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

func (r PlatformRefusal) String() string { return r.Field + " (" + r.Rule + "): " + r.Reason }

// PlatformDegradation is a guarantee the platform gives only in part.
// Feature is the name --allow-degraded and dev.vetto.allow-degraded use.
type PlatformDegradation struct {
	Feature string `json:"feature"`
	Rule    string `json:"rule"`
	Reason  string `json:"reason"`
	// Standard: the standard level accepts it without an opt-in
	// (darwin's best-effort cleanup; docs/platforms.md).
	Standard bool `json:"standard,omitempty"`
}

func (d PlatformDegradation) String() string { return d.Feature + ": " + d.Reason }

// PlatformNote is something the container gets less of than the spec
// asks (a tmpfs that is not mounted, so its path is inaccessible):
// recorded, the container runs. Less privilege than asked is a note,
// never a refusal (docs/security-levels.md).
type PlatformNote struct {
	Field  string `json:"field"`
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// PlatformShortfalls is what a platform's translation of a spec found it
// cannot give: the part of darwin's and Windows' plans the core judges.
// Embedded in a backend's plan, its lists are the plan's JSON fields.
type PlatformShortfalls struct {
	Refusals     []PlatformRefusal     `json:"refusals,omitempty"`
	Degradations []PlatformDegradation `json:"degradations,omitempty"`
	Notes        []PlatformNote        `json:"notes,omitempty"`
}

// LaunchFacts is the account for the launch evaluator of the platform
// name: every refusal and degradation, by its rule, and the notes. The
// evaluator decides with the caller's level and opt-ins — as it decides
// everything on Linux — never the backend. Such a backend's containers
// report verdicts read from host facts (Verifies), and it enforces every
// mask after every mount (MasksLast).
func (s *PlatformShortfalls) LaunchFacts(name string) *PlatformFacts {
	out := &PlatformFacts{Name: name, Verifies: true, MasksLast: true}
	for _, r := range s.Refusals {
		out.Refusals = append(out.Refusals, PlatformGap{Field: r.Field, Rule: r.Rule, Reason: r.Reason})
	}
	for _, g := range s.Degradations {
		out.Degradations = append(out.Degradations, PlatformGap{Rule: g.Rule, Feature: Feature(g.Feature), Reason: g.Reason, Standard: g.Standard})
	}
	for _, n := range s.Notes {
		out.Notes = append(out.Notes, n.Field+": "+n.Reason+" ["+n.Rule+"]")
	}
	return out
}

// Refused is the error of shortfalls with refusals, every one at once
// (ErrDegradedRefused, exit 125); nil without. The core refuses such a
// spec before the backend is asked (the same list, through the
// evaluator); a backend's Create checks again because no sandbox may be
// built from a plan that does not express the spec, whoever calls it.
// sandbox names it: "the darwin sandbox (Seatbelt)".
func (s *PlatformShortfalls) Refused(sandbox string) error {
	if len(s.Refusals) == 0 {
		return nil
	}
	bad := make([]string, len(s.Refusals))
	for i, r := range s.Refusals {
		bad[i] = r.String()
	}
	return Errorf(ErrDegradedRefused, "%s cannot honour this bundle: %s", sandbox, strings.Join(bad, "; "))
}
