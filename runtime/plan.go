package runtime

import (
	"fmt"
	"sort"
	"strings"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Plan is what a launch will be, decided before anything exists: the
// level, the sandbox's shape, the accepted degradations, the frozen spec.
type Plan struct {
	ID       string
	Backend  string
	Level    Level
	Tier     string
	Net      string
	Degraded []string
	Warnings []string
	// Landlock is the ruleset the exec shim enforces (dev.vetto.landlock
	// form): the bundle's, or at degraded what of it the host's ABI
	// enforces; empty when the process runs without the shim.
	Landlock string
	frozen   *frozenSpec
	// allow is --allow-degraded joined with the bundle's
	// dev.vetto.allow-degraded annotation.
	allow map[string]bool
}

// Hash is the frozen spec's sha256.
func (p *Plan) Hash() string { return p.frozen.hash }

// LaunchLine is the one line every launch prints before the process runs
// (DESIGN.md §4).
func (p *Plan) LaunchLine() string {
	line := fmt.Sprintf("sandbox: %s tier=%s net=%s level=%s spec=%s", p.Backend, p.Tier, p.Net, p.Level, shortHash(p.frozen.hash))
	if len(p.Degraded) > 0 {
		line += " degraded: " + strings.Join(p.Degraded, "; ")
	}
	return line
}

// DryRunLine is the launch line of a plan nothing enforces: no tier is
// claimed, since no sandbox was built to have one.
func (p *Plan) DryRunLine() string {
	line := fmt.Sprintf("sandbox: %s tier=unknown(dry-run) net=%s level=%s spec=%s NOT ENFORCED", p.Backend, p.Net, p.Level, shortHash(p.frozen.hash))
	if len(p.Degraded) > 0 {
		line += " degraded: " + strings.Join(p.Degraded, "; ")
	}
	return line
}

// documentedEnv are the VETTO_* variables vetto-runtime reads. There are
// none: nothing about enforcement is configured through the environment.
var documentedEnv = map[string]bool{}

// plan decides a launch from the effective spec and the caller's request.
// It refuses with ErrFloorForbids (126) when the operator's floor forbids
// the launch, and with ErrDegradedRefused (125) when the level demands
// what the bundle or this build cannot give.
func (r *Runtime) plan(id string, s *specs.Spec, sec Security) (*Plan, error) {
	level, err := decideLevel(sec, s.Annotations)
	if err != nil {
		return nil, err
	}
	p := &Plan{ID: id, Backend: r.Backend.Name(), Level: level, Tier: tier(s), Net: netMode(s), allow: map[string]bool{}}
	for f := range sec.AllowDegraded {
		p.allow[f] = true
	}
	// A compiled policy carries its allow_degraded here, as it carries its
	// level in dev.vetto.level: the bundle's author accepts the named
	// degradations at standard. Strict still allows none, each one is
	// printed and recorded, and the operator's floor (min_level) bounds it.
	if a, ok := s.Annotations[AnnotationAllowDegraded]; ok {
		fs, err := ParseFeatures([]string{a})
		if err != nil {
			return nil, Errorf(ErrInvalidInput, "annotation %s: %w", AnnotationAllowDegraded, err)
		}
		for f := range fs {
			p.allow[f] = true
		}
	}

	// The environment never weakens anything; a VETTO_* variable that is
	// not a documented input is a sign of someone trying (a diagnostic
	// override of an older tool, say), so strict refuses to launch.
	var poison []string
	for _, kv := range r.Environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "VETTO_") && !documentedEnv[name] {
			poison = append(poison, name)
		}
	}
	sort.Strings(poison)
	if len(poison) > 0 {
		if level == LevelStrict {
			return nil, Errorf(ErrDegradedRefused, "environment variables %s are not inputs of vetto-runtime and are refused at level strict; unset them", strings.Join(poison, ", "))
		}
		p.Warnings = append(p.Warnings, "ignored environment variables "+strings.Join(poison, ", ")+" (they change nothing)")
	}

	if err := r.Floor.check(level, s); err != nil {
		return nil, err
	}
	if level == LevelStrict {
		if reqs := strictRequirements(s); len(reqs) > 0 {
			parts := make([]string, len(reqs))
			for i, q := range reqs {
				parts[i] = q.rule + ": " + q.detail
			}
			return nil, Errorf(ErrDegradedRefused, "level strict refuses this bundle: %s", strings.Join(parts, "; "))
		}
	}
	missing := unenforceable(s)
	features := make([]string, 0, len(missing))
	for f := range missing {
		features = append(features, f)
	}
	sort.Strings(features)
	for _, f := range features {
		if err := acceptDegradation(level, p.allow, f, missing[f]); err != nil {
			return nil, err
		}
		p.Degraded = append(p.Degraded, f+": "+missing[f])
	}
	if p.Landlock, err = r.planLandlock(level, p, s); err != nil {
		return nil, err
	}
	if p.frozen, err = freeze(s); err != nil {
		return nil, err
	}
	return p, nil
}

// acceptDegradation decides whether feature may be missing at level:
// never at strict, at standard only when --allow-degraded names it, always
// at degraded (where it is recorded and printed).
func acceptDegradation(level Level, allow map[string]bool, feature, why string) error {
	switch {
	case level == LevelStrict:
		return Errorf(ErrDegradedRefused, "%s; level strict allows no degradation", why)
	case level == LevelStandard && !allow[feature]:
		return Errorf(ErrDegradedRefused, "%s; refused at level standard (accept it with --allow-degraded=%s, or use --security-level degraded)", why, feature)
	}
	return nil
}
