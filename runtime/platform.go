package runtime

import (
	"errors"
	"fmt"

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
