package windows

import (
	"strings"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/vetto-dev/vetto-runtime/runtime"
	"github.com/vetto-dev/vetto-runtime/spec"
)

// decide is the core's decision on the plan of s, as create makes it: the
// launch evaluator with the plan's account as the platform's facts
// (LaunchFacts), level as --security-level and allow as --allow-degraded.
// The bundle's own dev.vetto.allow-degraded is the evaluator's to read.
func decide(p *Plan, s *specs.Spec, level runtime.Level, allow ...runtime.Feature) ([]string, error) {
	fs := map[runtime.Feature]bool{}
	for _, f := range allow {
		fs[f] = true
	}
	return runtime.DecidePlatform(s, runtime.Security{Level: level, LevelSet: true, AllowDegraded: fs}, p.LaunchFacts())
}

// bundleLevel is the level a bundle states for itself, taken as the
// caller's flag (a bundle alone may not lower itself below standard).
func bundleLevel(t *testing.T, s *specs.Spec) runtime.Level {
	t.Helper()
	a, ok := s.Annotations[spec.AnnotationLevel]
	if !ok {
		return runtime.LevelStandard
	}
	l, err := runtime.ParseLevel(a)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// decisionText is a decision as the goldens keep it.
func decisionText(level runtime.Level, degraded []string, err error) string {
	if err != nil {
		return "refused: " + err.Error()
	}
	return "accepted at " + level.String() + ": " + strings.Join(degraded, "; ")
}
